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

from ...model import MemoryBlock, Trace, TrackKind
from ...model.block_pairing import BlockPairing

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
        trace = self.trace
        pairs = BlockPairing("xplane")   # keyed by (allocator, address)
        counters: dict[str, tuple[int, list[int], list[float]]] = {}
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
            key = (allocator, address)
            if allocating:
                assert isinstance(size, int)
                shape = args.get("tensor_shape", args.get("shape"))
                block = MemoryBlock(
                    address, size, alloc_ns=ts, device=allocator, pool=allocator,
                    name=str(args.get("tf_op") or ""), owner_name=args.get("tf_op") or None,
                    category=str(args.get("region_type") or ""),
                    args={k: args[k] for k in ("requested_bytes", "data_type", "tensor_shape",
                                               "step_id", "id") if k in args})
                if isinstance(shape, str):
                    block.args["tensor_shape"] = shape
                pairs.alloc(key, ts, block)
            elif not pairs.free(key, ts):
                pairs.allocated_before(MemoryBlock(
                    address, size if isinstance(size, int) else 0, free_ns=ts,
                    device=allocator, pool=allocator))
        trace.add_memory_blocks(pairs.blocks)
        for track, times, values in counters.values():
            trace.add_counter_series(track, times, values)
        pairs.count(trace.diagnostics)
        trace.diagnostics.add("xplane.memory_event_without_address", count=unaddressed)
