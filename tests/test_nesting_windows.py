"""The nesting repair window by window places every slice and instant where the repair of
the whole trace places it (:mod:`traceconv.model.nesting_windows`).

Expected values: :func:`traceconv.model.nesting.nested_view` on the whole trace (itself held
to the plain stack walk :func:`~traceconv.model.nesting.nest_pass` in test_nesting.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from traceconv.model import Trace
from traceconv.model.nesting import nested_view, track_view
from traceconv.model.nesting_windows import WindowedNesting


def random_trace(seed: int) -> Trace:
    """Tracks of nested stacks, partial overlaps, equal intervals, zero-length slices,
    long spans crossing many windows, and instants among them."""
    rng = np.random.default_rng(seed)
    trace = Trace()
    process = trace.add_process("python", pid=1)
    tracks = [trace.add_track(f"t{k}", process=process, tid=k + 1)
              for k in range(int(rng.integers(1, 4)))]
    for _ in range(int(rng.integers(1, 120))):
        track = tracks[int(rng.integers(len(tracks)))]
        start = int(rng.integers(0, 1000))
        kind = rng.random()
        dur = (0 if kind < 0.1 else int(rng.integers(500, 1500)) if kind < 0.2
               else int(rng.integers(1, 60)))
        trace.add_slice(track, start, dur, f"s{start}")
        if rng.random() < 0.1:   # the same interval again
            trace.add_slice(track, start, dur, "again")
    for _ in range(int(rng.integers(0, 30))):
        trace.add_instant(tracks[int(rng.integers(len(tracks)))], int(rng.integers(0, 1000)),
                          "mark")
    return trace


def windowed(trace: Trace, cuts: list[int], max_depth: int) -> Trace:
    view = track_view(trace)
    starts, ts = trace.slices.numpy("start"), trace.instants.numpy("ts")
    nesting = WindowedNesting(view, max_depth)
    edges = [None, *cuts, None]
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        nesting.place(inside(starts, lo, hi), inside(ts, lo, hi), until=hi)
    return view


def inside(values: np.ndarray, lo: int | None, hi: int | None) -> np.ndarray:
    """Where ``values`` lie in [lo, hi) (None: unbounded)."""
    keep = np.ones(len(values), dtype=bool)
    if lo is not None:
        keep &= values >= lo
    if hi is not None:
        keep &= values < hi
    return np.flatnonzero(keep)


def placement(view: Trace) -> tuple[list[str], list[str], dict[str, int]]:
    names = [view.tracks[t].name for t in view.slices.numpy("track").tolist()]
    instants = [view.tracks[t].name for t in view.instants.numpy("track").tolist()]
    counts = {d.code: d.count for d in view.diagnostics}
    return names, instants, counts


@pytest.mark.parametrize("seed", range(300))
def test_window_by_window_places_as_the_whole(seed: int):
    trace = random_trace(seed)
    rng = np.random.default_rng(10_000 + seed)
    max_depth = int(rng.choice([0, 1, 2, 3, 511]))
    cuts = sorted(set(rng.integers(-10, 1600, size=int(rng.integers(0, 12))).tolist()))
    whole = nested_view(trace, max_depth=max_depth)
    assert placement(windowed(trace, cuts, max_depth)) == placement(whole)
