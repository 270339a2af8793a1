#!/usr/bin/env python3
"""Runtime regression test on a real project nobody here wrote: `kvlint confirm` over `kvlint
check`'s findings on a released tree from PyPI, booting the real classes through the boot entries
in tests/real_trees/runtime, compared with a triaged expectation file.

    tests/real_trees/check_runtime_tree.py tests/real_trees/vllm_omni_0_30_0_runtime.toml [--kvlint build/kvlint]
    tests/real_trees/check_runtime_tree.py EXPECTATIONS --inventory   # print what the run gives, to triage

The expectation file (TOML) names the distribution, the boot-entry config and holds:
  [[result]]           every static finding a boot entry covers: its verdict and, when the run
                       measured a cache for it, bytes per row, rows and the concurrency.
  [[runtime_finding]]  every RT001..RT004 the run reports, with bytes per row and rows.
  [[memory]]           per model, path, concurrency and owner: declared vs observed bytes and rows.
  [[model]]            every boot entry: complete or inconclusive.
  [[unsettled]]        (code, path, line) of a static finding whose presence the front end is still
                       settling (a false positive being fixed): its result is compared when the
                       finding exists and not required when it does not.
Each entry carries a `reason`. The test fails on any difference, in either direction.

The tree is fetched as tests/real_trees/check_real_tree.py fetches it (~/.cache/kvlint/corpus);
the interpreter is `runtime/setup-env tf5`, created when missing.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_real_tree import REPO, fetch_tree, run_check  # noqa: E402


def result_key(r: dict) -> tuple:
    return (r["code"], r["path"].removeprefix("./"), r["line"])


def observed_fields(evidence: dict) -> dict:
    obs = evidence.get("observed") or {}
    out = {}
    if obs:
        out = {"bytes_per_row": obs["bytes_per_row"], "rows": obs["rows"],
               "concurrency": evidence.get("concurrency") or 0}
    return out


def actual_tables(report: dict) -> dict[str, dict[tuple, dict]]:
    results = {}
    for r in report["results"]:
        if not (r["evidence"] or {}).get("model"):
            continue  # no boot entry covers its owner: the static test's business
        results[result_key(r)] = {"verdict": r["verdict"], **observed_fields(r["evidence"])}
    runtime = {}
    for r in report["runtime_findings"]:
        key = (r["code"], r["path"].removeprefix("./"), r["line"])
        runtime[key] = {"owner": r["owner"], **observed_fields(r["evidence"])}
    memory, models = {}, {}
    for m in report["models"]:
        models[(m["name"],)] = {"status": m["status"]}
        for row in m.get("memory", []):
            key = (m["name"], row["path"], row["concurrency"], row["owner"])
            memory[key] = {"declared_bytes": row["declared_bytes"], "observed_bytes": row["observed_bytes"],
                           "observed_rows": row["observed_rows"]}
    return {"result": results, "runtime_finding": runtime, "memory": memory, "model": models}


KEYS = {"result": ("code", "path", "line"), "runtime_finding": ("code", "path", "line"),
        "memory": ("model", "path", "concurrency", "owner"), "model": ("name",)}


def expected_tables(expected: dict) -> dict[str, dict[tuple, dict]]:
    out = {}
    for table, keys in KEYS.items():
        rows = {}
        for e in expected.get(table, []):
            rows[tuple(e[k] for k in keys)] = {k: v for k, v in e.items() if k not in keys and k != "reason"}
        out[table] = rows
    return out


def toml_value(v) -> str:
    return json.dumps(v) if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("expectations", type=Path)
    parser.add_argument("--kvlint", type=Path, default=REPO / "build" / "kvlint")
    parser.add_argument("--inventory", action="store_true", help="print the run as TOML stubs to triage")
    parser.add_argument("--keep", type=Path, help="also write the confirm JSON here")
    args = parser.parse_args()
    started = time.monotonic()
    expected = tomllib.loads(args.expectations.read_text(encoding="utf-8"))
    tree = fetch_tree(expected["distribution"], expected["version"])
    kvlint = args.kvlint.resolve()
    config = (REPO / expected["config"]).resolve()
    # The interpreter the boot entries name (created here when CI starts from nothing).
    subprocess.run([str(REPO / "runtime" / "setup-env"), "tf5"], check=True, stdout=subprocess.DEVNULL)

    with tempfile.TemporaryDirectory() as tmp:
        findings = Path(tmp) / "findings.json"
        findings.write_text(json.dumps(run_check(kvlint, tree)), encoding="utf-8")
        out = Path(tmp) / "confirm.json"
        env = dict(os.environ, KVLINT_REAL_TREE=str(tree))
        # --all: the declaring classes no finding names are booted too (RT002-RT004 need no finding).
        proc = subprocess.run([str(kvlint), "confirm", "--all", "--findings", str(findings), "--config",
                               str(config), "--format", "json", "-o", str(out)], cwd=tree, env=env,
                              capture_output=True, text=True)
        if proc.returncode not in (0, 1) or not out.exists():
            print(proc.stderr[-4000:])
            print(f"real-tree runtime: kvlint confirm exited {proc.returncode}")
            print("real-tree runtime: 0 passed, 1 failed")
            return 1
        report = json.loads(out.read_text(encoding="utf-8"))
        if args.keep:
            args.keep.write_text(out.read_text(encoding="utf-8"), encoding="utf-8")
    actual = actual_tables(report)

    if args.inventory:
        for table, keys in KEYS.items():
            for key, fields in sorted(actual[table].items(), key=lambda kv: tuple(map(str, kv[0]))):
                print(f"[[{table}]]")
                for k, v in list(zip(keys, key)) + list(fields.items()):
                    print(f"{k} = {toml_value(v)}")
                print('reason = ""\n')
        return 0

    problems = []
    want = expected_tables(expected)
    for e in expected.get("unsettled", []):
        key = (e["code"], e["path"], e["line"])
        if key not in actual["result"]:
            want["result"].pop(key, None)
    for table in KEYS:
        for key in sorted(actual[table].keys() - want[table].keys(), key=str):
            problems.append(f"new {table} {key}: {actual[table][key]}")
        for key in sorted(want[table].keys() - actual[table].keys(), key=str):
            problems.append(f"lost {table} {key}: expected {want[table][key]}")
        for key in sorted(actual[table].keys() & want[table].keys(), key=str):
            if actual[table][key] != want[table][key]:
                problems.append(f"changed {table} {key}: expected {want[table][key]}, got {actual[table][key]}")
    for table in (*KEYS, "unsettled"):
        for e in expected.get(table, []):
            if not e.get("reason"):
                problems.append(f"untriaged {table} entry (no reason): {e}")
    by_verdict = report["summary"]["by_verdict"]
    print(f"real-tree runtime {expected['distribution']} {expected['version']}: "
          f"{len(report['models'])} models booted, {len(actual['result'])} covered findings "
          f"({', '.join(f'{k} {v}' for k, v in sorted(by_verdict.items()))} over all findings), "
          f"{len(actual['runtime_finding'])} runtime findings, {time.monotonic() - started:.0f} s")
    if problems:
        print("\n".join(problems))
        print(f"real-tree runtime: 0 passed, {len(problems)} failed")
        return 1
    print("real-tree runtime: 1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
