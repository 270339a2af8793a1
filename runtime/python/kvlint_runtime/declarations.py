"""Collects model_local_kv_specs() declarations the way the engine does."""
from __future__ import annotations

import importlib
import os
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


# (owner class name, spec, the class whose model_local_kv_specs() returned it)
Declared = Tuple[str, Any, Optional[type]]


def _walk(model: Any) -> List[Declared]:
    # The runner's model may be a CUDAGraphWrapper that forwards attribute
    # access; entering through both it and its runnable would count a root
    # declarer twice, so unwrap first, as the engine's collector does.
    root = model.unwrap() if callable(getattr(model, "unwrap", None)) else model
    modules: Iterable[Any] = root.modules() if callable(getattr(root, "named_modules", None)) else [root]
    found: List[Declared] = []
    for module in modules:
        declare = getattr(module, "model_local_kv_specs", None)
        if callable(declare):
            hop_owners = _hop_owners(module)
            found.extend(_owner_of(s, hop_owners, type(module)) for s in _as_list(declare()))
    return found


def _hop_owners(module: Any) -> List[Tuple[type, List[Any]]]:
    """Declarers held by `module` that are not submodules, with the specs they return.

    Owners that are not submodules (ming's MingAudioGenerator) are reached by the
    explicit hop the holding module makes inside its own model_local_kv_specs();
    their specs come back through the holder, so they are credited to the class
    that holds the cache, as the static findings name it.
    """
    held = []
    for value in vars(module).values():
        declare = getattr(value, "model_local_kv_specs", None)
        if not callable(declare) or hasattr(value, "named_modules"):
            continue  # submodules are visited by the walk itself
        try:
            held.append((type(value), _as_list(declare())))
        except Exception:  # a broken hop target is the holder's problem, reported through it
            continue
    return held


def _owner_of(spec: Any, hop_owners: List[Tuple[type, List[Any]]], default: type) -> Declared:
    for owner, specs in hop_owners:
        if any(spec is s or spec == s for s in specs):
            return owner.__name__, spec, owner
    return default.__name__, spec, default


def declarer_location(cls: Optional[type]) -> Tuple[Optional[str], Optional[int]]:
    """Where `cls.model_local_kv_specs` is defined: the line a phantom declaration (RT003) names."""
    if cls is None:
        return None, None
    method = getattr(cls, "model_local_kv_specs", None)
    code = getattr(getattr(method, "__func__", method), "__code__", None)
    if code is None or code.co_filename.startswith("<"):
        return None, None
    return os.path.abspath(code.co_filename), code.co_firstlineno


def collect(model: Any, collector: str) -> Tuple[List[Declared], Optional[str]]:
    """Returns [(owner class name, spec, declaring class)] and which collector was used."""
    if collector:
        try:
            collect_fn = load_callable(collector)
        except (ImportError, AttributeError):
            collect_fn = None  # not installed here: fall back to the engine's algorithm
        if collect_fn is not None:
            # The project's collector returns bare specs; owners come from the engine's
            # own walk, matched by equality, so verdicts can pair them with findings.
            walked = _walk(model)
            out: List[Declared] = []
            for spec in _as_list(collect_fn(model)):
                match = next((w for w in walked if spec is w[1] or spec == w[1]), None)
                out.append(match if match is not None else (getattr(spec, "owner", None) or "", spec, None))
            return out, collector
    return _walk(model), None


def _name_of(value: Any) -> Optional[str]:
    if value is None:
        return None
    return getattr(value, "name", None) or str(value)


def _field(spec: Any, *names: str) -> Any:
    """A spec field by its protocol name, or an earlier revision's spelling."""
    for name in names:
        value = getattr(spec, name, None)
        if value is not None:
            return value
    return None


def _bytes_per_row(spec: Any) -> Optional[int]:
    value = getattr(spec, "bytes_per_row", None)
    if callable(value):
        value = value()
    if value is not None:
        return int(value)
    layers = _field(spec, "layers", "num_layers")
    kv_heads = _field(spec, "kv_heads", "num_kv_heads")
    head_dim = _field(spec, "head_dim")
    positions = _field(spec, "physical_capacity_positions", "capacity")
    dtype = _field(spec, "dtype")
    if None in (layers, kv_heads, head_dim, positions, dtype):
        return None
    import torch  # 2 x layers x kv_heads x head_dim x positions x dtype size
    itemsize = torch.empty((), dtype=dtype).element_size()
    return 2 * layers * kv_heads * head_dim * positions * itemsize


def declaration_event(owner: str, spec: Any, concurrency: int, declarer: Optional[type] = None) -> Dict[str, Any]:
    driver = _name_of(_field(spec, "rows", "rows_driver"))
    # rows_fixed has a default of 1 in the protocol; it means something only with FIXED.
    rows_fixed = getattr(spec, "rows_fixed", None) if driver == "FIXED" else None
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
        "capacity": _field(spec, "physical_capacity_positions", "capacity"),
        "scope": _name_of(getattr(spec, "scope", None)),
        "capacity_source": getattr(spec, "capacity_source", None),
        "declared": True,
        **_location_fields(declarer),
    }


def _location_fields(declarer: Optional[type]) -> Dict[str, Any]:
    file, line = declarer_location(declarer)
    return {"file": file, "line": line} if file is not None else {}
