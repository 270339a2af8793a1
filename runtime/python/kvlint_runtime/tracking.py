"""Observes transformers Cache objects and CUDA-graph captures while a model runs.

Everything is installed by `Tracker.installed()` (a context manager) and undone
when it exits, so a harness run leaves transformers and torch as it found them.

Cost model: creation does a stack walk (rare); `update()` re-measures only the
one layer it touched and keeps running sums, so a decode step pays O(1) per
layer. The tracker holds caches and CUDA graphs only through weak references and keeps
numbers, never tensors, so it does not change what stays alive (one exception: naming a
cache's owner reads `f_locals` of the frames on its creating chain, and before Python 3.13
that snapshot keeps those running frames' locals of the moment alive until they return).
"""
from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import sys
import sysconfig
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

GROWTH_LIMIT = 256  # samples kept per object; a long decode loop must not grow memory
CHAIN_LIMIT = 32  # frames of the creating call chain kept per cache

Frame = Tuple[str, int, Optional[str]]  # file, line, owner class


def _package_dir(module: Any) -> str:
    return os.path.dirname(os.path.abspath(module.__file__)) + os.sep


class _Locator:
    """Finds the first stack frame outside transformers/torch/the harness/stdlib.

    That frame is the line a static finding names: for a cache transformers
    builds implicitly behind `use_cache=True` it is the model's call line.
    """

    def __init__(self, internal_modules: List[Any]) -> None:
        self._internal = tuple(_package_dir(m) for m in internal_modules)
        self._internal += (os.path.dirname(os.path.abspath(__file__)) + os.sep,)
        stdlib = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")}
        self._stdlib = tuple(os.path.abspath(p) + os.sep for p in stdlib)

    def _is_internal(self, filename: str) -> bool:
        if filename.startswith("<"):  # <frozen ...>, <string>
            return True
        path = os.path.abspath(filename)
        if path.startswith(self._internal):
            return True
        # A non-venv interpreter keeps site-packages under the stdlib directory;
        # user packages installed there are not "internal".
        return path.startswith(self._stdlib) and "-packages" + os.sep not in path

    def chain(self, frame: Any) -> List[Frame]:
        """Every frame outside transformers/torch/the harness/stdlib, innermost first.

        A cache is often built several frames below the call a finding names (a vendored
        model calls the transformers model with use_cache=True inside a helper the
        flagged class calls): the host matches a finding anywhere on this chain.
        """
        out: List[Frame] = []
        while frame is not None and len(out) < CHAIN_LIMIT:
            filename = frame.f_code.co_filename
            if not self._is_internal(filename):
                out.append((os.path.abspath(filename), frame.f_lineno, _owner(frame)))
            frame = frame.f_back
        return out

    def site(self, frame: Any) -> Frame:
        chain = self.chain(frame)
        return chain[0] if chain else ("<unknown>", 0, None)


def _owner(frame: Any) -> Optional[str]:
    """The class that defines the running method, as a static finding names it.

    `type(self)` would name a subclass when the method is inherited; walk the
    MRO for the class whose attribute holds this frame's code instead.
    """
    instance = frame.f_locals.get("self")
    if instance is None:
        return None
    code = frame.f_code
    for cls in type(instance).__mro__:
        attr = vars(cls).get(code.co_name)
        func = getattr(attr, "__func__", attr)
        if getattr(func, "__code__", None) is code:
            return cls.__name__
    return type(instance).__name__


@dataclasses.dataclass
class _LayerMeasure:
    rows: int
    positions: int
    logical_bytes: int
    storages: Dict[int, int]  # data_ptr -> nbytes


def _measure_tensors(tensors: List[Any], tensor_type: Any) -> _LayerMeasure:
    # Runs on every update(): attribute reads only, no tensor ops.
    rows = positions = logical = 0
    storages: Dict[int, int] = {}
    for tensor in tensors:
        if not isinstance(tensor, tensor_type) or tensor.ndim < 2 or tensor.is_meta:
            continue
        shape = tensor.shape
        rows = max(rows, shape[0])
        positions = max(positions, shape[-2])
        logical += tensor.numel() * tensor.element_size()
        storage = tensor.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
    return _LayerMeasure(rows, positions, logical, storages)


