"""``CUDA_GPU_MEMORY_USAGE_EVENTS`` (``nsys profile --cuda-memory-usage=true``): device
allocations and frees, paired per (device, address) in time order into memory blocks."""

from __future__ import annotations

from ...model import MemoryBlock
from ...model.memory import add_live_bytes_counters
from .context import Context
from .ids import MEMORY_KINDS

MEMORY_USAGE = "CUDA_GPU_MEMORY_USAGE_EVENTS"
_ALLOCATION, _DEALLOCATION = 0, 1


def read_memory(ctx: Context) -> None:
    """One block per allocation (freed by the next deallocation of its address on its
    device); a free whose allocation came before the capture is a block from its start."""
    db = ctx.db
    if not db.has(MEMORY_USAGE, "start", "address", "bytes", "memoryOperationType"):
        return
    rows = db.numeric_columns(MEMORY_USAGE, {
        "start": ("i8", 0), "deviceId": ("i8", 0), "address": ("u8", 0), "bytes": ("i8", 0),
        "memoryOperationType": ("i8", -1), "memKind": ("i8", -1)}, order="start, rowid")
    ctx.read_tables.add(MEMORY_USAGE)
    kinds = ctx.enum("ENUM_CUDA_MEM_KIND", MEMORY_KINDS)
    open_blocks: dict[tuple[int, int], MemoryBlock] = {}
    blocks: list[MemoryBlock] = []
    unpaired = other = 0
    for ts, device, address, size, op, kind in zip(
            *(rows[c].tolist() for c in ("start", "deviceId", "address", "bytes",
                                         "memoryOperationType", "memKind")), strict=True):
        key = (device, address)
        if op == _ALLOCATION:
            block = MemoryBlock(address, size, ts, None, device=f"cuda:{device}",
                                category=kinds.get(kind, "allocation"))
            open_blocks[key] = block
            blocks.append(block)
        elif op == _DEALLOCATION:
            block_open = open_blocks.pop(key, None)
            if block_open is not None:
                block_open.free_ns = ts
            else:
                unpaired += 1
                blocks.append(MemoryBlock(address, size, None, ts, device=f"cuda:{device}",
                                          category="allocated before capture"))
        else:
            other += 1
    fits = [b for b in blocks if b.address < 1 << 63]
    ctx.trace.diagnostics.add("nsys.address_beyond_int64", count=len(blocks) - len(fits))
    blocks = fits
    ctx.trace.add_memory_blocks(blocks)
    ctx.trace.diagnostics.add("nsys.free_without_allocation", count=unpaired)
    ctx.trace.diagnostics.add("nsys.memory_operation_unknown", count=other)
    if blocks:
        add_live_bytes_counters(ctx.trace)
