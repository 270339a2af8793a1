"""K/V kept as plain tensors (pools, rings, per-session buffers) is observed and reconciled.

The harness reports what a model keeps in tensors it allocated itself and writes while a path
runs as `cache` events of class "raw-tensor"; `kvlint confirm` reconciles them like cache objects:
a correctly declared pool agrees (no RT003 "declaration invents memory", no RT002), an undeclared
ring is RT001 with its measured bytes, and weights-like tables (rotary, mask buffers) give nothing.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any, Dict, List

import pytest

from conftest import FIXTURES, REPO
from test_confirm_reference_table import kvlint_binary, line_of

POOL_BYTES_PER_ROW = 2 * 2 * 16 * 2 * 8 * 4  # K+V x layers x positions x kv_heads x head_dim x fp32
RING_BYTES_PER_ROW = 2 * 2 * 8 * 2 * 8 * 4  # K+V x layers x window x kv_heads x head_dim x fp32


def pool(harness):
    return harness("raw_pool", "raw_kv.pool", ["serve"], [4])


def ring(harness):
    return harness("raw_ring", "raw_kv.ring", ["serve"], [1, 3])


def lookalike(harness):
    return harness("raw_lookalike", "raw_kv.lookalike", ["serve"], [1, 3])


def test_per_layer_pool_is_one_raw_store_with_slots_as_rows(harness):
    run = pool(harness)
    assert not run.of("error"), run.stderr[-3000:]
    store = run.one("cache", path="serve", concurrency=4)
    assert store["class"] == "raw-tensor" and store["owner"] == "PoolAttention"
    assert store["holder"] == "PoolAttention"
    # K and V of both layers, allocated on two lines, are one store at the first of them.
    assert store["file"] == str(FIXTURES / "raw_kv" / "pool.py")
    assert store["line"] == line_of("raw_kv/pool.py", "self.k_pool = torch.zeros(")
    v_line = line_of("raw_kv/pool.py", "self.v_pool = torch.zeros(")
    assert v_line in [frame["line"] for frame in store["chain"]]
    assert store["kept_by"] == ["layers.0.k_pool", "layers.0.v_pool", "layers.1.k_pool", "layers.1.v_pool"]
    assert store["objects"] == 4 and store["rows"] == 4
    assert store["bytes"] == 4 * POOL_BYTES_PER_ROW and store["bytes_per_row"] == POOL_BYTES_PER_ROW
    declared = run.one("declaration", path="serve", concurrency=4)
    assert declared["bytes_per_row"] == POOL_BYTES_PER_ROW and declared["rows"] == 4


def test_session_ring_rows_are_the_sessions_kept_in_a_dict(harness):
    run = ring(harness)
    assert not run.of("error"), run.stderr[-3000:]
    for concurrency in (1, 3):
        store = run.one("cache", path="serve", concurrency=concurrency)
        assert store["class"] == "raw-tensor" and store["owner"] == "RingTalker"
        assert store["holder"] == "_Session"
        assert store["line"] == line_of("raw_kv/ring.py", "_Session(k=torch.zeros(shape)")
        assert store["rows"] == concurrency and store["bytes_per_row"] == RING_BYTES_PER_ROW
        assert store["bytes"] == concurrency * RING_BYTES_PER_ROW
        assert f"_sessions[req-{concurrency - 1}].k" in store["kept_by"]


PACKED_RING_BYTES_PER_ROW = 2 * 2 * 2 * 8 * 8 * 4  # layers x K+V x kv_heads x window x head_dim x fp32
SESSION_BUFFER_BYTES_PER_ROW = 2 * 2 * 8 * 2 * 8 * 4  # layers x K+V x window x kv_heads*head_dim x fp32


def packed(harness):
    return harness("raw_packed", "raw_kv.packed", ["rings", "sessions"], [1, 3])


def test_ring_with_k_and_v_packed_ahead_of_rows_counts_its_second_axis_as_rows(harness):
    run = packed(harness)
    assert not run.of("error"), run.stderr[-3000:]
    for concurrency in (1, 3):
        store = run.one("cache", path="rings", concurrency=concurrency)
        assert store["owner"] == "_PackedRing" and store["holder"] == "_PackedRing"
        assert store["line"] == line_of("raw_kv/packed.py", "self.cache = torch.zeros((2, rows,")
        rows = concurrency + 1  # one per session and the scratch row, not the K/V axis of 2
        assert store["rows"] == rows and store["bytes_per_row"] == PACKED_RING_BYTES_PER_ROW


def test_buffers_written_by_foreach_copy_are_kv(harness):
    run = packed(harness)
    for concurrency in (1, 3):
        store = run.one("cache", path="sessions", concurrency=concurrency)
        assert store["owner"] == "_SessionBuffer" and store["holder"] == "_SessionBuffer"
        assert store["rows"] == concurrency and store["bytes_per_row"] == SESSION_BUFFER_BYTES_PER_ROW
        assert "sessions[s-0].kv" in store["kept_by"]


KERNEL_POOL_BYTES_PER_ROW = 2 * 8 * 2 * 8 * 4  # K+V x window x kv_heads*head_dim x fp32


def test_pool_written_by_a_kernel_the_dispatcher_does_not_show_is_kv_by_its_changed_contents(harness):
    run = harness("raw_kernel_pool", "raw_kv.kernel_pool", ["serve"], [1, 3])
    assert not run.of("error"), run.stderr[-3000:]
    for concurrency in (1, 3):
        store = run.one("cache", path="serve", concurrency=concurrency)
        assert store["owner"] == "KernelPool" and store["line"] == line_of("raw_kv/kernel_pool.py", "self.k = torch.empty(")
        assert store["rows"] == 3 and store["bytes_per_row"] == KERNEL_POOL_BYTES_PER_ROW  # the pool's slots
        assert store["kept_by"] == ["k", "v"]


def test_rotary_table_and_mask_buffers_are_not_kv(harness):
    run = lookalike(harness)
    assert not run.of("error"), run.stderr[-3000:]
    assert len(run.of("path_done", ok=True)) == 2
    assert not run.of("cache")


def test_raw_tensor_observation_can_be_turned_off(monkeypatch):
    from conftest import entry, run_harness

    monkeypatch.setenv("KVLINT_RAW_TENSORS", "0")
    run = run_harness(entry("raw_pool_off", "raw_kv.pool", ["serve"], [4]))
    assert len(run.of("path_done", ok=True)) == 1 and not run.of("cache")


# ---- end to end through `kvlint confirm` -------------------------------------------------------

ENTRIES = ["raw_pool", "raw_pool_half_positions", "raw_paged_pool", "raw_ring", "raw_lookalike"]


def kv101(relative: str, text: str, owner: str) -> Dict[str, Any]:
    line = line_of(relative, text)
    return {"code": "KV101", "name": "undeclared-kv", "severity": "error", "path": str(FIXTURES / relative),
            "line": line, "column": 9, "end_line": line, "end_column": 40, "owner": owner,
            "message": f"KV101 on {owner}", "related": [], "fingerprint": ""}


def confirm(tmp, findings: List[Dict[str, Any]]) -> Dict[str, Any]:
    binary = kvlint_binary()
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        pytest.skip(f"kvlint binary not found at {binary} (build it, or set KVLINT_BINARY)")
    text = (FIXTURES / "kvlint.toml").read_text()
    text = re.sub(r'(?m)^interpreter = ".*"$', f"interpreter = {json.dumps(sys.executable)}", text)
    text = text.replace('python-path = ["."]', f"python-path = [{json.dumps(str(FIXTURES))}]")
    (tmp / "kvlint.toml").write_text(text)
    (tmp / "findings.json").write_text(json.dumps(
        {"schema": "kvlint-findings", "version": 1, "tool": {"name": "kvlint", "version": "test"},
         "findings": findings, "diagnostics": []}))
    command = [str(binary), "confirm", "--config", str(tmp / "kvlint.toml"), "--findings",
               str(tmp / "findings.json"), "--format", "json", "--device", "cpu"]
    for model in ENTRIES:
        command += ["--model", model]
    env = dict(os.environ, KVLINT_RUNTIME_PYTHONPATH=str(REPO / "runtime" / "python"))
    proc = subprocess.run(command, cwd=tmp, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode in (0, 1), proc.stderr[-4000:]
    report = json.loads(proc.stdout)
    for model in report["models"]:
        assert model["status"] == "complete", (model["name"], model["reason"])
    return report


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Dict[str, Any]:
    # One static finding on raw K/V: the ring's allocation line, as `kvlint check` names it.
    return confirm(tmp_path_factory.mktemp("raw-kv"),
                   [kv101("raw_kv/ring.py", "_Session(k=torch.zeros(shape)", "RingTalker")])


def runtime_findings(report: Dict[str, Any], model: str) -> List[Dict[str, Any]]:
    return [f for f in report["runtime_findings"] if f["evidence"]["model"] == model]


def test_declared_raw_pool_agrees(report):
    assert runtime_findings(report, "raw_pool") == []
    memory = [row for row in next(m for m in report["models"] if m["name"] == "raw_pool")["memory"]
              if row["path"] == "serve"]
    assert sum(row["observed_bytes"] for row in memory) == sum(row["declared_bytes"] for row in memory)


PAGED_BYTES_PER_ROW = 2 * 2 * 2 * 8 * 16 * 4  # K+V x layers x kv_heads x head_dim x 4 pages of 4 x fp32


def test_paged_pool_counts_the_declared_slots_as_rows_not_its_pages(report):
    assert runtime_findings(report, "raw_paged_pool") == []  # no RT002/RT004 on 16 pages of a quarter row
    model = next(m for m in report["models"] if m["name"] == "raw_paged_pool")
    [store] = [c for c in model["observed"]["caches"] if c["class"] == "raw-tensor"]
    assert store["rows"] == 4 and store["bytes_per_row"] == PAGED_BYTES_PER_ROW
    [row] = [r for r in model["memory"] if r["path"] == "serve"]
    assert row["observed_bytes"] == row["declared_bytes"] == 4 * PAGED_BYTES_PER_ROW


def test_raw_pool_declared_with_half_its_positions_drifts(report):
    found = runtime_findings(report, "raw_pool_half_positions")
    assert [f["code"] for f in found] == ["RT002"], found
    assert found[0]["evidence"]["observed"]["bytes_per_row"] == POOL_BYTES_PER_ROW
    assert found[0]["evidence"]["declared"]["bytes_per_row"] == POOL_BYTES_PER_ROW // 2


def test_static_finding_on_a_raw_ring_is_confirmed(report):
    [result] = [r for r in report["results"] if r["owner"] == "RingTalker"]
    assert result["verdict"] == "confirmed", result["evidence"]
    assert result["evidence"]["observed"]["class"] == "raw-tensor"
    assert result["evidence"]["observed"]["bytes_per_row"] == RING_BYTES_PER_ROW
    assert runtime_findings(report, "raw_ring") == []  # the finding names it: no RT001 beside


def test_undeclared_raw_ring_is_rt001_with_measured_bytes(tmp_path):
    report = confirm(tmp_path, [])
    [found] = runtime_findings(report, "raw_ring")
    assert found["code"] == "RT001" and found["owner"] == "RingTalker"
    assert found["line"] == line_of("raw_kv/ring.py", "_Session(k=torch.zeros(shape)")
    observed = found["evidence"]["observed"]
    assert observed["class"] == "raw-tensor" and observed["bytes_per_row"] == RING_BYTES_PER_ROW
    assert "raw K/V tensors kept as `_sessions[req-0].k`" in found["message"]
    assert "holds 2 KiB per row" in found["message"]
    assert runtime_findings(report, "raw_pool") == runtime_findings(report, "raw_lookalike") == []
