"""``diff A B -o DIFF.pftrace``: the two runs in one viewable trace.

A new trace (A and B are not changed) holds A's processes (prefixed ``A:``) and B's (``B:``),
B shifted so that its first step starts where A's does, and a process ``Δ B − A`` with:

- a track of per-op deltas: one slice per diff row (largest change first), as long as the
  change (at least 1 µs, so that small rows stay visible), named ``+1.234 ms aten::mm``,
  with ``a_ns``, ``b_ns``, ``delta_ns`` and ``kind`` in its arguments;
- a counter track of the running sum of the deltas, which ends at the window's change.
"""

from __future__ import annotations

from ..model import ProcessKind, Trace, TrackKind
from ..model.copying import copy_into
from ..model.diagnostics import Diagnostics
from ..units import format_duration
from .activity import Timeline
from .merge import merge
from .timeline_diff import TimelineDiff

MIN_BAR_NS = 1_000


def step_start(trace: Trace) -> int:
    """Where a run's first step starts (its first event without step markers)."""
    tl = Timeline(trace)
    host = tl.host_steps
    if len(host.start):
        return int(host.start[0])
    bounds = trace.time_range
    return bounds[0] if bounds else 0


def _shifted(trace: Trace, offset: int) -> Trace:
    """A copy of ``trace`` with every time moved by ``offset`` (the copy primitive does it)."""
    out = Trace(trace.metadata.copy())
    out.metadata.diagnostics = Diagnostics()
    copy_into(out, trace, shift_ns=offset)
    return out


def diff_trace(a: Trace, b: Trace, result: TimelineDiff, top: int = 200,
               labels: tuple[str, str] = ("A", "B")) -> Trace:
    """One trace with A and B aligned at their first step and a track of per-op deltas."""
    offset = step_start(a) - step_start(b)
    out = merge([a, _shifted(b, offset) if offset else b], list(labels), align="none").copy()
    out.metadata.attributes["diff"] = {
        "a": labels[0], "b": labels[1], "b_shift_ns": offset,
        "total_delta_ns": result.total_delta_ns, "window_a_ns": result.window_a_ns,
        "window_b_ns": result.window_b_ns}
    process = out.add_process(f"Δ {labels[1]} − {labels[0]}", kind=ProcessKind.SYNTHETIC,
                              sort_index=-1)
    bars = out.add_track(f"per-op Δ (total {format_duration(result.total_delta_ns, signed=True)})",
                         process=process, kind=TrackKind.SYNTHETIC)
    running = out.add_track("cumulative Δ", process=process, kind=TrackKind.COUNTER,
                            unit="ns")
    at = step_start(a)
    total = 0
    out.add_counter(running, at, 0.0)
    for row in result.rows[:top]:
        dur = max(abs(row.delta_ns), MIN_BAR_NS)
        out.add_slice(bars, at, dur, f"{format_duration(row.delta_ns, signed=True)} {row.name}", "diff",
                      {"kind": row.kind, "a_ns": row.a_ns, "b_ns": row.b_ns,
                       "delta_ns": row.delta_ns})
        at += dur
        total += row.delta_ns
        out.add_counter(running, at, float(total))
    rest = result.rows[top:]
    if rest:
        delta = sum(r.delta_ns for r in rest)
        out.add_slice(bars, at, max(abs(delta), MIN_BAR_NS),
                      f"{format_duration(delta, signed=True)} ({len(rest)} more rows)", "diff",
                      {"delta_ns": delta, "rows": len(rest)})
        at += max(abs(delta), MIN_BAR_NS)
        out.add_counter(running, at, float(total + delta))
    return out.freeze()
