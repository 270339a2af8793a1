"""Runs one boot entry: build the model, drive each path x concurrency, report."""
from __future__ import annotations

import gc
import inspect
import os
import platform
import contextlib
import sys
import traceback
from typing import Any, Callable, Dict, List

from . import declarations, raw_tensors

Emit = Callable[[Dict[str, Any]], None]


def _error_kind(exc: BaseException) -> str:
    # torch.cuda.OutOfMemoryError is a RuntimeError, not a MemoryError.
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return "memory"
    if isinstance(exc, ImportError):
        return "import"
    return "exception"


def _message(exc: BaseException) -> str:
    lines = traceback.format_exception_only(type(exc), exc)
    return "".join(lines).strip()[-2000:]


def _resolve_device(requested: str) -> str:
    import torch

    if requested in ("", "auto"):
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' requested but torch.cuda.is_available() is False")
    return requested


def _build(factory: Callable[..., Any], device: str) -> Any:
    # build() takes no arguments by protocol; a factory that wants the device
    # asks for it by parameter name.
    try:
        wants_device = "device" in inspect.signature(factory).parameters
    except (TypeError, ValueError):
        wants_device = False
    model = factory(device=device) if wants_device else factory()
    if device != "cpu" and callable(getattr(model, "to", None)) and hasattr(model, "parameters"):
        model = model.to(device) or model
    return model


def run_entry(entry: Dict[str, Any], emit: Emit) -> None:
    """Emits every event for `entry` except "end" (the caller always sends it)."""
    name = entry.get("name", "")

    def send(event: str, **fields: Any) -> None:
        emit({"event": event, "model": name, **fields})

    for path in reversed(entry.get("python_path", [])):
        if path not in sys.path:
            sys.path.insert(0, path)
    try:
        import torch
        import transformers

        from .tracking import Tracker

        device = _resolve_device(entry.get("device", "auto"))
    except BaseException as exc:  # noqa: BLE001 - reported, not swallowed
        send("error", path=None, concurrency=None, kind=_error_kind(exc), message=_message(exc))
        return
    send("start", pid=os.getpid(), python=platform.python_version(), torch=torch.__version__,
         transformers=transformers.__version__, device=device)

    tracker = Tracker()
    raw = _raw_tracker(tracker)
    with tracker.installed():
        # Caches and captures made while building (MiMo captures in its
        # constructor) are reported under the pseudo-path "build".
        tracker.begin_run()
        try:
            factory = declarations.load_callable(entry["factory"])
            driver = declarations.load_callable(entry["driver"])
        except BaseException as exc:  # noqa: BLE001
            send("error", path=None, concurrency=None, kind="import", message=_message(exc))
            return
        try:
            with _recording(raw, on_path=False):  # pools are often allocated in __init__
                model = _build(factory, device)
        except BaseException as exc:  # noqa: BLE001
            send("error", path="build", concurrency=0, kind=_error_kind(exc), message=_message(exc))
            return
        _report_observations(tracker, send, "build", 0)

        steps = int(entry.get("steps", 4))
        for path in entry.get("paths", []):
            for concurrency in entry.get("concurrency", [1]):
                _run_path(tracker, raw, send, entry, model, driver, path, int(concurrency), steps)
        del model
        gc.collect()


def _raw_tracker(tracker: Any) -> Any:
    """Raw tensor K/V observation (raw_tensors.py), unless KVLINT_RAW_TENSORS=0."""
    if not raw_tensors.enabled():
        return None
    from transformers import cache_utils

    # A transformers cache's tensors are its cache event's: the walk does not enter one.
    caches = tuple(c for c in (getattr(cache_utils, "Cache", None), getattr(cache_utils, "EncoderDecoderCache", None))
                   if isinstance(c, type))
    return raw_tensors.RawTensorTracker(tracker.locator, lambda obj: isinstance(obj, caches))


def _recording(raw: Any, on_path: bool) -> Any:
    return raw.recording(on_path) if raw is not None else contextlib.nullcontext()


def _run_path(tracker: Any, raw: Any, send: Callable[..., None], entry: Dict[str, Any], model: Any,
              driver: Callable[..., Any], path: str, concurrency: int, steps: int) -> None:
    tracker.begin_run()
    ok = True
    try:
        with _recording(raw, on_path=True):
            driver(model, path, concurrency, steps)
    except BaseException as exc:  # noqa: BLE001 - a failing path must not stop the others
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        ok = False
        kind, message = _error_kind(exc), _message(exc)
        del exc  # drop the traceback's frames (and the tensors they hold) first
        gc.collect()
        send("error", path=path, concurrency=concurrency, kind=kind, message=message)
    gc.collect()  # "alive after the step" means reachable, not yet-uncollected
    _report_observations(tracker, send, path, concurrency)
    declared: List[Dict[str, Any]] = []
    if ok:  # collected first: a paged raw pool's rows are read against them
        _report_declarations(lambda event, **fields: declared.append(dict(fields, event=event)), entry, model,
                             path, concurrency)
    if raw is not None:
        # Raw K/V the model keeps after the path: cache events of class "raw-tensor".
        specs = [d for d in declared if d["event"] == "declaration"]
        for report in raw.reports(model):
            raw_tensors.regroup_paged(report, specs)
            send("cache", path=path, concurrency=concurrency, **report)
    for fields in declared:
        send(fields.pop("event"), **fields)
    send("path_done", path=path, concurrency=concurrency, ok=ok)


def _report_observations(tracker: Any, send: Callable[..., None], path: str, concurrency: int) -> None:
    for report in tracker.cache_reports():
        send("cache", path=path, concurrency=concurrency, **report)
    for report in tracker.capture_reports():
        send("capture", path=path, concurrency=concurrency, **report)


def _report_declarations(send: Callable[..., None], entry: Dict[str, Any], model: Any, path: str,
                         concurrency: int) -> None:
    try:
        found, used = declarations.collect(model, entry.get("collector", "") or "")
    except BaseException as exc:  # noqa: BLE001
        send("error", path=path, concurrency=concurrency, kind=_error_kind(exc),
             message="collecting declarations: " + _message(exc))
        return
    for owner, spec, declarer in found:
        event = declarations.declaration_event(owner, spec, concurrency, declarer)
        send("declaration", path=path, concurrency=concurrency, collector=used, **event)
    if found:
        return
    # "Declares nothing" must be visible: KV302 is confirmed by a path that
    # allocates while the collected declaration reports zero.
    # owner "" (not null): no owner is known, and the host requires a string.
    for owner in entry.get("owners") or [""]:
        send("declaration", path=path, concurrency=concurrency, collector=used, owner=owner,
             name=None, bytes_per_row=0, rows_driver=None, rows_fixed=None, rows=0, total_bytes=0,
             capacity=None, scope=None, capacity_source=None, declared=False)
