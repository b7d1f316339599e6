"""PyTorch profiler / Kineto traces (2021 legacy through 2026), see formats/kineto.md."""

from __future__ import annotations

from itertools import compress, repeat
from operator import is_not
from typing import Any

import numpy as np

from ....analysis.memory import add_live_bytes_counters
from ....analysis.slice_index import SliceIndex, enclosing_rows
from ....keys import first_places
from ....model import MemoryBlock, ProcessKind, Trace
from ...device_properties import device_infos
from .base import Flavour, ReadContext, hashable
from .kineto_activity import KINETO_VOCABULARY, LAUNCH_CATEGORIES

# Kineto activity categories that run on a device; their pid is a device index.
DEVICE_CATEGORIES = frozenset({
    "kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation", "cuda_sync", "cuda_event",
    "cuda_profiler_range", "mtia_ccp_events", "xpu_sync",
    "Kernel", "Memcpy", "Memset",  # 2021 names
})
LAUNCH_FLOW_CATEGORIES = frozenset({"ac2g", "async", "async_gpu", "async_cpu_to_gpu"})
LEGACY_CATEGORIES = {"Operator": "cpu_op", "Runtime": "cuda_runtime", "Kernel": "kernel",
                     "Memcpy": "gpu_memcpy", "Memset": "gpu_memset"}
LEGACY_ARGS = {"external id": "External id", "Profiler Event Index": "Ev Idx"}
KINETO_CATEGORIES = frozenset({"cpu_op", "python_function", "user_annotation", "cuda_runtime",
                               "cpu_instant_event", *LEGACY_CATEGORIES, *DEVICE_CATEGORIES})
OVERHEAD_PID = -1   # Kineto's own work (trace buffer requests) is written under pid -1
# c10::DeviceType values that appear in [memory] events.
DEVICE_TYPES = {0: "CPU", 1: "CUDA", 6: "HIP", 9: "XLA", 12: "XPU", 13: "MPS", 19: "MTIA",
                20: "PrivateUse1"}


def _category(event: dict) -> str | None:
    """The event's category when it is a string (malformed events may hold anything)."""
    cat = event.get("cat")
    return cat if isinstance(cat, str) else None


class Kineto(Flavour):
    """torch.profiler's Chrome export: GPU pids are device indices, flows are ac2g/fwdbwd."""

    name = "kineto"
    framework = "PyTorch"
    device_categories = DEVICE_CATEGORIES
    flow_categories = {old: "ac2g" for old in LAUNCH_FLOW_CATEGORIES}
    vocabulary = KINETO_VOCABULARY

    def __init__(self) -> None:
        self.legacy: bool | None = None

    @classmethod
    def detect(cls, envelope: dict, events: list) -> bool:
        # traceconv's own Chrome output has baseTimeNanoseconds whatever the producer, and
        # says which framework that was
        written = envelope.get("traceconv")
        if isinstance(written, dict) and written.get("framework") not in (None, cls.framework):
            return False
        keys = envelope.keys() - ({"baseTimeNanoseconds"} if written is not None else set())
        if {"baseTimeNanoseconds", "deviceProperties", "distributedInfo"} & keys:
            return True
        return any(isinstance(e, dict) and (_category(e) in KINETO_CATEGORIES
                                            or e.get("name") == "[memory]") for e in events[:2000])

    def prepare(self, events: list, context: ReadContext) -> None:
        if self.legacy is None:
            self.legacy = any(isinstance(e, dict) and _category(e) in LEGACY_CATEGORIES
                              for e in events[:5000])
        if not self.legacy:
            return  # today's files need no rewriting: only 2021/2022 names do
        for e in events:
            cat = _category(e) if isinstance(e, dict) else None
            if cat in LEGACY_CATEGORIES:
                e["cat"] = LEGACY_CATEGORIES[cat]
                args = e.get("args")
                if isinstance(args, dict):
                    for old, new in LEGACY_ARGS.items():
                        if old in args:
                            args[new] = args.pop(old)

    def takes_records(self) -> bool:
        return self.legacy is False   # (decided on the first piece)

    def name_process(self, pid: Any, device: bool, meta: dict[str, Any]) -> str:
        labels = meta.get("labels") or []
        if device:
            return next((x for x in labels if x != "CPU"), f"GPU {pid}")
        name = meta.get("name")
        if not name and pid == OVERHEAD_PID:
            return "Kineto overhead"
        suffix = f" (pid {pid})"
        if not name or not isinstance(pid, int) or str(name).endswith(suffix):
            return str(name or pid)   # (a name traceconv wrote already carries the pid)
        return f"{name}{suffix}"

    def finalize(self, trace: Trace, context: ReadContext) -> None:
        envelope = context.envelope
        meta = trace.metadata
        info = envelope.get("distributedInfo")
        if isinstance(info, dict) and isinstance(info.get("rank"), int):
            meta.rank = info["rank"]
        if isinstance(info, dict) and isinstance(info.get("world_size"), int):
            meta.world_size = info["world_size"]
        meta.devices = device_infos(envelope.get("deviceProperties"))
        meta.source_version = f"schemaVersion {envelope.get('schemaVersion', '?')}" + (
            " (2021 legacy names)" if self.legacy else "")
        _label_processes(trace, envelope)
        _join_launches(trace)
        _memory_blocks(trace, context.slice_index or SliceIndex(trace))


