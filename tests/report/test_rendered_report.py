"""The reviewer report as a person sees it: the example tree's findings
(`kvlint check --format json examples/models`) merged with a recorded `kvlint
confirm --format json` of the same tree (example_confirm.json, real PyTorch on
CPU; regenerate-example-confirm rewrites it), rendered by headless Chromium to
a DOM, a phone-width PNG and a PDF; the Markdown rendered by cmark-gfm."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Any, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rendering import (REPO, cmark_gfm, dump_dom, kvlint_binary, parse_html, print_to_pdf,  # noqa: E402
                       screenshot, text_outside)

EXAMPLE_CONFIRM = REPO / "tests" / "report" / "example_confirm.json"
HOSTILE = "<script>alert(\"x\")</script>'"
HOSTILE_FILE_NAME = "<svg onload=alert(1)>\"'&amp;"  # no '/': it names a file


def kvlint(*args: str, expect: int = 0, cwd: Path = REPO) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(kvlint_binary()), *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == expect, f"kvlint {' '.join(args)}: exit {proc.returncode}\n{proc.stderr}"
    return proc


class ExampleTreeReport(unittest.TestCase):
    """kvlint report --findings check.json --confirm confirm.json --max-num-seqs 256."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.tmp = tempfile.TemporaryDirectory(prefix="kvlint-report-")
        tmp = Path(cls.tmp.name)
        cls.check_json = tmp / "check.json"
        kvlint("check", "examples/models", "--no-cache", "--format", "json", "-o", str(cls.check_json), expect=1)
        cls.findings: List[Dict[str, Any]] = json.loads(cls.check_json.read_text())["findings"]
        cls.confirm: Dict[str, Any] = json.loads(EXAMPLE_CONFIRM.read_text())
        cls.page = tmp / "report.html"
        kvlint("report", "--findings", str(cls.check_json), "--confirm", str(EXAMPLE_CONFIRM),
               "--max-num-seqs", "256", "-o", str(cls.page))
        cls.dom = parse_html(dump_dom(cls.page))

    @classmethod
    def tearDownClass(cls) -> None:
        cls.tmp.cleanup()

    def test_every_finding_is_on_the_page_with_its_code_and_verdict(self):
        articles = {a.attrs.get("data-fingerprint"): a for a in self.dom.iter("article")
                    if a.has_class("finding") and not a.has_class("runtime")}
        self.assertGreaterEqual(len(self.findings), 5)
        verdicts = {r["fingerprint"]: r["verdict"] for r in self.confirm["results"]}
        for finding in self.findings:
            article = articles.get(finding["fingerprint"])
            self.assertIsNotNone(article, finding)
            text = article.text()
            self.assertIn(f'{finding["path"]}:{finding["line"]}', text)
            self.assertIn(finding["name"], text)
            excerpt = [pre for pre in article.iter("pre") if pre.has_class("excerpt")]
            self.assertTrue(excerpt, f"no code excerpt for {finding['code']} {finding['path']}")
            hits = [span.text() for span in excerpt[0].iter("span") if span.has_class("hit")]
            source = (REPO / finding["path"]).read_text().splitlines()[finding["line"] - 1]
            self.assertIn(source.strip(), hits[0])
            for related in finding["related"]:
                self.assertIn(f'{related["path"]}:{related["line"]}', text)
            badge = [s for s in article.iter("span") if s.has_class("verdict")]
            self.assertEqual([b.text() for b in badge], [verdicts.get(finding["fingerprint"], "not-run")])
        # Grouped per owner class: each owner section holds only its owner's findings.
        for section in self.dom.iter("section"):
            if not section.has_class("owner"):
                continue
            owner = section.children[0].text()
            for article in section.iter("article"):
                (finding,) = [f for f in self.findings if f["fingerprint"] == article.attrs["data-fingerprint"]]
                self.assertEqual(finding["owner"] or "(no owner class)", owner)

    def test_charts_and_projection(self):
        self.assertTrue(any(r["verdict"] == "confirmed" for r in self.confirm["results"]))
        figures = {f.attrs.get("id"): f for f in self.dom.iter("figure")}
        totals = figures["chart-totals"]
        bars = [r for r in totals.iter("rect") if r.has_class("bar")]
        measured = {(m["name"], row["path"], row["concurrency"]) for m in self.confirm["models"]
                    for row in m["memory"]}
        models = {m["name"] for m in self.confirm["models"] if m["memory"]}
        self.assertEqual(len(bars), 2 * len(measured))  # declared + observed
        projected = [r for r in figures["chart-projection"].iter("rect") if r.has_class("bar")]
        self.assertEqual(len(projected), 2 * len(models))
        self.assertTrue(any(int(r.attrs["data-bytes"]) > 0 for r in bars))
        self.assertTrue([r for r in figures["chart-per-row"].iter("rect") if r.has_class("bar")])
        projections = [p.text() for p in self.dom.iter("p") if p.has_class("projection")]
        self.assertTrue(any("This model's local KV is" in p and "at max_num_seqs=256" in p for p in projections),
                        projections)
        self.assertFalse(list(self.dom.iter("script")))

    def test_phone_width_screenshot_and_print(self):
        tmp = Path(self.tmp.name)
        width, height = screenshot(self.page, tmp / "phone.png", 390, 1600)
        self.assertEqual((width, height), (390, 1600))
        self.assertGreater((tmp / "phone.png").stat().st_size, 20_000, "an empty page compresses to almost nothing")
        print_to_pdf(self.page, tmp / "report.pdf")
        pdf = (tmp / "report.pdf").read_bytes()
        self.assertTrue(pdf.startswith(b"%PDF"))
        self.assertGreater(pdf.count(b"/Type /Page"), 1)

    def test_markdown_code_spans_render_as_code(self):
        markdown = kvlint("report", "--format", "markdown", "--findings", str(self.check_json), "--confirm",
                          str(EXAMPLE_CONFIRM), "--max-num-seqs", "256").stdout
        dom = parse_html(cmark_gfm(markdown))
        codes = [c.text() for c in dom.iter("code")]
        self.assertNotIn("`", text_outside(dom, ["code", "pre"]), "a code span did not close or was escaped")
        for finding in self.findings:
            self.assertIn(finding["name"], codes)
            self.assertIn(finding["path"], codes)  # the file heading
            if finding["owner"]:
                self.assertIn(finding["owner"], codes)
        # The messages' own code spans (`self._caches`, `RowDriver.FIXED`) are code too.
        self.assertTrue(any(c.startswith("RowDriver.") for c in codes), codes)
        tables = [t.text() for t in dom.iter("table")]
        self.assertTrue(any("Declared / row" in t for t in tables))
        self.assertIn("This model's local KV is", dom.text())
        self.assertTrue(any(t.text().strip() == "confirmed" for t in dom.iter("td")))


