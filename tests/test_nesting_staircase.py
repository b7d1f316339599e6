"""Chains of partial overlaps (a "staircase": each slice starts inside the one before and
outlives it) get their lanes in n log n, the same lanes a plain first-fit gives.

A staircase of n slices needs n lanes; one walk per lane was quadratic (20,000 slices:
58 s to write). Expected lanes come from the plain first-fit written in
test_nesting_depth_lanes (each slice tries its home, then lanes 1, 2, ... in turn);
expected counts from a hand count.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_nesting_depth_lanes import (
    counting_walks,
    first_fit_reference,
    placement,
    two_thread_trace,
)
from tests.test_nesting_windows import placement as placement_by_name
from tests.test_nesting_windows import windowed
from traceconv.model import nesting
from traceconv.model.first_fit import first_fit_lanes
from traceconv.model.nesting import nested_view, repair_nesting

# (track, first start, step, length, count): slices start `step` apart and last `length`
_STAIRS = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 40), st.integers(0, 6),
                             st.integers(0, 30), st.integers(1, 25)), max_size=4)
_ROWS = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 60), st.integers(0, 60)),
                 max_size=40)
# _PLACED_SHARE: 0 never leaves the lane-by-lane walks, 2 is the rule, a huge one leaves them
# after the first walk: each way must give the same lanes
_SWITCHES = [0, 2, 10**9]


def staircase_rows(stairs: list[tuple[int, int, int, int, int]]) -> list[tuple[int, int, int]]:
    return [(track, first + k * step, length)
            for track, first, step, length, count in stairs for k in range(count)]


@pytest.mark.slow
@pytest.mark.parametrize("share", _SWITCHES)
@settings(max_examples=200, deadline=None, derandomize=True)
@given(_STAIRS, _ROWS, st.integers(0, 3))
def test_lanes_are_those_of_a_plain_first_fit(share, stairs, rows, max_depth):
    rows = staircase_rows(stairs) + rows
    trace = two_thread_trace(rows)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nesting, "_PLACED_SHARE", share)
        repair_nesting(trace, max_depth)
    assert placement(trace) == first_fit_reference(rows, max_depth)


@pytest.mark.slow
@pytest.mark.parametrize("share", _SWITCHES)
@settings(max_examples=150, deadline=None, derandomize=True)
@given(_STAIRS, _ROWS, st.lists(st.integers(-5, 200), max_size=6), st.sampled_from([0, 1, 511]))
def test_window_by_window_places_as_the_whole(share, stairs, rows, cuts, max_depth):
    """The windows carry open slices onto many lanes: the one-by-one placement starts
    from them."""
    trace = two_thread_trace(staircase_rows(stairs) + rows)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(nesting, "_PLACED_SHARE", share)
        by_windows = placement_by_name(windowed(trace, sorted(set(cuts)), max_depth))
    assert by_windows == placement_by_name(nested_view(trace, max_depth=max_depth))


def test_first_fit_of_a_staircase_by_hand():
    # 0..10 holds 1..11 partly (lane 1), 2..12 overlaps both (lane 2), 5..6 nests in 0..10,
    # and at 11 the lanes 0 and 1 are free again
    assert first_fit_lanes([0, 1, 2, 5, 11], [10, 11, 12, 6, 20], max_depth=5) == [0, 1, 2, 0, 0]
    # a lane holding max_depth + 1 open slices is full
    assert first_fit_lanes([0, 0, 0, 0], [9, 9, 9, 9], max_depth=1) == [0, 0, 1, 1]


@pytest.mark.slow
def test_a_staircase_is_walked_three_times(monkeypatch):
    walked = counting_walks(monkeypatch)
    n = 20_000
    trace = two_thread_trace([(0, i, n) for i in range(n)])
    repair_nesting(trace)
    # hand count: the home walk (n), then over the n - 1 it refused: the look for nested
    # homes and lane 1's walk, which keeps one; the rest go one by one, not one walk per
    # lane (n - 1 lanes: n^2 / 2 slices walked)
    assert walked == [n, n - 1, n - 1]
    assert placement(trace) == [("T0", i) for i in range(n)]
    assert trace.diagnostics.count("nesting.overlap_moved") == n - 1


@pytest.mark.slow
def test_a_staircase_window_by_window_is_walked_a_few_times_per_window(monkeypatch):
    walked = counting_walks(monkeypatch)
    n, windows = 20_000, 4
    trace = two_thread_trace([(0, i, n) for i in range(n)])
    view = windowed(trace, [n * k // windows for k in range(1, windows)], nesting.MAX_DEPTH)
    # hand count, per window: the home walk (the window's n / 4 slices and the one open on
    # the home), the look for nested homes, lane 1's walk (with the one open there); the
    # rest go one by one from the slices open on their lanes
    assert walked == [n // windows] + [n // windows - 1] * 2 + [
        n // windows + 1, n // windows, n // windows + 1] * (windows - 1)
    assert placement(view) == [("T0", i) for i in range(n)]


@pytest.mark.slow
def test_a_100k_staircase_converts(tmp_path: Path):
    """The whole command on 100,000 slices, each overlapping the one before (a generous
    timeout guards the run; nothing is timed)."""
    n = 100_000
    source = tmp_path / "stair.json"
    source.write_text(json.dumps({"traceEvents": [
        {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": i, "dur": n} for i in range(n)]}))
    done = subprocess.run([sys.executable, "-m", "traceconv", str(source), "-o",
                           str(tmp_path / "stair.pftrace")], capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr
    assert "99,999 repaired (nesting.overlap_moved)" in done.stderr

