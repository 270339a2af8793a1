#!/usr/bin/env python3
"""Regression test on a real project nobody here wrote: run `kvlint check` over a released tree
from PyPI and compare with a triaged expectation file.

    tests/real_trees/check_real_tree.py tests/real_trees/vllm_omni_0_30_0.toml [--kvlint build/kvlint]
    tests/real_trees/check_real_tree.py EXPECTATIONS --inventory   # print every site, to triage

The expectation file (TOML) names the distribution and holds three lists, each entry with a reason:
  [[finding]]      every finding kvlint must give (code, path, line): a real protocol problem.
  [[declaration]]  every `model_local_kv_specs` declaration in the tree, with a verdict.
  [[site]]         every cache site, implicit-cache call and graph capture the front end reports that
                   carries no finding, with why it needs none.
The test fails on any new or lost finding, any declaration or site that is not triaged, and any
triaged entry that no longer exists (the file must describe the tree as it is).

The tree is fetched at test time (`pip download --no-deps NAME==VERSION`) into
~/.cache/kvlint/corpus (KVLINT_CORPUS_DIR) and reused; nothing is vendored.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# Files that can hold a site at all; the rest cannot produce facts we triage.
# Raw K/V (plain tensors read as K/V) needs one of the markers python::may_hold_raw_kv looks for.
ANCHORS = ("Cache", "graph", "Graph", "use_cache", "model_local_kv_specs", "capture",
           "scaled_dot_product_attention", "flash_attn", "k_cache", "v_cache", "self.keys", "self.values",
           "self._keys", "self._values", "self.kv", "self._kv", "KV", "Kv", "_ring", "past_k", "past_v",
           "cache_k", "cache_v", "k_buf", "v_buf")


def corpus_dir() -> Path:
    base = os.environ.get("KVLINT_CORPUS_DIR")
    if base:
        return Path(base)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "kvlint" / "corpus"


def fetch_tree(distribution: str, version: str) -> Path:
    """The unpacked wheel of distribution==version, downloaded once."""
    dest = corpus_dir() / f"{distribution}-{version}"
    if (dest / ".kvlint-complete").exists():
        return dest
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--only-binary", ":all:", f"{distribution}=={version}", "-d", tmp],
                       check=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if len(wheels) != 1:
            sys.exit(f"real-tree: expected one wheel for {distribution}=={version}, got {wheels}")
        partial = dest.with_name(dest.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        with zipfile.ZipFile(wheels[0]) as wheel:
            wheel.extractall(partial)
        shutil.rmtree(dest, ignore_errors=True)
        partial.rename(dest)
    (dest / ".kvlint-complete").touch()
    return dest


def run_check(kvlint: Path, tree: Path) -> dict:
    with tempfile.TemporaryDirectory() as cache:
        proc = subprocess.run([str(kvlint), "check", ".", "--format", "json", "--exit-zero",
                               "--cache-dir", cache], cwd=tree, capture_output=True)
    if proc.returncode != 0:
        sys.exit(f"real-tree: kvlint check exited {proc.returncode}:\n{proc.stderr.decode(errors='replace')}")
    return json.loads(proc.stdout)


def facts_of(kvlint: Path, tree: Path, rel: str) -> dict | None:
    proc = subprocess.run([str(kvlint), "facts", rel], cwd=tree, capture_output=True)
    if proc.returncode != 0:
        return None
    return json.loads(proc.stdout)


def line_of(loc: list[int]) -> int:
    """Facts JSON writes a location as [line, column, end_line, end_column]."""
    return loc[0]


def inventory(kvlint: Path, tree: Path) -> tuple[list[dict], list[dict]]:
    """Declarations and sites (cache sites, implicit caches, captures) the front end reports."""
    declarations, sites = [], []
    for path in sorted(tree.rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if not any(a in text for a in ANCHORS):
            continue
        rel = path.relative_to(tree).as_posix()
        facts = facts_of(kvlint, tree, rel)
        if facts is None:
            continue
        for d in facts.get("declarations", []):
            declarations.append({"path": rel, "line": line_of(d["loc"]), "owner": d["owner_class"]})
        for kind, key in (("cache", "cache_sites"), ("implicit", "implicit_caches"),
                          ("capture", "captures")):
            for s in facts.get(key, []):
                sites.append({"kind": kind, "path": rel, "line": line_of(s["loc"]),
                              "owner": s.get("owner_class", ""),
                              "what": s.get("cache_class") or s.get("callee") or s.get("written", "")})
    return declarations, sites


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("expectations", type=Path)
    parser.add_argument("--kvlint", type=Path, default=REPO / "build" / "kvlint")
    parser.add_argument("--inventory", action="store_true",
                        help="print the findings, declarations and sites as TOML stubs to triage")
    args = parser.parse_args()
    expected = tomllib.loads(args.expectations.read_text(encoding="utf-8"))
    tree = fetch_tree(expected["distribution"], expected["version"])
    kvlint = args.kvlint.resolve()

    report = run_check(kvlint, tree)
    actual = {(f["code"], f["path"].removeprefix("./"), f["line"]): f for f in report["findings"]}
    declarations, sites = inventory(kvlint, tree)

    if args.inventory:
        for (code, path, line), f in sorted(actual.items()):
            print(f'[[finding]]\ncode = "{code}"\npath = "{path}"\nline = {line}\n'
                  f'owner = "{f["owner"]}"\nreason = ""  # {f["message"][:200]!r}\n')
        for d in declarations:
            print(f'[[declaration]]\npath = "{d["path"]}"\nline = {d["line"]}\n'
                  f'owner = "{d["owner"]}"\nverdict = ""\n')
        for s in sites:
            print(f'[[site]]\nkind = "{s["kind"]}"\npath = "{s["path"]}"\nline = {s["line"]}\n'
                  f'owner = "{s["owner"]}"\nwhat = "{s["what"]}"\nreason = ""\n')
        return 0

    problems: list[str] = []
    want = {(e["code"], e["path"], e["line"]): e for e in expected.get("finding", [])}
    for key in sorted(actual.keys() - want.keys()):
        f = actual[key]
        problems.append(f"new finding {key[0]} {key[1]}:{key[2]} [{f['owner']}]: {f['message']}")
    for key in sorted(want.keys() - actual.keys()):
        problems.append(f"lost finding {key[0]} {key[1]}:{key[2]}: expected because {want[key]['reason']}")
    for e in expected.get("finding", []) + expected.get("declaration", []) + expected.get("site", []):
        if not (e.get("reason") or e.get("verdict")):
            problems.append(f"untriaged entry (no reason/verdict): {e}")

    have_decl = {(d["path"], d["line"]) for d in declarations}
    want_decl = {(e["path"], e["line"]) for e in expected.get("declaration", [])}
    for key in sorted(have_decl - want_decl):
        problems.append(f"declaration not triaged: {key[0]}:{key[1]}")
    for key in sorted(want_decl - have_decl):
        problems.append(f"triaged declaration no longer found: {key[0]}:{key[1]}")

    finding_lines = {(path, line) for (_, path, line) in actual}
    have_sites = {(s["kind"], s["path"], s["line"]) for s in sites}
    want_sites = {(e["kind"], e["path"], e["line"]) for e in expected.get("site", [])}
    for key in sorted(have_sites - want_sites):
        if (key[1], key[2]) not in finding_lines:
            problems.append(f"{key[0]} site without a finding is not triaged: {key[1]}:{key[2]}")
    for key in sorted(want_sites - have_sites):
        problems.append(f"triaged {key[0]} site no longer reported by the front end: {key[1]}:{key[2]}")

    by_code: dict[str, int] = {}
    for code, _, _ in actual:
        by_code[code] = by_code.get(code, 0) + 1
    summary = ", ".join(f"{c} {n}" for c, n in sorted(by_code.items())) or "none"
    print(f"real-tree {expected['distribution']} {expected['version']}: {len(actual)} findings "
          f"({summary}); {len(declarations)} declarations; {len(sites)} sites")
    if problems:
        print("\n".join(problems))
        print(f"real-tree: 0 passed, {len(problems)} failed")
        return 1
    print("real-tree: 1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