class HostileInput(unittest.TestCase):
    """Quotes, tags and control characters in file names, class names and source
    lines are shown, never interpreted."""

    def test_hostile_names_and_source_stay_text(self):
        with tempfile.TemporaryDirectory(prefix="kvlint-hostile-") as tmp_name:
            tmp = Path(tmp_name)
            tree = tmp / "tree"
            tree.mkdir()
            (tree / "kvlint.toml").write_text('select = ["KV"]\n')
            source = (tree / f"{HOSTILE_FILE_NAME}.py")
            source.write_text(
                "from transformers import DynamicCache\n\n\n"
                "class Evil:\n"
                "    def __init__(self):\n"
                f"        self.cache = DynamicCache()  # {HOSTILE} \x1b[31m</pre></code>\n")
            page = tmp / "report.html"
            kvlint("check", "tree", "--no-cache", "--format", "html", "-o", str(page), expect=1, cwd=tmp)
            dom = parse_html(dump_dom(page))
            self.assertFalse(list(dom.iter("script")), "a <script> from the input became an element")
            self.assertFalse(list(dom.iter("svg")), "the file name became an element")
            self.assertFalse([e for e in dom.iter() if any(a.startswith("on") for a in e.attrs)])
            text = dom.text()
            self.assertIn(f"{HOSTILE_FILE_NAME}.py", text)
            self.assertIn(f"# {HOSTILE} \\x1b[31m</pre></code>", text)
            self.assertNotIn("\x1b", text)
            articles = [a for a in dom.iter("article") if a.has_class("finding")]
            self.assertEqual(len(articles), 1)

    def test_bad_input_leaves_the_old_report(self):
        with tempfile.TemporaryDirectory(prefix="kvlint-report-bad-") as tmp_name:
            tmp = Path(tmp_name)
            out = tmp / "report.html"
            out.write_text("previous report")
            bad = tmp / "findings.json"
            bad.write_text('{"schema": "kvlint-confirm", "version": 1}')
            proc = kvlint("report", "--findings", str(bad), "-o", str(out), expect=2)
            self.assertIn('"schema" must be "kvlint-findings"', proc.stderr)
            kvlint("report", "--confirm", str(tmp / "missing.json"), "-o", str(out), expect=2)
            self.assertEqual(out.read_text(), "previous report")
            self.assertEqual(sorted(p.name for p in tmp.iterdir()), ["findings.json", "report.html"])

    def test_inputs_that_are_not_bounded_regular_files_are_refused_without_reading(self):
        # A FIFO would wait for a writer, /dev/zero never ends, a sparse 4 GiB file is refused by
        # its size: each is an input error (exit 2), within kvlint()'s 120 s timeout.
        with tempfile.TemporaryDirectory(prefix="kvlint-report-inputs-") as tmp_name:
            tmp = Path(tmp_name)
            fifo = tmp / "findings.fifo"
            os.mkfifo(fifo)
            huge = tmp / "huge.json"
            with huge.open("wb") as f:
                f.truncate(4 << 30)
            cases = [("--findings", fifo, "not a regular file"), ("--confirm", Path("/dev/zero"), "not a regular file"),
                     ("--findings", huge, "file is 4294967296 bytes, over the 268435456 byte limit")]
            for option, path, reason in cases:
                proc = kvlint("report", option, str(path), "-o", str(tmp / "report.html"), expect=2)
                self.assertIn(f"{path}: cannot read the file: {reason}", proc.stderr)
            self.assertFalse((tmp / "report.html").exists())


