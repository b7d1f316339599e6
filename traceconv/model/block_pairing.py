"""The one rule that pairs a reader's allocation and free records into memory blocks.

Every allocator log (nsys, rocprof, Paddle, XPlane, Kineto) is a stream of allocations and frees
keyed by where the memory is (device and address, or whatever the reader's key is), in
time order. A free ends the open block of its key. Two records break the pairing, and
each is counted rather than lost:

- an allocation on a key whose block is still open: the free between them was not
  recorded, so the open block ends where the new one starts
  (``{reader}.alloc_without_free``);
- a free with no open block: its memory was allocated before the trace, so it becomes a
  block from the trace's start (``{reader}.free_without_alloc``).

:class:`BlockPairing` applies it record by record; :func:`pair_grouped` to whole arrays of
events (Kineto's hundreds of thousands), with the same outcome.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np

from .diagnostics import Diagnostics
from .entities import MemoryBlock


class BlockPairing:
    """Allocation and free records → memory blocks, paired per key in the order given
    (time order). ``blocks`` holds them in the order of their first record.

    >>> pairs = BlockPairing("nsys")
    >>> pairs.alloc(("cuda:0", 64), 10, MemoryBlock(64, 8, 10, None))
    >>> pairs.alloc(("cuda:0", 64), 20, MemoryBlock(64, 16, 20, None))   # 10's free lost
    >>> pairs.free(("cuda:0", 64), 30)
    True
    >>> pairs.free(("cuda:0", 96), 40)   # allocated before the trace
    False
    >>> pairs.allocated_before(MemoryBlock(96, 4, None, 40))
    >>> [(b.address, b.size, b.alloc_ns, b.free_ns) for b in pairs.blocks]
    [(64, 8, 10, 20), (64, 16, 20, 30), (96, 4, None, 40)]
    >>> pairs.alloc_without_free, pairs.free_without_alloc
    (1, 1)
    """

    def __init__(self, reader: str) -> None:
        self.reader = reader
        self.blocks: list[MemoryBlock] = []
        # key -> its open block; None: an allocation the reader could not read
        self.open: dict[Hashable, MemoryBlock | None] = {}
        self.alloc_without_free = 0
        self.free_without_alloc = 0
        self.unread_frees = 0

    def alloc(self, key: Hashable, ts: int, block: MemoryBlock | None) -> None:
        """Open ``block`` on ``key`` at ``ts`` (None: an allocation not read, whose free is
        then not read either); a block still open there ends at ``ts``."""
        if key in self.open:
            self.alloc_without_free += 1
            if (previous := self.open[key]) is not None:
                previous.free_ns = ts
        self.open[key] = block
        if block is not None:
            self.blocks.append(block)

    def free(self, key: Hashable, ts: int) -> bool:
        """End the open block of ``key`` at ``ts``; False when none is open: the reader then
        hands the block of memory allocated before the trace to :meth:`allocated_before`.
        The free of an allocation not read is not read either (``unread_frees``)."""
        if key not in self.open:
            return False
        block = self.open.pop(key)
        if block is None:
            self.unread_frees += 1
        else:
            block.free_ns = ts
        return True

    def allocated_before(self, block: MemoryBlock) -> None:
        """Add the block of a free with no open block: allocated before the trace."""
        self.free_without_alloc += 1
        self.blocks.append(block)

    def count(self, diagnostics: Diagnostics) -> None:
        """Count the records that broke the pairing under the reader's codes."""
        diagnostics.add(f"{self.reader}.alloc_without_free", count=self.alloc_without_free)
        diagnostics.add(f"{self.reader}.free_without_alloc", count=self.free_without_alloc)


def pair_grouped(by_key: np.ndarray, same_key: np.ndarray,
                 alloc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:class:`BlockPairing`'s rule for arrays of events: which events are frees that end an
    open block, and per allocation the event that ends its block (-1: open at the end),
    for events ``by_key`` (grouped by key, in time order in each; ``same_key``: per
    by_key[1:], same key as the event before it) and whether each is an ``alloc``.

    Events 0, 1, 3 share a key: alloc 0 ends at alloc 1 (its free unrecorded), alloc 1 at
    free 3; free 2 ends nothing (allocated before the trace); alloc 4 stays open.

    >>> key = np.array([0, 0, 1, 0, 2])
    >>> alloc = np.array([True, True, False, False, True])
    >>> by_key = np.lexsort((np.arange(5), key))
    >>> freeing, freed_at = pair_grouped(by_key, key[by_key[1:]] == key[by_key[:-1]], alloc)
    >>> freeing.tolist(), freed_at.tolist()
    ([False, False, False, True, False], [1, 3, -1, -1, -1])
    """
    after, before = by_key[1:], by_key[:-1]
    ends = alloc[before] & same_key   # the next event of an allocation's key ends its block
    freeing = np.zeros(len(alloc), dtype=bool)
    freeing[after] = ends & ~alloc[after]
    freed_at = np.full(len(alloc), -1, dtype=np.int64)
    freed_at[before[ends]] = after[ends]
    return freeing, freed_at


def count_unpaired(diagnostics: Diagnostics, reader: str, alloc: np.ndarray,
                   freeing: np.ndarray, freed_at: np.ndarray) -> None:
    """Count what :func:`pair_grouped` found under the codes :class:`BlockPairing` uses."""
    ended_by_alloc = int(alloc[freed_at[freed_at >= 0]].sum())
    diagnostics.add(f"{reader}.alloc_without_free", count=ended_by_alloc)
    diagnostics.add(f"{reader}.free_without_alloc", count=int((~alloc & ~freeing).sum()))
