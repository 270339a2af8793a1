"""In-process: the harness restores every patch and sees late subclasses."""
from __future__ import annotations

import torch
from transformers import cache_utils

from conftest import entry
from kvlint_runtime.harness import run_entry


def patched_attributes():
    classes = [cache_utils.Cache, cache_utils.DynamicCache, cache_utils.StaticCache,
               cache_utils.EncoderDecoderCache, torch.cuda.graphs.CUDAGraph]
    return {(cls.__name__, name): vars(cls).get(name)
            for cls in classes
            for name in ("__init__", "update", "__init_subclass__", "__deepcopy__", "capture_begin",
                         "capture_end")}


def test_patches_are_restored_and_late_subclasses_are_tracked():
    before = patched_attributes()
    events = []
    run_entry(entry("project_cache", "project_cache.model", ["default"], [1, 3]), events.append)
    assert patched_attributes() == before

    import project_cache.model as module  # imported during the run, after patching
    assert not getattr(module.RingCache.__init__, "_kvlint_wrapped", False)
    assert not getattr(vars(cache_utils.Cache)["__init__"], "_kvlint_wrapped", False)

    caches = [e for e in events if e["event"] == "cache"]
    assert [(c["class"], c["rows"], c["owner"]) for c in caches] == [("RingCache", 1, "Holder"),
                                                                      ("RingCache", 3, "Holder")]
    assert all(c["bytes_per_row"] == 2 * 2 * 2 * 3 * 4 * 4 for c in caches)
    assert all(c["alive_after_step"] for c in caches)  # Holder keeps it


def test_a_cache_built_after_the_run_is_not_recorded():
    events = []
    run_entry(entry("project_cache", "project_cache.model", ["default"], [1]), events.append)
    count = len(events)
    cache_utils.DynamicCache().update(torch.zeros(1, 1, 1, 1), torch.zeros(1, 1, 1, 1), 0)
    assert len(events) == count


def test_a_cache_built_in_the_constructor_is_reported_by_the_path_that_fills_it():
    events = []
    run_entry(entry("persistent", "project_cache.persistent", ["reuse"], [1]), events.append)
    caches = [e for e in events if e["event"] == "cache"]
    built, used = caches
    assert (built["path"], built["rows"], built["bytes"]) == ("build", 0, 0)
    assert (used["path"], used["line"]) == ("reuse", built["line"])  # the constructor's line
    assert used["owner"] == "PersistentHolder"
    assert used["positions"] == 4 and used["rows"] == 1 and used["alive_after_step"]


def _caches(events, path, concurrency):
    return [e for e in events if e["event"] == "cache" and e["path"] == path and e["concurrency"] == concurrency]


def test_the_creating_chain_names_the_flagged_call_below_a_vendored_helper():
    events = []
    run_entry(entry("copies", "project_cache.copies", ["stream"], [2]), events.append)
    built = next(c for c in _caches(events, "stream", 2) if c["created_by"] == ["constructed"])
    import project_cache.copies as module
    source = open(module.__file__, encoding="utf-8").read().splitlines()
    assert "cache = DynamicCache()" in source[built["line"] - 1]  # the innermost frame: the helper
    chain = [(frame["line"], frame["owner"]) for frame in built["chain"]]
    flagged = next(i for i, text in enumerate(source, 1) if "# the flagged call" in text)
    assert chain[0] == (built["line"], None)
    assert (flagged, "StreamingDecoder") in chain  # and the flagged class's call, one frame up
    assert built["owner"] == "StreamingDecoder"  # a module-level helper: the nearest class up the chain
    # K and V x 2 heads x dim 4 x float32 x 3 positions for each of the 4 chunks (steps).
    assert built["rows"] == 2 and built["bytes_per_row"] == 2 * 2 * 4 * 4 * (3 * 4)


def test_deep_copies_are_measured_as_caches_of_their_own():
    events = []
    run_entry(entry("copies", "project_cache.copies", ["stream"], [1, 3]), events.append)
    for concurrency in (1, 3):
        copies = [c for c in _caches(events, "stream", concurrency) if c["created_by"] == ["deep copy"]]
        assert len(copies) == 1, copies
        working = copies[0]
        import project_cache.copies as module
        line = open(module.__file__, encoding="utf-8").read().splitlines()[working["line"] - 1]
        assert "copy.deepcopy(state[\"past\"])" in line
        assert working["owner"] == "StreamingDecoder"
        # Retained 3 positions per chunk so far plus the working copy's own extra position.
        assert working["bytes_per_row"] > 0 and working["positions"] >= 4
        # Each chunk's working copy dies with the chunk: peak rows, not the rows alive at the end.
        assert working["peak_rows"] >= 1 and working["rows_alive_at_end"] == 0


def test_a_cache_built_without_init_is_tracked_from_its_first_update():
    events = []
    run_entry(entry("copies", "project_cache.copies", ["restored"], [1]), events.append)
    restored = [c for c in _caches(events, "restored", 1) if c["created_by"] == ["first update"]]
    assert len(restored) == 1 and restored[0]["alive_after_step"]
    assert restored[0]["bytes_per_row"] > 0


def test_caches_evicted_when_the_request_finishes_report_their_peak_rows():
    events = []
    run_entry(entry("copies", "project_cache.copies", ["finish"], [4]), events.append)
    retained = next(c for c in _caches(events, "finish", 4) if c["created_by"] == ["constructed"])
    assert retained["rows"] == 4 and retained["peak_rows"] == 4
    assert retained["rows_alive_at_end"] == 0 and not retained["alive_after_step"]


def test_a_cache_filled_by_assigned_layers_is_measured_when_it_is_copied():
    events = []
    run_entry(entry("copies", "project_cache.copies", ["batched"], [3]), events.append)
    import project_cache.copies as module
    source = open(module.__file__, encoding="utf-8").read().splitlines()

    def at(text):
        return next(c for c in _caches(events, "batched", 3) if text in source[c["line"] - 1])

    batched = at("batched = copy.deepcopy(retained[0])")
    working = at("working = copy.deepcopy(batched)")
    retained = next(c for c in _caches(events, "batched", 3) if c["created_by"] == ["constructed"])
    # One row when copied from request 0; three once the requests' layers are assigned to it,
    # which the working copy's deepcopy reads. Its bytes per row are a retained cache's.
    assert batched["rows"] == 3 and working["rows"] == 3
    assert batched["bytes_per_row"] == retained["bytes_per_row"] > 0
    assert batched["growth"] == [batched["bytes"]]  # one round, the copy's: a re-measure is no decode step
