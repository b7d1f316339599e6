"""Make every slice track a proper call stack: children strictly inside their parents.

Viewers build slices with a stack per track, so a slice that starts inside another and
outlives it cannot be shown there: Perfetto drops it, and also drops BEGINs deeper than
512. Real traces have both (Kineto ``user_annotation`` ranges that start inside a Python
frame and outlive it; recursive Python stacks). :func:`repair_nesting` moves such slices to
sibling *lane* tracks (``TrackKind.LANE``, ``parent`` = the home track) instead of dropping
them, and counts what it moved in the trace's diagnostics. Instants, which viewers draw as
zero-length slices, follow when they sit inside a stack that is already full.

Writers never change the trace they are given: they repair :func:`nested_view`, a view of
the trace that owns its track list, track columns and diagnostics (what the writer did),
and shares everything else (times, names, arguments) with the input.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np

from ..gcpause import paused_gc
from . import Diagnostics, Trace, TrackKind
from .first_fit import first_fit_lanes
from .groups import grouped, grouped_pairs
from .timeline_order import timeline_order

MAX_DEPTH = 511  # deepest 0-based depth trace_processor keeps (its kMaxDepth is 512 levels)
LANE_SUFFIX = " (overlap lane {})"   # lanes made here are known by this name
_LANE_MARK = LANE_SUFFIX.split("{")[0]


def clamped_durations(start: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """Durations made safe for ``start + dur``: negative ones as 0, and none running past
    the largest int64 (numpy would wrap around silently).

    >>> clamped_durations(np.array([0, 2**63 - 5]), np.array([-3, 10])).tolist()
    [0, 4]
    """
    return np.minimum(np.maximum(dur, 0), np.iinfo(np.int64).max - np.maximum(start, 0))


def clamped_ends(start: np.ndarray, dur: np.ndarray) -> np.ndarray:
    """``start + clamped_durations(start, dur)``, computed in two arrays.

    >>> clamped_ends(np.array([0, 2**63 - 5]), np.array([-3, 10])).tolist()
    [0, 9223372036854775807]
    """
    end = np.maximum(dur, 0)
    room = np.maximum(start, 0)
    np.subtract(np.iinfo(np.int64).max, room, out=room)
    np.minimum(end, room, out=end)
    end += start
    return end


@dataclasses.dataclass(frozen=True, eq=False)
class Timeline:
    """The slices of a trace in timeline order: by track, then start, longest first, ties
    in row order (:func:`~.timeline_order.timeline_order`), with their columns in that
    order. The repair sorts them this way anyway; writers that need the order take it from
    :func:`nested_view_timeline` instead of sorting again."""

    order: np.ndarray    # slice rows
    tracks: np.ndarray   # track of each, in that order
    starts: np.ndarray
    ends: np.ndarray     # start + clamped duration (:func:`clamped_durations`)

    def regrouped(self, final: np.ndarray) -> Timeline:
        """The timeline after slices moved to the tracks ``final`` (per row), each only to
        its home track or a lane of it, where ``tracks`` held the home tracks: every final
        track's slices are then in order within their home's, so one stable sort by final
        track (nearly sorted already) restores the order.

        >>> t = slice_timeline(np.array([0, 0, 0]), np.array([0, 1, 2]), np.array([5, 6, 3]))
        >>> t.regrouped(np.array([0, 3, 0])).order.tolist()
        [0, 2, 1]
        """
        moved = final[self.order]
        if np.array_equal(moved, self.tracks):
            return self
        again = np.argsort(moved, kind="stable")
        return Timeline(self.order[again], moved[again], self.starts[again], self.ends[again])


def slice_timeline(track: np.ndarray, start: np.ndarray, end: np.ndarray) -> Timeline:
    """The :class:`Timeline` of slices with these columns (``end``: start + clamped
    duration).

    >>> slice_timeline(np.array([1, 0, 0]), np.array([5, 9, 2]), np.array([6, 9, 4])).order
    array([2, 1, 0])
    """
    order = timeline_order(track, start, start - end)
    return Timeline(order, track[order], start[order], end[order])


def trace_timeline(trace: Trace) -> Timeline:
    """The :class:`Timeline` of ``trace``'s slices as they are (not repaired)."""
    slices = trace.slices
    start = slices.numpy("start")
    return slice_timeline(slices.numpy("track"), start, clamped_ends(start, slices.numpy("dur")))


