"""``MemoryAllocation`` / ``MemoryDeallocation`` host events → memory blocks and counters.

TensorFlow's allocators record each allocation and free as a zero-length host event whose
stats say the allocator (``allocator_name``), ``addr``, ``allocation_bytes`` (what the
allocator handed out; ``requested_bytes`` is what was asked), the op (``tf_op``), the
``region_type``, ``tensor_shape`` and the allocator's running ``bytes_allocated``.
xprof's trace viewer leaves them out of the timeline (its memory profile reads them); here
they are instants, blocks paired by (allocator, address) in time order, and a
``bytes_allocated`` counter per allocator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...model import Trace, TrackKind
from ...model.block_pairing import key_codes, pair_events
from ...model.block_table import coded_column

ALLOCATION, DEALLOCATION = "MemoryAllocation", "MemoryDeallocation"
MEMORY_EVENTS = frozenset({ALLOCATION, DEALLOCATION})


def allocator_of(args: dict[str, Any]) -> str:
    """The allocator a record belongs to: ``allocator_name`` (TensorFlow's BFC allocators),
    else the device index (TPU runtimes write ``index_on_host``).

    >>> allocator_of({"allocator_name": "GPU_0_bfc"}), allocator_of({"index_on_host": 3})
    ('GPU_0_bfc', 'device 3')
    """
    if "allocator_name" in args:
        return str(args["allocator_name"])
    index = args.get("index_on_host")
    return f"device {index}" if index is not None else "allocator"


class MemoryLog:
    """Collects the records while planes are read; :meth:`finish` pairs them.

    >>> from traceconv.model import Trace
    >>> t = Trace(); p = t.add_process("/host:CPU"); k = t.add_track("python3", process=p)
    >>> log = MemoryLog(t)
    >>> log.record(k, 10, ALLOCATION, {"allocator_name": "GPU_0_bfc", "addr": 4096,
    ...                                "allocation_bytes": 256, "bytes_allocated": 256})
    >>> log.record(k, 30, DEALLOCATION, {"allocator_name": "GPU_0_bfc", "addr": 4096,
    ...                                  "allocation_bytes": 256, "bytes_allocated": 0})
    >>> log.finish()
    >>> [(b.device, b.address, b.size, b.alloc_ns, b.free_ns) for b in t.memory]
    [('GPU_0_bfc', 4096, 256, 10, 30)]
    """

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self.records: list[tuple[int, int, str, int, dict[str, Any]]] = []

    def record(self, track: int, ts: int, name: str, args: dict[str, Any]) -> None:
        self.trace.add_instant(track, ts, name, "memory", args)
        self.records.append((ts, len(self.records), name, track, args))

    def finish(self) -> None:
        """Pair the records by (allocator, address) in time order into memory blocks, as
        columns by the rule of every allocator log
        (:func:`~traceconv.model.block_pairing.pair_events`), and add the counters."""
        trace = self.trace
        counters: dict[str, tuple[int, list[int], list[float]]] = {}
        paired_records: list[tuple[int, bool, str, int, dict[str, Any]]] = []
        unaddressed = 0
        for ts, _, name, track, args in sorted(self.records, key=lambda r: r[:2]):
            allocator = allocator_of(args)
            address = args.get("addr")
            size = args.get("allocation_bytes", args.get("requested_bytes"))
            if isinstance(args.get("bytes_allocated"), int):
                series = counters.get(allocator)
                if series is None:
                    process = trace.tracks[track].process
                    series = counters[allocator] = (trace.add_track(
                        f"{allocator} bytes_allocated", process=process,
                        kind=TrackKind.COUNTER, unit="bytes",
                        description="allocator bytes in use (bytes_allocated stat)"), [], [])
                series[1].append(ts)
                series[2].append(float(args["bytes_allocated"]))
            allocating = name == ALLOCATION
            if not isinstance(address, int) or (allocating and not isinstance(size, int)):
                unaddressed += 1
                continue
            paired_records.append((ts, allocating, allocator, address, args))
        self.records = []
        if paired_records:
            _add_blocks(trace, paired_records)
        for track, times, values in counters.values():
            trace.add_counter_series(track, times, values)
        trace.diagnostics.add("xplane.memory_event_without_address", count=unaddressed)


_BLOCK_ARGS = ("requested_bytes", "data_type", "tensor_shape", "step_id", "id")


def _add_blocks(trace: Trace, records: list[tuple[int, bool, str, int, dict[str, Any]]]
                ) -> None:
    """The blocks of ``records`` (ts, allocates, allocator, address, the event's args), in
    time order: an allocation's named by its op (``tf_op``), a free's that ends nothing
    from the trace's start, of ``allocation_bytes`` when stated (else 0)."""
    ts, allocating, allocators, addresses, args = zip(*records, strict=True)
    paired = pair_events((key_codes(allocators), key_codes(addresses)),
                         np.array(allocating, dtype=bool))
    paired.count(trace.diagnostics, "xplane")
    events = paired.block_events()
    alloc_ns, free_ns = paired.block_times(np.array(ts, dtype=np.int64), events)
    picked = events.tolist()
    # (what a free's block states: its allocator, address and size)
    held = [args[k] if allocating[k] else {} for k in picked]
    sizes = [args[k].get("allocation_bytes", args[k].get("requested_bytes")) for k in picked]
    trace.add_memory_columns(
        {"address": np.array([addresses[k] for k in picked]),
         "size": np.array([size if isinstance(size, int) else 0 for size in sizes]),
         "alloc_ns": alloc_ns, "free_ns": free_ns},
        {"device": coded_column(allocators[k] for k in picked),
         "pool": coded_column(allocators[k] for k in picked),
         "name": coded_column(str(found.get("tf_op") or "") for found in held),
         "owner_name": coded_column(found.get("tf_op") or None for found in held),
         "category": coded_column(str(found.get("region_type") or "") for found in held)},
        [_block_args(found) for found in held])


def _block_args(args: dict[str, Any]) -> dict[str, Any]:
    """What a block keeps of its allocation's args (a tensor shape as text only)."""
    kept = {key: args[key] for key in _BLOCK_ARGS if key in args}
    shape = args.get("tensor_shape", args.get("shape"))
    if isinstance(shape, str):
        kept["tensor_shape"] = shape
    return kept
