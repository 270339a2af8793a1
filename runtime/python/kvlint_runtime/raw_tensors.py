"""Observes K/V a model keeps as plain tensors (pools, rings, per-session buffers).

Newer model code holds attention K/V in tensors it allocates itself (`torch.zeros` per layer,
a ring per session, a per-request prefix) and declares them through model_local_kv_specs();
no transformers Cache object exists for the cache tracker to see. This module:

1. records, through a `TorchDispatchMode` active while the model is built and while each path
   runs, every tensor a factory op allocates (`empty`, `zeros`, `ones`, `full`, their `_like` and
   `new_` forms, `empty_strided`), at the innermost frame in the model's code (the cache
   tracker's `_Locator`), keyed by its storage and held only through a storage weak reference;
2. marks a recorded storage "written on a path" when an in-place write (`copy_`, which slice
   assignment ends in, `index_copy_`, `index_put_`, `scatter_`, `masked_scatter_`, and each target
   of `_foreach_copy_`) targets it
   while a path runs (not while the model is built);
3. after each path, walks what the booted model keeps (attributes, nn.Module buffers and
   children, lists/tuples/dicts, plain objects' `__dict__`/`__slots__`; depth- and count-bound)
   and reports the kept tensors that pass the criterion below, grouped into stores.

The criterion (what makes a kept tensor K/V rather than a weight or a table): allocated by a
tracked factory op, not an `nn.Parameter`, floating point, at least 2-D, reachable from the model
after the path, and written in place while a path ran. Weights are Parameters; a rotary cos/sin
table or an attention mask is filled when it is built (in `__init__`), and a K/V store is written
while the model serves. What it misses or mislabels: a store filled only by whole reassignment
(`self.k = torch.cat(...)`: no factory op, no in-place write; the cache tracker does not see it
either), and a float scratch tensor that is allocated, written in place and kept on the path
(a lazily built mask written while serving) is reported as K/V.

A store is one (owner, holder class) group: owner the class whose method allocated it (as the
cache tracker names a cache's owner), holder the class of the object whose attribute (or
container) keeps it. K and V allocated on two lines are one store, as one declaration describes
them. Its rows: the number of distinct entries of the first dict on the keeping paths (one per
session or request key), else the leading dimension of its tensors (slots of a pool; the second
when a leading axis of 2 packs K and V ahead of rows, heads, positions and head_dim).
"""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import sys
import types
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .tracking import Frame, _Locator

WALK_LIMIT = 200_000  # objects visited per reachability walk
DEPTH_LIMIT = 24  # attribute/container hops from the model
KEPT_BY_LIMIT = 16  # attribute paths reported per store
_PRUNE_AT = 65536  # recorded allocations between sweeps of the freed ones

_FACTORIES = ("empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like", "full_like",
              "new_empty", "new_zeros", "new_ones", "new_full", "empty_strided")
# `_foreach_copy_` writes a list of targets in one op (MiniCPM-o's batched streaming encoder copies
# every session's K/V rows that way); its targets are args[0], a list.
_WRITES = ("copy_", "index_copy_", "index_put_", "_index_put_impl_", "scatter_", "masked_scatter_",
           "_foreach_copy_")

# Never walked into: they hold no model state, or (types, modules, functions) hold everything.
_LEAF_TYPES = (str, bytes, bytearray, int, float, complex, bool, type(None), range, slice, type,
               types.ModuleType, types.FunctionType, types.MethodType, types.BuiltinFunctionType,
               types.FrameType, types.CodeType, weakref.ref, staticmethod, classmethod, property)


def enabled() -> bool:
    """KVLINT_RAW_TENSORS=0 turns the dispatch mode off (a model it slows or breaks)."""
    return os.environ.get("KVLINT_RAW_TENSORS", "1") != "0"


@dataclasses.dataclass
class _Allocation:
    ref: Any  # StorageWeakRef: the record never keeps the storage alive
    chain: List[Frame]
    owner: Optional[str]
    written_on_path: bool = False
    tensor: Any = None  # weakref to the allocated tensor: its contents are fingerprinted per path


