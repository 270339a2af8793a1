#!/usr/bin/env python3
"""Timing half of bench/cpp/run: per translation unit, `kvlint facts` (the C++ front end
on one file under its compile command) and `clang-tidy-14 -checks=-*,misc-unused-using-decls`
(Clang's parse plus one cheap matcher), alternating, each in its own process, wall time and
peak RSS from wait4. (`kvlint check` itself would skip most of these files in its prefilter,
which names no K/V: the per-TU figure is the front end's cost.) Standard library only."""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time


def timed(argv: list[str], cwd: str | None = None) -> tuple[float, int, int]:
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss, os.waitstatus_to_exitcode(status)


def sentencepiece_database(sdist: pathlib.Path) -> pathlib.Path:
    # The Python sdist carries the C++ tree in sentencepiece/ (its CMake writes config.h).
    root = sdist / "sentencepiece" if (sdist / "sentencepiece" / "src").is_dir() else sdist
    src = root / "src"
    config = root / "config.h"
    if not config.exists():
        config.write_text('#define VERSION "0.2.0"\n#define PACKAGE_STRING "sentencepiece 0.2.0"\n')
    flags = ["-std=c++17", "-DHAVE_PTHREAD", f"-I{src}", f"-I{src / 'builtin_pb'}",
             f"-I{root / 'third_party' / 'protobuf-lite'}", f"-I{root / 'third_party'}", f"-I{root}"]
    flags.append(f"-I{root}")
    entries = []
    for cc in sorted(src.glob("*.cc")):
        if cc.name.endswith("_test.cc") or cc.name.endswith("_main.cc") or "test" in cc.name:
            continue
        entries.append({"directory": str(root), "file": str(cc),
                        "arguments": ["clang++", *flags, "-c", str(cc), "-o", "/dev/null"]})
    out = root / "compile_commands.json"
    out.write_text(json.dumps(entries, indent=1))
    return out


def measure(name: str, kvlint: str, database: pathlib.Path, files: list[str], max_tus: int) -> dict:
    files = files[:max_tus]
    config_dir = tempfile.mkdtemp(prefix="kvlint-bench-cpp-")
    config = pathlib.Path(config_dir) / "kvlint.toml"
    config.write_text(f'[cpp]\ncompile-commands = "{database}"\n')
    rows = []
    for f in files:
        k = timed([kvlint, "facts", "--config", str(config), f])
        t = timed(["clang-tidy-14", "-p", str(database.parent), "-checks=-*,misc-unused-using-decls",
                   "--quiet", f])
        rows.append((f, k, t))
    print(f"\n## {name}: {len(rows)} translation units ({database})")
    print(f"{'TU':60} {'kvlint s':>9} {'MiB':>6} {'tidy s':>9} {'MiB':>6}")
    for f, k, t in rows:
        print(f"{f[-60:]:60} {k[0]:9.2f} {k[1] / 1024:6.0f} {t[0]:9.2f} {t[1] / 1024:6.0f}")
    kt = sum(r[1][0] for r in rows)
    tt = sum(r[2][0] for r in rows)
    kr = max(r[1][1] for r in rows) / 1024
    tr = max(r[2][1] for r in rows) / 1024
    print(f"{'total (sum of per-TU wall)':60} {kt:9.2f} {kr:6.0f} {tt:9.2f} {tr:6.0f}")
    ratio = kt / tt if tt else float("nan")
    print(f"kvlint / clang-tidy wall: {ratio:.2f}x (target <= 1.10x): {'PASS' if ratio <= 1.10 else 'MISS'}")
    return {"name": name, "tus": len(rows), "kvlint_s": kt, "tidy_s": tt, "ratio": ratio}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kvlint", required=True)
    ap.add_argument("--kvlint-db", required=True)
    ap.add_argument("--kvlint-root", required=True)
    ap.add_argument("--sentencepiece", required=True)
    ap.add_argument("--max-tus", type=int, default=1000)
    args = ap.parse_args()
    own = json.loads(pathlib.Path(args.kvlint_db).read_text())
    own_files = sorted({e["file"] if os.path.isabs(e["file"]) else os.path.join(e["directory"], e["file"])
                        for e in own if e["file"].endswith(".cpp") and "/build/" not in e["file"]
                        and "/analyzers/cpp/" not in e["file"] and "/tests/" not in e["file"]})
    sp_db = sentencepiece_database(pathlib.Path(args.sentencepiece))
    sp_files = [e["file"] for e in json.loads(sp_db.read_text())]
    print(f"kvlint {args.kvlint}; clang-tidy-14; {os.cpu_count()} cores")
    results = [measure("kvlint's own sources", args.kvlint, pathlib.Path(args.kvlint_db), own_files, args.max_tus),
               measure("sentencepiece sdist", args.kvlint, sp_db, sp_files, args.max_tus)]
    ratios = [r["ratio"] for r in results]
    print(f"\noverall kvlint / clang-tidy: {statistics.mean(ratios):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