def _label_processes(trace: Trace, envelope: dict[str, Any]) -> None:
    """GPU model from ``deviceProperties`` in the GPU's labels; rank, world size and backend
    from ``distributedInfo`` in the labels of every process (names stay as Kineto's, so
    that ``--tracks "^GPU 0"`` and friends keep working)."""
    devices = envelope.get("deviceProperties")
    # (not a list: one malformed entry)
    entries = devices if isinstance(devices, list) else [] if devices is None else [None]
    properties = {p["id"]: p for p in entries
                  if isinstance(p, dict) and "id" in p and hashable(p["id"])}
    trace.diagnostics.add("kineto.malformed_device_properties", "deviceProperties that are "
                          "not a list of objects with an id (no GPU model from them)",
                          kind="dropped", count=len(entries) - len(properties),
                          example="$.deviceProperties")
    info = envelope.get("distributedInfo")
    rank_labels: list[str] = []   # the words of a merge's rank labels (analysis/merge.py)
    if isinstance(info, dict) and isinstance(info.get("rank"), int):
        rank_labels.append(f"rank {info['rank']}")
        if isinstance(info.get("world_size"), int):
            rank_labels.append(f"world size {info['world_size']}")
        if isinstance(info.get("backend"), str):
            rank_labels.append(f"backend {info['backend']}")
    for process in trace.processes:
        if process.kind is ProcessKind.DEVICE:
            model = (properties.get(process.pid) or {}).get("name")
            if isinstance(model, str) and model:
                process.labels = [x for x in process.labels if x != process.name] + [model]
        if process.kind in (ProcessKind.DEVICE, ProcessKind.HOST):
            process.labels = [*process.labels, *rank_labels]


def _join_launches(trace: Trace) -> None:
    """Add launch → device-work flows by CUPTI correlation id where no ac2g flow made one."""
    strings = trace.strings
    launch_ids = {i for c in LAUNCH_CATEGORIES if (i := strings.find(c)) is not None}
    device_ids = {i for c in DEVICE_CATEGORIES if (i := strings.find(c)) is not None}
    if not launch_ids or not device_ids:
        return
    s = trace.slices
    categories = s.numpy("category")
    is_launch = np.isin(categories, list(launch_ids))
    rows = np.flatnonzero(is_launch | np.isin(categories, list(device_ids)))
    correlations = s.args.get_many(rows, "correlation")
    # per event: where (in rows) its correlation id first came, -1 for none: the id's key
    if set(map(type, correlations)) <= {int, type(None)}:   # the usual case: numbers
        usable, malformed = list(map(is_not, correlations, repeat(None))), 0
    else:
        usable = [c is not None and (type(c) is int or hashable(c)) for c in correlations]
        malformed = sum(c is not None for c in correlations) - sum(usable)   # lists, objects
    first = np.full(len(rows), -1, dtype=np.int64)
    first[usable] = np.flatnonzero(usable)[first_places(compress(correlations, usable))]
    launch = is_launch[rows] & (first >= 0)
    source_of = np.full(len(rows), -1, dtype=np.int64)   # per id key: its last launch
    source_of[first[launch]] = rows[launch]   # (numpy assigns in order: the last one wins)
    work = np.flatnonzero(~is_launch[rows] & (first >= 0))
    sources, targets = source_of[first[work]], rows[work]
    found = sources >= 0
    sources, targets = sources[found], targets[found]
    flows = trace.flows
    flow_targets, flow_sources = flows.numpy("target"), flows.numpy("source")
    from_launch = np.flatnonzero(is_launch[flow_sources])
    # a device op that a flow event links from a launch already gets no second launch flow
    # (per device op: the last such flow, as a dict of them keeps it)
    linked = flow_targets[from_launch]
    last = len(linked) - 1 - np.unique(linked[::-1], return_index=True)[1]
    flow_into = np.full(len(s), -1, dtype=np.int64)
    flow_into[linked[last]] = from_launch[last]
    flow = flow_into[targets]
    new = flow < 0
    added = int(new.sum())
    if added:   # (the strings are interned only when a flow is added, as add_flow does)
        category, name = trace.strings.intern("ac2g"), trace.strings.intern("correlation")
        flows.source.frombytes(sources[new].astype(np.int64).tobytes())
        flows.target.frombytes(targets[new].astype(np.int64).tobytes())
        flows.category.frombytes(np.full(added, category, dtype=np.int32).tobytes())
        flows.name.frombytes(np.full(added, name, dtype=np.int32).tobytes())
    starts, tracks = s.numpy("start"), s.numpy("track")
    flow, src = flow[~new], sources[~new]
    bound_to = flow_sources[flow]
    # the flow event named a time that two launches share (zero-length calls of
    # integer-µs traces): the one with the device op's correlation id is its launch
    shared = np.flatnonzero((bound_to != src) & (starts[bound_to] == starts[src])
                            & (tracks[bound_to] == tracks[src]))
    for at in shared.tolist():   # in order: the last launch of a flow wins
        flows.source[int(flow[at])] = int(src[at])
    rebound = len(shared)
    trace.diagnostics.add("kineto.flows_from_correlation", "launch → device flows added from "
                          "matching correlation ids (no ac2g flow event linked them)",
                          kind="guessed", count=added)
    trace.diagnostics.add("kineto.flow_rebound", "ac2g flows moved to the launch with the "
                          "device op's correlation id (the flow event's time fits two "
                          "launches on that thread)", kind="repaired", count=rebound)
    trace.diagnostics.add("kineto.malformed_correlation", "launch or device events whose "
                          "correlation id is a list or an object (not joined by it)",
                          kind="dropped", count=malformed)


