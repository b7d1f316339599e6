"""Aggregate breakdown: op statistics drawn as nested slices so a viewer can show a report.

A stats-only source (Paddle's Profiling Report, a ``summary()`` table) has no timestamps.
To look at it in Perfetto or Chrome, each top-level row becomes a slice as long as its total
time, laid side by side; children are nested inside their parent, one after another. The
process is named as an aggregate breakdown so nobody mistakes it for a timeline.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from . import OpStat, ProcessKind, Trace, TrackKind
from .activity import Activity
from .clock import AGGREGATE_PREFIX
from .entities import CHILDREN_LEFT_OUT
from .repairs import STAT_LIMIT, TIME_MAX

BREAKDOWN_CATEGORY = "aggregate"
BREAKDOWN_CLOCK = (f"{AGGREGATE_PREFIX} (slices laid side by side by total time, "
                   "children nested inside; not a timeline)")


def _stat_args(stat: OpStat) -> dict:
    """A row's numbers as its slice's args, each within the range the builder brings the
    statistic itself into (a reader hands them over as printed, of any size). Not its row
    number: copying renumbers the statistics, never the args that would name one.

    >>> _stat_args(OpStat("op", calls=10**40, total_ns=10**400))["total_ms"] == STAT_LIMIT / 1e6
    True
    """
    args: dict = {"total_ms": _within(stat.total_ns) / 1e6}
    if stat.calls is not None:   # (unknown calls are left out, never written as 0)
        args["calls"] = _within(stat.calls)
    for key, value in (("min_ms", stat.min_ns), ("max_ms", stat.max_ns),
                       ("avg_ms", stat.avg_ns), ("cpu_ms", stat.cpu_ns),
                       ("device_ms", stat.device_ns)):
        if value is not None:
            args[key] = _within(value) / 1e6
    if stat.ratio is not None:
        args["ratio_pct"] = stat.ratio
    return args


def add_aggregate_breakdown(trace: Trace, rows: Sequence[int], process_name: str,
                            lane_of: Callable[[OpStat], str] | None = None, *,
                            start: int | None = None, labels: list[str] | None = None) -> int:
    """Add a synthetic process drawing ``trace.stats[rows]`` as nested slices; return its id.

    Top-level rows (whose parent is not among ``rows``) are laid end to end from 0 on one
    track per lane (``lane_of``, default one lane); children fill their parent from its
    start. Children that add up to more than their parent are scaled down to fit (counted
    in diagnostics as ``breakdown.children_scaled``). The trace's clock is marked as
    synthetic; with ``start`` (beside a timeline) the rows are laid from there instead and
    the clock stays the timeline's. ``labels``: the process's labels.

    >>> t = Trace()
    >>> a = t.add_stat(OpStat("step", calls=1, total_ns=100))
    >>> b = t.add_stat(OpStat("conv", calls=2, total_ns=60, parent=a, depth=1))
    >>> _ = add_aggregate_breakdown(t, [a, b], "report: aggregate breakdown (not a timeline)")
    >>> [(s.name, s.start, s.dur) for s in t.iter_slices()]
    [('step', 0, 100), ('conv', 0, 60)]
    """
    chosen = set(rows)
    children: dict[int, list[int]] = defaultdict(list)
    lanes: dict[str, list[int]] = defaultdict(list)
    for row in rows:
        stat = trace.stats[row]
        if stat.parent in chosen:
            children[stat.parent].append(row)  # type: ignore[index]
        else:
            lanes[lane_of(stat) if lane_of else "all rows"].append(row)
    process = trace.add_process(process_name, kind=ProcessKind.SYNTHETIC, labels=labels)
    if start is None:
        trace.metadata.clock = BREAKDOWN_CLOCK
    for lane, tops in lanes.items():
        track = trace.add_track(lane, process=process, kind=TrackKind.SYNTHETIC,
                                description="aggregate breakdown, not a timeline")
        for row, (at, dur) in zip(tops, side_by_side(trace.stats[r].total_ns for r in tops),
                                  strict=True):
            _place(trace, track, row, (start or 0) + at, dur, children)
    return process


def _place(trace: Trace, track: int, row: int, start: int, dur: int,
           children: dict[int, list[int]]) -> None:
    """Draw ``row`` and, depth first, its descendants (a stack, not recursion: a pasted
    report may nest a thousand levels)."""
    pending = [(row, start, dur)]
    while pending:
        row, start, dur = pending.pop()
        stat = trace.stats[row]
        trace.add_slice(track, start, dur, stat.name, BREAKDOWN_CATEGORY,
                        _stat_args(stat), Activity.AGGREGATE)
        kids = children.get(row, ())
        totals = [_length(trace.stats[k].total_ns) for k in kids]
        needed = sum(totals)
        if needed > dur:
            # Printed numbers are rounded: an excess within 1% is rounding, not a finding.
            if needed * 100 > dur * 101:
                trace.diagnostics.add("breakdown.children_scaled", example=stat.name)
            totals = [t * dur // needed for t in totals]
        cursor, placed = start, []
        for kid, kid_dur in zip(kids, totals, strict=True):
            placed.append((kid, cursor, kid_dur))
            cursor += kid_dur
        pending.extend(reversed(placed))   # (the first child is drawn next, as before)


def side_by_side(totals: Iterable[int]) -> Iterator[tuple[int, int]]:
    """``(start, length)`` of slices laid end to end from 0, one per total: each length
    within the model's time range, no start past its edge (a slice that runs past the edge
    is the builder's to shorten). Every breakdown lays its rows out through this.

    >>> list(side_by_side([5, -3, 10**30]))[:2], list(side_by_side([10**30]))[0][1] == TIME_MAX
    ([(0, 5), (5, 0)], True)
    """
    cursor = 0
    for total in totals:
        length = _length(total)
        yield cursor, length
        cursor = min(cursor + length, TIME_MAX)


def _within(value: int) -> int:
    return min(max(value, -STAT_LIMIT), STAT_LIMIT)


def only_breakdown(trace: Trace) -> bool:
    """True when ``trace`` has slices and every one is an aggregate breakdown drawn from
    its statistics (no timeline of its own).

    >>> t = Trace(); _ = add_aggregate_breakdown(t, [t.add_stat(OpStat("op", total_ns=9))], "x")
    >>> only_breakdown(t), only_breakdown(Trace())
    (True, False)
    """
    category = trace.strings.find(BREAKDOWN_CATEGORY)
    return (category is not None and len(trace.slices) > 0
            and bool(np.all(trace.slices.numpy("category") == category)))


def _length(total_ns: int) -> int:
    """A row's total as a slice length: none below 0, none beyond the model's time range
    (a statistic is read as printed, of any size; the builder clamps it later).

    >>> _length(-5), _length(10**30) == TIME_MAX
    (0, True)
    """
    return min(max(total_ns, 0), TIME_MAX)


def set_self_times(trace: Trace, rows: Sequence[int]) -> None:
    """Fill ``self_ns`` of nested stats rows by :func:`self_time`: total minus the
    children's totals.

    >>> t = Trace()
    >>> a = t.add_stat(OpStat("op", calls=1, total_ns=100))
    >>> b = t.add_stat(OpStat("op/compute", calls=1, total_ns=70, parent=a, depth=1))
    >>> set_self_times(t, [a, b]); t.stats[a].self_ns, t.stats[b].self_ns
    (30, 70)
    """
    nested: dict[int, int] = defaultdict(int)
    for row in rows:
        parent = trace.stats[row].parent
        if parent is not None:
            nested[parent] += trace.stats[row].total_ns
    for row in rows:
        stat = trace.stats[row]
        stat.self_ns = self_time(stat, stat.total_ns, nested[row])


def self_time(stat: OpStat, total: int, children: int) -> int | None:
    """A row's own time derived from its listed children: ``total - children`` (0 at
    least: printed numbers are rounded), unknown (None) when the source listed only some
    of them (``extra[CHILDREN_LEFT_OUT]``: what a paste left out would be counted as the
    row's own). The one rule for every time derived from a listing of children.

    >>> self_time(OpStat("op"), 100, 30), self_time(OpStat("op"), 100, 130)
    (70, 0)
    >>> self_time(OpStat("op", extra={CHILDREN_LEFT_OUT: True}), 100, 30) is None
    True
    """
    if stat.extra.get(CHILDREN_LEFT_OUT):
        return None
    return max(total - children, 0)
