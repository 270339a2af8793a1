"""Collects model_local_kv_specs() declarations the way the engine does."""
from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple


def load_callable(spec: str) -> Callable[..., Any]:
    """Resolves "package.module:attr.path"."""
    module_name, _, attr_path = spec.partition(":")
    if not module_name or not attr_path:
        raise ImportError(f"expected 'module:callable', got {spec!r}")
    target: Any = importlib.import_module(module_name)
    for part in attr_path.split("."):
        target = getattr(target, part)
    return target


def _as_list(specs: Any) -> List[Any]:
    if specs is None:
        return []
    if isinstance(specs, dict):
        return list(specs.values())
    if isinstance(specs, (list, tuple)):
        return list(specs)
    return [specs]


def _walk(model: Any) -> List[Tuple[str, Any]]:
    # The runner's model may be a CUDAGraphWrapper that forwards attribute
    # access; entering through both it and its runnable would count a root
    # declarer twice, so unwrap first, as the engine's collector does.
    root = model.unwrap() if callable(getattr(model, "unwrap", None)) else model
    modules: Iterable[Any] = root.modules() if callable(getattr(root, "named_modules", None)) else [root]
    found: List[Tuple[str, Any]] = []
    for module in modules:
        declare = getattr(module, "model_local_kv_specs", None)
        if callable(declare):
            # Owners that are not submodules are reached by the explicit hop the
            # holding module makes inside its own model_local_kv_specs().
            found.extend((type(module).__name__, s) for s in _as_list(declare()))
    return found


def collect(model: Any, collector: str) -> Tuple[List[Tuple[str, Any]], Optional[str]]:
    """Returns [(owner class name, spec)] and which collector was used."""
    if collector:
        try:
            collect_fn = load_callable(collector)
        except (ImportError, AttributeError):
            collect_fn = None  # not installed here: fall back to the engine's algorithm
        if collect_fn is not None:
            return [(getattr(s, "owner", None) or "", s) for s in _as_list(collect_fn(model))], collector
    return _walk(model), None


def _name_of(value: Any) -> Optional[str]:
    if value is None:
        return None
    return getattr(value, "name", None) or str(value)


def _bytes_per_row(spec: Any) -> Optional[int]:
    value = getattr(spec, "bytes_per_row", None)
    if callable(value):
        value = value()
    if value is not None:
        return int(value)
    try:  # 2 x layers x kv_heads x head_dim x positions x dtype size
        import torch
        itemsize = torch.empty((), dtype=spec.dtype).element_size()
        return 2 * spec.num_layers * spec.num_kv_heads * spec.head_dim * spec.capacity * itemsize
    except AttributeError:
        return None


def declaration_event(owner: str, spec: Any, concurrency: int) -> Dict[str, Any]:
    driver = _name_of(getattr(spec, "rows_driver", None))
    rows_fixed = getattr(spec, "rows_fixed", None)
    rows = concurrency if driver == "MAX_NUM_SEQS" else rows_fixed if driver == "FIXED" else None
    per_row = _bytes_per_row(spec)
    return {
        "owner": getattr(spec, "owner", None) or owner,
        "name": getattr(spec, "name", None),
        "bytes_per_row": per_row,
        "rows_driver": driver,
        "rows_fixed": rows_fixed,
        "rows": rows,
        "total_bytes": per_row * rows if per_row is not None and rows is not None else None,
        "capacity": getattr(spec, "capacity", None),
        "scope": _name_of(getattr(spec, "scope", None)),
        "capacity_source": getattr(spec, "capacity_source", None),
        "declared": True,
    }
