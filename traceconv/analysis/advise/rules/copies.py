"""``sync-copy``, ``pageable-copy``, ``memcpy-heavy``: copies that stall or dominate."""

from __future__ import annotations

import numpy as np

from ...activity import Activity, clip
from ..context import Context
from ..finding import Finding
from ..rule import Rule
from . import grade, ms, pct

SYNC_MEDIUM, SYNC_HIGH = 0.05, 0.20          # host time blocked in copies / step time
PAGEABLE_MEDIUM = 0.01                       # pageable copy device time / step time
HEAVY_MEDIUM, HEAVY_HIGH = 0.20, 0.40        # copy time / device busy time
STATS_RATIO = 10.0                           # % of total time in the copy summary
STATS_CALLS_PER_STEP = 100


def _sync_copy(ctx: Context) -> list[Finding]:
    tl = ctx.timeline
    copies = tl.rows(Activity.MEMCPY)
    copies = copies[tl.launch_of[copies] >= 0]
    launch = tl.launch_of[copies]
    # the host call returned only after the copy had finished: the host waited for it
    blocking = tl.end[launch] >= tl.end[copies]
    if not blocking.any():
        return []
    blocked_ns = int(tl.dur[launch[blocking]].sum())
    window = tl.steps.total
    share = blocked_ns / window if window else 0.0
    severity = grade(share, SYNC_MEDIUM, SYNC_HIGH)
    if severity is None:
        return []
    rows = copies[blocking]
    names = tl.names(rows)
    return [Finding(
        "sync-copy", severity,
        f"{int(blocking.sum())} copies block the host for {ms(blocked_ns)} "
        f"({pct(share)} of {tl.steps_word})",
        {"blocking_copies": int(blocking.sum()), "host_blocked_ns": blocked_ns,
         "window_ns": window, "share": round(share, 4),
         "copy_device_ns": int(tl.dur[rows].sum())},
        {"copies": sorted(set(names)), "launch_calls": sorted(set(tl.names(launch[blocking]))),
         "first_ns": tl.since_start(int(tl.start[rows].min()))},
        "The host waits for these copies: use pinned host memory and non_blocking=True "
        "(tensor.to(device, non_blocking=True)), and avoid .item()/.cpu()/print of device "
        "values inside the step; move such checks off the hot loop.")]


def _pageable_copy(ctx: Context) -> list[Finding]:
    tl = ctx.timeline
    rows = ctx.copy_memory_kinds["pageable"]
    if not len(rows):
        return []
    device_ns = int(tl.dur[rows].sum())
    window = tl.steps.total
    share = device_ns / window if window else 0.0
    if share < PAGEABLE_MEDIUM:
        return []
    nbytes = sum(int(a.get("bytes", 0)) for a in (ctx.trace.slices.args[r] for r in rows.tolist())
                 if isinstance(a, dict) and isinstance(a.get("bytes", 0), int))
    return [Finding(
        "pageable-copy", "medium",
        f"{len(rows)} copies from/to pageable host memory take {ms(device_ns)} "
        f"({pct(share)} of {tl.steps_word})",
        {"copies": int(len(rows)), "bytes": nbytes, "device_ns": device_ns,
         "share": round(share, 4),
         "bandwidth_gb_s": round(nbytes / device_ns, 3) if device_ns else None},
        {"copies": sorted(set(tl.names(rows))),
         "first_ns": tl.since_start(int(tl.start[rows].min()))},
        "Pageable memory is staged through a bounce buffer and cannot overlap with compute: "
        "allocate host tensors pinned (pin_memory=True in the DataLoader, "
        "tensor.pin_memory()), then copy with non_blocking=True.")]


def _steps_from_stats(ctx: Context) -> int | None:
    """Step count a statistics table states: a ``ProfileStep`` row, else its one top row."""
    for stat in ctx.trace.stats:
        if stat.name.startswith("ProfileStep") and stat.calls:
            return stat.calls
    tops = [s for s in ctx.stats("events") if s.parent is None]
    return tops[0].calls if len(tops) == 1 and tops[0].calls else None