def _layer_tensors(cache: Any, layer_idx: int) -> Optional[List[Any]]:
    layers = getattr(cache, "layers", None)  # transformers >= 4.56
    if isinstance(layers, list) and 0 <= layer_idx < len(layers):
        layer = layers[layer_idx]
        return [getattr(layer, "keys", None), getattr(layer, "values", None)]
    key_cache = getattr(cache, "key_cache", None)  # older transformers
    value_cache = getattr(cache, "value_cache", None)
    if isinstance(key_cache, list) and 0 <= layer_idx < len(key_cache):
        value = value_cache[layer_idx] if isinstance(value_cache, list) and layer_idx < len(value_cache) else None
        return [key_cache[layer_idx], value]
    return None


def _layer_count(cache: Any) -> int:
    layers = getattr(cache, "layers", None)
    if isinstance(layers, list):
        return len(layers)
    key_cache = getattr(cache, "key_cache", None)
    return len(key_cache) if isinstance(key_cache, list) else 0


class CacheRecord:
    """What is known about one Cache object, kept as numbers only."""

    def __init__(self, cache: Any, cls_name: str, chain: List[Frame], in_capture: bool,
                 how: str = "constructed", graph: Optional["weakref.ref[Any]"] = None) -> None:
        self.ref = weakref.ref(cache)
        self.cls_name = cls_name
        self.chain = chain or [("<unknown>", 0, None)]
        self.file, self.line, self.owner = self.chain[0]
        if self.owner is None:  # a lambda or module-level helper: the nearest class up the chain
            self.owner = next((owner for _, _, owner in self.chain if owner), None)
        self.how = how  # "constructed" | "deep copy" | "first update" (built without __init__)
        self.in_capture = in_capture
        # The CUDAGraph whose capture built this cache: its tensors live in that graph's private
        # pool, which keeps them (replays write there) after the Python object is gone.
        self.graph = graph
        self.held_by_graph = False  # dead as an object, its bytes still in a live graph's pool
        self.parent: Optional[CacheRecord] = None  # set when a composite cache absorbs this one
        self.site: Optional["_Site"] = None  # where the current run reports it
        self.run_id = -1
        self.layers: Dict[Tuple[int, int], _LayerMeasure] = {}
        self.storage_refs: Dict[int, List[int]] = {}  # data_ptr -> [nbytes, layers using it]
        self.rows = self.positions = self.logical_bytes = self.storage_bytes = 0
        self.peak_storage_bytes = 0
        self.growth: List[int] = []
        self._round: set = set()
        self.dead = False

    def root(self) -> "CacheRecord":
        record = self
        while record.parent is not None:
            record = record.parent
        return record

    def apply(self, key: Tuple[int, int], measure: _LayerMeasure, step: bool = True) -> None:
        # A layer updated twice means a new decode step started: close the round. A re-measure
        # outside update() (step=False) is no decode step: it leaves the growth rounds alone.
        if step:
            if key in self._round:
                self._close_round()
            self._round.add(key)
        old = self.layers.get(key)
        if old is not None:
            self.logical_bytes -= old.logical_bytes
            for ptr in old.storages:
                entry = self.storage_refs[ptr]
                entry[1] -= 1
                if entry[1] == 0:
                    self.storage_bytes -= entry[0]
                    del self.storage_refs[ptr]
        self.layers[key] = measure
        self.logical_bytes += measure.logical_bytes
        for ptr, nbytes in measure.storages.items():
            entry = self.storage_refs.get(ptr)
            if entry is None:
                self.storage_refs[ptr] = [nbytes, 1]
                self.storage_bytes += nbytes
            else:
                entry[1] += 1
        # Batch width and positions only ever grow in the caches we know; a
        # crop after the peak must not hide the peak.
        self.rows = max(self.rows, measure.rows)
        self.positions = max(self.positions, measure.positions)
        self.peak_storage_bytes = max(self.peak_storage_bytes, self.storage_bytes)

    def _close_round(self) -> None:
        if self._round and len(self.growth) < GROWTH_LIMIT:
            self.growth.append(self.storage_bytes)
        self._round = set()

    def finish(self) -> None:
        self._close_round()

    def layer_count(self) -> int:
        per_child: Dict[int, set] = {}
        for child, layer_idx in self.layers:
            per_child.setdefault(child, set()).add(layer_idx)
        return max((len(v) for v in per_child.values()), default=0)


