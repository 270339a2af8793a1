#!/usr/bin/env python3
"""Builds the seed corpus of one fuzz target from what the repository already
holds, so seeds follow the formats as they change: rule fixtures and the example
tree (Python, C++, suppression comments), the TOML in tests, README.md and docs/
(configuration), `kvlint check --format json` output (findings), the facts
caches `kvlint check` writes over them. The hand-made seeds in fuzz/corpus/TARGET
are added too.

    fuzz/make_seeds.py TARGET OUT_DIR [--kvlint BINARY]
"""
import argparse
import hashlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def python_sources():
    files = sorted(ROOT.glob("rules/*/fixtures/**/*.py")) + sorted(ROOT.glob("examples/**/*.py"))
    return [f for f in files if f.stat().st_size > 0]


CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".cu", ".h", ".hpp", ".hh", ".cuh")


def cpp_sources():
    files = sorted(ROOT.glob("rules/*/fixtures/**/*")) + sorted(ROOT.glob("examples/**/*"))
    return [f for f in files if f.suffix in CPP_SUFFIXES and f.is_file() and f.stat().st_size > 0]


def copy_target(target: Path, dest: Path):
    """A copy of a rule's fixtures or of the examples for a `kvlint check` seed run. The rule
    fixtures' C++ files stay out: each is a Clang parse of about 2 s, and the two seed runs over
    them took 3-4 minutes of CI's fuzz stage; the examples' C++ models still give C++ facts and
    findings."""
    is_examples = target == ROOT / "examples/models"
    shutil.copytree(target, dest,
                    ignore=None if is_examples else shutil.ignore_patterns(*(f"*{s}" for s in CPP_SUFFIXES)))


def write_seed(out: Path, data: bytes):
    (out / hashlib.sha1(data).hexdigest()).write_bytes(data)


def kvlint_output(kvlint, args):
    if not kvlint:
        return None
    run = subprocess.run([kvlint, *args], cwd=ROOT, capture_output=True, timeout=120)
    return run.stdout if run.returncode in (0, 1) and run.stdout else None


def seeds_python_frontend(out, kvlint):
    for f in python_sources():
        write_seed(out, f.read_bytes())


def seeds_cpp_frontend(out, kvlint):
    for f in cpp_sources():
        write_seed(out, f.read_bytes())


def seeds_suppressions(out, kvlint):
    # One seed per file: the text after "kvlint:" of each suppression comment it holds.
    for f in python_sources() + cpp_sources():
        comments = [line.split("kvlint:", 1)[1].strip() for line in f.read_text().splitlines() if "kvlint:" in line]
        if comments:
            write_seed(out, "\n".join(comments).encode())


def seeds_config(out, kvlint):
    # First byte: 0 -> kvlint.toml, 1 -> pyproject.toml (see config_fuzzer.cpp).
    def add(text):
        selector = b"\x01" if "[tool.kvlint" in text else b"\x00"
        write_seed(out, selector + text.encode())

    for f in sorted(ROOT.glob("examples/**/*.toml")) + sorted(ROOT.glob("tests/**/*.toml")):
        add(f.read_text())
    for doc in [ROOT / "README.md"] + sorted(ROOT.glob("docs/*.md")):
        for block in re.findall(r"```toml\n(.*?)```", doc.read_text(), re.S):
            add(block)
    # TOML written by the C++ tests: raw string literals passed as pyproject.toml / kvlint.toml.
    for f in sorted(ROOT.glob("tests/**/*.cpp")):
        for raw in re.findall(r'R"\((.*?)\)"', f.read_text(), re.S):
            if "=" in raw and ("\n" in raw or raw.lstrip().startswith("[")):
                add(raw)


def seeds_findings_json(out, kvlint):
    targets = [ROOT / "examples/models"] + sorted(p.parent for p in ROOT.glob("rules/*/fixtures"))
    for target in targets:
        # A copy outside the checkout: checked in place, a fixture directory would take the
        # whole repository (kvlint's own C++ sources included) as its project's context.
        with tempfile.TemporaryDirectory() as scratch:
            copy = Path(scratch) / target.name
            copy_target(target, copy)
            report = kvlint_output(kvlint, ["check", "--no-cache", "--format", "json", "--exit-zero", str(copy)])
        if report:
            write_seed(out, report)


def seeds_result_cache(out, kvlint):
    # Real caches: `kvlint check` over a copy of each rule's fixtures and of the examples, with
    # a cache directory. Each entry's data is kvlint's binary facts form (cache format 6),
    # which has no writer outside kvlint, so the seeds come from a kvlint built from this source;
    # the file index beside it too (file-index.bin, read by the same fuzzer). Written twice:
    # the whole sealed file, and its payload (the fuzzer also seals each input).
    if not kvlint:
        return
    targets = [ROOT / "examples/models"] + sorted(p.parent for p in ROOT.glob("rules/*/fixtures"))
    with tempfile.TemporaryDirectory() as scratch:
        copies = []
        for n, target in enumerate(targets):
            copies.append(Path(scratch) / str(n) / target.name)
            copy_target(target, copies[-1])
        # A run records a file in the index only once its times are 2 s old (file_index.hpp).
        time.sleep(2.5)
        for copy in copies:
            cache = copy.parent / "cache"
            subprocess.run([kvlint, "check", "--exit-zero", "--cache-dir", str(cache), str(copy)],
                           cwd=ROOT, capture_output=True, timeout=120)
            for name in ("facts-cache.cbor", "file-index.bin"):
                if (cache / name).is_file():
                    data = (cache / name).read_bytes()
                    write_seed(out, data)
                    write_seed(out, data[data.find(b"\n") + 1:])


def seeds_event_line(out, kvlint):
    pass  # hand-made streams only (fuzz/corpus/event_line)


GENERATORS = {
    "python_frontend": seeds_python_frontend,
    "cpp_frontend": seeds_cpp_frontend,
    "suppressions": seeds_suppressions,
    "config": seeds_config,
    "findings_json": seeds_findings_json,
    "result_cache": seeds_result_cache,
    "event_line": seeds_event_line,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("target", choices=sorted(GENERATORS))
    parser.add_argument("out", type=Path)
    parser.add_argument("--kvlint", help="kvlint binary for the findings and facts seeds")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    GENERATORS[args.target](args.out, args.kvlint)
    hand = ROOT / "fuzz/corpus" / args.target
    if hand.is_dir():
        for f in sorted(hand.iterdir()):
            if f.is_file():
                shutil.copy(f, args.out / f.name)
    print(f"{args.target}: {sum(1 for _ in args.out.iterdir())} seeds in {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