def _memcpy_heavy_stats(ctx: Context) -> list[Finding]:
    rows = ctx.stats("memcpy", "memory manipulation")
    top = [s for s in rows if s.parent is None] or rows
    calls = sum(s.calls for s in top)
    total = sum(s.total_ns for s in top)
    ratio = sum(s.ratio or 0.0 for s in top)
    steps = _steps_from_stats(ctx)
    per_step = calls / steps if steps else None
    if ratio < STATS_RATIO and (per_step is None or per_step < STATS_CALLS_PER_STEP):
        return []
    return [Finding(
        "memcpy-heavy", "high" if ratio >= 2 * STATS_RATIO else "medium",
        f"{calls:,} device copies" + (f" ({per_step:,.0f} per step)" if per_step else "")
        + f", {ratio:.1f}% of the time",
        {"calls": calls, "total_ns": total, "ratio_pct": round(ratio, 4), "steps": steps,
         "calls_per_step": None if per_step is None else round(per_step, 2)},
        {"rows": [s.name for s in rows]},
        "Many small copies between host and device: keep control flow and scalars on the "
        "side that uses them (Paddle: move loop conditions to the CPU), batch copies, "
        "avoid synchronous GpuMemcpySync in loops.")]


def _memcpy_heavy(ctx: Context) -> list[Finding]:
    if ctx.has("copy statistics") and not ctx.has("device copies"):
        return _memcpy_heavy_stats(ctx)
    tl = ctx.timeline
    findings = []
    for process in tl.device_processes():
        on_device = tl.process == process
        busy = clip(tl.device_busy(process), tl.steps).total
        copy_rows = np.flatnonzero(on_device & np.isin(
            tl.activity, np.array((Activity.MEMCPY, Activity.MEMSET), np.int8)))
        copy_ns = clip(tl.union(copy_rows), tl.steps).total
        share = copy_ns / busy if busy else 0.0
        severity = grade(share, HEAVY_MEDIUM, HEAVY_HIGH)
        if severity is None:
            continue
        device = ctx.trace.processes[process].name
        findings.append(Finding(
            "memcpy-heavy", severity,
            f"copies and memsets are {pct(share)} of {device}'s busy time",
            {"copy_ns": copy_ns, "busy_ns": busy, "share": round(share, 4),
             "copies": int(len(copy_rows))},
            {"device": device, "copies": sorted(set(tl.names(copy_rows)))[:10]},
            "Copies crowd out compute: keep data resident on the device, batch small "
            "copies, overlap the rest with compute on a side stream from pinned memory."))
    return findings


RULES = (
    Rule("sync-copy", ("device copies", "launch links"), _sync_copy,
         "host time spent in copy calls that return only after the copy has finished",
         f"≥ {SYNC_MEDIUM:.0%} of step time medium, ≥ {SYNC_HIGH:.0%} high",
         "CUDA best practices (pinned memory, asynchronous transfers); PyTorch tuning guide"),
    Rule("pageable-copy", ("copy memory kinds",), _pageable_copy,
         "device time of copies whose host side is pageable memory",
         f"≥ {PAGEABLE_MEDIUM:.0%} of step time",
         "CUDA best practices (pageable vs pinned transfers); PyTorch pin_memory"),
    Rule("memcpy-heavy", (("device copies", "copy statistics"),), _memcpy_heavy,
         "timelines: copy + memset share of device busy time; statistics: Paddle's "
         "GpuMemcpy summary (ratio, calls per step)",
         f"timelines ≥ {HEAVY_MEDIUM:.0%} medium, ≥ {HEAVY_HIGH:.0%} high; statistics "
         f"≥ {STATS_RATIO:.0f}% of time or ≥ {STATS_CALLS_PER_STEP} calls per step",
         "Paddle profiler report (GpuMemCpy Summary, control-flow case); HTA temporal breakdown"),
)
