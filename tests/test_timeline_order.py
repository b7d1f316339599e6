"""timeline_order is np.lexsort((tie, start, track)), whatever the rows."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from traceconv.model.timeline_order import timeline_order

INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
rows = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 12), st.integers(-3, 3)),
                max_size=80)


def _columns(values: list[tuple[int, int, int]]) -> tuple[np.ndarray, ...]:
    track, start, tie = zip(*values, strict=True) if values else ((), (), ())
    return (np.array(track, dtype=np.int32), np.array(start, dtype=np.int64),
            np.array(tie, dtype=np.int64))


@settings(max_examples=500, deadline=None)
@given(rows)
def test_equal_to_lexsort_on_crowded_rows(values: list[tuple[int, int, int]]) -> None:
    # few tracks, starts and tie values: many equal keys, runs in and out of order
    track, start, tie = _columns(values)
    assert timeline_order(track, start, tie).tolist() == np.lexsort((tie, start, track)).tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1 << 30), st.one_of(INT64, st.integers(0, 9)),
                          INT64), max_size=30))
def test_equal_to_lexsort_at_the_int64_edges(values: list[tuple[int, int, int]]) -> None:
    # starts anywhere in int64 (a composite key would overflow: lexsort itself) or close
    # together under track ids up to 2^30 (a composite key near its limit); ties anywhere
    track, start, tie = _columns(values)
    assert timeline_order(track, start, tie).tolist() == np.lexsort((tie, start, track)).tolist()


def test_a_profile_in_file_order() -> None:
    # two threads written one after the other, each nearly in time order, with a child
    # written before its parent at the same start (the tie puts the parent first)
    track = np.array([0, 0, 0, 0, 1, 1, 1], dtype=np.int32)
    start = np.array([10, 10, 30, 20, 5, 5, 6], dtype=np.int64)
    dur = np.array([5, 50, 1, 1, 9, 9, 1], dtype=np.int64)
    assert timeline_order(track, start, -dur).tolist() == [1, 0, 3, 2, 4, 5, 6]