def nest_pass(tracks: list[int], starts: list[int], ends: list[int],
              max_depth: int = MAX_DEPTH) -> tuple[list[int], list[int]]:
    """One stack walk over slices sorted by (track, start, -duration).

    Returns the positions that do not fit on their track: those that overlap the enclosing
    slice partially, then those deeper than ``max_depth``. An identical interval nests as a
    child; a slice that starts exactly where another ends is its sibling.

    >>> nest_pass([0, 0, 0], [0, 5, 10], [10, 15, 12])
    ([1], [])
    >>> nest_pass([0, 0, 0], [0, 0, 0], [9, 9, 9], max_depth=1)
    ([], [2])
    """
    overlapping: list[int] = []
    too_deep: list[int] = []
    never = float("inf")
    lo = 0
    for hi in [*_track_changes(tracks), len(tracks)]:
        stack: list[float] = [never]  # end times of the open slices, innermost last
        top, push, pop = never, stack.append, stack.pop
        for position in range(lo, hi):
            start = starts[position]
            while top <= start:
                pop()
                top = stack[-1]
            end = ends[position]
            if end > top:
                overlapping.append(position)
            elif len(stack) > max_depth + 1:
                too_deep.append(position)
            else:
                push(end)
                top = end
        lo = hi
    return overlapping, too_deep


FAST_TRACK = 4096   # slices on a track from which numpy decides instead of the stack walk
_ROUNDS = 8   # rounds of deciding overlaps from those decided (then: settle, or walk)
_UNSURE_LIMIT = 1024   # overlaps that depend only on each other, settled one by one
_NEVER = np.iinfo(np.int64).max
_QUERY_BLOCK = 1 << 16   # range-minimum queries answered at once
_UNLIMITED = 1 << 62   # a depth no trace reaches: misfits() then finds only overlaps


def misfits(tracks: np.ndarray, starts: np.ndarray, ends: np.ndarray,
            max_depth: int = MAX_DEPTH) -> tuple[list[int], list[int]]:
    """What :func:`nest_pass` returns, for numpy columns in the same order: tracks of at
    least :data:`FAST_TRACK` slices are decided with numpy (:func:`_fast_pass`), the others,
    and any it cannot decide, by the stack walk.

    >>> misfits(np.array([0, 0, 0]), np.array([0, 5, 10]), np.array([10, 15, 12]))
    ([1], [])
    """
    cuts = np.r_[0, np.flatnonzero(tracks[1:] != tracks[:-1]) + 1, len(tracks)].tolist()
    overlapping: list[int] = []
    too_deep: list[int] = []
    walked = np.ones(len(tracks), dtype=bool)
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        if hi - lo >= FAST_TRACK:
            found = _fast_pass(starts[lo:hi], ends[lo:hi], max_depth)
            if found is not None:
                overlapping += (found + lo).tolist()
                walked[lo:hi] = False
    if walked.any():
        at = np.flatnonzero(walked)
        slow = nest_pass(tracks[at].tolist(), starts[at].tolist(), ends[at].tolist(), max_depth)
        overlapping += at[slow[0]].tolist()
        too_deep += at[slow[1]].tolist()
    return sorted(overlapping), too_deep