class _Site:
    """Live totals over the top-level cache objects created at one (file, line)."""

    def __init__(self) -> None:
        self.records: List[CacheRecord] = []
        self.live: Dict[int, Tuple[int, int, int]] = {}  # id(record) -> rows, logical, storage
        self.rows = self.logical = self.storage = 0
        self.peak = (0, 0, 0)  # storage, rows, logical at the moment of peak storage
        self.peak_rows = 0  # most rows alive at once (caches evicted when a request finishes count)

    def set_object(self, record: CacheRecord, alive: bool = True) -> None:
        old = self.live.pop(id(record), (0, 0, 0))
        new = (record.rows, record.logical_bytes, record.storage_bytes) if alive else (0, 0, 0)
        if alive:
            self.live[id(record)] = new
        self.rows += new[0] - old[0]
        self.logical += new[1] - old[1]
        self.storage += new[2] - old[2]
        if (self.storage, self.logical) > (self.peak[0], self.peak[2]):
            self.peak = (self.storage, self.rows, self.logical)
        self.peak_rows = max(self.peak_rows, self.rows)


@dataclasses.dataclass
class CaptureSite:
    kind: str
    file: str
    line: int
    owner: Optional[str]
    count: int = 0
    resident_bytes: Optional[int] = None
    allocated_bytes: Optional[int] = None
    retained: bool = False  # captured on an earlier path (or the build), its graphs still alive


@dataclasses.dataclass(eq=False)
class _LiveGraph:
    """A captured CUDAGraph the tracker saw, as numbers: what its capture kept resident."""

    key: Tuple[str, str, int]  # kind, file, line of its capture site
    owner: Optional[str]
    run_id: int
    resident_bytes: Optional[int] = None
    allocated_bytes: Optional[int] = None
    pool_records: List["CacheRecord"] = dataclasses.field(default_factory=list)
    alive: bool = True


