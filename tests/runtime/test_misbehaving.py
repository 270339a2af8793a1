"""A child that crashes, hangs, runs out of memory or writes garbage yields an
error event or a truncated stream, and never takes the other models down."""
from __future__ import annotations

import json
import signal

from conftest import entry, run_harness, run_until_started_then_kill


def parses(line: str) -> bool:
    try:
        json.loads(line)
        return True
    except ValueError:
        return False


def test_segfault_truncates_the_stream_without_end():
    run = run_harness(entry("segfault", "misbehaving.segfault", ["default"], [1]))
    assert run.returncode == -signal.SIGSEGV
    assert all(parses(line) for line in run.lines)
    assert run.events[0]["event"] == "start"
    assert not run.of("end")
    assert "Fatal Python error" in run.stderr  # faulthandler left a trace for the report


def test_hanging_child_is_still_running_until_killed_and_keeps_its_lines():
    run = run_until_started_then_kill(entry("hang", "misbehaving.hang", ["default"], [1]))
    assert run.still_running_after_grace
    assert run.returncode == -signal.SIGKILL
    assert [e["event"] for e in run.events] == ["start"]


def test_memory_error_becomes_an_error_event_and_the_stream_ends():
    run = run_harness(entry("memory", "misbehaving.memory", ["default"], [1, 2]))
    assert run.returncode == 0
    errors = run.of("error", kind="memory")
    assert [e["concurrency"] for e in errors] == [1, 2]  # the next concurrency still ran
    assert "cannot allocate" in errors[0]["message"]
    assert len(run.of("path_done", ok=False)) == 2
    assert run.events[-1]["event"] == "end"


def test_model_prints_go_to_stderr_and_the_stream_stays_json():
    run = run_harness(entry("garbage", "misbehaving.garbage", ["default"], [1]))
    assert run.returncode == 0
    assert all(parses(line) for line in run.lines)
    assert "model banner {not json" in run.stderr and "raw fd write }}}" in run.stderr
    assert run.events[-1]["event"] == "end"


def test_garbage_written_into_the_pipe_is_visible_and_surrounding_lines_survive():
    run = run_harness(entry("corrupt", "misbehaving.corrupt", ["default"], [1]))
    bad = [line for line in run.lines if not parses(line)]
    assert bad == ["this is not json {{{"]
    assert run.events[0]["event"] == "start" and run.events[-1]["event"] == "end"


def test_import_failure_is_reported_as_kind_import():
    run = run_harness(entry("import_error", "misbehaving.import_error", ["default"], [1]))
    assert run.returncode == 0
    error = run.one("error", kind="import")
    assert "module_that_does_not_exist" in error["message"]
    assert run.events[-1]["event"] == "end"


def test_factory_missing_a_config_field_reports_the_exception_at_build_and_runs_no_path():
    run = run_harness(entry("missing_field", "misbehaving.missing_field", ["generate"], [1]))
    assert run.returncode == 0
    error = run.one("error", path="build")
    assert error["kind"] == "exception"
    assert error["message"].startswith("AttributeError:") and "talker_max_cache_len" in error["message"]
    assert not run.of("path_done") and not run.of("declaration")
    assert run.events[-1]["event"] == "end"


def test_other_models_are_unaffected_by_a_crashed_sibling(harness):
    crashed = run_harness(entry("segfault", "misbehaving.segfault", ["default"], [1]))
    healthy = harness("talker", "talker.model", ["generate"], [1, 4])
    assert not crashed.of("end")
    assert healthy.of("end") and healthy.one("cache", path="generate", concurrency=1)["rows"] == 1
