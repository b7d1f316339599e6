"""``gpu-idle`` and ``launch-bound``: is the device waiting, and is it waiting on launches?"""

from __future__ import annotations

import numpy as np

from ....units import format_duration
from ...activity import Activity
from ...stated_launches import StatedLaunches
from ..context import Context
from ..finding import Finding
from ..rule import Rule
from . import grade, most_common, pct

IDLE_MEDIUM, IDLE_HIGH = 0.30, 0.60
SHORT_SHARE = 0.50        # launch-bound: at least half the kernels outlasted by their launch
IMMEDIATE_SHARE = 0.50    # ... and at least half start at once after their launch (empty queue)
IMMEDIATE_NS = 20_000     # "at once": within 20 µs of the launch call's end
MIN_KERNELS = 50

_ADVICE = {
    "host wait": "The host does not enqueue work fast enough: look at the CPU ops between "
                 "kernels (Python overhead, data preparation), raise the batch size, fuse "
                 "small ops (torch.compile) or capture the step in a CUDA graph.",
    "kernel wait": "Gaps are launch latency between back-to-back kernels: fewer, larger "
                   "kernels (fusion) or CUDA graphs remove them.",
    "other": "The device waits with work queued: look for cross-stream event waits, "
             "synchronisations and copies that serialise the streams.",
    "no launch calls": "The trace holds no launch calls, so the gaps cannot be told apart "
                       "(host too slow, launch latency or synchronisation): profile the "
                       "host side too (nsys --trace=cuda, rocprofv3 --hip-trace, Kineto's "
                       "CPU activities) to see what the device waits for.",
}

# (the words a framework gets come from frameworks.ADVICE; this is the rule's own)
_LAUNCH_ADVICE = ("Each kernel costs more to launch than to run and the queue is empty: batch "
                  "more work per kernel, fuse kernels, or capture the loop as a device graph.")


def _gpu_idle(ctx: Context) -> list[Finding]:
    findings = []
    steps = ctx.timeline.has_step_markers
    for device in ctx.idle:
        # Without step markers the window is the whole recording, set-up before the first
        # kernel included (a graph replay's host preparation): graded on the work span.
        share = device.idle_share if steps else device.span_idle_share
        severity = grade(share, IDLE_MEDIUM, IDLE_HIGH)
        if severity is None:
            continue
        causes = {"host wait": device.host_wait_ns, "kernel wait": device.kernel_wait_ns,
                  "other": device.other_ns}
        main = max(causes, key=causes.__getitem__)
        if not (ctx.timeline.launch_of >= 0).any():   # (no launch: nothing tells the causes)
            main = "no launch calls"
        span = (f"{pct(device.span_idle_share)} from its first work to its last"
                if device.span_ns else "no work in them")
        title = (f"{device.device} idle {pct(device.idle_share)} of the profiled steps, {span}"
                 if steps else f"{device.device} idle {span} "
                 f"({pct(device.idle_share)} of the whole recording)")
        why = "cause unknown: no launch calls" if main == "no launch calls" else f"mostly {main}"
        findings.append(Finding(
            "gpu-idle", severity, f"{title} ({why})",
            {"window_ns": device.window_ns, "busy_ns": device.busy_ns,
             "idle_ns": device.idle_ns, "idle_share": round(device.idle_share, 4),
             "span_ns": device.span_ns, "span_idle_share": round(device.span_idle_share, 4),
             "host_wait_ns": device.host_wait_ns, "kernel_wait_ns": device.kernel_wait_ns,
             "other_ns": device.other_ns, "steps": ctx.timeline.step_count,
             "step_markers": ctx.timeline.has_step_markers},
            {"device": device.device,
             "longest_gaps": [{"start_ns": ctx.timeline.since_start(s), "dur_ns": d, "cause": c}
                              for s, d, c in device.longest_gaps]},
            _ADVICE[main], cause=main))
    return findings


