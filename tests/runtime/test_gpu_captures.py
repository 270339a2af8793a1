"""CUDA-graph captures (run only where CUDA is available; skipped on CPU)."""
from __future__ import annotations

import pytest
import torch

from conftest import entry, run_harness
from test_fixture_models import line_of

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")

BUCKETS = 8  # local_transformer.model.GRAPH_BUCKETS


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
    cache = run.one("cache", path="graph", concurrency=1)
    assert cache["in_capture"] is True and cache["bytes_per_row"] == 720896
    pool = [d for d in run.of("declaration", path="graph", concurrency=1)
            if d["name"] == "local_transformer_graph_pool"]
    assert [(d["rows_driver"], d["rows"]) for d in pool] == [("FIXED", 261)]


def test_capture_under_enforce_eager_is_visible():
    run = run_harness(cuda_entry("local_gpu_eager", "local_transformer.eager_capture", ["eager"], [1]))
    assert run.one("capture", path="eager", concurrency=1)["count"] == BUCKETS
