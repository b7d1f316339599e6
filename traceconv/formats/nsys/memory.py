"""``CUDA_GPU_MEMORY_USAGE_EVENTS`` (``nsys profile --cuda-memory-usage=true``): device
allocations and frees, paired per (device, address) in time order into memory blocks."""

from __future__ import annotations

from ...model import MemoryBlock
from ...model.block_pairing import BlockPairing
from ...model.memory import add_live_bytes_counters
from .context import Context
from .ids import MEMORY_KINDS

MEMORY_USAGE = "CUDA_GPU_MEMORY_USAGE_EVENTS"
_ALLOCATION, _DEALLOCATION = 0, 1


def read_memory(ctx: Context) -> None:
    """One block per allocation (freed by the next deallocation of its address on its
    device); unpaired records follow :class:`BlockPairing`'s rule."""
    db = ctx.db
    if not db.has(MEMORY_USAGE, "start", "address", "bytes", "memoryOperationType"):
        return
    rows = db.numeric_columns(MEMORY_USAGE, {
        "start": ("i8", 0), "deviceId": ("i8", 0), "address": ("u8", 0), "bytes": ("i8", 0),
        "memoryOperationType": ("i8", -1), "memKind": ("i8", -1)}, order="start, rowid")
    ctx.read_tables.add(MEMORY_USAGE)
    kinds = ctx.enum("ENUM_CUDA_MEM_KIND", MEMORY_KINDS)
    pairs = BlockPairing("nsys")
    other = 0
    for ts, device, address, size, op, kind in zip(
            *(rows[c].tolist() for c in ("start", "deviceId", "address", "bytes",
                                         "memoryOperationType", "memKind")), strict=True):
        key = (device, address)
        if op == _ALLOCATION:
            pairs.alloc(key, ts, MemoryBlock(address, size, ts, None, device=f"cuda:{device}",
                                             category=kinds.get(kind, "allocation")))
        elif op == _DEALLOCATION:
            if not pairs.free(key, ts):
                pairs.allocated_before(MemoryBlock(address, size, None, ts,
                                                   device=f"cuda:{device}",
                                                   category="allocated before capture"))
        else:
            other += 1
    blocks = pairs.blocks   # (an address past int64 is the builder's to leave out and count)
    ctx.trace.add_memory_blocks(blocks)
    pairs.count(ctx.trace.diagnostics)
    ctx.trace.diagnostics.add("nsys.memory_operation_unknown", count=other)
    if blocks:
        add_live_bytes_counters(ctx.trace)