class RawTensorTracker:
    def __init__(self, locator: _Locator, skip: Callable[[Any], bool]) -> None:
        import torch
        from torch.multiprocessing.reductions import StorageWeakRef

        self._torch = torch
        self._weak = StorageWeakRef
        self._locator = locator
        self._skip = skip  # objects whose tensors are reported elsewhere (transformers caches)
        self._allocations: Dict[int, _Allocation] = {}  # storage cdata -> allocation
        aten = torch.ops.aten
        self._factories = {getattr(aten, n) for n in _FACTORIES if hasattr(aten, n)}
        self._writes = {getattr(aten, n) for n in _WRITES if hasattr(aten, n)}
        self._on_path = False
        self._mutated_visibly: set = set()  # storages another in-place op (zero_, fill_, add_) changed
        self._mutable_args: Dict[Any, Tuple[Tuple[int, str], ...]] = {}  # op -> its written arguments

    # ---- recording -------------------------------------------------------
    @contextlib.contextmanager
    def recording(self, on_path: bool) -> Iterator[None]:
        """Records allocations (and, on a path, in-place writes) while the block runs."""
        from torch.utils._python_dispatch import TorchDispatchMode

        tracker = self

        class _RawKVMode(TorchDispatchMode):
            def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
                out = func(*args, **(kwargs or {}))
                packet = func.overloadpacket
                if packet in tracker._factories:
                    tracker._on_allocation(out)
                elif tracker._on_path and packet in tracker._writes and args:
                    tracker._on_write(args[0])
                elif tracker._on_path:
                    tracker._on_other_mutation(func, args, kwargs or {})
                return out

        self._on_path = on_path
        self._mutated_visibly.clear()
        before = self._fingerprints() if on_path else {}
        try:
            with _RawKVMode():
                yield
        finally:
            self._on_path = False
            self._mark_changed(before)

    def _on_other_mutation(self, func: Any, args: Any, kwargs: Dict[str, Any]) -> None:
        written = self._mutable_args.get(func)
        if written is None:
            written = tuple((i, a.name) for i, a in enumerate(func._schema.arguments)
                            if a.alias_info is not None and a.alias_info.is_write)
            self._mutable_args[func] = written
        for index, name in written:
            target = args[index] if index < len(args) else kwargs.get(name)
            for tensor in target if isinstance(target, (list, tuple)) else (target,):
                key = self._storage_key(tensor)
                if key is not None:
                    self._mutated_visibly.add(key)

    # A kernel the dispatcher does not show writing its target (vLLM's unified_kv_cache_update,
    # whose schema names no K/V argument: it finds the layer's kv_cache through the forward
    # context; a Triton kernel; a CUDA-graph replay) still changes the storage's contents: an
    # allocation whose contents differ after the path from before it was written on the path,
    # unless an in-place op the dispatcher showed (other than the K/V writes above) changed it: a
    # staging buffer reset by zero_() and filled by arithmetic (MiMo-Audio's new_audio_emb) is not.
    def _fingerprints(self) -> Dict[int, Any]:
        self._forget_freed()
        out = {}
        for key, allocation in self._allocations.items():
            tensor = allocation.tensor() if allocation.tensor is not None else None
            if tensor is not None and not allocation.written_on_path:
                out[key] = _fingerprint(self._torch, tensor)
        return out

    def _mark_changed(self, before: Dict[int, Any]) -> None:
        for key, fingerprint in before.items():
            allocation = self._allocations.get(key)
            tensor = allocation.tensor() if allocation is not None and allocation.tensor is not None else None
            if key in self._mutated_visibly:
                continue
            if tensor is not None and not allocation.written_on_path and fingerprint is not None:
                allocation.written_on_path = _fingerprint(self._torch, tensor) != fingerprint

    def _storage_key(self, tensor: Any) -> Optional[int]:
        if not isinstance(tensor, self._torch.Tensor) or tensor.is_meta:
            return None
        try:
            return tensor.untyped_storage()._cdata
        except (RuntimeError, NotImplementedError):  # a tensor subclass without storage
            return None

    def _on_allocation(self, tensor: Any) -> None:
        if not isinstance(tensor, self._torch.Tensor) or tensor.is_meta or tensor.numel() == 0:
            return
        if not tensor.is_floating_point() or tensor.dim() < 2:
            return  # lengths, indices, masks of bools: no K/V
        key = self._storage_key(tensor)
        if key is None:
            return
        chain = self._locator.chain(sys._getframe())  # the harness's own frames are skipped
        if not chain:
            return  # allocated by torch/transformers for their own use
        owner = next((o for _, _, o in chain if o), None)
        if len(self._allocations) >= _PRUNE_AT and len(self._allocations) % _PRUNE_AT == 0:
            self._forget_freed()  # a long path allocates (and frees) many temporaries
        self._allocations[key] = _Allocation(self._weak(tensor.untyped_storage()), chain, owner,
                                             tensor=weakref.ref(tensor))

    def _on_write(self, target: Any) -> None:
        for tensor in target if isinstance(target, (list, tuple)) else (target,):
            self._mark_written(tensor)

    def _mark_written(self, tensor: Any) -> None:
        key = self._storage_key(tensor)
        allocation = self._allocations.get(key) if key is not None else None
        if allocation is not None and not allocation.ref.expired():
            allocation.written_on_path = True

    # ---- reporting ---------------------------------------------------------
    def reports(self, model: Any) -> List[Dict[str, Any]]:
        """The raw K/V stores the model keeps now, as cache events (without path/concurrency)."""
        self._forget_freed()
        groups: Dict[Tuple[Optional[str], str], _Store] = {}
        for tensor, path, holder in self._kept(model):
            key = self._storage_key(tensor)
            allocation = self._allocations.get(key) if key is not None else None
            if allocation is None or not allocation.written_on_path:
                continue
            store = groups.setdefault((allocation.owner, holder), _Store(allocation.owner, holder))
            store.add(key, tensor, path, allocation)
        return [store.report() for store in groups.values()]

    def _forget_freed(self) -> None:
        for key in [k for k, a in self._allocations.items() if a.ref.expired()]:
            del self._allocations[key]

    def _kept(self, root: Any) -> Iterator[Tuple[Any, Tuple["_Step", ...], str]]:
        """(tensor, keeping path, holder class) for every tensor reachable from `root`, breadth first."""
        torch = self._torch
        parameter = torch.nn.Parameter
        module_cls = torch.nn.Module
        seen = {id(root)}
        queue = collections.deque([(root, (), type(root).__name__)])
        visited = 0

        def children(obj: Any) -> Iterator[Tuple["_Step", Any]]:
            if isinstance(obj, dict):
                for k, v in list(obj.items()):
                    yield _Step("key", k), v
            elif isinstance(obj, (list, tuple, collections.deque)):
                for i, v in enumerate(list(obj)):
                    yield _Step("index", i), v
            else:
                if isinstance(obj, module_cls):
                    for name, buf in obj._buffers.items():
                        yield _Step("attr", name), buf
                    for name, sub in obj._modules.items():
                        yield _Step("attr", name), sub
                attrs = getattr(obj, "__dict__", None)
                if isinstance(attrs, dict):
                    for name, v in list(attrs.items()):
                        if name not in ("_parameters", "_buffers", "_modules"):
                            yield _Step("attr", name), v
                for cls in type(obj).__mro__:
                    slots = vars(cls).get("__slots__", ())
                    for name in (slots,) if isinstance(slots, str) else slots:
                        if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
                            yield _Step("attr", name), getattr(obj, name, None)

        while queue and visited < WALK_LIMIT:
            obj, path, holder = queue.popleft()
            visited += 1
            if len(path) >= DEPTH_LIMIT:
                continue
            # The holder of a tensor is the nearest object on its path that is no container.
            here = holder if isinstance(obj, (dict, list, tuple, collections.deque)) else type(obj).__name__
            for step, value in children(obj):
                if value is None or isinstance(value, _LEAF_TYPES) or id(value) in seen:
                    continue
                seen.add(id(value))
                if isinstance(value, torch.Tensor):
                    if not isinstance(value, parameter):
                        yield value, path + (step,), here
                    continue
                if self._skip(value):
                    continue
                queue.append((value, path + (step,), here))


