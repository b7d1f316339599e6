"""repair_nesting: overlapping and too-deep slices go to lane tracks, nothing is dropped."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traceconv.model import Trace, TrackKind, nesting
from traceconv.model.nesting import MAX_DEPTH, nest_pass, repair_nesting


def _thread_trace() -> tuple[Trace, int]:
    trace = Trace()
    host = trace.add_process("python", pid=10)
    return trace, trace.add_track("MainThread", process=host, tid=10)


def _depths(trace: Trace, track: int) -> list[int]:
    """Depth of each slice of ``track`` by a strict stack walk (asserting proper nesting)."""
    rows = sorted((s.start, -s.dur, s.index) for s in trace.iter_slices(track=track))
    stack: list[int] = []
    depths = []
    for start, neg_dur, _ in rows:
        end = start - neg_dur
        while stack and stack[-1] <= start:
            stack.pop()
        assert not stack or end <= stack[-1], "partial overlap left on the track"
        depths.append(len(stack))
        stack.append(end)
    return depths


def test_kineto_annotation_outliving_its_frame_moves_to_a_lane():
    trace, main = _thread_trace()
    step = trace.add_slice(main, 0, 1000, "ProfilerStep#1")
    frame = trace.add_slice(main, 10, 20, "<built-in method _record_function_enter_new>")
    forward = trace.add_slice(main, 20, 500, "forward", "user_annotation")
    inside = trace.add_slice(main, 100, 50, "aten::linear")
    repair_nesting(trace)
    lane = trace.slice(forward).track
    assert lane != main
    lane_track = trace.tracks[lane]
    assert (lane_track.kind, lane_track.parent, lane_track.name) == (
        TrackKind.LANE, main, "MainThread (overlap lane 1)")
    assert [trace.slice(r).track for r in (step, frame, inside)] == [main, main, main]
    assert trace.diagnostics.count("nesting.overlap_moved") == 1
    assert len(trace.slices) == 4


def test_identical_intervals_nest_and_touching_slices_are_siblings():
    trace, main = _thread_trace()
    for _ in range(3):
        trace.add_slice(main, 0, 10, "same")
    trace.add_slice(main, 10, 5, "after")
    trace.add_slice(main, 10, 0, "zero-length, inside 'after'")
    repair_nesting(trace)
    assert len(trace.tracks) == 1 and not len(trace.diagnostics)
    assert sorted(_depths(trace, main)) == [0, 0, 1, 1, 2]


def test_600_deep_nest_keeps_512_levels_and_moves_the_rest():
    trace, main = _thread_trace()
    for depth in range(600):
        trace.add_slice(main, depth, 10_000 - 2 * depth, f"frame {depth}")
    repair_nesting(trace)
    assert max(_depths(trace, main)) == MAX_DEPTH == 511
    assert trace.diagnostics.count("nesting.too_deep_moved") == 600 - 512
    lane = trace.tracks[-1]
    assert lane.kind is TrackKind.LANE and max(_depths(trace, lane.id)) == 600 - 512 - 1
    assert len(trace.slices) == 600


def test_cascading_overlaps_open_more_lanes_and_repair_is_idempotent():
    trace, main = _thread_trace()
    for k in range(6):   # each overlaps the previous one partially
        trace.add_slice(main, k * 10, 25, f"s{k}")
    repair_nesting(trace)
    tracks_after, columns_after = len(trace.tracks), trace.slices.numpy("track")
    for track in range(tracks_after):
        _depths(trace, track)
    repair_nesting(trace)
    assert len(trace.tracks) == tracks_after
    assert (trace.slices.numpy("track") == columns_after).all()
    assert trace.diagnostics.count("nesting.overlap_moved") == 4


def test_repair_after_new_slices_keeps_lanes_nested():
    trace, main = _thread_trace()
    trace.add_slice(main, 0, 100, "frame")
    forward = trace.add_slice(main, 50, 100, "forward")
    repair_nesting(trace)
    lane = trace.slice(forward).track
    late = trace.add_slice(main, 120, 100, "late")   # overlaps 'forward' (now on the lane)
    repair_nesting(trace)
    for track in trace.tracks:
        _depths(trace, track.id)
    assert trace.slice(forward).track == lane and trace.slice(late).track == main
    assert trace.diagnostics.count("nesting.overlap_moved") == 1
    before = trace.slices.numpy("track")
    repair_nesting(trace)
    assert (trace.slices.numpy("track") == before).all()
    assert trace.diagnostics.count("nesting.overlap_moved") == 1


def test_nest_pass_reports_positions():
    assert nest_pass([0, 0, 1, 1], [0, 5, 0, 5], [10, 15, 10, 8]) == ([1], [])


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 40), st.integers(0, 25)),
                max_size=60), st.integers(0, 4), st.sampled_from([0, 1, 10_000]))
def test_the_numpy_pass_agrees_with_the_stack_walk(rows, max_depth, unsure_limit):
    """misfits (numpy on every track here) finds what nest_pass finds, including when it
    must hand a track back to the walk (too deep, or too many dependent overlaps)."""
    rows = sorted((track, start, -(start + dur)) for track, start, dur in rows)
    tracks, starts = [r[0] for r in rows], [r[1] for r in rows]
    ends = [-r[2] for r in rows]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nesting, "FAST_TRACK", 0)
        patch.setattr(nesting, "_UNSURE_LIMIT", unsure_limit)
        found = nesting.misfits(np.array(tracks, dtype=np.int64), np.array(starts, dtype=np.int64),
                                np.array(ends, dtype=np.int64), max_depth)
    assert found == nest_pass(tracks, starts, ends, max_depth)


def test_overlaps_that_depend_on_each_other_are_settled_in_order():
    """b overlaps a and c overlaps b, so a keeps b out and c stays (the walk's answer);
    every slice here is suspect, so only the settling in order can tell."""
    starts, ends = np.array([0, 5, 12]), np.array([10, 15, 20])
    assert nesting._fast_pass(starts, ends, MAX_DEPTH).tolist() == [1] == nest_pass(
        [0, 0, 0], starts.tolist(), ends.tolist())[0]


@pytest.mark.slow
def test_a_million_overlapping_slices():
    """Every other slice moves (timing is for benchmarks/, not tests: ~0.5 s here)."""
    trace, main = _thread_trace()
    n = 1_000_000
    starts = np.arange(n, dtype=np.int64) * 100
    trace.slices.start.frombytes(starts.tobytes())
    trace.slices.dur.frombytes(np.full(n, 150, np.int64).tobytes())  # every slice overlaps
    trace.slices.track.frombytes(np.zeros(n, np.int32).tobytes())
    trace.slices.name.frombytes(np.zeros(n, np.int32).tobytes())
    trace.slices.category.frombytes(np.zeros(n, np.int32).tobytes())
    trace.slices.args.extend([None] * n)
    repair_nesting(trace)
    assert trace.diagnostics.count("nesting.overlap_moved") == n // 2


def _four_thread_trace() -> tuple[Trace, list[int]]:
    trace = Trace()
    host = trace.add_process("p", pid=1)
    return trace, [trace.add_track(f"t{i}", process=host, tid=i + 1) for i in range(4)]


intervals = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 200), st.integers(0, 80)),
                     max_size=60)


@settings(max_examples=200, deadline=None)
@given(intervals, st.integers(1, 4))
def test_any_slice_set_ends_up_properly_nested(rows, max_depth):
    trace, homes = _four_thread_trace()
    for track, start, dur in rows:
        trace.add_slice(homes[track], start, dur, "s")
    repair_nesting(trace, max_depth=max_depth)
    assert len(trace.slices) == len(rows)
    for track in trace.tracks:
        depths = _depths(trace, track.id)
        assert not depths or max(depths) <= max_depth
        if track.kind is TrackKind.LANE:
            assert trace.tracks[track.parent].kind is TrackKind.THREAD
    moved = sum(1 for s in trace.iter_slices() if trace.tracks[s.track].kind is TrackKind.LANE)
    assert moved == (trace.diagnostics.count("nesting.overlap_moved")
                     + trace.diagnostics.count("nesting.too_deep_moved"))


@settings(max_examples=150, deadline=None)
@given(intervals, intervals)
def test_repairing_again_after_more_slices_still_nests(first, second):
    trace, homes = _four_thread_trace()
    for batch in (first, second):
        for track, start, dur in batch:
            trace.add_slice(homes[track], start, dur, "s")
        repair_nesting(trace, max_depth=3)
    assert len(trace.slices) == len(first) + len(second)
    for track in trace.tracks:
        depths = _depths(trace, track.id)
        assert not depths or max(depths) <= 3


def test_instants_inside_512_open_slices_move_to_a_lane():
    trace, main = _thread_trace()
    for depth in range(512):                     # exactly the deepest stack that fits
        trace.add_slice(main, depth, 10_000 - 2 * depth, f"frame {depth}")
    deep = trace.add_instant(main, 600, "deep mark")
    shallow = trace.add_instant(main, 20_000, "after the stack")
    repair_nesting(trace)
    assert trace.diagnostics.count("nesting.too_deep_moved") == 0
    lane = trace.instants.track[deep]
    assert trace.tracks[lane].name == "MainThread (overlap lane 1)"
    assert trace.instants.track[shallow] == main
    assert trace.diagnostics.count("nesting.instant_too_deep_moved") == 1
    repair_nesting(trace)                        # idempotent for instants too
    assert trace.instants.track[deep] == lane
    assert trace.diagnostics.count("nesting.instant_too_deep_moved") == 1


@settings(max_examples=150, deadline=None)
@given(intervals, intervals, st.integers(1, 4))
def test_the_view_timeline_is_its_slices_in_timeline_order(first, second, max_depth):
    """What the repair hands to writers is the view's slices sorted by (track, start,
    longest first, row), also when slices moved and when lanes existed before."""
    trace, homes = _four_thread_trace()
    for track, start, dur in first:
        trace.add_slice(homes[track], start, dur, "s")
    repair_nesting(trace, max_depth=max_depth)   # lanes that exist before the view
    for track, start, dur in second:
        trace.add_slice(homes[track], start, dur, "s")
    view, timeline = nesting.nested_view_timeline(trace, max_depth)
    rows = sorted(range(len(view.slices)), key=lambda r: (
        view.slices.track[r], view.slices.start[r], -view.slices.dur[r], r))
    assert timeline.order.tolist() == rows
    assert timeline.tracks.tolist() == [view.slices.track[r] for r in rows]
    assert timeline.starts.tolist() == [view.slices.start[r] for r in rows]
    assert timeline.ends.tolist() == [view.slices.start[r] + view.slices.dur[r] for r in rows]
