"""``framework-overhead``, ``host-bound-op``, ``dataloader-bound``: where the host spends a step."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....model import OpStat
from ....units import format_duration
from ....vocabularies.paddle import SETUP_NAMES
from ...activity import Activity, Intervals, clip, merge_intervals, overlap_ns
from ..context import Context
from ..finding import Finding
from ..rule import Rule
from . import grade, pct

OVERHEAD_MEDIUM, OVERHEAD_HIGH = 25.0, 50.0   # % of total time (Paddle's ratio)
GAP_MEDIUM, GAP_HIGH = 0.30, 0.60             # step time in which no host thread runs an op
HOST_OP_SHARE = 0.25                          # one op's share of step time ...
HOST_OP_DEVICE_SHARE = 0.50                   # ... during which the device is mostly idle
LOADER_MEDIUM, LOADER_HIGH = 0.10, 0.30

_HOST_WORK = (Activity.HOST_OP, Activity.LAUNCH, Activity.SYNC, Activity.RUNTIME,
              Activity.DATALOADER, Activity.COMMUNICATION)


def _overhead_from_stats(ctx: Context) -> list[Finding]:
    rows = {s.name.lower(): s for s in ctx.stats("overhead")}
    overhead = rows["framework overhead"]
    ratio = overhead.ratio
    total = rows.get("total time")
    if ratio is None and total is not None and total.total_ns:
        ratio = 100 * overhead.total_ns / total.total_ns
    setup = _one_time_setup(ctx.trace.stats, overhead.extra.get("report"))
    setup_ns = sum(s.total_ns for s in setup)
    window = total.total_ns if total is not None else 0
    # setup is no step's overhead: outside it, at most what the window has left
    outside = 100 * min(overhead.total_ns, max(window - setup_ns, 0)) / window \
        if setup and window else None
    severity = grade(ratio or 0.0 if outside is None else outside,
                     OVERHEAD_MEDIUM, OVERHEAD_HIGH)
    if severity is None and (outside is None or grade(ratio or 0.0, OVERHEAD_MEDIUM,
                                                      OVERHEAD_HIGH) is None):
        return []
    summary = f"framework overhead is {ratio:.1f}% of the total time"
    evidence: dict[str, Any] = {"overhead_ns": overhead.total_ns, "ratio_pct": ratio,
                                "total_ns": None if total is None else total.total_ns}
    advice = ("The framework (scheduling, Python, op dispatch) takes a large part of the "
              "step: use static graph / to_static or torch.compile, larger batches, fewer "
              "small ops.")
    if outside is not None:
        summary += (f"; one-time setup, {', '.join(s.name for s in setup)}, takes "
                    f"{format_duration(setup_ns)} ({100 * setup_ns / window:.1f}%) of the "
                    f"window: outside it, overhead is at most {outside:.1f}% of the total time")
        evidence |= {"setup_ns": setup_ns, "setup_rows": [s.name for s in setup],
                     "overhead_outside_setup_max_pct": round(outside, 4)}
    if severity is None:   # (the overhead may all be the setup: no step pays it)
        advice = ("Most of the profiled window is one-time setup: profile later steps (start "
                  "the profiler after the first iterations) to measure what each step pays.")
    return [Finding("framework-overhead", severity or "info", summary, evidence,
                    {"section": "overhead"}, advice,
                    cause=None if severity else "setup")]


def _one_time_setup(stats: list[OpStat], report: object) -> list[OpStat]:
    """The rows of one-time setup among the events of one report (``extra["report"]``):
    named so (:data:`~traceconv.vocabularies.paddle.SETUP_NAMES`), run once, outermost (a
    setup inside another counts in it).

    >>> from traceconv.model import OpStat
    >>> rows = [OpStat("ParallelExecutor::Run", calls=1),
    ...         OpStat("FastThreadedSSAGraphExecutorPrepare", calls=1, parent=0),
    ...         OpStat("Executor::RunPartialPreparedContext", calls=40)]
    >>> [s.name for s in _one_time_setup(rows, None)]
    ['FastThreadedSSAGraphExecutorPrepare']
    """
    found = {i for i, s in enumerate(stats)
             if s.section == "events" and s.extra.get("report") == report and s.calls == 1
             and SETUP_NAMES.search(s.name)}
    return [stats[i] for i in sorted(found) if not _inside(stats, i, found)]


def _inside(stats: list[OpStat], row: int, among: set[int]) -> bool:
    """Whether an enclosing row of ``stats[row]`` is one of ``among``."""
    parent = stats[row].parent
    while parent is not None:
        if parent in among:
            return True
        parent = stats[parent].parent
    return False


def _host_gaps(ctx: Context) -> list[Finding]:
    tl = ctx.timeline
    host_rows = tl.rows(*_HOST_WORK)
    host_rows = host_rows[~tl.on_device[host_rows]]
    if not len(host_rows):
        return []
    # the process that runs most host work is the one the steps belong to
    process = int(np.bincount(tl.process[host_rows], weights=tl.dur[host_rows]).argmax())
    rows = host_rows[tl.process[host_rows] == process]
    window = tl.host_steps.total
    covered = clip(tl.union(rows), tl.host_steps).total
    # a thread blocked in a call (futex, poll) is neither working nor between ops: that
    # time is no gap of overhead, and no busy time either
    waits = tl.waits()
    waits = waits[tl.process[waits] == process]
    waiting = clip(tl.union(np.r_[rows, waits]), tl.host_steps).total - covered
    share = 1 - (covered + waiting) / window if window else 0.0
    severity = grade(share, GAP_MEDIUM, GAP_HIGH)
    if severity is None:
        return []
    return [Finding(
        "framework-overhead", severity,
        f"no thread of {_process_label(ctx.trace.processes[process].name)} (the process "
        f"with the most host work) runs an op or runtime call for {pct(share)} of "
        f"{tl.steps_word}",
        {"window_ns": window, "host_busy_ns": covered, "waiting_ns": waiting,
         "gap_ns": window - covered - waiting, "gap_share": round(share, 4)},
        {"process": ctx.trace.processes[process].name},
        "Time between ops is Python and framework overhead: profile with_stack to see the "
        "Python frames, move per-step bookkeeping out of the loop, use torch.compile or "
        "CUDA graphs to cut per-op dispatch.")]


def _process_label(name: str) -> str:
    """A process named by its pid alone reads as ``process 61863``.

    >>> _process_label("61863"), _process_label("python")
    ('process 61863', 'python')
    """
    return f"process {name}" if name.isdecimal() else name


def _framework_overhead(ctx: Context) -> list[Finding]:
    if ctx.has("framework overhead statistics"):
        return _overhead_from_stats(ctx)
    return _host_gaps(ctx)


def _host_bound_op(ctx: Context) -> list[Finding]:
    tl = ctx.timeline
    ops = tl.rows(Activity.HOST_OP)
    ops = ops[~tl.on_device[ops]]
    top = tl.outermost(ops)
    window = tl.host_steps.total
    if not window or not len(top):
        return []
    device_busy = tl.union(tl.device_work())
    # only names whose summed time can reach the threshold need the interval work
    name_ids, inverse = np.unique(tl.name[top], return_inverse=True)
    summed = np.bincount(inverse, weights=tl.dur[top])
    findings = []
    for candidate in np.flatnonzero(summed >= HOST_OP_SHARE * window).tolist():
        rows = top[inverse == candidate]
        span: Intervals = clip(tl.union(rows), tl.host_steps)
        share = span.total / window
        if share < HOST_OP_SHARE:
            continue
        during = overlap_ns(span, device_busy)
        device_share = during / span.total if span.total else 0.0
        if device_share >= HOST_OP_DEVICE_SHARE:
            continue
        name = tl.names(rows[:1])[0]
        findings.append(Finding(
            "host-bound-op", "high" if share >= 2 * HOST_OP_SHARE else "medium",
            f"{name} takes {pct(share)} of {tl.steps_word} on the host "
            f"({format_duration(span.total)}); the device is busy {pct(device_share)} of it",
            {"host_ns": span.total, "calls": len(rows), "share": round(share, 4),
             "device_busy_ns": during, "device_busy_share": round(device_share, 4),
             "window_ns": window},
            {"op": name, "first_ns": tl.since_start(int(tl.start[rows].min()))},
            "One host op dominates the step while the device waits: move its work to the "
            "device, vectorise it, or overlap it with device work (another thread, prefetch)."))
    return findings


def _dataloader_bound(ctx: Context) -> list[Finding]:
    tl = ctx.timeline
    loader = tl.union(tl.rows(Activity.DATALOADER))
    steps = tl.host_steps
    window = merge_intervals(np.r_[steps.start, loader.start], np.r_[steps.end, loader.end],
                             np.zeros(len(steps.start) + len(loader.start), np.int64)).total
    share = loader.total / window if window else 0.0
    severity = grade(share, LOADER_MEDIUM, LOADER_HIGH)
    if severity is None:
        return []
    return [Finding(
        "dataloader-bound", severity,
        f"data loading takes {pct(share)} of {tl.steps_word} ({format_duration(loader.total)})",
        {"loader_ns": loader.total, "window_ns": window, "share": round(share, 4),
         "calls": int(len(loader.start))},
        {"names": sorted(set(tl.names(tl.rows(Activity.DATALOADER))))},
        "The step waits for the next batch: more DataLoader workers (num_workers), "
        "persistent_workers, pin_memory, prefetch_factor, or cheaper preprocessing.")]


RULES = (
    Rule("framework-overhead", (("framework overhead statistics", "timed host ops"),),
         _framework_overhead,
         "Paddle's Framework overhead ratio, graded on what one-time setup in the window "
         "(a run-once Prepare or initialisation row) leaves (info when only the setup "
         "passes); timelines: step time in which no host thread of "
         "the main process runs an op, launch, sync or runtime call, or waits in one (futex, "
         "poll: waiting is no overhead)",
         f"Paddle ≥ {OVERHEAD_MEDIUM:.0f}% medium, ≥ {OVERHEAD_HIGH:.0f}% high; host gaps "
         f"≥ {GAP_MEDIUM:.0%} medium, ≥ {GAP_HIGH:.0%} high",
         "Paddle profiler Overhead Summary; PyTorch profiler (CPU gaps between ops)"),
    Rule("host-bound-op", ("timed host ops", "device work"), _host_bound_op,
         "one top-level host op's share of step time, and how busy the device is meanwhile",
         f"op ≥ {HOST_OP_SHARE:.0%} of steps with device busy < {HOST_OP_DEVICE_SHARE:.0%} "
         "of it (high at ≥ 50%)",
         "TensorBoard profiler overview (host-bound steps); HTA CPU-op analysis"),
    Rule("dataloader-bound", ("data loading",), _dataloader_bound,
         "time in data-loading ranges over the steps (and loading outside them)",
         f"≥ {LOADER_MEDIUM:.0%} medium, ≥ {LOADER_HIGH:.0%} high",
         "TensorBoard profiler input-pipeline analysis; PyTorch DataLoader tuning"),
)
