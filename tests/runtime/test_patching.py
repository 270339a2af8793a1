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
            for name in ("__init__", "update", "__init_subclass__", "capture_begin", "capture_end")}


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
