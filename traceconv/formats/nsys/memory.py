"""``CUDA_GPU_MEMORY_USAGE_EVENTS`` (``nsys profile --cuda-memory-usage=true``): device
allocations and frees, paired per (device, address) in time order into memory blocks."""

from __future__ import annotations

import numpy as np

from ...model.block_pairing import pair_events
from ...model.block_table import renumbered_by_first_use
from ...model.memory import add_live_bytes_counters
from .._sqlite import AS_STATED
from .context import Context
from .ids import MEMORY_KINDS

MEMORY_USAGE = "CUDA_GPU_MEMORY_USAGE_EVENTS"
_ALLOCATION, _DEALLOCATION = 0, 1
_BEFORE = "allocated before capture"   # the category of a free's block that ends nothing


def read_memory(ctx: Context) -> None:
    """One block per allocation (freed by the next deallocation of its address on its
    device), paired as columns by the rule of every allocator log
    (:func:`~traceconv.model.block_pairing.pair_events`), and the live-bytes counters."""
    db = ctx.db
    if not db.has(MEMORY_USAGE, "start", "address", "bytes", "memoryOperationType"):
        return
    ctx.read_tables.add(MEMORY_USAGE)
    # (the records' columns are gone once the blocks are added: the counters need memory;
    # a size that is no int64, a REAL past it, is the builder's to leave out and count)
    if _add_blocks(ctx, db.numeric_columns(MEMORY_USAGE, {
            "start": ("i8", 0), "deviceId": ("i8", 0), "address": ("u8", 0),
            "bytes": (AS_STATED, 0), "memoryOperationType": ("i8", -1), "memKind": ("i8", -1)},
            order="start, rowid")):
        add_live_bytes_counters(ctx.trace)


def _add_blocks(ctx: Context, rows: dict[str, np.ndarray]) -> int:
    """Add the blocks of the records ``rows`` (in time order); how many were added."""
    operation = rows["memoryOperationType"]
    known = (operation == _ALLOCATION) | (operation == _DEALLOCATION)
    diagnostics = ctx.trace.diagnostics
    diagnostics.add("nsys.memory_operation_unknown", count=int(np.count_nonzero(~known)))
    ts, device, address, size, kind = (rows[name][known] for name in (
        "start", "deviceId", "address", "bytes", "memKind"))
    del rows
    paired = pair_events((device, address), operation[known] == _ALLOCATION)
    paired.count(diagnostics, "nsys")
    events = paired.block_events()
    allocates = paired.allocates[events]
    alloc_ns, free_ns = paired.block_times(ts, events)
    devices, device_of = np.unique(device[events], return_inverse=True)
    kinds, kind_of = np.unique(kind[events], return_inverse=True)
    labels = ctx.enum("ENUM_CUDA_MEM_KIND", MEMORY_KINDS)
    # (an address or size past int64 is the builder's to leave out and count)
    ctx.trace.add_memory_columns(
        {"address": address[events], "size": size[events],
         "alloc_ns": alloc_ns, "free_ns": free_ns},
        {"device": renumbered_by_first_use([f"cuda:{d}" for d in devices.tolist()],
                                           device_of),
         "category": renumbered_by_first_use(
             [*(labels.get(k, "allocation") for k in kinds.tolist()), _BEFORE],
             np.where(allocates, kind_of, len(kinds)))})
    return len(events)