def _fingerprint(torch: Any, tensor: Any) -> Optional[Tuple[int, int]]:
    """The sums of a tensor's bytes and of its 32-bit words (one reduction each, on its device),
    or None when its storage cannot be read flat (a view, a subclass)."""
    try:
        with torch.inference_mode():
            flat = tensor.detach().reshape(-1).view(torch.uint8)
            words = flat.view(torch.int32) if flat.numel() % 4 == 0 else flat
            return int(flat.sum(dtype=torch.int64)), int(words.sum(dtype=torch.int64))
    except (RuntimeError, TypeError):
        return None


def _rows_axis_size(shape: Tuple[int, ...]) -> int:
    """The rows axis of a kept tensor: its leading one, except where K and V are packed on a
    leading axis of 2 ahead of rows, heads, positions and head_dim (PersonaPlex's `_RingKV`,
    `(2, batch, heads, capacity, head_dim)`): then the next one."""
    if len(shape) >= 5 and shape[0] == 2:
        return shape[1]
    return shape[0]


@dataclasses.dataclass(frozen=True)
class _Step:
    kind: str  # "attr" | "index" | "key"
    value: Any

    def text(self) -> str:
        if self.kind == "attr":
            return f".{self.value}"
        if self.kind == "index":
            return f".{self.value}"
        return f"[{str(self.value)[:40]}]"


