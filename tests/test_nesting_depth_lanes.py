"""Lanes of deep stacks come from the depth: one pass, same lanes as lane-by-lane rounds.

A chain of n slices, each inside the one before, needs n / 512 lanes; filling them one
round at a time cost n / 512 passes over the chain (64 k levels: 1.5 s in each writer).
The expected lanes here come from a hand count (a chain) and from a plain first-fit
written in the test (any slice set): each slice goes to the first of its home track and
that track's lanes 1, 2, ... where it nests under what that lane holds already.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traceconv.model import Trace
from traceconv.model.nesting import LANE_SUFFIX, repair_nesting


def two_thread_trace(rows: list[tuple[int, int, int]], instants: tuple[int, ...] = ()) -> Trace:
    trace = Trace()
    process = trace.add_process("python", pid=1)
    homes = [trace.add_track(f"T{i}", process=process, tid=i) for i in range(2)]
    for track, start, dur in rows:
        trace.add_slice(homes[track], start, dur, "op")
    for ts in instants:
        trace.add_instant(homes[0], ts, "mark")
    return trace


def placement(trace: Trace) -> list[tuple[str, int]]:
    """(home track name, lane number; 0 = the home itself) of each slice."""
    out = []
    for track in trace.slices.track:
        t = trace.tracks[track]
        if t.parent is None:
            out.append((t.name, 0))
        else:
            home = trace.tracks[t.parent].name
            out.append((home, int(t.name.removeprefix(home + LANE_SUFFIX.split("{")[0])
                                  .rstrip(")"))))
    return out


def first_fit_reference(rows: list[tuple[int, int, int]], max_depth: int
                        ) -> list[tuple[str, int]]:
    """The reference: slices by (track, start, longest first), each to the first lane
    (0 = home) whose open slices, after closing those ended by its start, leave it inside
    the innermost and fewer than max_depth + 1 deep."""
    found: list[tuple[str, int]] = [("", 0)] * len(rows)
    lanes: dict[tuple[int, int], list[int]] = {}   # (track, lane) -> open ends
    for row in sorted(range(len(rows)), key=lambda r: (rows[r][0], rows[r][1], -rows[r][2], r)):
        track, start, dur = rows[row]
        lane = 0
        while True:
            stack = lanes.setdefault((track, lane), [])
            while stack and stack[-1] <= start:
                stack.pop()
            if (not stack or start + dur <= stack[-1]) and len(stack) <= max_depth:
                stack.append(start + dur)
                found[row] = (f"T{track}", lane)
                break
            lane += 1
    return found


def test_a_chain_1300_deep_fills_lanes_by_depth():
    rows = [(0, i, 2 * (1300 - i)) for i in range(1300)] + [(1, i, 2 * (600 - i))
                                                           for i in range(600)]
    trace = two_thread_trace(rows)
    repair_nesting(trace)
    # hand count: depth d goes to lane d // 512 (0: the home track)
    assert placement(trace) == ([("T0", i // 512) for i in range(1300)]
                                + [("T1", i // 512) for i in range(600)])
    # lanes are made round by round: lane 1 of both homes, then lane 2
    assert [t.name for t in trace.tracks[2:]] == [
        "T0 (overlap lane 1)", "T1 (overlap lane 1)", "T0 (overlap lane 2)"]
    assert trace.diagnostics.count("nesting.too_deep_moved") == 788 + 88


def test_instants_inside_a_deep_chain_find_the_lane_with_room():
    rows = [(0, i, 2 * (1100 - i)) for i in range(1100)]
    trace = two_thread_trace(rows, instants=(5, 600, 1099))
    repair_nesting(trace)
    # open slices at ts: the chain members started at or before it (ts + 1 of them at
    # ts < 1100); at most 511 fit over an instant on one track
    names = [trace.tracks[t].name for t in trace.instants.track]
    assert names == ["T0", "T0 (overlap lane 1)", "T0 (overlap lane 2)"]


_ROWS = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 60), st.integers(0, 60)),
                 max_size=80)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, derandomize=True)
@given(_ROWS, st.integers(0, 3), st.integers(0, 40))
def test_lanes_are_those_of_a_plain_first_fit(rows, max_depth, chain):
    # a chain under everything makes deep stacks that nest properly: the depth shortcut
    rows = rows + [(0, i, 200 - 2 * i) for i in range(chain)]
    trace = two_thread_trace(rows)
    repair_nesting(trace, max_depth)
    assert placement(trace) == first_fit_reference(rows, max_depth)


def counting_walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of slices each walk of the nesting repair looks at, as it runs."""
    from traceconv.model import nesting

    walked: list[int] = []
    real = nesting.misfits

    def counting(tracks, starts, ends, max_depth=nesting.MAX_DEPTH):
        walked.append(len(tracks))
        return real(tracks, starts, ends, max_depth)

    monkeypatch.setattr(nesting, "misfits", counting)
    return walked


def test_a_deep_chain_is_walked_a_fixed_number_of_times(monkeypatch):
    walked = counting_walks(monkeypatch)
    trace = two_thread_trace([(0, i, 2 * (20_000 - i)) for i in range(20_000)])
    repair_nesting(trace)
    # the home walk and one look at what is left, not one pass per lane (39 lanes)
    assert len(walked) <= 3
    assert len(trace.tracks) == 2 + 39
