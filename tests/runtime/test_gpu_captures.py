"""CUDA-graph captures (run only where CUDA is available; skipped on CPU)."""
from __future__ import annotations

import pytest
import torch

from conftest import entry, run_harness
from test_fixture_models import line_of

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")

BUCKETS = 8  # len(local_transformer.model.GRAPH_BUCKETS)
BUCKET_ROWS = 261  # sum(local_transformer.model.GRAPH_BUCKETS)


def cuda_entry(name, module, paths, concurrency):
    spec = entry(name, module, paths, concurrency)
    spec["device"] = "cuda"
    return spec


def test_graph_pool_captures_are_recorded_with_their_line_and_resident_bytes():
    run = run_harness(cuda_entry("local_gpu", "local_transformer.model", ["eager", "graph"], [1, 4]))
    assert run.events[-1]["event"] == "end", run.stderr[-3000:]
    assert not run.of("capture", path="eager")  # gated on enforce_eager
    (capture,) = run.of("capture", path="graph", concurrency=1)
    assert capture["kind"] == "graph_context" and capture["count"] == BUCKETS
    assert capture["line"] == line_of("local_transformer/model.py", "with torch.cuda.graph(graph):")
    assert capture["owner"] == "MiMoLocalTransformer"
    assert capture["resident_bytes"] is not None and capture["resident_bytes"] > 0
    cache = run.one("cache", path="graph", concurrency=1, in_capture=True)
    assert cache["bytes_per_row"] == 720896 and cache["objects"] == BUCKETS
    # Each bucket's cache is a local of the captured call, gone as an object, its K/V kept in the
    # graph's pool: all eight count while the graphs live, the bucket sum the pool declares.
    assert cache["rows"] == BUCKET_ROWS and cache["alive_after_step"] is True
    # The warm-up call before each capture is an eager cache of the same line, reported apart.
    warmup = run.one("cache", path="graph", concurrency=1, in_capture=False)
    assert warmup["rows"] == 134 and warmup["alive_after_step"] is False
    # Concurrency 4 replays the graphs captured at 1: it holds them, it does not capture.
    assert not run.of("cache", path="graph", concurrency=4)
    (held,) = run.of("capture", path="graph", concurrency=4)
    assert held["retained"] is True and held["count"] == BUCKETS
    assert held["resident_bytes"] == capture["resident_bytes"]
    assert capture["retained"] is False
    pool = [d for d in run.of("declaration", path="graph", concurrency=1)
            if d["name"] == "local_transformer_graph_pool"]
    assert [(d["rows_driver"], d["rows"]) for d in pool] == [("FIXED", 261)]


def test_capture_under_enforce_eager_is_visible():
    run = run_harness(cuda_entry("local_gpu_eager", "local_transformer.eager_capture", ["eager"], [1, 4]))
    captured = run.one("capture", path="eager", concurrency=1)
    assert captured["count"] == BUCKETS and captured["retained"] is False
    assert run.one("capture", path="eager", concurrency=4)["retained"] is True
