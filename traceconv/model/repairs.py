"""The builder's repairs of numbers (:mod:`traceconv.model.builder` runs them at ``build()``).

The range a trace's times may take: -1e18 to 3.5e18 ns (1938 to 2080 as Unix time).

Readers check that each time fits int64, but analyses and writers subtract times from each
other (rebasing on the first timestamp, spans, gaps): with one event near -2**63 and another
near +2**63 the difference passes int64 and numpy wraps it silently or Python refuses to
convert it. Within this range every difference of two times fits int64 with room to spare
(a span plus one, a gap plus a duration), a span stays within the ±2**62 ns that
trace_processor accepts for a relative Chrome time, and Unix-epoch clocks (1.8e18 ns in
2026) have decades of room. A time outside is moved to the nearer edge when the trace is
built (a slice keeps as much of its length as fits) and counted as
``model.time_beyond_range``.
"""

from __future__ import annotations

import numpy as np

from .entities import OpStat
from .trace import Trace

TIME_MIN, TIME_MAX = -10**18, 35 * 10**17


def clamp_times(trace: Trace) -> int:
    """Move every time of ``trace`` outside :data:`TIME_MIN` .. :data:`TIME_MAX` to the
    nearer edge (slices: their start and end), count it in the diagnostics and return how
    many events moved.

    Only for a trace being built, before anyone else holds it.

    >>> t = Trace(); p = t.add_process("p"); k = t.add_track("t", process=p)
    >>> _ = t.add_slice(k, -2**63 + 5, 10, "early"); _ = t.add_instant(k, 2**63 - 1, "late")
    >>> clamp_times(t), t.slice(0).start == TIME_MIN, t.span_ns == TIME_MAX - TIME_MIN
    (2, True, True)
    """
    moved = 0
    slices = trace.slices
    if len(slices):
        start = np.frombuffer(slices.start, np.int64)
        dur = np.frombuffer(slices.dur, np.int64)
        # end = start + dur computed in float where it could pass int64 (shortened already)
        outside = np.flatnonzero((start < TIME_MIN) | (start > TIME_MAX - np.maximum(dur, 0)))
        for row in outside.tolist():
            begin, end = int(start[row]), int(start[row]) + max(int(dur[row]), 0)
            begin, end = (min(max(t, TIME_MIN), TIME_MAX) for t in (begin, end))
            start[row], dur[row] = begin, end - begin
        moved += len(outside)
    for table in (trace.instants, trace.counters):
        if len(table):
            ts = np.frombuffer(table.ts, np.int64)
            moved += int(((ts < TIME_MIN) | (ts > TIME_MAX)).sum())
            np.clip(ts, TIME_MIN, TIME_MAX, out=ts)
    for blocks in (trace.memory, trace.reservations):
        for name in ("alloc_ns", "free_ns"):
            if len(blocks):
                times = blocks.writable(name)
                beyond = blocks.known(name) & ((times < TIME_MIN) | (times > TIME_MAX))
                moved += int(beyond.sum())
                times[beyond] = np.clip(times[beyond], TIME_MIN, TIME_MAX)
    trace.diagnostics.add("model.time_beyond_range", count=moved,
                          example=f"{moved} events" if moved else None)
    return moved


STAT_LIMIT = 1 << 62
_STAT_FIELDS = ("calls", "total_ns", "self_ns", "min_ns", "max_ns", "avg_ns", "cpu_ns",
                "device_ns")
# a row's further sizes and counts (``extra``: a memory report's ``alloc_bytes``,
# ``free_calls``, ``allocation_size``) meet the same rules, by the ending of their names;
# a change (Paddle's ``Increased Size``) may be below 0
_EXTRA_ENDINGS = ("_bytes", "_calls", "_count", "_size")
_SIGNED_EXTRA = ("increased_size",)


