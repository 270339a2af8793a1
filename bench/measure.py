#!/usr/bin/env python3
"""Timing half of bench/run: runs kvlint and its peers on one corpus and prints
a table and the targets. Standard library only; bench/run passes every path.

Timed tools run round-robin (one run of each per round, several rounds) so a
noisy, shared machine slows them alike and the ratios hold; semgrep, much
slower, runs once under a timeout after the rounds.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import pathlib
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time

# Graph-capture names the front end looks for (shared/DESIGN.md, Vocabulary);
# vocabulary.hpp holds the cache classes, read from the header itself.
CAPTURE_PATTERNS = ["cuda.graph", "CUDAGraph", "make_graphed_callables"]
RUFF_RULE = "E711"  # one AST rule (comparison to None): ruff parses every file
# The vllm-omni model file the pre-commit-sized run changes and checks (it has findings).
PRECOMMIT_FILE = "vllm_omni/diffusion/models/sensenova_u1/pipeline_sensenova_u1.py"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    for tool in ("kvlint", "rg", "ruff", "semgrep"):
        parser.add_argument(f"--{tool}", required=True)
    parser.add_argument("--semgrep-rule", required=True)
    parser.add_argument("--vocabulary", required=True, help="analyzers/facts/vocabulary.hpp")
    parser.add_argument("--corpus", required=True, type=pathlib.Path)
    parser.add_argument("--results", required=True, type=pathlib.Path)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--semgrep-timeout", type=float, default=240)
    parser.add_argument("--site-tree", type=pathlib.Path,
                        help="stdlib + site-packages directory for the kvlint vs ripgrep comparison")
    parser.add_argument("--floor", required=True,
                        help="kvlint_parse_floor: tree-sitter alone on the files kvlint parsed")
    parser.add_argument("--vllm-omni", type=pathlib.Path,
                        help="vllm-omni 0.30.0, *.py only: kvlint cold vs ruff, and a pre-commit-sized run")
    parser.add_argument("--precommit-file", default=PRECOMMIT_FILE,
                        help="the model file a pre-commit-sized run checks (relative to --vllm-omni)")
    return parser.parse_args()


def cache_class_names(vocabulary_header: str) -> list[str]:
    text = pathlib.Path(vocabulary_header).read_text()
    block = re.search(r"cache_classes\s*=\s*\{(.*?)\};", text, re.S)
    if not block:
        sys.exit(f"bench: no cache_classes list in {vocabulary_header}")
    return re.findall(r'"([^"]+)"', block.group(1))


def corpus_size(corpus: pathlib.Path, subdirs: list[str]) -> tuple[int, int, int]:
    files = lines = size = 0
    for subdir in subdirs:
        for path in (corpus / subdir).rglob("*.py"):
            data = path.read_bytes()
            files += 1
            lines += data.count(b"\n")
            size += len(data)
    return files, lines, size


def tool_version(command: list[str]) -> str:
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=60)
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired, IndexError):
        return "unknown"


class Tool:
    """One timed command; accepted exit codes differ per tool (rg: 1 = no match)."""

    def __init__(self, name: str, argv: list[str], ok_codes: tuple[int, ...] = (0,), before=None,
                 after=None):
        self.name = name
        self.argv = argv
        self.ok_codes = ok_codes
        # Called around each run, untimed: the pre-commit run edits a file, then puts it back.
        self.before = before
        self.after = after
        self.times: list[float] = []
        self.cpu_times: list[float] = []  # user + system of the process tree
        self.peak_rss: list[float] = []   # MB, the largest process of the tree, per run
        self.last_cpu = 0.0
        self.last_rss = 0.0
        self.error = ""

    def run_once(self, cwd: pathlib.Path, timeout: float | None = None) -> float | None:
        # wait4 gives this run's own CPU time and peak RSS (RUSAGE_CHILDREN would
        # give the peak over every child so far).
        if self.before:
            self.before()
        start = time.perf_counter()
        with open(os.devnull, "wb") as devnull, \
                subprocess.Popen(self.argv, cwd=cwd, stdout=devnull, stderr=subprocess.PIPE) as child:
            timed_out = threading.Event()

            def kill() -> None:
                timed_out.set()
                child.kill()

            timer = threading.Timer(timeout, kill) if timeout else None
            if timer:
                timer.start()
            stderr_tail = child.stderr.read()[-2000:] if child.stderr else b""
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            if timer:
                timer.cancel()
        elapsed = time.perf_counter() - start
        if self.after:
            self.after()
        if timed_out.is_set():
            self.error = f"timed out after {timeout:.0f} s"
            return None
        self.last_cpu = usage.ru_utime + usage.ru_stime
        self.last_rss = usage.ru_maxrss / 1024  # KB on Linux
        if child.returncode not in self.ok_codes:
            tail = stderr_tail.decode(errors="replace").strip()[-300:]
            self.error = f"exit {child.returncode}: {tail}"
            return None
        return elapsed

    def record(self, elapsed: float) -> None:
        self.times.append(elapsed)
        self.cpu_times.append(self.last_cpu)
        self.peak_rss.append(self.last_rss)


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:8.3f} s"


def list_parsed(kvlint: str, cwd: pathlib.Path, paths: list[str], listing: pathlib.Path) -> str:
    """One kvlint cold run that writes the files it parsed (--list-parsed), for the floor."""
    done = subprocess.run([kvlint, "check", "--no-cache", "--exit-zero", "--format", "json", "--quiet",
                           "--list-parsed", str(listing)] + paths, cwd=cwd, capture_output=True)
    if done.returncode != 0 or not listing.is_file():
        return f"kvlint --list-parsed failed (exit {done.returncode}): " \
               f"{done.stderr.decode(errors='replace').strip()[-300:]}"
    parses = parsed = 0
    for line in listing.read_text().splitlines():
        language, times, size, _ = line.split("\t", 3)
        if language == "python":
            parses += int(times)
            parsed += int(times) * int(size)
    return f"{parses} Python parses, {parsed / 1e6:.1f} MB (the floor parses exactly these)"


def settle(tree: pathlib.Path) -> None:
    """Waits until every file of `tree` was last changed over 3 s ago: kvlint's file index records
    a file only once its times are 2 s older than the run (tools/kvlint/engine/file_index.hpp),
    so a priming run right after the corpus is copied would leave the first timed runs reading
    every file."""
    newest = max((entry.stat().st_ctime for entry in tree.rglob("*") if entry.is_file()), default=0.0)
    wait = newest + 3.0 - time.time()
    if wait > 0:
        time.sleep(wait)


def round_robin(tools: list["Tool"], cwd: pathlib.Path, reps: int, warm_up: bool = True) -> None:
    """One untimed run of each (page cache), then `reps` rounds of one run each."""
    if warm_up:
        for tool in tools:
            tool.run_once(cwd)
    for _ in range(reps):
        for tool in tools:
            if not tool.error:
                elapsed = tool.run_once(cwd)
                if elapsed is not None:
                    tool.record(elapsed)


def findings_by_code(report_path: pathlib.Path) -> tuple[collections.Counter, dict]:
    report = json.loads(report_path.read_text())
    counts = collections.Counter(f.get("code", "?") for f in report.get("findings", []))
    return counts, report


def main() -> int:
    args = parse_args()
    corpus = args.corpus
    args.results.mkdir(parents=True, exist_ok=True)
    subdirs = ["transformers", "stdlib"]
    files, lines, size = corpus_size(corpus, subdirs)
    print(f"corpus: {corpus}")
    print(f"  {files} Python files, {lines} lines, {size / 1e6:.1f} MB "
          f"(transformers + stdlib, *.py only)")
    print(f"  machine: {os.cpu_count()} cores, {platform.platform()}")

    versions = {
        "kvlint": tool_version([args.kvlint, "--version"]),
        "ripgrep": tool_version([args.rg, "--version"]),
        "ruff": tool_version([args.ruff, "--version"]),
        "semgrep": tool_version([args.semgrep, "--version", "--disable-version-check"]),
    }
    for name, version in versions.items():
        print(f"  {name}: {version}")

    # Priming run: fills kvlint's cache for the warm runs and keeps the full-corpus
    # findings; the warm runs then hit a cache this run wrote.
    # Outside the corpus, so no peer walks it.
    cache_dir = args.results.parent / "kvlint-cache"
    shutil.rmtree(cache_dir, ignore_errors=True)
    kvlint_check = [args.kvlint, "check", "--exit-zero", "--format", "json"]
    kvlint_cached = kvlint_check + ["--cache-dir", str(cache_dir)]
    corpus_report = args.results / "kvlint-corpus.json"
    transformers_report = args.results / "kvlint-transformers.json"
    settle(corpus)
    prime = subprocess.run(kvlint_cached + ["--verbose"] + subdirs, cwd=corpus,
                           capture_output=True)
    print(f"  kvlint priming run (fills the cache): "
          f"{prime.stderr.decode(errors='replace').strip()[-400:] or '(no statistics line)'}")
    corpus_report.write_bytes(prime.stdout)
    if prime.returncode != 0:
        print(f"\nkvlint priming run failed (exit {prime.returncode}): "
              f"{prime.stderr.decode(errors='replace').strip()[-500:]}")
    try:
        analysed = json.loads(prime.stdout).get("summary", {}).get("files", 0)
    except (json.JSONDecodeError, AttributeError):
        analysed = 0
    if not analysed:
        print("\nWARNING: kvlint wrote no findings JSON naming the corpus files; "
              "its times below do not measure an analysis.")
    elif not cache_dir.is_dir():
        print(f"\nWARNING: no cache at {cache_dir} after the priming run; "
              "'kvlint warm' may not be warm.")

    rg_argv = [args.rg, "-c"]
    for name in cache_class_names(args.vocabulary) + ["use_cache"] + CAPTURE_PATTERNS:
        rg_argv += ["-e", name]
    kvlint_cold_argv = kvlint_check[:2] + ["--no-cache"] + kvlint_check[2:]
    corpus_listing = args.results / "parsed-corpus.tsv"
    print(f"  parse floor: {list_parsed(args.kvlint, corpus, subdirs, corpus_listing)}")
    tools = [
        Tool("kvlint cold", kvlint_cold_argv + subdirs),
        Tool("kvlint warm", kvlint_cached + subdirs),
        Tool("ripgrep", rg_argv + subdirs, ok_codes=(0, 1)),
        Tool("ruff", [args.ruff, "check", "--no-cache", "--isolated", "--select", RUFF_RULE,
                      "--exit-zero", "--quiet"] + subdirs),
        # One core: what a single-core CI runner or an editor's one worker pays.
        Tool("kvlint cold -j1", kvlint_cold_argv + ["-j", "1"] + subdirs),
        # tree-sitter alone on the bytes kvlint cold parsed, on as many threads: the floor.
        Tool("parse floor", [args.floor, str(corpus_listing)]),
        # The same parses, each tree then walked once as kvlint's walker walks it and nothing
        # more: the floor of any analysis that visits every node.
        Tool("walk floor", [args.floor, "--walk", str(corpus_listing)]),
    ]
    # One untimed run each of rg and ruff so every tool starts with warm page cache.
    for tool in tools[2:4]:
        tool.run_once(corpus)
    print(f"\ntiming {args.reps} rounds (round-robin: {', '.join(t.name for t in tools)})")
    round_robin(tools, corpus, args.reps, warm_up=False)

    warm_check = subprocess.run(kvlint_cached + ["--verbose"] + subdirs, cwd=corpus,
                                capture_output=True)
    print(f"  kvlint warm run statistics: "
          f"{warm_check.stderr.decode(errors='replace').strip()[-400:] or '(none)'}")

    semgrep_json = args.results / "semgrep.json"
    semgrep_json.unlink(missing_ok=True)  # a capped run writes none; never report a stale one
    semgrep = Tool("semgrep (1 run)", [
        args.semgrep, "scan", "--config", args.semgrep_rule, "--metrics=off",
        "--disable-version-check", "-j", "2", "--json", "--output", str(semgrep_json),
        # Its built-in ignore list would skip test/ and tests/ (a quarter of the
        # stdlib); the other tools scan them, so semgrep must too.
        "--x-ignore-semgrepignore-files",
        "--quiet"] + subdirs, ok_codes=(0, 1))
    print(f"semgrep: one run, capped at {args.semgrep_timeout:.0f} s")
    semgrep_elapsed = semgrep.run_once(corpus, timeout=args.semgrep_timeout)
    semgrep_capped = semgrep_elapsed is None and semgrep.error.startswith("timed out")
    if semgrep_elapsed is not None:
        semgrep.record(semgrep_elapsed)
    tools.append(semgrep)

    # kvlint against a text scan on a big installed tree: the stdlib and site-packages of
    # the python3 on PATH, in place (round-robin as above).
    site_tools: list[Tool] = []
    if args.site_tree and args.site_tree.is_dir():
        site_files, site_lines, site_size = corpus_size(args.site_tree, ["."])
        print(f"\nstdlib + site-packages: {args.site_tree}: {site_files} Python files, "
              f"{site_lines} lines, {site_size / 1e6:.1f} MB; {args.reps} rounds")
        site_tools = [Tool("kvlint cold (site)", kvlint_cold_argv + ["."]),
                      Tool("ripgrep (site)", rg_argv + ["-t", "py", "."], ok_codes=(0, 1))]
        round_robin(site_tools, args.site_tree, args.reps)
    tools += site_tools

    # vllm-omni 0.30.0 (*.py only): kvlint cold against ruff and the parse floor, and a
    # pre-commit-sized run: one changed model file, project context loaded, warm cache.
    vllm_tools: list[Tool] = []
    if args.vllm_omni and args.vllm_omni.is_dir():
        vllm = args.vllm_omni
        v_files, v_lines, v_size = corpus_size(vllm, ["."])
        vllm_listing = args.results / "parsed-vllm-omni.tsv"
        print(f"\nvllm-omni 0.30.0: {vllm}: {v_files} Python files, {v_lines} lines, "
              f"{v_size / 1e6:.1f} MB; {args.reps} rounds")
        print(f"  parse floor: {list_parsed(args.kvlint, vllm, ['.'], vllm_listing)}")
        vllm_cache = args.results.parent / "kvlint-cache-vllm-omni"
        shutil.rmtree(vllm_cache, ignore_errors=True)
        settle(vllm)
        subprocess.run(kvlint_check + ["--cache-dir", str(vllm_cache), "."], cwd=vllm,
                       capture_output=True)  # fills the cache the pre-commit run starts from
        changed = vllm / args.precommit_file
        original = changed.read_bytes()
        edits = iter(range(1, 1_000_000))

        def edit() -> None:  # another comment each time: the file misses the cache, the rest hit
            changed.write_bytes(original + f"\n# bench edit {next(edits)}\n".encode())

        def restore() -> None:
            changed.write_bytes(original)

        vllm_tools = [
            Tool("kvlint cold (vllm)", kvlint_cold_argv + ["."]),
            Tool("ruff (vllm)", [args.ruff, "check", "--no-cache", "--isolated", "--select", RUFF_RULE,
                                 "--exit-zero", "--quiet", "."]),
            Tool("parse floor (vllm)", [args.floor, str(vllm_listing)]),
            Tool("pre-commit (vllm)", kvlint_check + ["--cache-dir", str(vllm_cache), args.precommit_file],
                 before=edit, after=restore),
            Tool("walk floor (vllm)", [args.floor, "--walk", str(vllm_listing)]),
        ]
        try:
            round_robin(vllm_tools, vllm, args.reps)
        finally:
            restore()
    tools += vllm_tools

    # ------------------------------------------------------------ table
    def median(tool: Tool) -> float | None:
        return statistics.median(tool.times) if tool.times else None

    cold = median(tools[0])
    print(f"\n{'tool':<19} {'median':>10} {'min':>10} {'cpu (med)':>10} {'files/s':>10} "
          f"{'vs kvlint cold':>15} {'peak RSS':>9}")
    for tool in tools:
        if tool in site_tools or tool in vllm_tools:
            continue
        mid = median(tool)
        low = min(tool.times) if tool.times else None
        if mid is None:
            bound = f">{args.semgrep_timeout:.0f} s (capped)" if tool is semgrep and semgrep_capped \
                else f"FAILED: {tool.error}"
            print(f"{tool.name:<19} {bound}")
            continue
        rate = f"{files / mid:10.0f}" if mid > 0 else "-"
        ratio = f"{mid / cold:14.2f}x" if cold else "-"
        cpu = statistics.median(tool.cpu_times) if tool.cpu_times else None
        rss = f"{max(tool.peak_rss):6.0f} MB" if tool.peak_rss else "-"
        print(f"{tool.name:<19} {seconds(mid):>10} {seconds(low):>10} {seconds(cpu):>10} {rate} {ratio} "
              f"{rss:>9}")
    # Rows of the other trees: the vllm-omni ones are compared with kvlint cold on vllm-omni.
    vllm_cold = median(vllm_tools[0]) if vllm_tools else None
    for tool in site_tools + vllm_tools:
        mid = median(tool)
        if mid is None:
            print(f"{tool.name:<19} FAILED: {tool.error}")
            continue
        cpu = statistics.median(tool.cpu_times)
        shown = f"{mid / vllm_cold:14.2f}x" if tool in vllm_tools and vllm_cold else f"{'':>15}"
        print(f"{tool.name:<19} {seconds(mid):>10} {seconds(min(tool.times)):>10} {seconds(cpu):>10} "
              f"{'':>10} {shown} {max(tool.peak_rss):6.0f} MB")

    # ------------------------------------------------------------ targets
    # Verdicts use wall-time medians; the CPU-time ratio beside each is there
    # to read a run on a loaded machine, where waiting for a core inflates wall time.
    def cpu_median(tool: Tool) -> float | None:
        return statistics.median(tool.cpu_times) if tool.cpu_times else None

    def ratio(a: float | None, b: float | None) -> float | None:
        return a / b if a and b else None

    kv_cold, kv_warm, ripgrep, ruff = tools[:4]
    kv_single, floor, walk_floor = tools[4], tools[5], tools[6]
    cold_cpu = cpu_median(kv_cold)
    results = []

    def target(label: str, wall: float | None, cpu: float | None, limit: float, at_most: bool,
               bound: bool = False):
        if wall is None:
            verdict, shown = "n/a", "-"
        else:
            met = wall <= limit if at_most else wall >= limit
            shown = f"{'>' if bound else ''}{wall:.2f}x"
            # A lower bound that meets ">= limit" is a pass; one that does not decides nothing.
            verdict = "PASS" if met else ("UNDECIDED (semgrep capped)" if bound else "MISS")
        cpu_shown = "-" if cpu is None else f"{'>' if bound else ''}{cpu:.2f}x"
        print(f"  {label:<34} {shown:>10} {cpu_shown:>10}  {verdict}")
        results.append({"target": label, "wall_ratio": wall, "cpu_ratio": cpu, "verdict": verdict})

    def info(label: str, wall: float | None, cpu: float | None):
        """A ratio with no target, printed in the same columns: where a target's floor lies."""
        shown = "-" if wall is None else f"{wall:.2f}x"
        cpu_shown = "-" if cpu is None else f"{cpu:.2f}x"
        print(f"  {label:<34} {shown:>10} {cpu_shown:>10}  (no target)")
        results.append({"target": label, "wall_ratio": wall, "cpu_ratio": cpu, "verdict": "info"})

    print(f"\ntargets (medians)                  {'wall':>10} {'cpu':>10}")
    target("kvlint cold <= 3x ripgrep", ratio(cold, median(ripgrep)),
           ratio(cold_cpu, cpu_median(ripgrep)), 3, True)
    if median(semgrep) is not None:
        target("semgrep / kvlint cold >= 20", ratio(median(semgrep), cold),
               ratio(cpu_median(semgrep), cold_cpu), 20, False)
    elif semgrep_capped:
        target("semgrep / kvlint cold >= 20", ratio(args.semgrep_timeout, cold), None, 20, False,
               bound=True)
    else:
        target("semgrep / kvlint cold >= 20", None, None, 20, False)
    target("kvlint cold <= 1x ruff", ratio(cold, median(ruff)), ratio(cold_cpu, cpu_median(ruff)),
           1, True)
    target("kvlint warm <= 0.1x kvlint cold", ratio(median(kv_warm), cold),
           ratio(cpu_median(kv_warm), cold_cpu), 0.1, True)
    # kvlint's overhead over tree-sitter's own parse of the same bytes.
    target("kvlint cold <= 1.3x parse floor", ratio(cold, median(floor)), ratio(cold_cpu, cpu_median(floor)),
           1.3, True)
    target("kvlint cold -j1 <= 1.3x parse floor", ratio(median(kv_single), median(floor)),
           ratio(cpu_median(kv_single), cpu_median(floor)), 1.3, True)
    # What visiting every node costs by itself, and kvlint above that: the 1.3x target is
    # out of reach for a one-walk design once the walk floor alone is near it.
    info("walk floor / parse floor", ratio(median(walk_floor), median(floor)),
         ratio(cpu_median(walk_floor), cpu_median(floor)))
    info("kvlint cold / walk floor", ratio(cold, median(walk_floor)),
         ratio(cold_cpu, cpu_median(walk_floor)))
    if site_tools:
        site_kv, site_rg = site_tools
        target("site: kvlint cold <= 3x ripgrep", ratio(median(site_kv), median(site_rg)),
               ratio(cpu_median(site_kv), cpu_median(site_rg)), 3, True)
    if vllm_tools:
        v_cold, v_ruff, v_floor, v_pre, v_walk = vllm_tools
        target("vllm: kvlint cold <= 1x ruff", ratio(median(v_cold), median(v_ruff)),
               ratio(cpu_median(v_cold), cpu_median(v_ruff)), 1, True)
        target("vllm: kvlint cold <= 1.3x parse floor", ratio(median(v_cold), median(v_floor)),
               ratio(cpu_median(v_cold), cpu_median(v_floor)), 1.3, True)
        info("vllm: walk floor / parse floor", ratio(median(v_walk), median(v_floor)),
             ratio(cpu_median(v_walk), cpu_median(v_floor)))
        pre = median(v_pre)
        print(f"  {'vllm: pre-commit run <= 0.1 s':<34} {seconds(pre):>10} {seconds(cpu_median(v_pre)):>10}  "
              f"{'n/a' if pre is None else 'PASS' if pre <= 0.1 else 'MISS'}")
        results.append({"target": "vllm: pre-commit run <= 0.1 s", "wall_s": pre,
                        "verdict": "n/a" if pre is None else "PASS" if pre <= 0.1 else "MISS"})
    # Peak RSS, in MB over 300 MB (printed in the ratio columns as a fraction of the limit).
    for tool in (kv_cold, kv_single, *site_tools[:1], *vllm_tools[:1]):
        if tool.peak_rss:
            peak = max(tool.peak_rss)
            print(f"  {tool.name + ' peak RSS <= 300 MB':<34} {peak:>8.0f}MB {'':>10}  "
                  f"{'PASS' if peak <= 300 else 'MISS'}")
            results.append({"target": f"{tool.name} peak RSS <= 300 MB", "peak_rss_mb": peak,
                            "verdict": "PASS" if peak <= 300 else "MISS"})

    # ------------------------------------------------------------ findings
    print("\nkvlint findings (for false-positive review)")
    transformers_run = subprocess.run(
        kvlint_check[:2] + ["--no-cache"] + kvlint_check[2:] + ["transformers"],
        cwd=corpus, capture_output=True)
    transformers_report.write_bytes(transformers_run.stdout)
    for label, report_path in (("transformers alone", transformers_report),
                               ("transformers + stdlib", corpus_report)):
        try:
            counts, report = findings_by_code(report_path)
        except (json.JSONDecodeError, OSError) as error:
            print(f"  {label}: no JSON report ({error}); see {report_path}")
            continue
        summary = report.get("summary", {})
        by_code = ", ".join(f"{code} {n}" for code, n in sorted(counts.items())) or "none"
        print(f"  {label}: {sum(counts.values())} findings ({by_code}); "
              f"files {summary.get('files', '?')}, diagnostics {len(report.get('diagnostics', []))}"
              f"  -> {report_path}")
    try:
        semgrep_report = json.loads(semgrep_json.read_text())
        print(f"  semgrep rule: {len(semgrep_report.get('results', []))} matches in "
              f"{len(semgrep_report.get('paths', {}).get('scanned', []))} scanned files"
              f"  -> {semgrep_json}")
    except (json.JSONDecodeError, OSError):
        pass

    record = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "cores": os.cpu_count(), "corpus": {"files": files, "lines": lines, "bytes": size},
        "versions": versions,
        "times": {t.name: {"wall": t.times, "cpu": t.cpu_times, "peak_rss_mb": t.peak_rss,
                           "error": t.error} for t in tools},
        "targets": results,
    }
    (args.results / "bench.json").write_text(json.dumps(record, indent=2))
    print(f"\nrecord: {args.results / 'bench.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