def _device_name(kind: Any, index: Any) -> str:
    name = DEVICE_TYPES.get(kind, f"device type {kind}")
    return name if not isinstance(index, int) or index < 0 else f"{name}:{index}"


def _memory_blocks(trace: Trace, index: SliceIndex) -> None:
    """Pair [memory] alloc (+Bytes) and free (-Bytes) instants per (device type, device id,
    address) in timestamp order.

    Kineto writes its events one thread at a time, and the caching allocator often frees a
    block on another thread than the one that allocated it: in file order a free can come
    before its alloc. Time order is the allocator's order: a free closes the block of the
    address's event just before it when that one is an alloc, and an alloc that another
    alloc of the same address follows was freed unrecorded. A block's owner is the
    innermost op (``cpu_op``, else any slice) around the alloc on the allocating thread.
    """
    name_id = trace.strings.find("[memory]")
    if name_id is None:
        return
    i = trace.instants
    ts_all = i.numpy("ts")
    rows = np.flatnonzero(i.numpy("name") == name_id)
    rows = rows[np.argsort(ts_all[rows], kind="stable")]
    sizes, addresses, *kinds = i.args.get_columns(
        rows, ("Bytes", "Addr", "Device Type", "Device Id"), (None, None, None, -1))
    if set(map(type, sizes)) <= {int} and None not in addresses:   # (the usual case)
        usable = np.ones(len(rows), dtype=bool)
    else:
        usable = np.fromiter((isinstance(size, int) and address is not None
                              for size, address in zip(sizes, addresses, strict=True)),
                             dtype=bool, count=len(rows))
    events = np.flatnonzero(usable)   # in time order
    picked = usable.tolist()
    devices = _device_names(list(zip(*(compress(column, picked) for column in kinds),
                                     strict=True)))
    keys = list(zip(devices, compress(addresses, picked), strict=True))
    first = _first_of_key(keys)
    if None in devices:
        first[[k for k, device in enumerate(devices) if device is None]] = -1
    malformed = int((first < 0).sum())
    events, first = events[first >= 0], first[first >= 0]
    size = list(map(sizes.__getitem__, events.tolist()))
    alloc = np.fromiter(map((0).__lt__, size), dtype=bool, count=len(size))   # size > 0
    freeing, freed_at = _pair_frees(first, alloc)
    times = ts_all[rows[events]]
    owner_names = _owner_names(trace, index, i.numpy("track")[rows[events]], times, alloc)
    ends = times[np.maximum(freed_at, 0)].tolist()
    trace.add_memory_blocks([
        MemoryBlock(keys[k][1], bytes_, ts, ends[e] if freed >= 0 else None, device=keys[k][0],
                    category="allocation", owner_name=owner_names[e]) if is_alloc else
        MemoryBlock(keys[k][1], -bytes_, None, ts, device=keys[k][0],
                    category="allocated before trace")
        for e, k, ts, bytes_, is_alloc, freed, closes in zip(
            range(len(first)), first.tolist(), times.tolist(), size, alloc.tolist(),
            freed_at.tolist(), freeing.tolist(), strict=True) if is_alloc or not closes])
    frees_without_alloc = int((~alloc & ~freeing).sum())
    open_at_end = int(alloc.sum() - freeing.sum())
    trace.diagnostics.add("kineto.malformed_memory_event", "[memory] events whose Addr, "
                          "Device Type or Device Id is a list or an object (no block)",
                          kind="dropped", count=malformed)
    trace.diagnostics.add("kineto.free_without_alloc", "memory frees whose allocation happened "
                          "before the trace window: block starts at the trace start",
                          kind="guessed", count=frees_without_alloc)
    trace.diagnostics.add("kineto.alloc_without_free", "allocations with no free in the trace "
                          "window (alive at its end, or freed unrecorded before the address "
                          "was reused)", kind="note", count=open_at_end)
    add_live_bytes_counters(trace)


