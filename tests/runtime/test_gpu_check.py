"""runtime/gpu-check: the CPU dry run of the one-shot GPU check, its harness-only
fallback (no kvlint binary) and its prerequisite report."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "runtime" / "gpu-check"


def kvlint_binary() -> Path:
    configured = os.environ.get("KVLINT_BINARY")
    return Path(configured) if configured else REPO / "build" / "kvlint"


@pytest.fixture(scope="module")
def host_build_dir(tmp_path_factory) -> str:
    """Where gpu-check builds kvlint-model-host: the checkout's build when it was built for this
    interpreter, else one directory both runs share, so the host is built once per session.
    When the checkout's host was built for another interpreter (scripts/test builds it for the
    pinned venv, and runs these tests in the tf5 venv too), the dry runs are left to that
    interpreter: a second LibTorch host build took four of the tf5 run's twelve minutes in CI.
    KVLINT_GPU_CHECK_ANY_HOST=1 runs them here anyway."""
    checkout = REPO / "build" / "runtime-host"
    cache = checkout / "CMakeCache.txt"
    if cache.is_file():
        built_for = next((line.split("=", 1)[1] for line in cache.read_text().splitlines()
                          if line.startswith("KVLINT_TORCH_PYTHON:FILEPATH=")), "")
        if built_for == sys.executable:
            return str(checkout)
        if built_for and os.environ.get("KVLINT_GPU_CHECK_ANY_HOST") != "1":
            pytest.skip(f"the checkout's kvlint-model-host is built for {built_for}, where these dry runs "
                        "run; KVLINT_GPU_CHECK_ANY_HOST=1 builds one for this interpreter too")
    return str(tmp_path_factory.mktemp("runtime-host"))


def run_check(out: Path, *args: str, python: str = sys.executable, **env: str) -> subprocess.CompletedProcess:
    full_env = dict(os.environ, KVLINT_GPU_PYTHON=python, OUT=str(out), **env)
    return subprocess.run([str(SCRIPT), *args], cwd=REPO, capture_output=True, text=True, timeout=900,
                          env=full_env)


def cpp_section(log: str) -> str:
    return log.split("C++ example plugin in kvlint-model-host directly", 1)[1].split("\n== ", 1)[0]


def test_dry_run_through_kvlint_confirm(tmp_path, host_build_dir):
    binary = kvlint_binary()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.skip(f"kvlint binary not found at {binary} (build it, or set KVLINT_BINARY)")
    proc = run_check(tmp_path, "--dry-run-cpu", "--models", "codec,local_transformer_eager_capture",
                     KVLINT_BINARY=str(binary), KVLINT_GPU_HOST_BUILD_DIR=host_build_dir)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    log = (tmp_path / "gpu-check.log").read_text()
    assert log == proc.stdout  # everything printed is in the log
    assert "device cpu" in log and "test_gpu_captures" not in log  # the GPU-only step is skipped
    # Observed vs declared per model: the codec's 4.44 MiB/row, one row per in-flight request.
    assert ("observed DynamicCache model.py:39 4.44 MiB/row x rows=4 objects=4 positions=71 layers=8 -> "
            "declared codec_decoder: 4.44 MiB/row x rows=4 (MAX_NUM_SEQS): bytes/row match, rows match") in log
    assert "no cache observed; nothing declared" in log  # the stateless path is inert
    # Residency with and without enforce_eager: no capture without CUDA.
    assert "enforce_eager: 0 capture(s), reserved +0 B" in log
    fixtures = json.loads((tmp_path / "gpu-check-confirm-fixtures.json").read_text())
    assert sorted(m["name"] for m in fixtures["models"]) == ["codec", "local_transformer_eager_capture"]
    assert {m["runtime"]["device"] for m in fixtures["models"]} == {"cpu"}
    examples = json.loads((tmp_path / "gpu-check-confirm-examples.json").read_text())
    verdicts = {(r["code"], Path(r["path"]).name): r["verdict"] for r in examples["results"]}
    assert verdicts[("KV202", "codec_decoder.py")] == "confirmed"
    assert verdicts[("KV303", "local_transformer.py")] == "not-exercised"
    assert "CONFIRMED KV202 examples/models/qwen3_tts/codec_decoder.py:44" in log
    # The C++ example straight in kvlint-model-host (paths generate + graph; no capture on CPU): its
    # per-request map holds 4 rows of 24.00 MiB at concurrency 4 against a FIXED 1-row declaration.
    cpp = cpp_section(log)
    assert "model cpp_talker: complete" in cpp and "graph c=4:" in cpp
    assert ("24.00 MiB/row x rows=4 objects=4 positions=0 layers=0 -> declared talker_static_kv: 24.00 MiB/row x "
            "rows=1 (FIXED): bytes/row match, ROWS DIFFER") in cpp
    has_cuda_side = (Path(torch.__file__).parent / "lib" / "libtorch_cuda.so").is_file()
    assert f"host: CUDA side {'built in' if has_cuda_side else 'NOT built in'}" in cpp
    assert "capture " not in cpp and "caching allocator" not in cpp  # CUDA only
    # vllm-omni 0.32.0rc1's VibeVoice pool refuses a CPU device: the dry run says so and skips it.
    assert "SKIP VibeVoiceNegativeKV: its allocate refuses a CPU device" in log


def test_dry_run_without_kvlint_runs_the_harness_directly(tmp_path, host_build_dir):
    proc = run_check(tmp_path, "--dry-run-cpu", "--models", "codec", KVLINT_BINARY=str(tmp_path / "no-kvlint"),
                     KVLINT_DEPS_DIR=str(tmp_path / "no-deps"), KVLINT_TS_PYTHON_DIR="",
                     KVLINT_GPU_HOST_BUILD_DIR=host_build_dir)
    assert proc.returncode == 0, proc.stdout[-6000:]
    assert "SKIP confirm" in proc.stdout and "through the harness directly" in proc.stdout
    assert "declared codec_decoder: 4.44 MiB/row x rows=4 (MAX_NUM_SEQS): bytes/row match" in proc.stdout
    events = [json.loads(line) for line in (tmp_path / "gpu-check-harness.jsonl").read_text().splitlines()]
    assert events[0]["event"] == "start" and events[0]["device"] == "cpu" and events[-1]["event"] == "end"
    # The C++ example needs no kvlint: it runs in the host all the same.
    assert "model cpp_talker: complete" in cpp_section(proc.stdout)


def test_missing_torch_is_reported_and_nothing_runs(tmp_path):
    # The same interpreter without site-packages: no torch, no transformers.
    bare = tmp_path / "bare-python"
    bare.write_text(f"#!/bin/sh\nexec {sys.executable} -S \"$@\"\n")
    bare.chmod(0o755)
    proc = run_check(tmp_path, "--dry-run-cpu", python=str(bare))
    assert proc.returncode == 3, proc.stdout
    assert "MISSING: torch" in proc.stdout and "MISSING: transformers" in proc.stdout
    assert "kvlint confirm" not in proc.stdout


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the report on a machine without CUDA")
def test_gpu_run_without_cuda_says_so(tmp_path):
    proc = run_check(tmp_path)
    assert proc.returncode == 3, proc.stdout
    assert "MISSING: a usable CUDA device" in proc.stdout


def test_real_scale_step_says_why_it_is_skipped(tmp_path):
    # --real-scale on the CPU dry run: without the unpacked vllm-omni wheel the step names what is
    # missing and runs nothing (the host build is given no time: the C++ section fails, as intended).
    binary = kvlint_binary()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.skip(f"kvlint binary not found at {binary} (build it, or set KVLINT_BINARY)")
    proc = run_check(tmp_path, "--dry-run-cpu", "--real-scale", "--models", "codec", KVLINT_BINARY=str(binary),
                     KVLINT_GPU_HOST_BUILD_DIR=str(tmp_path / "host"), KVLINT_GPU_HOST_BUILD_TIMEOUT_S="1",
                     KVLINT_REAL_TREE=str(tmp_path / "no-tree"))
    log = proc.stdout
    assert "reference table at real scale (vllm-omni 0.30.0, device cpu)" in log, log[-4000:]
    assert f"SKIP real-scale: the vllm-omni 0.30.0 wheel is not unpacked at {tmp_path / 'no-tree'}" in log
    assert "reference-table:" not in log
