"""live_bytes against its definition: at each time something changes, the sizes allocated
by then less the sizes freed by then."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traceconv.model import MemoryBlock
from traceconv.model.memory import live_bytes

TIME = st.none() | st.integers(0, 30)
SIZE = st.integers(1, 9) | st.integers(-(1 << 63), (1 << 63) - 1)   # (and beyond a double)
blocks = st.lists(st.builds(MemoryBlock, st.integers(0, 4), SIZE, TIME, TIME), max_size=25)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(blocks, TIME, TIME)
def test_levels_are_allocated_less_freed_at_each_change(blocks, start, end):
    known = [t for b in blocks for t in (b.alloc_ns, b.free_ns) if t is not None]
    first = min(known, default=0) if start is None else start
    allocs = [(first if b.alloc_ns is None else b.alloc_ns, b.size) for b in blocks]
    frees = [(b.free_ns, b.size) for b in blocks
             if b.free_ns is not None and (end is None or b.free_ns <= end)]
    changes = sorted({t for t, _ in allocs + frees})
    exact = [sum(size for at, size in allocs if at <= t)
             - sum(size for at, size in frees if at <= t) for t in changes]
    # a level no int64 holds is drawn at the nearer edge (and counted: numbers.int64_edge)
    expected = [min(max(level, -(1 << 63)), (1 << 63) - 1) for level in exact]
    curve = live_bytes(blocks, start=start, end=end)
    assert curve.times.tolist() == changes
    assert [int(x) for x in curve.bytes.tolist()] == expected


def test_blocks_without_a_category_share_one_uncategorised_track():
    """A category of None and one of "" both read as "uncategorised": one track holds the
    levels of both (counted by hand: 8 bytes from 1, 16 from 2, 8 after 5, 0 after 6)."""
    from traceconv.model import Trace
    from traceconv.model.memory import add_live_bytes_counters

    trace = Trace()
    trace.add_memory_blocks([MemoryBlock(0, 8, 1, 5, device="d", category=""),
                             MemoryBlock(8, 8, 2, 6, device="d", category=None)])
    tracks = add_live_bytes_counters(trace, by_category=True)
    names = {trace.tracks[t].name: t for t in tracks}
    assert sorted(names) == ["d live bytes", "d uncategorised live bytes"]
    samples = [(c.ts, c.value) for c in trace.iter_counter_samples()
               if c.track == names["d uncategorised live bytes"]]
    assert samples == [(1, 8), (2, 16), (5, 8), (6, 0)]
