"""The nesting repair window by window: :func:`~.nesting.repair_nesting`'s placement of a
trace's slices and instants, given in time windows one after the other, carrying only the
slices still open at each window's end.

Where a slice goes depends only on the slices placed before it that are still open when it
starts (a stack walk per home track, lane after lane, in (start, longest first) order). So
the walk over one window, started from the slices carried open into it on each lane, places
every slice of the window where the walk over the whole trace places it, and an instant
sees the same open slices. What differs is only the order in which lanes are made (window
by window here, lane number by lane number there), so their track ids, and the example a
diagnostic keeps (the first in a window, not in the whole walk).

>>> from traceconv.model import Trace
>>> trace = Trace()
>>> main = trace.add_track("MainThread", process=trace.add_process("python", pid=1))
>>> _ = trace.add_slice(main, 0, 100, "step"), trace.add_slice(main, 150, 100, "late")
>>> _ = trace.add_slice(main, 120, 100, "step 2")
>>> nesting = WindowedNesting(trace)
>>> nesting.place(np.array([0]), np.zeros(0, np.int64), until=110)   # [0, 110)
>>> nesting.place(np.array([1, 2]), np.zeros(0, np.int64), until=None)
>>> [trace.tracks[trace.slice(row).track].name for row in range(3)]
['MainThread', 'MainThread (overlap lane 1)', 'MainThread']
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import Trace
from .groups import grouped, grouped_pairs
from .nesting import (
    MAX_DEPTH,
    LaneFinder,
    OpenSlices,
    clamped_ends,
    count_moved,
    misfits_after,
    place_on_lanes,
)
from .timeline_order import timeline_order


@dataclasses.dataclass(frozen=True, eq=False)
class _Open(OpenSlices):
    """Slices carried open into the next window, with their rows."""

    rows: np.ndarray

    @classmethod
    def of(cls, rows: np.ndarray, homes: np.ndarray, lanes: np.ndarray, starts: np.ndarray,
           ends: np.ndarray) -> _Open:
        """The slices with these columns, in row order (the order of ties in a walk)."""
        order = np.argsort(rows, kind="stable")
        return cls(homes[order], lanes[order], starts[order], ends[order], rows[order])

    @classmethod
    def none(cls) -> _Open:
        empty = np.zeros(0, dtype=np.int64)
        return cls.of(empty, empty, empty, empty, empty)


class WindowedNesting:
    """Places ``trace``'s slices and instants on their home track or a lane of it, as
    :func:`~.nesting.repair_nesting` does on the whole trace, window by window: each
    :meth:`place` takes the slices starting in the next window (every earlier slice placed
    before) and the instants in it, rewrites their track in ``trace`` (a view a writer
    owns: :func:`~.nesting.track_view`) and counts what moved in its diagnostics."""

    def __init__(self, trace: Trace, max_depth: int = MAX_DEPTH) -> None:
        self.trace, self.max_depth = trace, max_depth
        self.lanes = LaneFinder(trace)
        self.open = _Open.none()

    def go_on_with(self, trace: Trace) -> None:
        """Place the windows of ``trace`` next: the next piece of an input read piece by
        piece, whose track list is this one's, grown (the same ids; lanes are made in it).
        The slices still open are carried into it, before its rows in the order of ties."""
        self.trace = trace
        self.lanes = LaneFinder(trace)
        self.open = dataclasses.replace(self.open, rows=np.arange(-len(self.open.rows), 0))

    def still_open(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The slices carried open into the next window: their track as placed (home or
        lane), start and end, in the order of ties."""
        lanes = self.open.lanes
        tracks = self.open.homes.copy()
        for at in np.flatnonzero(lanes).tolist():
            tracks[at] = self.lanes.lane(int(tracks[at]), int(lanes[at]))
        return tracks, self.open.starts, self.open.ends

    def place(self, rows: np.ndarray, instant_rows: np.ndarray, until: int | None) -> None:
        """Place the slices ``rows`` (ascending) and the instants ``instant_rows`` of one
        window; ``until``: where the next window starts (None: this is the last)."""
        slices = self.trace.slices
        starts = slices.numpy_view("start")[rows]
        ends = clamped_ends(starts, slices.numpy_view("dur")[rows])
        current = slices.numpy_view("track")[rows].astype(np.int64)
        homes = self.lanes.home_of[current]
        lane_of, refused = self._lane_numbers(homes, starts, ends)
        final = homes.copy()
        for (number, home), group in grouped_pairs(lane_of, homes):
            if number:
                final[group] = self.lanes.lane(home, number)
        for (code, limit), positions in zip(
                (("nesting.overlap_moved", ""),
                 ("nesting.too_deep_moved", f" (depth limit {self.max_depth})")),
                refused, strict=True):
            moved = positions[final[positions] != current[positions]]
            count_moved(self.trace, code, rows[moved].tolist(), limit)
        changed = np.flatnonzero(final != current)
        np.frombuffer(slices.track, dtype=np.int32)[rows[changed]] = final[changed]
        self._place_instants(instant_rows, rows, homes, lane_of, starts, ends)
        if until is not None:
            self._carry(rows, homes, lane_of, starts, ends, until)

    def _lane_numbers(self, homes: np.ndarray, starts: np.ndarray, ends: np.ndarray
                      ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """The lane number of each slice (0: its home track): a walk per home track over
        the slices still open on it and those of the window, then the lanes for those it
        refused (:func:`~.nesting.place_on_lanes`, from the slices open on them); and those
        its home refused for overlapping, then for depth (in walk order)."""
        order = timeline_order(homes, starts, starts - ends)
        homes, starts, ends = homes[order], starts[order], ends[order]
        refused_home = misfits_after(homes, starts, ends, self.max_depth, 0, self.open)
        refused = np.sort(np.r_[refused_home])
        lane_of = np.zeros(len(homes), dtype=np.int64)
        lane_of[order[refused]] = place_on_lanes(homes[refused], starts[refused], ends[refused],
                                                 self.max_depth, 1, self.open)
        return lane_of, (order[refused_home[0]], order[refused_home[1]])

    def _place_instants(self, instant_rows: np.ndarray, rows: np.ndarray, homes: np.ndarray,
                        lane_of: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> None:
        """Each instant on the first lane of its home where at most ``max_depth`` slices
        are open at it (an instant is a zero-length slice to trace_processor)."""
        if not len(instant_rows):
            return
        instants = self.trace.instants
        current = instants.numpy_view("track")[instant_rows].astype(np.int64)
        home_of_instant = self.lanes.home_of[current]
        final = home_of_instant.copy()
        ts = instants.numpy_view("ts")[instant_rows]
        carried = self.open
        # a home with at most max_depth slices here (open or in the window) holds them all
        tracks = len(self.lanes.home_of)
        crowded = (np.bincount(homes, minlength=tracks)
                   + np.bincount(carried.homes, minlength=tracks)) > self.max_depth
        of_home = {home: at for home, at in grouped(homes) if crowded[home]}
        moved = []
        for home, group in grouped(home_of_instant):
            if not crowded[home]:
                continue
            candidates, lane = group, 0
            on_home = of_home.get(home, rows[:0])
            while len(candidates):
                on_lane = on_home[lane_of[on_home] == lane]
                context = (carried.homes == home) & (carried.lanes == lane)
                lane_starts = np.sort(np.r_[carried.starts[context], starts[on_lane]])
                lane_ends = np.sort(np.r_[carried.ends[context], ends[on_lane]])
                # open at an instant: started before it and not ended before it
                open_count = (np.searchsorted(lane_starts, ts[candidates], "left")
                              - np.searchsorted(lane_ends, ts[candidates], "left"))
                fits = open_count <= self.max_depth
                if lane:
                    final[candidates[fits]] = self.lanes.lane(home, lane)
                    moved += candidates[fits].tolist()
                candidates = candidates[~fits]
                lane += 1
        if moved:
            first = int(ts[min(moved)])
            self.trace.diagnostics.add("nesting.instant_too_deep_moved", count=len(moved),
                                       example=f"at {first} ns (depth limit {self.max_depth})")
        changed = np.flatnonzero(final != current)
        np.frombuffer(instants.track, dtype=np.int32)[instant_rows[changed]] = final[changed]

    def _carry(self, rows: np.ndarray, homes: np.ndarray, lane_of: np.ndarray,
               starts: np.ndarray, ends: np.ndarray, until: int) -> None:
        """Keep the slices open at ``until`` (an instant there sees those that end at it)."""
        carried = self.open
        old, new = carried.ends >= until, ends >= until
        self.open = _Open.of(np.r_[carried.rows[old], rows[new]],
                             np.r_[carried.homes[old], homes[new]],
                             np.r_[carried.lanes[old], lane_of[new]],
                             np.r_[carried.starts[old], starts[new]],
                             np.r_[carried.ends[old], ends[new]])
