"""``exposed-communication``: collectives the device (or host) waits on, not overlapped."""

from __future__ import annotations

import numpy as np

from ....units import format_duration
from ...activity import Activity, clip, overlap_ns
from ..context import Context
from ..finding import Finding
from ..rule import Rule
from . import grade, most_common, pct

EXPOSED_MEDIUM, EXPOSED_HIGH = 0.10, 0.30   # exposed communication / step time


def _exposed_communication(ctx: Context) -> list[Finding]:
    tl = ctx.timeline
    comm = tl.rows(Activity.COMMUNICATION)
    device_comm = comm[tl.on_device[comm]]
    # device collectives when the trace has them, else the host's (gloo, CPU collectives)
    comm = device_comm if len(device_comm) else comm
    if not len(comm):
        return []
    comm_time = clip(tl.union(comm), tl.steps)
    compute = clip(tl.union(tl.rows(Activity.KERNEL)[tl.on_device[tl.rows(Activity.KERNEL)]]),
                   tl.steps)
    overlapped = overlap_ns(comm_time, compute)
    exposed = comm_time.total - overlapped
    window = tl.steps.total
    share = exposed / window if window else 0.0
    severity = grade(share, EXPOSED_MEDIUM, EXPOSED_HIGH)
    if severity is None:
        return []
    names = tl.names(comm)
    return [Finding(
        "exposed-communication", severity,
        f"communication not overlapped with compute: {format_duration(exposed)} ({pct(share)} of {tl.steps_word})",
        {"communication_ns": comm_time.total, "overlapped_ns": overlapped,
         "exposed_ns": exposed, "share": round(share, 4),
         "overlap_share": round(overlapped / comm_time.total, 4) if comm_time.total else 0.0,
         "on_device": bool(len(device_comm))},
        {"collectives": most_common(names, 8),
         "first_ns": tl.since_start(int(np.min(tl.start[comm])))},
        "Collectives run while nothing computes: overlap them (DDP bucket_cap_mb, "
        "gradient_as_bucket_view, FSDP prefetch, async collectives on a side stream) or "
        "shrink them (compression, fewer all-reduces per step).")]


RULES = (
    Rule("exposed-communication", ("communication",), _exposed_communication,
         "collective time (device kernels, else host collectives) not overlapped by compute "
         "kernels, over the steps",
         f"≥ {EXPOSED_MEDIUM:.0%} of step time medium, ≥ {EXPOSED_HIGH:.0%} high",
         "HTA communication-computation overlap"),
)