def clamp_stats(trace: Trace) -> int:
    """Bring each count, size and time of ``trace``'s statistics rows (a report's
    ``Calls``, ``Total``, ``Size(MB)``, ...) within ±2**62, so that sums and differences of
    two runs (``diff``) fit int64; counted as ``model.statistic_beyond_range``. Returns how
    many values moved.

    >>> from traceconv.model import OpStat
    >>> t = Trace(); t.stats.append(OpStat("conv", calls=10**23, total_ns=5))
    >>> t.stats.append(OpStat("alloc", extra={"alloc_bytes": 2**64, "window": 2**64}))
    >>> clamp_stats(t), t.stats[0].calls == t.stats[1].extra["alloc_bytes"] == STAT_LIMIT
    (2, True)
    """
    moved, example = 0, None
    for row in trace.stats:
        for name, value in _row_numbers(row):
            if not -STAT_LIMIT <= value <= STAT_LIMIT:
                _set(row, name, min(max(value, -STAT_LIMIT), STAT_LIMIT))
                moved += 1
                example = example or f"{row.name}: {name} {value}"
    trace.diagnostics.add("model.statistic_beyond_range", count=moved, example=example)
    return moved


def unknown_negative_stats(trace: Trace) -> int:
    """A count, size or time below 0 in a statistics row (``-1`` calls, a negative total) is no
    measurement: it becomes unknown (None; ``total_ns``, which is never unknown, 0), and is
    counted as ``model.negative_statistic``, as a negative length is (a slice, a memory
    block). Returns how many values changed. Only for a trace being built.

    >>> from traceconv.model import OpStat
    >>> t = Trace(); t.stats.append(OpStat("conv", calls=-1, total_ns=-5, avg_ns=-5, max_ns=3))
    >>> unknown_negative_stats(t), t.stats[0]
    (3, OpStat(name='conv', calls=None, total_ns=0, self_ns=None, min_ns=None, max_ns=3, \
avg_ns=None, cpu_ns=None, device_ns=None, ratio=None, type='', section='events', \
parent=None, depth=0, extra={}))
    >>> t.diagnostics["model.negative_statistic"].example
    'conv: calls -1'
    """
    changed, example = 0, None
    for row in trace.stats:
        for name, value in _row_numbers(row):
            if value < 0 and name not in _SIGNED_EXTRA:
                _set(row, name, 0 if name == "total_ns" else None)
                changed += 1
                example = example or f"{row.name}: {name} {value}"
    trace.diagnostics.add("model.negative_statistic", count=changed, example=example)
    return changed


def _row_numbers(row: OpStat) -> list[tuple[str, int]]:
    """The counts, sizes and times a statistics row states (fields, then ``extra``'s)."""
    found = [(name, value) for name in _STAT_FIELDS if (value := getattr(row, name)) is not None]
    return found + [(name, value) for name, value in row.extra.items()
                    if name.endswith(_EXTRA_ENDINGS) and type(value) is int]


def _set(row: OpStat, name: str, value: int | None) -> None:
    if name in _STAT_FIELDS:
        setattr(row, name, value)
    else:
        row.extra[name] = value


def clamp_counter_values(trace: Trace) -> int:
    """Counter values are finite doubles: ±infinity becomes the largest finite double of its
    sign and NaN becomes 0 (JSON has neither; a writer would print ``null``), counted as
    ``model.counter_value_not_finite``. Returns how many samples changed.

    >>> t = Trace(); p = t.add_process("p"); k = t.add_track("c", process=p)
    >>> _ = t.add_counter(k, 0, float("inf")); _ = t.add_counter(k, 1, 2.5)
    >>> clamp_counter_values(t), t.counters.numpy("value").tolist()
    (1, [1.7976931348623157e+308, 2.5])
    """
    counters = trace.counters
    if not len(counters):
        return 0
    values = np.frombuffer(counters.value, np.float64)
    bad = ~np.isfinite(values)
    moved = int(bad.sum())
    if moved:
        first = float(values[np.flatnonzero(bad)[0]])
        np.nan_to_num(values, copy=False, nan=0.0)
        trace.diagnostics.add("model.counter_value_not_finite", count=moved,
                              example=f"{first}")
    return moved


