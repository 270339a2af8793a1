"""Real renderers for the reviewer report tests: headless Chromium (Debian's
`chromium`) for the HTML, cmark-gfm (Debian's, GitHub's fork of cmark) for the
Markdown, and a DOM walker over what they produce."""
from __future__ import annotations

import html.parser
import os
import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[2]
BROWSER_TIMEOUT_S = 90


def kvlint_binary() -> Path:
    configured = os.environ.get("KVLINT_BINARY")
    return Path(configured).resolve() if configured else REPO / "build" / "kvlint"


def require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise RuntimeError(f"{name} not found: scripts/setup installs it (Debian package {name})")
    return path


def chromium(url: str, *flags: str) -> subprocess.CompletedProcess:
    """Runs headless Chromium once on `url` with a throwaway profile. --no-sandbox:
    the sandbox needs user namespaces, which containers and root (CI) lack; the
    page is our own local file and its Content-Security-Policy allows no script."""
    with tempfile.TemporaryDirectory(prefix="kvlint-chromium-") as profile:
        command = [require_tool("chromium"), "--headless", "--no-sandbox", "--disable-gpu",
                   "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions", "--hide-scrollbars",
                   "--disable-background-networking", f"--user-data-dir={profile}", *flags, url]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=BROWSER_TIMEOUT_S,
                              env=dict(os.environ, HOME=profile))
    if proc.returncode != 0:
        raise AssertionError(f"chromium exited {proc.returncode}: {proc.stderr[-3000:]}")
    return proc


def dump_dom(page: Path) -> str:
    return chromium(page.resolve().as_uri(), "--dump-dom").stdout


def screenshot(page: Path, png: Path, width: int, height: int) -> Tuple[int, int]:
    chromium(page.resolve().as_uri(), f"--screenshot={png}", f"--window-size={width},{height}")
    return png_size(png)


def print_to_pdf(page: Path, pdf: Path) -> None:
    chromium(page.resolve().as_uri(), f"--print-to-pdf={pdf}", "--no-pdf-header-footer")


def png_size(png: Path) -> Tuple[int, int]:
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def cmark_gfm(markdown: str) -> str:
    """GitHub-flavoured Markdown to HTML. --unsafe keeps raw HTML (<details>), as GitHub does."""
    proc = subprocess.run([require_tool("cmark-gfm"), "--unsafe", "-e", "table", "-e", "autolink",
                           "-e", "strikethrough"], input=markdown, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@dataclass
class Element:
    tag: str
    attrs: Dict[str, str]
    parent: Optional["Element"]
    children: List["Element"] = field(default_factory=list)
    text_parts: List[str] = field(default_factory=list)  # text directly inside, in order

    def text(self) -> str:
        """All text inside, descendants included."""
        out: List[str] = []

        def walk(element: "Element") -> None:
            out.extend(element.text_parts)
            for child in element.children:
                walk(child)
        walk(self)
        return "".join(out)

    def iter(self, tag: Optional[str] = None):
        for child in self.children:
            if tag is None or child.tag == tag:
                yield child
            yield from child.iter(tag)

    def ancestors(self):
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def has_class(self, name: str) -> bool:
        return name in self.attrs.get("class", "").split()


VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _TreeBuilder(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {}, None)
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        element = Element(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Element(tag, {k: v or "" for k, v in attrs}, self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.text_parts.append(data)


def parse_html(text: str) -> Element:
    builder = _TreeBuilder()
    builder.feed(text)
    builder.close()
    return builder.root


def text_outside(root: Element, tags: Sequence[str]) -> str:
    """The text of the document that is not inside any of `tags`."""
    out: List[str] = []

    def walk(element: Element) -> None:
        if element.tag in tags:
            return
        out.extend(element.text_parts)
        for child in element.children:
            walk(child)
    walk(root)
    return "".join(out)
