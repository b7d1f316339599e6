"""Binding points in time to the slice around them (flows, launches, allocations): the
innermost slice on the track that holds the point, checked against a brute-force scan of
every slice, however many shorter slices come between it and the point."""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from traceconv.model import Trace
from traceconv.model.slice_index import MAX_WALK, SliceIndex, enclosing_rows


def brute_force(trace: Trace, track: int, time: int) -> int:
    """The last slice in (start, -dur) order on ``track`` that holds ``time``."""
    rows = [s for s in trace.iter_slices() if s.track == track and s.start <= time <= s.end]
    rows.sort(key=lambda s: (s.start, -s.dur, s.index))
    return rows[-1].index if rows else -1


def test_a_point_after_more_than_max_walk_short_slices_in_a_long_one():
    """Chromium: a flow point inside a long task after hundreds of short ones (90 flows of
    a real startup trace were reported as outside every slice)."""
    trace = Trace()
    thread = trace.add_track("main", process=trace.add_process("p"))
    outer = trace.add_slice(thread, 0, 1_000_000, "PreMainMessageLoopRun")
    for k in range(MAX_WALK * 3):
        trace.add_slice(thread, 10 + 10 * k, 5, "RunTask")
    point = 10 + 10 * MAX_WALK * 3 + 100
    found = enclosing_rows(SliceIndex(trace), np.array([thread]), np.array([point]))
    assert found.tolist() == [outer]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 400), st.integers(0, 120)),
                min_size=1, max_size=60),
       st.lists(st.tuples(st.integers(0, 2), st.integers(0, 520)), min_size=1, max_size=40))
def test_the_innermost_slice_around_any_point(slices, points):
    trace = Trace()
    process = trace.add_process("p")
    tracks = [trace.add_track(f"t{k}", process=process) for k in range(3)]
    for track, start, dur in slices:
        trace.add_slice(tracks[track], start, dur, "s")
    index = SliceIndex(trace)
    at = np.array([tracks[t] for t, _ in points]), np.array([time for _, time in points])
    expected = [brute_force(trace, tracks[t], time) for t, time in points]
    # the step-by-step walk, then the blocks (of many sizes: their edges), or the blocks alone
    for walk, block in ((MAX_WALK, 1024), (1, 1), (1, 2), (0, 3), (0, 7), (2, 16)):
        with patch("traceconv.model.slice_index.MAX_WALK", walk), \
                patch("traceconv.model.slice_index._BLOCK", block):
            assert enclosing_rows(index, *at).tolist() == expected


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 100), st.integers(0, 30)),
                max_size=30),
       st.lists(st.tuples(st.integers(0, 2), st.integers(0, 120)), min_size=1, max_size=40),
       st.lists(st.tuples(st.integers(0, 2), st.integers(0, 120), st.booleans()),
                min_size=1, max_size=20))
def test_the_instants_near_the_points_bind_them_as_all_instants_do(slices, instants, points):
    """An index holding only :func:`instants_near` the points binds every point to the
    slice or instant an index holding every instant binds it to (the flows' binding keeps
    2.46 M ``[memory]`` instants of a 10 M-event trace out of its index this way)."""
    from traceconv.model.instant_slices import instants_near

    trace = Trace()
    process = trace.add_process("p")
    tracks = [trace.add_track(f"t{k}", process=process) for k in range(3)]
    for track, start, dur in slices:
        trace.add_slice(tracks[track], start, dur, "s")
    for track, ts in instants:
        trace.add_instant(tracks[track], ts, "i")
    at = (np.array([tracks[t] for t, _, _ in points]), np.array([ts for _, ts, _ in points]),
          np.array([enclosing for _, _, enclosing in points]))
    near = instants_near(trace, at[1])
    assert SliceIndex(trace, instants=near).bind_many(*at).tolist() == \
        SliceIndex(trace, instants=True).bind_many(*at).tolist()
