"""The tracker's bookkeeping of captured caches, on any machine.

No CUDAGraph can capture without a GPU, so these drive the tracker's two capture hooks (what the
patched `CUDAGraph.capture_begin` / `capture_end` call) around the MiMo fixture's real
DynamicCache code, with a plain object standing for the graph: its lifetime is what the tracker
follows. test_gpu_captures checks the same figures through real captures on CUDA.

Objects are dropped with `.clear()`, not `del`: the tracker reads `f_locals` of the frames on a
cache's creating chain (the owner's `self`), and on Python 3.11 that snapshot keeps a running
frame's locals alive until the frame returns.
"""
from __future__ import annotations

import gc
import sys

import torch

from kvlint_runtime.tracking import Tracker
from local_transformer.model import GRAPH_BUCKETS, MiMoLocalTransformer


class Graph:
    """Stands for a torch.cuda.CUDAGraph: the tracker only holds it weakly."""


def capture_buckets(tracker: Tracker, model: MiMoLocalTransformer) -> dict:
    graphs = {}
    for bucket in GRAPH_BUCKETS:
        model._decode_group(bucket)  # the warm-up outside the capture, as the fixture does
        graph = Graph()
        tracker._on_capture_begin(graph, sys._getframe())
        model._decode_group(bucket)  # its DynamicCache is a local: gone as an object on return
        tracker._on_capture_end()
        graphs[bucket] = graph
    return graphs


def caches(tracker: Tracker) -> dict:
    return {r["in_capture"]: r for r in tracker.cache_reports()}


@torch.no_grad()
def test_captured_caches_count_while_their_graphs_live():
    tracker = Tracker()
    with tracker.installed():
        model = MiMoLocalTransformer("cpu")
        tracker.begin_run()
        graphs = capture_buckets(tracker, model)
        gc.collect()
        reports = caches(tracker)
        # The pool: every bucket's cache, 1 + 2 + ... + 134 rows, held though no object is left.
        assert reports[True]["rows"] == sum(GRAPH_BUCKETS) == 261
        assert reports[True]["objects"] == len(GRAPH_BUCKETS)
        assert reports[True]["alive_after_step"] is True
        assert reports[True]["rows_alive_at_end"] == 261
        assert reports[True]["bytes_per_row"] == 720896
        # The warm-ups: an eager site of the same line, at most the widest bucket at once.
        assert reports[False]["rows"] == max(GRAPH_BUCKETS)
        assert reports[False]["alive_after_step"] is False and reports[False]["rows_alive_at_end"] == 0
        (captured,) = tracker.capture_reports()
        assert captured["count"] == len(GRAPH_BUCKETS) and captured["retained"] is False

        # The next path replays what the first captured: it holds the graphs, it made no capture,
        # and the eager cache it builds is its own site.
        tracker.begin_run()
        model._decode_group(4)
        gc.collect()
        assert [(r["in_capture"], r["rows"]) for r in tracker.cache_reports()] == [(False, 4)]
        (held,) = tracker.capture_reports()
        assert held["retained"] is True and held["count"] == len(GRAPH_BUCKETS)
        assert (held["kind"], held["line"]) == (captured["kind"], captured["line"])

        # A graph captured again (CUDAGraph.reset() then a new capture) is that path's capture.
        tracker.begin_run()
        tracker._on_capture_begin(graphs[1], sys._getframe())
        tracker._on_capture_end()
        reports = tracker.capture_reports()
        assert sorted((r["retained"], r["count"]) for r in reports) == [(False, 1), (True, len(GRAPH_BUCKETS) - 1)]

        # Graphs dropped: nothing is held any more.
        graphs.clear()
        gc.collect()
        tracker.begin_run()
        assert tracker.capture_reports() == []


@torch.no_grad()
def test_a_captured_cache_still_referenced_outlives_its_graph_as_an_object():
    """Qwen3-TTS keeps its captured caches on the wrapper: the object, not the graph, keeps them."""
    tracker = Tracker()
    with tracker.installed():
        from transformers import DynamicCache

        tracker.begin_run()
        graphs, kept = [Graph()], []
        tracker._on_capture_begin(graphs[0], sys._getframe())
        kept.append(DynamicCache())
        kv = torch.zeros(2, 8, 3, 128, dtype=torch.bfloat16)
        kept[0].update(kv, kv, 0)
        tracker._on_capture_end()
        graphs.clear()
        gc.collect()
        (report,) = tracker.cache_reports()
        assert report["in_capture"] is True and report["rows"] == 2 and report["alive_after_step"] is True
        kept.clear()
        gc.collect()
        (report,) = tracker.cache_reports()
        assert report["rows_alive_at_end"] == 0 and report["alive_after_step"] is False
        tracker.begin_run()
        assert tracker.capture_reports() == []  # the graph is gone: nothing retained