class Tracker:
    """Per-run registry of caches and captures plus the patches that feed it."""

    def __init__(self) -> None:
        import torch
        import transformers

        self._torch = torch
        self._locator = _Locator([torch, transformers])
        self._records: Dict[int, CacheRecord] = {}  # id(cache) -> record, while alive
        # (file, line, class, built inside a capture) -> the objects built there. A captured cache
        # is its own site beside the eager ones of the same line: a graph pool (kept while the
        # graph lives) and a per-call cache are two allocations, with two declarations.
        self._sites: Dict[Tuple[str, int, str, bool], _Site] = {}
        self._run_id = 0
        self._captures: Dict[Tuple[str, str, int], CaptureSite] = {}
        self._open_captures: List[Tuple[CaptureSite, int, int, _LiveGraph]] = []
        self._graphs: Dict[int, _LiveGraph] = {}  # id(CUDAGraph) -> its capture, while it lives
        self._capture_depth = 0
        self._updating: set = set()  # ids of caches inside a wrapped update() (re-entrancy guard)
        self._restore: List[Callable[[], None]] = []

    @property
    def locator(self) -> _Locator:
        return self._locator

    # ---- run bookkeeping -------------------------------------------------
    def begin_run(self) -> None:
        self._run_id += 1
        self._sites = {}
        self._captures = {}

    def _register(self, record: CacheRecord) -> None:
        key = (record.file, record.line, record.cls_name, record.in_capture)
        record.site = self._sites.setdefault(key, _Site())
        record.site.records.append(record)
        record.run_id = self._run_id

    def cache_reports(self) -> List[Dict[str, Any]]:
        reports = []
        for (file, line, cls_name, in_capture), site in self._sites.items():
            top = [r for r in site.records if r.parent is None]
            if not top:
                continue
            for record in top:
                record.finish()
            largest = max(top, key=lambda r: r.peak_storage_bytes)
            storage, rows, logical = site.peak
            owners = [r.owner for r in top if r.owner]
            reports.append({
                "class": cls_name, "file": file, "line": line,
                "owner": owners[0] if owners else None,
                # The creating call chain outside torch/transformers (innermost first): a
                # finding at any of these lines, or naming any of these owners, is this cache's.
                "chain": [{"file": f, "line": n, "owner": o} for f, n, o in top[0].chain],
                "created_by": sorted({r.how for r in top}),
                "peak_rows": site.peak_rows,
                "rows_alive_at_end": site.rows,
                "rows": rows, "positions": max(r.positions for r in top),
                "layers": max(r.layer_count() for r in top),
                "bytes": storage,
                # Logical KV bytes (numel x itemsize) per row: the figure the
                # declaration formula 2 x layers x heads x dim x positions x size
                # predicts. `bytes` above is what storage really holds.
                "bytes_per_row": logical // rows if rows else 0,
                "logical_bytes": logical,
                "objects": len(top),
                "alive_after_step": any(r.ref() is not None or r.held_by_graph for r in top),
                "in_capture": in_capture,
                "growth": largest.growth,
            })
        return reports

    def capture_reports(self) -> List[Dict[str, Any]]:
        reports = [dataclasses.asdict(c) for c in self._captures.values()]
        # Graphs captured by an earlier path (or the build) that are still alive: this path holds
        # their pools too, though it captured nothing (a later concurrency replays them).
        retained: Dict[Tuple[str, str, int], CaptureSite] = {}
        for graph in self._graphs.values():
            if graph.run_id == self._run_id:
                continue
            kind, file, line = graph.key
            site = retained.setdefault(graph.key, CaptureSite(kind, file, line, graph.owner, retained=True))
            site.count += 1
            for name in ("resident_bytes", "allocated_bytes"):
                value = getattr(graph, name)
                if value is not None:
                    setattr(site, name, (getattr(site, name) or 0) + value)
        return reports + [dataclasses.asdict(c) for c in retained.values()]

    # ---- cache observation -----------------------------------------------
    def _capturing(self) -> bool:
        if self._capture_depth > 0:
            return True
        cuda = self._torch.cuda
        return cuda.is_initialized() and cuda.is_current_stream_capturing()

    def _capturing_graph(self) -> Optional[_LiveGraph]:
        """The graph whose capture is running now (innermost), when it came through our hook."""
        return self._open_captures[-1][3] if self._open_captures else None

    def _on_init_start(self, cache: Any, frame: Any) -> bool:
        if id(cache) in self._records:
            return False  # a super().__init__ inside an already tracked construction
        self._track(cache, frame, "constructed")
        return True

    def _track(self, cache: Any, frame: Any, how: str) -> CacheRecord:
        graph = self._capturing_graph()
        record = CacheRecord(cache, type(cache).__name__, self._locator.chain(frame), self._capturing(), how,
                             graph=weakref.ref(graph) if graph is not None else None)
        if graph is not None:
            graph.pool_records.append(record)
        self._records[id(cache)] = record
        self._register(record)
        weakref.finalize(cache, self._on_dead, id(cache), record)
        return record

    def _on_copy(self, new: Any, frame: Any) -> None:
        """A deep copy of a cache: copy.deepcopy never runs __init__, yet the copy holds bytes at once.

        Qwen3-TTS's decoder deep-copies its retained cache into a working copy every chunk.
        """
        if id(new) in self._records:
            return
        self._track(new, frame, "deep copy")
        self._on_init_end(new)  # a copied composite absorbs its copied children
        record = self._records[id(new)]
        for layer_idx in range(_layer_count(new)):
            tensors = _layer_tensors(new, layer_idx)
            if tensors is not None:
                record.apply((id(new), layer_idx), _measure_tensors(tensors, self._torch.Tensor))
        record.site.set_object(record)

    def _on_copy_source(self, cache: Any) -> None:
        """A cache being deep-copied is read whole: re-measure it, as it is now.

        Real code fills caches without update(): Qwen3-TTS's `_batch_dynamic_caches` deep-copies
        one request's cache and then assigns `torch.cat`-ed layers of all requests to it, so the
        batch width exists only in those assigned tensors; the working copy taken from it next
        is the read that shows them.
        """
        record = self._records.get(id(cache))
        if record is None:
            return  # an untracked source: its copy is tracked (_on_copy), it is not
        root = self._root_for_this_run(record)
        for layer_idx in range(_layer_count(cache)):
            tensors = _layer_tensors(cache, layer_idx)
            if tensors is not None:
                root.apply((id(cache), layer_idx), _measure_tensors(tensors, self._torch.Tensor), step=False)
        root.site.set_object(root)

    def _root_for_this_run(self, record: CacheRecord) -> CacheRecord:
        root = record.root()
        if root.run_id != self._run_id:
            # Built earlier (in the constructor, or by a previous path) and
            # used now: this path holds it, so this path reports it too.
            root.site.set_object(root, alive=False)
            self._register(root)
        return root

    def _on_init_end(self, cache: Any) -> None:
        # A composite (EncoderDecoderCache) owns the caches it was given: count
        # their tensors once, under the composite.
        parent = self._records.get(id(cache))
        if parent is None:
            return
        for value in vars(cache).values():
            child = self._records.get(id(value)) if value is not cache else None
            if child is None or child.parent is not None:
                continue
            child.parent = parent
            child.site.set_object(child, alive=False)
            for (_, layer_idx), measure in child.layers.items():
                parent.apply((id(value), layer_idx), measure)
        parent.site.set_object(parent)

    def _on_init_failed(self, cache: Any) -> None:
        record = self._records.pop(id(cache), None)
        if record is not None:
            record.site.records.remove(record)

    def _on_dead(self, cache_id: int, record: CacheRecord) -> None:
        record.dead = True
        if self._records.get(cache_id) is record:
            del self._records[cache_id]
        if record.parent is not None:
            return
        graph = record.graph() if record.graph is not None else None
        if graph is not None and graph.alive:
            # Captured: its K/V stays in the graph's pool while the graph lives (MiMo's per-bucket
            # caches are locals of the captured call, gone as objects, kept as memory).
            record.held_by_graph = True
            return
        record.site.set_object(record, alive=False)

    def _on_graph_dead(self, graph_id: int) -> None:
        graph = self._graphs.pop(graph_id, None)
        if graph is None:
            return
        graph.alive = False
        for record in graph.pool_records:
            if record.held_by_graph:
                record.held_by_graph = False
                record.site.set_object(record, alive=False)

    def _on_update(self, cache: Any, layer_idx: Any, frame: Any = None) -> None:
        if not isinstance(layer_idx, int):
            return
        record = self._records.get(id(cache))
        if record is None:
            # Built without __init__ (unpickled, copied by a route we do not hook, or before
            # install): it holds bytes all the same; it is tracked from its first update.
            record = self._track(cache, frame, "first update")
        tensors = _layer_tensors(cache, layer_idx)
        if tensors is None:
            return
        root = self._root_for_this_run(record)
        root.apply((id(cache), layer_idx), _measure_tensors(tensors, self._torch.Tensor))
        root.site.set_object(root)

    # ---- capture observation ---------------------------------------------
    def _capture_kind(self, frame: Any) -> str:
        kind = "capture_begin"
        while frame is not None:
            name = frame.f_code.co_name
            if "make_graphed_callables" in name:
                return "make_graphed_callables"
            if name == "__enter__" and frame.f_code.co_filename.endswith(os.path.join("cuda", "graphs.py")):
                kind = "graph_context"
            frame = frame.f_back
        return kind

    def _on_capture_begin(self, graph: Any, frame: Any) -> None:
        kind = self._capture_kind(frame)
        file, line, owner = self._locator.site(frame)
        site = self._captures.setdefault((kind, file, line), CaptureSite(kind, file, line, owner))
        site.count += 1
        live = self._graphs.get(id(graph))
        if live is None:
            live = self._graphs[id(graph)] = _LiveGraph((kind, file, line), owner, self._run_id)
            weakref.finalize(graph, self._on_graph_dead, id(graph))
        else:  # captured again (after reset()): this run's capture, not one it holds from before
            live.run_id = self._run_id
        cuda = self._torch.cuda
        self._open_captures.append((site, cuda.memory_reserved(), cuda.memory_allocated(), live))
        self._capture_depth += 1

    def _on_capture_end(self) -> None:
        self._capture_depth = max(0, self._capture_depth - 1)
        if not self._open_captures:
            return
        site, reserved, allocated, live = self._open_captures.pop()
        cuda = self._torch.cuda
        # The graph's private pool stays reserved while the graph lives: the
        # reserved delta is what the capture keeps resident.
        resident, kept = cuda.memory_reserved() - reserved, cuda.memory_allocated() - allocated
        site.resident_bytes = (site.resident_bytes or 0) + resident
        site.allocated_bytes = (site.allocated_bytes or 0) + kept
        live.resident_bytes = (live.resident_bytes or 0) + resident
        live.allocated_bytes = (live.allocated_bytes or 0) + kept

    # ---- patches ---------------------------------------------------------
    def _patch(self, owner: Any, name: str, replacement: Any) -> None:
        had = name in vars(owner)
        original = vars(owner).get(name)
        setattr(owner, name, replacement)
        if had:
            self._restore.append(lambda: setattr(owner, name, original))
        else:
            self._restore.append(lambda: delattr(owner, name))

    def _wrap_cache_class(self, cls: Any) -> None:
        tracker = self
        if "__init__" in vars(cls) and not getattr(vars(cls)["__init__"], "_kvlint_wrapped", False):
            original_init = vars(cls)["__init__"]

            def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
                outermost = tracker._on_init_start(self, sys._getframe(1))
                try:
                    original_init(self, *args, **kwargs)
                except BaseException:
                    if outermost:
                        tracker._on_init_failed(self)
                    raise
                if outermost:
                    tracker._on_init_end(self)

            __init__._kvlint_wrapped = True  # type: ignore[attr-defined]
            self._patch(cls, "__init__", __init__)
        if "update" in vars(cls) and not getattr(vars(cls)["update"], "_kvlint_wrapped", False):
            original_update = vars(cls)["update"]

            def update(self: Any, key_states: Any, value_states: Any, layer_idx: Any = None,
                       *args: Any, **kwargs: Any) -> Any:
                active = tracker._updating
                if id(self) in active:  # subclass update calling super().update
                    return original_update(self, key_states, value_states, layer_idx, *args, **kwargs)
                active.add(id(self))
                try:
                    result = original_update(self, key_states, value_states, layer_idx, *args, **kwargs)
                finally:
                    active.discard(id(self))
                tracker._on_update(self, layer_idx, sys._getframe(1))
                return result

            update._kvlint_wrapped = True  # type: ignore[attr-defined]
            self._patch(cls, "update", update)
        self._wrap_deepcopy(cls)

    def _wrap_deepcopy(self, cls: Any) -> None:
        # Every cache class answers copy.deepcopy through this hook: the class's own
        # __deepcopy__ when it defines one, else the default reduce/reconstruct copy.
        own = vars(cls).get("__deepcopy__")
        if getattr(own, "_kvlint_wrapped", False):
            return
        is_root = not any("__deepcopy__" in vars(base) and getattr(vars(base)["__deepcopy__"], "_kvlint_wrapped", False)
                          for base in cls.__mro__[1:])
        if own is None and not is_root:
            return  # inherits the wrapped hook
        tracker = self

        def __deepcopy__(self: Any, memo: Any) -> Any:
            if own is not None:
                new = own(self, memo)
            else:
                reductor = getattr(self, "__reduce_ex__")(4)
                new = copy._reconstruct(self, memo, *reductor)  # what copy.deepcopy does without a hook
            tracker._on_copy_source(self)
            tracker._on_copy(new, sys._getframe(1))
            return new

        __deepcopy__._kvlint_wrapped = True  # type: ignore[attr-defined]
        self._patch(cls, "__deepcopy__", __deepcopy__)

    def _all_subclasses(self, root: Any) -> List[Any]:
        seen, stack = [], [root]
        while stack:
            cls = stack.pop()
            if cls in seen:
                continue
            seen.append(cls)
            stack.extend(cls.__subclasses__())
        return seen

    @contextlib.contextmanager
    def installed(self) -> Iterator["Tracker"]:
        from transformers import cache_utils

        roots = [cache_utils.Cache]
        encdec = getattr(cache_utils, "EncoderDecoderCache", None)
        if encdec is not None and not issubclass(encdec, cache_utils.Cache):
            roots.append(encdec)
        try:
            for root in roots:
                for cls in self._all_subclasses(root):
                    self._wrap_cache_class(cls)
                self._hook_future_subclasses(root)
            self._patch_captures()
            yield self
        finally:
            while self._restore:
                self._restore.pop()()

    def _hook_future_subclasses(self, root: Any) -> None:
        # Subclasses defined after installation (a project's own cache class,
        # imported by the factory) are wrapped as they are created.
        tracker = self
        previous = vars(root).get("__init_subclass__")

        def __init_subclass__(cls: Any, **kwargs: Any) -> None:
            if previous is not None:
                previous.__func__(cls, **kwargs)
            else:
                super(root, cls).__init_subclass__(**kwargs)
            tracker._wrap_cache_class(cls)

        self._patch(root, "__init_subclass__", classmethod(__init_subclass__))

    def _patch_captures(self) -> None:
        graphs = getattr(self._torch.cuda, "graphs", None)
        graph_cls = getattr(graphs, "CUDAGraph", None)
        if graph_cls is None:
            return
        tracker = self
        original_begin = getattr(graph_cls, "capture_begin")
        original_end = getattr(graph_cls, "capture_end")

        def capture_begin(self: Any, *args: Any, **kwargs: Any) -> Any:
            tracker._on_capture_begin(self, sys._getframe(1))
            try:
                return original_begin(self, *args, **kwargs)
            except BaseException:
                tracker._on_capture_end()
                raise

        def capture_end(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return original_end(self, *args, **kwargs)
            finally:
                tracker._on_capture_end()

        self._patch(graph_cls, "capture_begin", capture_begin)
        self._patch(graph_cls, "capture_end", capture_end)
