#!/usr/bin/env python3
"""Byte-compare kvlint's JSON findings of two binaries on the trees a front-end change must not alter.

    bench/compare_findings.py [--through-cache] REFERENCE_KVLINT [CANDIDATE_KVLINT]

CANDIDATE defaults to build/kvlint. Copy a binary together with the C++ front-end module
beside it (libkvlint_cpp_frontend.so), which it loads from its own directory; without it the
C++ files give other diagnostics. Runs `kvlint check --no-cache --exit-zero --format json`
with each binary on: this repository, examples/models, transformers 4.57.6, vllm-omni 0.26.0, 0.30.0 and
0.32.0rc1 (~/.cache/kvlint/corpus), the transformers 5 package of the runtime venv
(~/.cache/kvlint/runtime/venv-torch*-tf5*) and the bench corpus (transformers + stdlib, under
$KVLINT_BENCH_HOME, default ~/.cache/kvlint/bench as in bench/run). Trees that are absent are
reported as skipped. `--through-cache` runs the candidate from its facts cache instead: one run
fills a fresh cache directory, its run memo is removed, and the timed second run reads every
analysed file's facts back from the cache (a cache-format change must not move a finding). Exit 0 when every present tree gives byte-identical output, 1 otherwise
(the differing outputs are kept under /tmp/kvlint-compare-findings/ for a diff).
Standard library only.
"""
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CACHE = Path.home() / ".cache" / "kvlint"
BENCH_HOME = Path(os.environ.get("KVLINT_BENCH_HOME", CACHE / "bench"))
KEEP = Path("/tmp/kvlint-compare-findings")


def trees():
    bench = sorted(BENCH_HOME.glob("corpus-transformers-*-stdlib-*"))
    yield "repository", REPO, ["."]
    yield "examples/models", REPO, ["examples/models"]
    yield "transformers-4.57.6", CACHE / "corpus" / "transformers-4.57.6", ["."]
    yield "vllm-omni-0.26.0", CACHE / "corpus" / "vllm-omni-0.26.0", ["."]
    yield "vllm-omni-0.30.0", CACHE / "corpus" / "vllm-omni-0.30.0", ["."]
    yield "vllm-omni-0.32.0rc1", CACHE / "corpus" / "vllm-omni-0.32.0rc1", ["."]
    # The transformers 5 package of the runtime venv (scripts/setup), a tree with the 5.x cache classes.
    tf5 = sorted((CACHE / "runtime").glob("venv-torch*-tf5*/lib/python3*/site-packages"))
    if tf5:
        yield "transformers-5 (venv)", tf5[-1], ["transformers"]
    if bench:
        yield "bench corpus", bench[-1], ["transformers", "stdlib"]


def run(binary, cwd, paths, cache_dir=None):
    start = time.monotonic()
    cache = ["--cache-dir", str(cache_dir)] if cache_dir else ["--no-cache"]
    done = subprocess.run([str(binary), "check", *cache, "--exit-zero", "--format", "json", *paths],
                          cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    if done.returncode != 0:
        sys.exit(f"{binary} failed on {cwd}: exit {done.returncode}\n{done.stderr.decode(errors='replace')}")
    return done.stdout, time.monotonic() - start


def run_through_cache(binary, cwd, paths):
    with tempfile.TemporaryDirectory() as cache_dir:
        run(binary, cwd, paths, cache_dir)
        (Path(cache_dir) / "last-run.cbor").unlink(missing_ok=True)
        return run(binary, cwd, paths, cache_dir)


def main():
    args = sys.argv[1:]
    through_cache = "--through-cache" in args
    args = [a for a in args if a != "--through-cache"]
    if len(args) not in (1, 2):
        sys.exit(__doc__)
    reference = Path(args[0]).resolve()
    candidate = Path(args[1] if len(args) == 2 else REPO / "build" / "kvlint").resolve()
    differing = 0
    for name, cwd, paths in trees():
        if not all((cwd / p).exists() for p in paths):
            print(f"{name:22} skipped (not present: {cwd})")
            continue
        ref, ref_s = run(reference, cwd, paths)
        new, new_s = run_through_cache(candidate, cwd, paths) if through_cache else run(candidate, cwd, paths)
        same = ref == new
        print(f"{name:22} {'identical' if same else 'DIFFERENT'}  {len(ref):>9} bytes  "
              f"reference {ref_s:6.2f} s  candidate {new_s:6.2f} s")
        if not same:
            differing += 1
            KEEP.mkdir(exist_ok=True)
            slug = name.replace("/", "_").replace(" ", "_")
            (KEEP / f"{slug}.reference.json").write_bytes(ref)
            (KEEP / f"{slug}.candidate.json").write_bytes(new)
    if differing:
        print(f"{differing} tree(s) differ; outputs in {KEEP}")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