def repair_lengths(trace: Trace) -> int:
    """One rule for an end before its start: a slice with a negative duration becomes
    zero-length at its start, a memory block freed before its allocation is freed at it
    (``model.end_before_start``); a block with a negative size gets 0 bytes
    (``model.negative_length``). Returns how many values changed. Only for a trace being
    built, as :func:`clamp_times`.

    >>> from traceconv.model import MemoryBlock
    >>> t = Trace(); p = t.add_process("p"); k = t.add_track("t", process=p)
    >>> _ = t.add_slice(k, 5, -3, "back"); t.memory.append(MemoryBlock(0, -8, 9, 4))
    >>> repair_lengths(t), t.slice(0).dur, (t.memory[0].size, t.memory[0].free_ns)
    (3, 0, (0, 9))
    >>> t.diagnostics.count("model.end_before_start"), t.diagnostics.count("model.negative_length")
    (2, 1)
    """
    backwards = sizes = 0
    backwards_example = size_example = None
    if len(trace.slices):
        dur = np.frombuffer(trace.slices.dur, np.int64)
        negative = np.flatnonzero(dur < 0)
        if len(negative):
            backwards_example = (f"slice {trace.slice(int(negative[0])).name!r}: duration "
                                 f"{dur[negative[0]]}")
            dur[negative] = 0
            backwards += len(negative)
    for blocks in (trace.memory, trace.reservations):
        if not len(blocks):
            continue
        size = blocks.writable("size")
        negative = np.flatnonzero(size < 0)
        if len(negative):
            first = blocks[int(negative[0])]
            size_example = size_example or f"memory block {first.name!r}: size {first.size}"
            size[negative] = 0
            sizes += len(negative)
        alloc, free = blocks.writable("alloc_ns"), blocks.writable("free_ns")
        early = np.flatnonzero(blocks.known("alloc_ns") & blocks.known("free_ns") & (free < alloc))
        if len(early):
            backwards_example = backwards_example or (
                f"memory block {blocks[int(early[0])].name!r}: freed before its allocation")
            free[early] = alloc[early]
            backwards += len(early)
    trace.diagnostics.add("model.end_before_start", count=backwards, example=backwards_example)
    trace.diagnostics.add("model.negative_length", count=sizes, example=size_example)
    return backwards + sizes


NOT_ENDED = "unfinished"   # the arg that marks a slice whose end is not in the input


def end_not_ended(trace: Trace, rows_by_code: dict[str, list[np.ndarray]]) -> int:
    """One rule for slices whose end is not in the input (a ``B`` never closed, a
    TrackEvent BEGIN without its END, an NVTX range still open when the capture stopped),
    whichever reader found them: each ends at the trace's last timestamp (the latest time
    of every other event, and no earlier than its own start), carries
    ``args.unfinished = true`` (:data:`NOT_ENDED`) and is counted under the code its reader
    gave (``rows_by_code``). Analyses count such a slice as a call and never time it
    (:func:`not_ended_rows`). Returns how many slices it ended. Only for a trace being
    built, as :func:`clamp_times`.

    >>> t = Trace(); k = t.add_track("t", process=t.add_process("p"))
    >>> _ = t.add_slice(k, 0, 30, "closed"); _ = t.add_instant(k, 50, "last")
    >>> open_row = t.add_slice(k, 10, 0, "open", args={"a": 1})
    >>> end_not_ended(t, {"chrome.begin_without_end": [np.array([open_row])]})
    1
    >>> s = t.slice(open_row); s.end, s.args, t.diagnostics.count("chrome.begin_without_end")
    (50, {'a': 1, 'unfinished': True}, 1)
    """
    rows = {code: found for code, parts in rows_by_code.items()
            if len(found := np.unique(np.concatenate(parts)))}
    if not rows:
        return 0
    every = np.concatenate(list(rows.values()))
    slices = trace.slices
    start = np.frombuffer(slices.start, np.int64)
    dur = np.frombuffer(slices.dur, np.int64)
    dur[every] = 0   # (whatever length the reader gave: only their starts are in the input)
    last = trace.time_range[1]   # type: ignore[index]  # (these slices are events)
    dur[every] = last - start[every]
    names = trace.strings.strings
    for code, mine in rows.items():
        first = int(mine[0])
        trace.diagnostics.add(code, count=len(mine), example=(
            f"{names[slices.name[first]]!r} from {start[first]} ns: ended at {last} ns"))
        for row in mine.tolist():
            slices.set_args(row, {**(slices.args[row] or {}), NOT_ENDED: True})
    return len(every)


def not_ended_rows(trace: Trace) -> np.ndarray:
    """The slice rows whose end is not in the input (marked by :func:`end_not_ended`, or
    so marked in a file traceconv wrote): their length is not known.

    >>> t = Trace(); k = t.add_track("t", process=t.add_process("p"))
    >>> _ = t.add_slice(k, 0, 5, "done"); _ = t.add_slice(k, 2, 9, "open", args={NOT_ENDED: True})
    >>> not_ended_rows(t).tolist()
    [1]
    """
    return trace.slices.args.rows_where_true(NOT_ENDED)
