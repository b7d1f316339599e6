"""What Paddle's readers share: annotation names and the allocator's memory records.

The binary profile, the protobuf export and both Chrome-JSON flavours (new profiler,
tools/timeline.py) describe the same things in different containers; the helpers here keep
them drawing the same model.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache

import numpy as np

from ..model import Trace, TrackKind
from ..model.block_pairing import key_codes, pair_events
from ..model.block_table import coded_column
from ..vocabularies.paddle import KERNEL_CATEGORY, MEMCPY_CATEGORY, RUNTIME_CATEGORY

FRAMEWORK = "PaddlePaddle"           # as the Chrome-JSON flavours name it
INT64_MAX = (1 << 63) - 1   # the model stores int64 ns; uninitialised CUPTI times exceed it
_VAR_SUFFIX = re.compile(r"%[^%/]*%")     # "conv2d%out_var%": AllOpDetail per-instance name
ALLOCATE_KINDS = ("Allocate", "ReservedAllocate")
FREE_KINDS = ("Free", "ReservedFree")


@lru_cache(maxsize=1 << 16)   # a profile repeats a few hundred paths ~1e5 times
def leaf_name(path: str) -> str:
    """The name a timeline shows for a '/'-joined annotation path: its last component
    without the ``%var%`` part.

    >>> leaf_name("Executor::Run/Executor::RunPartialPreparedContext/conv2d%conv2d_0.tmp_0%")
    'conv2d'
    """
    return _VAR_SUFFIX.sub("", path.rsplit("/", 1)[-1]) or path


class AllocatorLog:
    """Paddle allocator records → memory blocks (alloc/free paired by place and address,
    allocated and reserved memory apart, as columns by the rule of every allocator log:
    :func:`~traceconv.model.block_pairing.pair_events`) and the allocator's own counters.

    Feed :meth:`add` in time order, then call :meth:`finish`.

    >>> trace = Trace(); host = trace.add_process("p")
    >>> log = AllocatorLog(trace, host, "paddle_pb")
    >>> log.add(10, "Allocate", "Place(cpu)", 0x10, 64, 64, 128, "matmul")
    >>> log.add(20, "Free", "Place(cpu)", 0x10, -64, 0, 128, None)
    >>> log.finish()
    >>> [(b.size, b.alloc_ns, b.free_ns, b.owner_name) for b in trace.memory]
    [(64, 10, 20, 'matmul')]
    """

    def __init__(self, trace: Trace, process: int, code: str) -> None:
        self.trace, self.process, self.code = trace, process, code
        # per allocation or free: (ts, allocates, place, pool, address, bytes, owner,
        # owner node), paired by (place, pool, address) at the end
        self.records: list[tuple] = []
        self.counters: dict[tuple[str, str], int | None] = {}
        # A Chrome file traceconv wrote already holds these series as counter events: they
        # are read as such, and deriving them again would double them on every round trip.
        self.present = {t.name for t in trace.tracks
                        if t.kind == TrackKind.COUNTER and t.process == process}
        self.unknown = 0

    def counter(self, place: str, what: str) -> int | None:
        """The counter track of ``place``'s allocated or reserved bytes; None when the
        input already had it."""
        key = (place, what)
        if key not in self.counters:
            name = f"{place} {what}"
            if name in self.present:
                self.counters[key] = None
                self.trace.diagnostics.add(f"{self.code}.allocator_counter_present", example=name)
            else:
                self.counters[key] = self.trace.add_track(
                    name, process=self.process, kind=TrackKind.COUNTER, unit="bytes",
                    description=f"Paddle allocator: {what} bytes on {place}")
        return self.counters[key]

    def add(self, ts: int, kind: str, place: str, addr: int, increase: int,
            current_allocated: int | None, current_reserved: int | None,
            owner: str | None, owner_node: str | None = None) -> None:
        """One allocator record; ``owner`` names the op that allocated, ``owner_node`` is
        its node in the op graph when the reader has one."""
        trace = self.trace
        for what, value in (("allocated", current_allocated), ("reserved", current_reserved)):
            if value is not None and (track := self.counter(place, what)) is not None:
                trace.add_counter(track, ts, value)
        reserved = kind.startswith("Reserved")
        pool = "reserved" if reserved else "allocated"
        if kind in ALLOCATE_KINDS or kind in FREE_KINDS:
            allocates = kind in ALLOCATE_KINDS
            self.records.append((ts, allocates, place, pool, addr, increase,
                                 owner, owner_node if allocates else None))
        else:
            self.unknown += 1

    def finish(self) -> None:
        """Pair the records into the trace's memory blocks: an allocation owned by its op,
        a free that ends nothing a block from the start of ``abs(bytes)``, unowned."""
        diagnostics = self.trace.diagnostics
        diagnostics.add(f"{self.code}.unknown_memory_record", count=self.unknown)
        if not self.records:
            return
        ts, allocating, places, pools, addresses, sizes, owners, nodes = zip(
            *self.records, strict=True)
        self.records = []
        paired = pair_events((key_codes(places), key_codes(pools), key_codes(addresses)),
                             np.array(allocating, dtype=bool))
        paired.count(diagnostics, self.code)
        events = paired.block_events()
        alloc_ns, free_ns = paired.block_times(np.array(ts, dtype=np.int64), events)
        picked = events.tolist()
        owned = [owners[k] if allocating[k] else None for k in picked]
        self.trace.add_memory_columns(
            {"address": np.array([addresses[k] for k in picked]),
             "size": np.array([sizes[k] if allocating[k] else abs(sizes[k]) for k in picked]),
             "alloc_ns": alloc_ns, "free_ns": free_ns},
            {"device": coded_column([places[k] for k in picked]),
             "pool": coded_column([pools[k] for k in picked]),
             "name": coded_column([owners[k] or "" for k in picked]),
             "owner_op": coded_column([nodes[k] for k in picked]),
             "owner_name": coded_column(owned)})


def _annotations(annotation: str) -> list[str]:
    """The annotation, its enclosing paths, then its bare leaf (memcpy runtime calls are
    recorded under ``GpuMemcpyAsync:CPU->GPU`` while the copy carries the op's path).

    >>> _annotations("run/conv2d/compute")
    ['run/conv2d/compute', 'run/conv2d', 'run', 'compute']
    """
    parts = annotation.split("/")
    paths = ["/".join(parts[:n]) for n in range(len(parts), 0, -1)]
    return paths + [parts[-1]] if len(parts) > 1 else paths


def link_launches(trace: Trace, code: str) -> None:
    """Flows runtime call → kernel/memcpy for the old profiler's records.

    They carry no correlation ids, only the annotation path (``args["path"]``), so each
    device record gets the earliest unused runtime call of its annotation (or of an
    enclosing one) that started before it; counted as guessed.
    """
    strings, s = trace.strings, trace.slices
    runtime_id = strings.find(RUNTIME_CATEGORY)
    device_ids = {strings.find(KERNEL_CATEGORY), strings.find(MEMCPY_CATEGORY)} - {None}
    if runtime_id is None or not device_ids:
        return
    runtime: dict[str, list[tuple[int, int]]] = defaultdict(list)
    device: list[tuple[int, str, int]] = []
    for row, (cat, start, args) in enumerate(zip(s.category, s.start, s.args, strict=True)):
        if cat == runtime_id:
            runtime[(args or {}).get("path", "")].append((start, row))
        elif cat in device_ids:
            device.append((start, (args or {}).get("path", ""), row))
    for calls in runtime.values():
        calls.sort()
    used: dict[str, int] = defaultdict(int)
    unmatched = 0
    for start, annotation, row in sorted(device):
        for path in _annotations(annotation):
            launches, n = runtime.get(path), used[path]
            if launches and n < len(launches) and launches[n][0] <= start:
                trace.add_flow(launches[n][1], row, "launch", "launch")
                used[path] += 1
                break
        else:
            unmatched += 1
    trace.diagnostics.add(f"{code}.launch_flows_guessed", count=len(device) - unmatched)
    trace.diagnostics.add(f"{code}.kernel_without_launch", count=unmatched)
