"""The run-aware sorts give exactly numpy's lexsort, on any input (the reference is the
lexsort itself: the sorts are a faster way to the same permutation)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from traceconv.analysis.stack_order import stack_order, time_order

# small ranges: many ties on every key, which is where the runs are re-sorted
_SMALL = st.integers(min_value=-3, max_value=3)
_ANY = st.integers(min_value=-(2**61), max_value=2**61)


@st.composite
def _columns(draw: st.DrawFn, count: int) -> list[np.ndarray]:
    rows = draw(st.integers(min_value=0, max_value=60))
    values = st.one_of(_SMALL, _ANY) if draw(st.booleans()) else _SMALL
    columns = [np.array(draw(st.lists(values, min_size=rows, max_size=rows)), dtype=np.int64)
               for _ in range(count)]
    if draw(st.booleans()):   # mostly in time order, as profilers write events
        columns[1 if count == 3 else 0] = np.sort(columns[1 if count == 3 else 0])
    return columns


@given(_columns(3))
def test_stack_order_is_the_lexsort(columns: list[np.ndarray]) -> None:
    track, start, end = columns
    expected = np.lexsort((start - end, start, track))
    assert stack_order(track, start, end).tolist() == expected.tolist()


@given(_columns(2))
def test_time_order_is_the_lexsort(columns: list[np.ndarray]) -> None:
    ts, tie = columns
    assert time_order(ts, tie).tolist() == np.lexsort((tie, ts)).tolist()


def test_only_unsorted_runs_move() -> None:
    # a run already in tie order stays; the run [2, 1] at time 7 is put in order
    ts = np.array([7, 3, 7, 3, 9])
    tie = np.array([2, 0, 1, 0, 5])
    assert time_order(ts, tie).tolist() == [1, 3, 2, 0, 4]