def _fast_pass(starts: np.ndarray, ends: np.ndarray, max_depth: int) -> np.ndarray | None:
    """The positions :func:`nest_pass` finds overlapping on one track (sorted by start,
    then longest first), or None when it must walk: a slice deeper than ``max_depth``, or
    long chains of overlaps that depend on each other.

    The walk keeps a slice unless a slice it kept earlier, j, ends inside it: s_j < s_i <
    e_j < e_i (j is its *partner*). A slice without partners is kept. For the others,
    rounds decide what the last one settled allows: one with a kept partner is dropped, one
    whose partners were all dropped is kept. Those left depend only on each other and are
    settled in order.

    >>> _fast_pass(np.array([0, 5, 6]), np.array([10, 15, 8]), 9).tolist()
    [1]
    """
    by_end = np.argsort(ends, kind="stable")
    starts_by_end, ends_by_end = starts[by_end], ends[by_end]
    first = np.searchsorted(ends_by_end, starts, "right")   # partners: among the ends
    last = np.empty(len(ends), dtype=np.int64)               # at first .. last - 1
    last[by_end] = _run_starts(ends_by_end)   # searchsorted(ends_by_end, ends, "left")
    del ends_by_end   # its memory serves the tables of _range_min
    undecided = np.flatnonzero(_range_min(starts_by_end, first, last) < starts)
    kept = np.ones(len(starts), dtype=bool)
    kept[undecided] = False
    dropped = np.zeros(len(starts), dtype=bool)
    for _ in range(_ROUNDS):
        if not len(undecided):
            break
        partners = first[undecided], last[undecided], starts[undecided]
        kept_partner = _range_min(np.where(kept[by_end], starts_by_end, _NEVER),
                                  *partners[:2]) < partners[2]
        live_partner = _range_min(np.where(dropped[by_end], _NEVER, starts_by_end),
                                  *partners[:2]) < partners[2]
        dropped[undecided[kept_partner]] = True
        kept[undecided[~live_partner]] = True
        still = live_partner & ~kept_partner
        if still.all():
            break
        undecided = undecided[still]
    else:
        if len(undecided):
            return None
    if len(undecided) > _UNSURE_LIMIT:
        return None
    settled: list[int] = []   # kept, among those that depend only on each other
    for i in undecided.tolist():
        k = np.array(settled, dtype=np.int64)
        if ((starts[k] < starts[i]) & (starts[i] < ends[k]) & (ends[k] < ends[i])).any():
            dropped[i] = True
        else:
            settled.append(i)
    kept[settled] = True
    if kept.all():   # (the usual case: no copies of the columns)
        too_deep = len(starts) and _depths(starts, ends).max() > max_depth
    else:
        too_deep = _depths(starts[kept], ends[kept]).max() > max_depth
    if too_deep:
        return None
    return np.flatnonzero(dropped)


def _run_starts(values: np.ndarray) -> np.ndarray:
    """For sorted ``values``, where each one's run of equal values starts: what
    ``np.searchsorted(values, values, "left")`` finds, in one pass instead of a binary
    search per value.

    >>> _run_starts(np.array([1, 3, 3, 3, 7])).tolist()
    [0, 1, 1, 1, 4]
    """
    starts = np.arange(len(values), dtype=np.int64)
    starts[1:][values[1:] == values[:-1]] = 0
    return np.maximum.accumulate(starts)