class MarkdownLimits(unittest.TestCase):
    def test_many_findings_stay_under_the_comment_limit_and_backticks_stay_code(self):
        findings = []
        for i in range(2500):
            findings.append({"code": "KV101", "name": "undeclared-cache", "severity": "error",
                             "path": f"pkg/m{i // 4:04}.py", "line": i + 1, "column": 9, "end_line": i + 1,
                             "end_column": 20, "owner": "Own`er",
                             "message": "``self.x`y`` keeps a `DynamicCache` | not declared",
                             "related": [{"path": "pkg/base.py", "line": n, "column": 1, "message": f"`hop {n}`"}
                                         for n in range(1, 6 if i % 2 else 2)],
                             "fingerprint": f"{i:08x}"})
        with tempfile.TemporaryDirectory(prefix="kvlint-md-") as tmp_name:
            check = Path(tmp_name) / "check.json"
            check.write_text(json.dumps({"schema": "kvlint-findings", "version": 1, "findings": findings,
                                         "summary": {"files": 625}}))
            markdown = kvlint("report", "--format", "markdown", "--findings", str(check)).stdout
        self.assertLessEqual(len(markdown), 65536)
        dom = parse_html(cmark_gfm(markdown))
        rows = [tr for tr in dom.iter("tr") if list(tr.iter("td"))]
        self.assertIn(f"{2500 - len(rows)} more findings", dom.text())
        codes = [c.text() for c in dom.iter("code")]
        self.assertIn("self.x`y", codes)
        self.assertIn("Own`er", codes)
        self.assertIn("hop 3", codes)
        self.assertNotIn("`", text_outside(dom, ["code", "pre"]))
        self.assertTrue(list(dom.iter("details")), "long evidence is folded")
        for row in rows:
            self.assertEqual(len(list(row.iter("td"))), 5, "a '|' in a message split the row")


if __name__ == "__main__":
    unittest.main(verbosity=2)
