"""``memory-peak`` and ``fragmentation``: how close to the device limit, and how much is held
but unused."""

from __future__ import annotations

from ....model.memory import live_bytes
from ..context import Context, device_block_rows
from ..finding import Finding
from ..rule import Rule
from . import grade, pct

PEAK_MEDIUM, PEAK_HIGH = 0.80, 0.90       # peak / capacity
FRAGMENTED = 0.35                         # 1 - peak allocated / peak reserved
MIN_WASTE = 256 * 2**20                   # ... and at least this many bytes held unused
GIB = 2**30


def _peak(ctx: Context) -> tuple[int, int, str]:
    """(peak bytes, time, what was measured): allocator reserved, else live blocks."""
    times, reserved, _ = ctx.allocator_totals
    if len(times):
        i = int(reserved.argmax())
        return int(reserved[i]), int(times[i]), "allocator reserved bytes"
    memory = ctx.trace.memory
    when, peak = live_bytes(memory, rows=device_block_rows(memory)).peak
    return peak, when, "live bytes of memory blocks"


def _memory_peak(ctx: Context) -> list[Finding]:
    capacity = ctx.device_capacity
    assert capacity is not None
    peak, when, measured = _peak(ctx)
    share = peak / capacity
    severity = grade(share, PEAK_MEDIUM, PEAK_HIGH)
    if severity is None:
        return []
    return [Finding(
        "memory-peak", severity,
        f"memory peak {peak / GIB:.2f} GiB is {pct(share)} of the device's "
        f"{capacity / GIB:.2f} GiB",
        {"peak_bytes": peak, "capacity_bytes": capacity, "share": round(share, 4),
         "measured": measured},
        {"peak_ns": ctx.timeline.since_start(when)},
        "Close to out-of-memory: activation checkpointing, smaller micro-batches with "
        "gradient accumulation, mixed precision, or freeing references earlier; the "
        "memory-flow picture (traceconv memflow) shows what is alive at the peak.")]


def _fragmentation(ctx: Context) -> list[Finding]:
    _, reserved, allocated = ctx.allocator_totals
    peak_reserved, peak_allocated = int(reserved.max()), int(allocated.max())
    if not peak_reserved:
        return []
    unused = peak_reserved - peak_allocated
    share = unused / peak_reserved
    if share < FRAGMENTED or unused < MIN_WASTE:
        return []
    return [Finding(
        "fragmentation", "high" if share >= 2 * FRAGMENTED else "medium",
        f"the allocator reserves {peak_reserved / GIB:.2f} GiB but never holds more than "
        f"{peak_allocated / GIB:.2f} GiB ({pct(share)} unused)",
        {"peak_reserved_bytes": peak_reserved, "peak_allocated_bytes": peak_allocated,
         "unused_bytes": unused, "unused_share": round(share, 4)},
        {"samples": int(len(reserved))},
        "Cached blocks are held but do not fit later requests: set "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, keep tensor shapes stable, "
        "or allocate the largest buffers first.")]


RULES = (
    Rule("memory-peak", (("allocator totals", "memory blocks"), "device capacity"), _memory_peak,
         "peak device memory (allocator reserved bytes, else live memory blocks) over the "
         "device's capacity (recorded, or the device_memory option)",
         f"≥ {PEAK_MEDIUM:.0%} medium, ≥ {PEAK_HIGH:.0%} high",
         "PyTorch CUDA memory guide; TensorBoard memory view"),
    Rule("fragmentation", ("allocator totals",), _fragmentation,
         "bytes the caching allocator reserves but never has allocated at once",
         f"unused ≥ {FRAGMENTED:.0%} of peak reserved and ≥ 256 MiB (high at ≥ 70%)",
         "PyTorch CUDA caching allocator notes (reserved vs allocated, expandable segments)"),
)
