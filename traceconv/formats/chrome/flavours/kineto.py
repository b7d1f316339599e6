"""PyTorch profiler / Kineto traces (2021 legacy through 2026), see formats/kineto.md."""

from __future__ import annotations

from itertools import compress, repeat
from operator import is_not
from typing import Any

import numpy as np

from ....keys import first_places
from ....model import ProcessKind, Trace
from ....model.args import ArgsColumn
from ....model.typed_arrays import extend_typed
from ....vocabularies.kineto import KINETO_VOCABULARY, LAUNCH_CATEGORIES
from ...device_properties import device_infos
from .base import Flavour, ReadContext, hashable
from .kineto_memory import memory_blocks

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
        # says which framework that was (none: not PyTorch, whose files name it)
        written = envelope.get("traceconv")
        if isinstance(written, dict) and written.get("framework") != cls.framework:
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
        memory_blocks(trace, context.take_slice_index)


def _label_processes(trace: Trace, envelope: dict[str, Any]) -> None:
    """GPU model from ``deviceProperties`` in the GPU's labels; rank, world size and backend
    from ``distributedInfo`` in the labels of every process (names stay as Kineto's, so
    that ``--tracks "^GPU 0"`` and friends keep working)."""
    devices = envelope.get("deviceProperties")
    # (not a list: one malformed entry)
    entries = devices if isinstance(devices, list) else [] if devices is None else [None]
    properties = {p["id"]: p for p in entries
                  if isinstance(p, dict) and "id" in p and hashable(p["id"])}
    trace.diagnostics.add("kineto.malformed_device_properties",
                          count=len(entries) - len(properties), example="$.deviceProperties")
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
                # (once: a file traceconv wrote has it in its labels already)
                process.labels = [x for x in process.labels
                                  if x not in (process.name, model)] + [model]
        if process.kind in (ProcessKind.DEVICE, ProcessKind.HOST):
            process.labels = [*process.labels,
                              *(x for x in rank_labels if x not in process.labels)]


def _first_of_correlation(args: ArgsColumn, rows: np.ndarray) -> tuple[np.ndarray, int]:
    """Per one of ``rows``: where (in rows) its correlation id first came, -1 for none (the
    id's key); and how many ids are malformed (a list or an object).

    >>> args = ArgsColumn([{"correlation": 7}, {}, {"correlation": 7}, {"correlation": [1]}])
    >>> first, malformed = _first_of_correlation(args, np.arange(4)); first.tolist(), malformed
    ([0, -1, 0, -1], 1)
    """
    first = np.full(len(rows), -1, dtype=np.int64)
    found = args.int_columns(rows, ("correlation",), (None,))
    if found is not None:   # the usual case: int64 numbers, read as one column
        at = np.flatnonzero(found[1][0])
        firsts, inverse = np.unique(found[0][0][at], return_index=True, return_inverse=True)[1:]
        first[at] = at[firsts[inverse]]
        return first, 0
    correlations = args.get_many(rows, "correlation")
    if set(map(type, correlations)) <= {int, type(None)}:   # numbers (not all JSON text)
        usable, malformed = list(map(is_not, correlations, repeat(None))), 0
    else:
        usable = [c is not None and (type(c) is int or hashable(c)) for c in correlations]
        malformed = sum(c is not None for c in correlations) - sum(usable)   # lists, objects
    first[usable] = np.flatnonzero(usable)[first_places(compress(correlations, usable))]
    return first, malformed


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
    first, malformed = _first_of_correlation(s.args, rows)
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
        extend_typed(flows.source, sources[new])
        extend_typed(flows.target, targets[new])
        extend_typed(flows.category, np.full(added, category, dtype=np.int32))
        extend_typed(flows.name, np.full(added, name, dtype=np.int32))
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
    trace.diagnostics.add("kineto.flows_from_correlation", count=added)
    trace.diagnostics.add("kineto.flow_rebound", count=rebound)
    trace.diagnostics.add("kineto.malformed_correlation", count=malformed)