def _pair_frees(key: np.ndarray, alloc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For events in time order with their address ``key`` and whether each is an
    ``alloc``: which frees close the alloc just before them on their address, and per alloc
    the event that frees it (-1: none).

    >>> freeing, freed_at = _pair_frees(np.array([0, 0, 1, 0, 1]),
    ...                                 np.array([True, False, False, False, True]))
    >>> freeing.tolist(), freed_at.tolist()
    ([False, True, False, False, False], [1, -1, -1, -1, -1])
    """
    by_key = np.lexsort((np.arange(len(key)), key))   # each address's events in time order
    after, before = by_key[1:], by_key[:-1]
    closes = ~alloc[after] & alloc[before] & (key[after] == key[before])
    freeing = np.zeros(len(key), dtype=bool)
    freeing[after] = closes
    freed_at = np.full(len(key), -1, dtype=np.int64)
    freed_at[before[closes]] = after[closes]
    return freeing, freed_at


def _owner_names(trace: Trace, index: SliceIndex, tracks: np.ndarray, times: np.ndarray,
                 alloc: np.ndarray) -> list[str | None]:
    """Per event, for an alloc the name of the innermost ``cpu_op`` around it on its thread
    (else of any slice there), for the others None."""
    ops = enclosing_rows(SliceIndex(trace, "cpu_op"), tracks[alloc], times[alloc])
    owner = np.where(ops >= 0, ops, enclosing_rows(index, tracks[alloc], times[alloc]))
    owned = owner >= 0
    name_ids = trace.slices.numpy("name")[owner[owned]].tolist()
    found = np.full(len(alloc), None, dtype=object)
    found[np.flatnonzero(alloc)[owned]] = list(map(trace.strings.strings.__getitem__, name_ids))
    return found.tolist()  # type: ignore[no-any-return]


def _device_names(kinds: list[tuple[Any, Any]]) -> list[str | None]:
    """The device name of each (device type, device id); None where a list or an object
    in it makes it malformed.

    >>> _device_names([(1, 0), (0, -1), (1, [0])])
    ['CUDA:0', 'CPU', None]
    """
    try:   # the usual case: a few distinct pairs of numbers
        names = {kind: _device_name(*kind) for kind in set(kinds)}
        return list(map(names.__getitem__, kinds))
    except TypeError:   # a list or an object: name the pairs one by one
        names = {}
    found: list[str | None] = []
    for kind in kinds:
        try:
            name = names.get(kind)
        except TypeError:   # not hashable
            found.append(None)
            continue
        found.append(name if name is not None else names.setdefault(kind, _device_name(*kind)))
    return found


def _first_of_key(keys: list[tuple[Any, ...]]) -> np.ndarray:
    """Per key, the index of its first occurrence (-1 where a list or an object makes it
    unusable as a key).

    >>> _first_of_key([("CUDA:0", 8), ("CUDA:0", 16), ("CUDA:0", 8), ("CUDA:0", [8])]).tolist()
    [0, 1, 0, -1]
    """
    seen: dict[tuple[Any, ...], int] = {}
    try:
        return first_places(keys, seen)
    except TypeError:
        first = np.full(len(keys), -1, dtype=np.int64)
        for k, key in enumerate(keys):
            if hashable(key):
                first[k] = seen.setdefault(key, k)
        return first
