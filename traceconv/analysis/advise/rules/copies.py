"""``sync-copy``, ``pageable-copy``, ``memcpy-heavy``: copies that stall or dominate."""

from __future__ import annotations

from ....units import format_duration
from ..context import Context
from ..finding import Finding
from ..rule import Rule
from . import grade, pct

SYNC_MEDIUM, SYNC_HIGH = 0.05, 0.20          # host time blocked in copies / step time
PAGEABLE_MEDIUM = 0.01                       # pageable copy device time / step time
HEAVY_MEDIUM, HEAVY_HIGH = 0.20, 0.40        # copy time on a rank's devices / their busy time


def _sync_copy(ctx: Context) -> list[Finding]:
    blocked = ctx.blocked_copies
    if blocked is None:
        return []
    share = blocked.host_blocked_ns / blocked.window_ns if blocked.window_ns else 0.0
    severity = grade(share, SYNC_MEDIUM, SYNC_HIGH)
    if severity is None:
        return []
    where: dict[str, object] = {"copies": blocked.names, "launch_calls": blocked.calls}
    if blocked.first_ns is not None:
        where["first_ns"] = blocked.first_ns
    return [Finding(
        "sync-copy", severity,
        f"{'' if blocked.copies is None else f'{blocked.copies:,} '}copies block the host for {format_duration(blocked.host_blocked_ns)} "
        f"({pct(share)} of {blocked.window_word})",
        {"blocking_copies": blocked.copies, "host_blocked_ns": blocked.host_blocked_ns,
         "window_ns": blocked.window_ns, "share": round(share, 4),
         "copy_device_ns": blocked.copy_device_ns},
        where,
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
        f"{len(rows)} copies from/to pageable host memory take {format_duration(device_ns)} "
        f"({pct(share)} of {tl.steps_word})",
        {"copies": int(len(rows)), "bytes": nbytes, "device_ns": device_ns,
         "share": round(share, 4),
         "bandwidth_gb_s": round(nbytes / device_ns, 3) if device_ns else None},
        {"copies": sorted(set(tl.names(rows))),
         "first_ns": tl.since_start(int(tl.start[rows].min()))},
        "Pageable memory is staged through a bounce buffer and cannot overlap with compute: "
        "allocate host tensors pinned (pin_memory=True in the DataLoader, "
        "tensor.pin_memory()), then copy with non_blocking=True.")]


def _memcpy_heavy(ctx: Context) -> list[Finding]:
    findings = []
    for device in ctx.device_copies:
        share = device.share   # (None: the busy time is not known)
        severity = grade(share, HEAVY_MEDIUM, HEAVY_HIGH) if share is not None else None
        if share is None or severity is None:
            continue
        findings.append(Finding(
            "memcpy-heavy", severity,
            f"copies and memsets are {pct(share)} of {device.device}'s busy time",
            {"copy_ns": device.copy_ns, "busy_ns": device.busy_ns, "share": round(share, 4),
             "copies": device.copies},
            {"device": device.device, "copies": device.names[:10]},
            "Copies crowd out compute: keep data resident on the device, batch small "
            "copies, overlap the rest with compute on a side stream from pinned memory."))
    return findings


RULES = (
    Rule("sync-copy", ("copy calls", "step time"), _sync_copy,
         "host time spent in copy calls that return only after the copy has finished "
         "(timelines: the launch call ends after its copy; statistics: copy calls not "
         "named asynchronous, their host time)",
         f"≥ {SYNC_MEDIUM:.0%} of step time medium, ≥ {SYNC_HIGH:.0%} high",
         "CUDA best practices (pinned memory, asynchronous transfers); PyTorch tuning guide"),
    Rule("pageable-copy", ("copy memory kinds",), _pageable_copy,
         "device time of copies whose host side is pageable memory",
         f"≥ {PAGEABLE_MEDIUM:.0%} of step time",
         "CUDA best practices (pageable vs pinned transfers); PyTorch pin_memory"),
    Rule("memcpy-heavy", ("device copies", "device busy time"), _memcpy_heavy,
         "device time of copies and memsets over the busy time of the devices of a rank "
         "(all their streams: a stream that only copies is no device busy with copies; "
         "timelines: copy slices on device tracks; statistics: device time column of rows "
         "named a device copy or memset; a copy call's host time is not device time)",
         f"≥ {HEAVY_MEDIUM:.0%} medium, ≥ {HEAVY_HIGH:.0%} high",
         "Paddle profiler Memory Manipulation Summary (CPU vs GPU time); HTA temporal breakdown"),
)