def _path_text(path: Tuple[_Step, ...]) -> str:
    return "".join(step.text() for step in path).lstrip(".")


class _Store:
    """The kept raw K/V of one (owner, holder class): what one declaration describes."""

    def __init__(self, owner: Optional[str], holder: str) -> None:
        self.owner = owner
        self.holder = holder
        self.storages: Dict[int, int] = {}  # storage cdata -> nbytes (shared storage once)
        self.by_line: Dict[Tuple[str, int], int] = {}  # allocating (file, line) -> bytes
        self.chains: Dict[Tuple[str, int], List[Frame]] = {}
        self.paths: List[str] = []
        self.row_keys: set = set()  # the keeping path up to the first dict key: one per row
        self.leading = 0
        self.shapes: set = set()

    def add(self, key: int, tensor: Any, path: Tuple[_Step, ...], allocation: _Allocation) -> None:
        self.paths.append(_path_text(path))
        first_key = next((i for i, step in enumerate(path) if step.kind == "key"), None)
        if first_key is not None:
            self.row_keys.add(path[: first_key + 1])
        self.leading = max(self.leading, _rows_axis_size(tensor.shape))
        self.shapes.add(tuple(tensor.shape))
        if key in self.storages:
            return
        nbytes = tensor.untyped_storage().nbytes()
        self.storages[key] = nbytes
        file, line, _ = allocation.chain[0]
        self.by_line[(file, line)] = self.by_line.get((file, line), 0) + nbytes
        self.chains.setdefault((file, line), allocation.chain)

    def report(self) -> Dict[str, Any]:
        # The store's site: the line holding most of its bytes (ties: the first line). Every
        # allocating line's frames are on its chain, so a finding at the V line matches too.
        (file, line), _ = min(self.by_line.items(), key=lambda item: (-item[1], item[0]))
        chain: List[Frame] = []
        for site in [(file, line)] + sorted(s for s in self.chains if s != (file, line)):
            for frame in self.chains[site]:
                if frame not in chain:
                    chain.append(frame)
        total = sum(self.storages.values())
        rows = len(self.row_keys) if self.row_keys else self.leading
        paths = sorted(set(self.paths))
        return {
            "class": "raw-tensor", "file": file, "line": line, "owner": self.owner or self.holder,
            "chain": [{"file": f, "line": n, "owner": o} for f, n, o in chain],
            "created_by": ["raw tensor"],
            "peak_rows": rows, "rows_alive_at_end": rows, "rows": rows,
            "positions": 0, "layers": 0,  # no layout is known for a raw tensor
            "bytes": total, "bytes_per_row": total // rows if rows else 0, "logical_bytes": total,
            "objects": len(self.storages), "alive_after_step": True, "in_capture": False, "growth": [],
            "holder": self.holder,
            "kept_by": paths[:KEPT_BY_LIMIT],
            "shapes": sorted(list(s) for s in self.shapes)[:KEPT_BY_LIMIT],
            "_rows_from_axis": not self.row_keys,  # the harness's, not the event's (regroup_paged)
        }


def regroup_paged(report: Dict[str, Any], declared: List[Dict[str, Any]]) -> None:
    """A paged pool's leading axis counts pages, not the rows a declaration names (VibeVoice's
    negative pool: max_num_seqs slots of ceil(max_model_len / block_size) pages each, one tensor
    of every page per layer). When a declaration collected on the same path holds exactly the
    store's bytes in fewer rows that divide its leading count, the store's rows are those rows:
    the totals agree, so this changes how the bytes are counted per row, never how many there are."""
    if not report.pop("_rows_from_axis", False):
        return
    rows, total = report["rows"], report["bytes"]
    for d in declared:
        fewer = d.get("declared") and 0 < d["rows"] < rows and rows % d["rows"] == 0
        if fewer and d["total_bytes"] == total:
            report["rows"] = report["peak_rows"] = report["rows_alive_at_end"] = d["rows"]
            report["bytes_per_row"] = total // d["rows"]
            return
