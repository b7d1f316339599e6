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
    expected = [sum(size for at, size in allocs if at <= t)
                - sum(size for at, size in frees if at <= t) for t in changes]
    curve = live_bytes(blocks, start=start, end=end)
    assert curve.times.tolist() == changes
    assert [int(x) for x in curve.bytes.tolist()] == expected