def _launch_bound(ctx: Context) -> list[Finding]:
    if ctx.stated_launches:
        return [f for run in ctx.stated_launches if (f := _stated_launch_bound(run))]
    tl = ctx.timeline
    kernels = tl.rows(Activity.KERNEL)
    kernels = kernels[tl.launch_of[kernels] >= 0]
    if len(kernels) < MIN_KERNELS:
        return []
    launch = tl.launch_of[kernels]
    short = tl.dur[kernels] < tl.dur[launch]
    immediate = tl.start[kernels] - tl.end[launch] <= IMMEDIATE_NS
    short_share, immediate_share = float(short.mean()), float(immediate.mean())
    idle = max((d.idle_share for d in ctx.idle), default=0.0)
    if short_share < SHORT_SHARE or immediate_share < IMMEDIATE_SHARE or idle < IDLE_MEDIUM:
        return []
    names = tl.names(kernels[short])
    top = most_common(names, 5)
    return [Finding(
        "launch-bound", "high" if idle >= IDLE_HIGH else "medium",
        f"{pct(short_share)} of {len(kernels):,} kernels run shorter than "
        f"their launch call",
        {"kernels": len(kernels), "shorter_than_launch": int(short.sum()),
         "short_share": round(short_share, 4), "started_at_once_share": round(immediate_share, 4),
         "median_kernel_ns": int(np.median(tl.dur[kernels])),
         "median_launch_ns": int(np.median(tl.dur[launch])),
         "device_idle_share": round(idle, 4)},
        {"kernels": top},
        _LAUNCH_ADVICE)]


def _stated_launch_bound(run: StatedLaunches) -> Finding | None:
    """The rule on statistics: the typical kernel (its average) against the typical launch
    call, and the least idle share that follows (``StatedLaunches.idle_share``). When each
    kernel started is not in statistics, so "started at once" is not judged."""
    linked = min(run.kernels, run.launches)
    idle = run.idle_share
    if linked < MIN_KERNELS or run.kernel_avg_ns >= run.launch_avg_ns or idle < IDLE_MEDIUM:
        return None
    where: dict[str, object] = {"kernels": list(run.names[:5])}
    if run.run:
        where["run"] = run.run
    return Finding(
        "launch-bound", "high" if idle >= IDLE_HIGH else "medium",
        f"{run.kernels:,} kernels average {format_duration(run.kernel_avg_ns)}, shorter than "
        f"their {run.launches:,} launch calls ({format_duration(run.launch_avg_ns)} each)"
        f"{f' in run {run.run}' if run.run else ''}; judged from statistics (counts and "
        "totals: no timeline)",
        {"kernels": run.kernels, "kernel_ns": run.kernel_ns, "launch_calls": run.launches,
         "launch_ns": run.launch_ns, "avg_kernel_ns": round(run.kernel_avg_ns),
         "avg_launch_ns": round(run.launch_avg_ns), "device_idle_share": round(idle, 4),
         "from": "statistics"},
        where,
        _LAUNCH_ADVICE)


RULES = (
    Rule("gpu-idle", ("device work",), _gpu_idle,
         "share of the step windows (a device's own step markers where it has them) in "
         "which no kernel, copy or collective runs on the device, and apart the share of "
         "its work span (first work to last, per window; graded on it when there are no "
         "step markers); idle split host wait / kernel wait / other",
         f"idle ≥ {IDLE_MEDIUM:.0%} medium, ≥ {IDLE_HIGH:.0%} high",
         "HTA idle time breakdown (host wait, kernel wait, other)"),
    Rule("launch-bound", (("kernels", "launch statistics"), ("launch links", "launch statistics")),
         _launch_bound,
         "kernels shorter than their launch call, started at once after it (empty queue); "
         "statistics (no timeline): the average kernel against the average kernel-launch "
         "call of the same run, and the device's least idle share while the host launches "
         "(1 - kernel time / launch-call time)",
         f"≥ {SHORT_SHARE:.0%} of ≥ {MIN_KERNELS} linked kernels shorter than their launch, "
         f"≥ {IMMEDIATE_SHARE:.0%} starting ≤ 20 µs after it, device idle ≥ {IDLE_MEDIUM:.0%} "
         f"(≥ {IDLE_HIGH:.0%} high); statistics: ≥ {MIN_KERNELS} kernels and launch calls, "
         f"average kernel shorter than the average launch, least idle share ≥ "
         f"{IDLE_MEDIUM:.0%} (≥ {IDLE_HIGH:.0%} high)",
         "HTA CUDA kernel launch statistics; PyTorch profiler recipe"),
)