def _range_min(values: np.ndarray, first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """The smallest of ``values[first[q]:last[q]]`` for each query q (the largest int64
    for an empty range): a sparse table, built one level at a time, each query answered
    at its level by two overlapping windows.

    >>> _range_min(np.array([5, 3, 8, 1]), np.array([0, 2, 1]), np.array([2, 3, 1])).tolist()
    [3, 8, 9223372036854775807]
    """
    found = np.full(len(first), _NEVER, dtype=np.int64)
    length = last - first
    queried = np.flatnonzero(length > 0)
    if not len(queried):
        return found
    # floor(log2(length)), exactly (frexp is exact below 2^53); the queries grouped by it
    level = (np.frexp(length[queried])[1] - 1).astype(np.uint8)
    del length   # (what the table's levels need is held; the rest goes before they grow)
    by_level = queried[np.argsort(level, kind="stable")]   # a radix sort on uint8
    cuts = np.cumsum(np.bincount(level)).tolist()
    del queried, level
    # table[p]: the least of values[p : p + 2^k], level after level in two buffers
    table = np.asarray(values, dtype=np.int64)
    spares = [np.empty(len(table), dtype=np.int64), np.empty(len(table), dtype=np.int64)]
    size = len(table)
    for k, (lo, hi) in enumerate(zip([0, *cuts[:-1]], cuts, strict=True)):
        if k:
            half = 1 << (k - 1)
            size -= half
            table = np.minimum(table[:size], table[half:half + size], out=spares[k % 2][:size])
        for block in range(lo, hi, _QUERY_BLOCK):   # (the lookups' temporaries stay small)
            at = by_level[block:min(hi, block + _QUERY_BLOCK)]
            found[at] = np.minimum(table[first[at]], table[last[at] - (1 << k)])
    return found


def _depths(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """How many slices enclose each one, for properly nested slices sorted by start,
    then longest first: slice i encloses the positions up to the first later one that
    starts at or after its end.

    >>> _depths(np.array([0, 1, 2, 5]), np.array([10, 4, 3, 6])).tolist()
    [0, 1, 2, 1]
    """
    n = len(starts)
    span_end = np.searchsorted(starts, ends, "left")
    np.maximum(span_end, np.arange(1, n + 1, dtype=np.int64), out=span_end)
    # each slice opens at its position + 1 and closes at its span's end: the running sum
    # of (1 opened - closed) per position, in one array
    change = np.bincount(span_end, minlength=n + 1)
    del span_end
    np.subtract(1, change, out=change)
    change[0] -= 1
    return np.cumsum(change, out=change)[:n]


def _track_changes(tracks: list[int]) -> list[int]:
    """Positions where the (sorted) track column changes value."""
    column = np.asarray(tracks)
    return (np.flatnonzero(column[1:] != column[:-1]) + 1).tolist()


def nested_view(trace: Trace, max_depth: int = MAX_DEPTH) -> Trace:
    """``trace`` with every slice track a proper stack, leaving ``trace`` itself unchanged.

    The view shares the event columns of ``trace`` except the track columns of slices and
    instants (copied, 4 bytes per event), and has its own track list and an empty
    diagnostics list in which :func:`repair_nesting` counts what it moved; writers add their
    own findings there too, apart from the diagnostics of the trace they were given.

    >>> trace = Trace()
    >>> main = trace.add_track("MainThread", process=trace.add_process("python", pid=1))
    >>> _ = trace.add_slice(main, 0, 100, "step"), trace.add_slice(main, 50, 100, "late")
    >>> view = nested_view(trace)
    >>> len(view.tracks), view.diagnostics.count("nesting.overlap_moved"), len(trace.tracks)
    (2, 1, 1)
    """
    return nested_view_timeline(trace, max_depth)[0]


def nested_view_timeline(trace: Trace, max_depth: int = MAX_DEPTH) -> tuple[Trace, Timeline]:
    """:func:`nested_view` and the :class:`Timeline` of its slices (the repair's sort).

    >>> trace = Trace()
    >>> main = trace.add_track("MainThread", process=trace.add_process("python", pid=1))
    >>> _ = trace.add_slice(main, 0, 100, "step"), trace.add_slice(main, 50, 100, "late")
    >>> view, timeline = nested_view_timeline(trace)
    >>> timeline.order.tolist(), timeline.tracks.tolist()
    ([0, 1], [0, 1])
    """
    view = track_view(trace)
    return view, _repaired_timeline(view, max_depth)


def track_view(trace: Trace) -> Trace:
    """A view of ``trace`` that owns its track list, the track columns of its slices and
    instants (copied, 4 bytes per event) and an empty diagnostics list, and shares
    everything else: what a writer repairs (:func:`nested_view`) or places window by
    window (:mod:`.nesting_windows`) without changing ``trace``.

    >>> trace = Trace(); _ = trace.add_process("python", pid=1)
    >>> view = track_view(trace); view.tracks is trace.tracks, view.strings is trace.strings
    (False, True)
    """
    view = trace.derived()
    view.metadata = dataclasses.replace(trace.metadata, diagnostics=Diagnostics())
    view.tracks = list(trace.tracks)
    view.slices, view.instants = copy.copy(trace.slices), copy.copy(trace.instants)
    view.slices.track = copy.copy(trace.slices.track)   # (an editable copy)
    view.instants.track = copy.copy(trace.instants.track)
    return view


def repair_nesting(trace: Trace, max_depth: int = MAX_DEPTH) -> None:
    """Move slices that would break their track's stack to overflow lane tracks.

    Per track, slices are sorted by (start, -duration) and walked with a stack; a slice that
    partially overlaps the slice enclosing it, or would sit deeper than ``max_depth``, goes to
    the first lane of its home track where it nests, creating lanes
    ``"<home> (overlap lane N)"`` as needed. Nothing is dropped, flows keep their rows, and
    running it again changes nothing.

    >>> trace = Trace()
    >>> main = trace.add_track("MainThread", process=trace.add_process("python", pid=1))
    >>> outer = trace.add_slice(main, 0, 100, "step")
    >>> frame = trace.add_slice(main, 10, 20, "_record_function_enter_new")
    >>> note = trace.add_slice(main, 20, 50, "forward")   # starts in frame, outlives it
    >>> repair_nesting(trace)
    >>> trace.tracks[trace.slice(note).track].name, trace.diagnostics.count("nesting.overlap_moved")
    ('MainThread (overlap lane 1)', 1)
    """
    _repaired_timeline(trace, max_depth)


def _repaired_timeline(trace: Trace, max_depth: int) -> Timeline:
    """:func:`repair_nesting`, returning the timeline of the repaired slices."""
    if not len(trace.slices):
        return trace_timeline(trace)
    with paused_gc():
        lanes = LaneFinder(trace)
        timeline = _repair(trace, max_depth, lanes)
        _repair_instants(trace, max_depth, lanes, timeline)
    return timeline


def _repair(trace: Trace, max_depth: int, lanes: LaneFinder) -> Timeline:
    slices = trace.slices
    current = slices.numpy("track")
    # slices already on our lanes take part as if on their home track again, so that a
    # repeated repair, or one after slices were added, lays every home out from scratch
    track = lanes.home_of[current] if lanes.lanes else current
    start = slices.numpy("start")
    timeline = slice_timeline(track, start, clamped_ends(start, slices.numpy("dur")))
    order, tracks, starts, ends = timeline.order, timeline.tracks, timeline.starts, timeline.ends
    overlapping, too_deep = misfits(tracks, starts, ends, max_depth)
    if not overlapping and not too_deep and not lanes.lanes:
        return timeline   # the common case
    final = track.copy()
    pending = np.array(sorted(overlapping + too_deep), dtype=np.int64)  # in walk order
    numbers = place_on_lanes(tracks[pending], starts[pending], ends[pending], max_depth)
    for (number, home), group in grouped_pairs(numbers, tracks[pending]):
        final[order[pending[group]]] = lanes.lane(home, number)
    for code, positions, limit in (("nesting.overlap_moved", overlapping, ""),
                                   ("nesting.too_deep_moved", too_deep,
                                    f" (depth limit {max_depth})")):
        rows = order[np.array(positions, dtype=np.int64)]
        count_moved(trace, code, rows[final[rows] != current[rows]].tolist(), limit)
    changed = np.flatnonzero(final != current)
    np.frombuffer(slices.track, dtype=np.int32)[changed] = final[changed]
    return timeline.regrouped(final)


@dataclasses.dataclass(frozen=True, eq=False)
class OpenSlices:
    """Slices placed before those being placed now (all of which start later) and maybe
    still open: the home track, lane number (0: the home itself), start and end of each,
    in row order."""

    homes: np.ndarray
    lanes: np.ndarray
    starts: np.ndarray
    ends: np.ndarray

    def stacks(self, first_lane: int) -> dict[int, dict[int, list[int]]]:
        """home -> lane - ``first_lane`` -> the ends of its slices, outermost first, for
        the lanes from ``first_lane`` on.

        >>> ends = np.array([9, 20, 30])
        >>> OpenSlices(np.array([0, 0, 0]), np.array([1, 2, 1]), np.array([5, 0, 2]), ends
        ...            ).stacks(1)
        {0: {0: [30, 9], 1: [20]}}
        """
        at = np.flatnonzero(self.lanes >= first_lane)
        at = at[np.lexsort((self.starts[at] - self.ends[at], self.starts[at],
                            self.lanes[at], self.homes[at]))]
        found: dict[int, dict[int, list[int]]] = {}
        for home, lane, end in zip(self.homes[at].tolist(), self.lanes[at].tolist(),
                                   self.ends[at].tolist(), strict=True):
            found.setdefault(home, {}).setdefault(lane - first_lane, []).append(end)
        return found


_PLACED_SHARE = 2   # a lane's walk that places less than 1 / this of what it walks is the last


NOTHING_OPEN = OpenSlices(*np.zeros((4, 0), dtype=np.int64))


def place_on_lanes(tracks: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                   max_depth: int, lane: int = 1, open_slices: OpenSlices = NOTHING_OPEN
                   ) -> np.ndarray:
    """The lane number of each slice (columns in walk order: by home track, start,
    longest first) that the lanes before ``lane`` refused: the first lane from ``lane``
    on where it nests under what that lane holds (``open_slices`` there, then the slices
    placed before it), as one stack walk per lane would place them.

    One walk over the slices still unplaced per lane is linear while each places at least
    half of what it walks; once one places less (each slice overlapping the one before
    needs a lane of its own), the rest are placed one by one in n log n
    (:func:`~.first_fit.first_fit_lanes`). A home whose unplaced slices nest properly
    among themselves, with nothing open on the lanes they would take, fills lane after
    lane from the top of its stack down: there each slice's depth says its lane (a chain
    n deep would otherwise take n / (max_depth + 1) walks).

    >>> place_on_lanes(np.zeros(4, np.int64), np.array([0, 1, 2, 5]),
    ...                np.array([10, 11, 12, 6]), max_depth=5).tolist()
    [1, 2, 3, 1]
    """
    lane_of = np.zeros(len(tracks), dtype=np.int64)
    pending = np.arange(len(tracks), dtype=np.int64)
    while len(pending):
        pending = _place_nested(pending, tracks, starts, ends, max_depth, lane, open_slices,
                                lane_of)
        if not len(pending):
            break
        refused = np.zeros(len(pending), dtype=bool)
        refused[np.r_[misfits_after(tracks[pending], starts[pending], ends[pending],
                                    max_depth, lane, open_slices)]] = True
        lane_of[pending[~refused]] = lane
        walked, pending, lane = len(pending), pending[refused], lane + 1
        if len(pending) and len(pending) * _PLACED_SHARE > walked:
            lane_of[pending] = _first_fit(pending, tracks, starts, ends, max_depth, lane,
                                          open_slices)
            break
    return lane_of


def misfits_after(tracks: np.ndarray, starts: np.ndarray, ends: np.ndarray, max_depth: int,
                  lane: int, open_slices: OpenSlices) -> tuple[np.ndarray, np.ndarray]:
    """:func:`misfits` of slices in walk order on lane ``lane`` of their home tracks, where
    the slices of ``open_slices`` on that lane came first, as positions (arrays).

    >>> before = OpenSlices(*np.array([[0], [1], [0], [10]]))
    >>> [a.tolist() for a in misfits_after(np.array([0]), np.array([5]), np.array([15]),
    ...                                    5, 1, before)]
    [[0], []]
    """
    context = np.flatnonzero(open_slices.lanes == lane)
    if not len(context):
        overlapping, too_deep = misfits(tracks, starts, ends, max_depth)
        return np.array(overlapping, dtype=np.int64), np.array(too_deep, dtype=np.int64)
    home = np.r_[open_slices.homes[context], tracks]
    start = np.r_[open_slices.starts[context], starts]
    end = np.r_[open_slices.ends[context], ends]
    order = timeline_order(home, start, start - end)
    found = misfits(home[order], start[order], end[order], max_depth)

    def in_given(positions: list[int]) -> np.ndarray:
        # (the open slices, first on their lane, fit as they did; the others keep their order)
        at = order[np.array(positions, dtype=np.int64)] - len(context)
        return at[at >= 0]

    return in_given(found[0]), in_given(found[1])


def _place_nested(pending: np.ndarray, tracks: np.ndarray, starts: np.ndarray,
                  ends: np.ndarray, max_depth: int, lane: int,
                  open_slices: OpenSlices, lane_of: np.ndarray) -> np.ndarray:
    """Set the lane of the ``pending`` slices of every home whose pending slices nest
    properly among themselves and which has nothing open from lane ``lane`` on (lane
    ``lane`` takes depths 0 .. ``max_depth``, the next lane the following ``max_depth + 1``
    levels, and so on: each lane's stack only ever holds the slice's own ancestors);
    return the others."""
    overlapping, _ = misfits(tracks[pending], starts[pending], ends[pending], _UNLIMITED)
    busy = np.r_[tracks[pending[overlapping]], open_slices.homes[open_slices.lanes >= lane]]
    nested = ~np.isin(tracks[pending], busy)
    if nested.any():
        at = pending[nested]
        lane_of[at] = lane + track_depths(tracks[at], starts[at], ends[at]) // (max_depth + 1)
    return pending[~nested]


def _first_fit(pending: np.ndarray, tracks: np.ndarray, starts: np.ndarray, ends: np.ndarray,
               max_depth: int, lane: int, open_slices: OpenSlices) -> np.ndarray:
    """The lanes, from ``lane`` on, of the ``pending`` slices, home by home, one slice at a
    time (:func:`~.first_fit.first_fit_lanes`)."""
    carried = open_slices.stacks(lane)
    numbers = np.empty(len(pending), dtype=np.int64)
    for home, group in grouped(tracks[pending]):
        at = pending[group]
        numbers[group] = first_fit_lanes(starts[at].tolist(), ends[at].tolist(), max_depth,
                                         carried.get(home))
    return numbers + lane


def track_depths(tracks: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """How many slices of its own track enclose each one, for properly nested slices
    sorted by (track, start, longest first): :func:`_depths` for many tracks at once.

    >>> track_depths(np.array([0, 0, 0, 1, 1]), np.array([0, 1, 2, 2, 3]),
    ...              np.array([10, 4, 3, 9, 4])).tolist()
    [0, 1, 2, 0, 1]
    """
    n = len(starts)
    # the first position of the same track that starts at or after each end: ends sorted
    # among the starts (by track, then time; an end before an equal start)
    merged = np.lexsort((np.r_[np.ones(n, np.int8), np.zeros(n, np.int8)],
                         np.r_[starts, ends], np.r_[tracks, tracks]))
    is_start = (merged < n).astype(np.int64)
    starts_before: np.ndarray = np.cumsum(is_start) - is_start
    span_end = np.empty(n, dtype=np.int64)
    span_end[merged[merged >= n] - n] = starts_before[merged >= n]
    position = np.arange(n, dtype=np.int64)
    span_end = np.maximum(span_end, position + 1)
    return np.cumsum(np.bincount(position + 1, minlength=n + 1)
                     - np.bincount(span_end, minlength=n + 1))[:n]


def _repair_instants(trace: Trace, max_depth: int, lanes: LaneFinder,
                     timeline: Timeline) -> None:
    """Instants are zero-length slices to trace_processor: one inside more than
    ``max_depth`` open slices is dropped too, so it goes to the first lane where it fits
    (``timeline``: that of the repaired slices)."""
    instants = trace.instants
    if not len(instants):
        return
    current = instants.numpy("track")
    home = lanes.home_of[current]
    final = home.copy()
    crowded = np.flatnonzero(np.bincount(timeline.tracks, minlength=len(lanes.home_of))
                             > max_depth)
    ts = instants.numpy("ts")
    homes = np.intersect1d(crowded, home).tolist()
    for track in homes:
        candidates = np.flatnonzero(home == track)
        target, lane_number = track, 0
        while len(candidates):
            # each track's slices are one stretch of the timeline, in start order (not a
            # scan of all slices per lane: a chain n deep has n / (max_depth + 1) lanes)
            lo, hi = np.searchsorted(timeline.tracks, [target, target + 1]).tolist()
            # open at an instant: started before it and not ended before it (the writer
            # puts instants first among events of one timestamp)
            open_count = (np.searchsorted(timeline.starts[lo:hi], ts[candidates], "left")
                          - np.searchsorted(np.sort(timeline.ends[lo:hi], kind="stable"),
                                            ts[candidates], "left"))
            fits = open_count <= max_depth
            final[candidates[fits]] = target
            candidates = candidates[~fits]
            lane_number += 1
            if len(candidates):
                target = lanes.lane(track, lane_number)
    changed = np.flatnonzero(final != current).tolist()
    moved = [row for row in changed if final[row] != home[row]]
    if moved:
        first = instants.ts[moved[0]]
        trace.diagnostics.add("nesting.instant_too_deep_moved", count=len(moved),
                              example=f"at {first} ns (depth limit {max_depth})")
    column = instants.track
    for row in changed:
        column[row] = int(final[row])


class LaneFinder:
    """Finds or creates lane ``n`` of a home track, and knows the lanes made earlier."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        tracks = trace.tracks
        self.lanes = {(t.parent, t.name): t.id for t in tracks
                      if t.kind is TrackKind.LANE and t.parent is not None
                      and t.name.startswith(tracks[t.parent].name + _LANE_MARK)}
        self._homes = list(range(len(tracks)))   # grows by one per lane made
        for (parent, _), lane in self.lanes.items():
            self._homes[lane] = parent
        self._home_array = np.array(self._homes, dtype=np.int64)

    @property
    def home_of(self) -> np.ndarray:
        """The home track of each track id (a home track's is itself); made again only
        after lanes were added (appending to an array per lane is quadratic)."""
        if len(self._home_array) != len(self._homes):
            self._home_array = np.array(self._homes, dtype=np.int64)
        return self._home_array

    def lane(self, home_id: int, number: int) -> int:
        home = self.trace.tracks[home_id]
        name = home.name + LANE_SUFFIX.format(number)
        found = self.lanes.get((home_id, name))
        if found is None:
            found = self.lanes[(home_id, name)] = self.trace.add_track(
                name, process=home.process, kind=TrackKind.LANE, sort_index=home.sort_index,
                description=f"slices of {home.name!r} that overlap partially or nest too deep",
                parent=home_id)
            self._homes.append(home_id)
        return found


def count_moved(trace: Trace, code: str, rows: list[int], limit: str) -> None:
    """Count the slice ``rows`` moved for ``code`` in ``trace``'s diagnostics, the first
    as the example (``limit``: said after it)."""
    if rows:
        first = trace.slice(rows[0])
        trace.diagnostics.add(code, count=len(rows),
                              example=f"{first.name!r} at {first.start} ns on "
                                      f"{trace.tracks[first.track].name!r}{limit}")
