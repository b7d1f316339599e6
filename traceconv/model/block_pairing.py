"""The one rule that pairs a reader's allocation and free records into memory blocks.

Every allocator log (nsys, rocprof, rpd, Paddle, XPlane, Kineto) is a stream of allocations
and frees keyed by where the memory is (device and address, or whatever the reader's key
is), in time order. A free ends the open block of its key. Two records break the pairing,
and each is counted rather than lost:

- an allocation on a key whose block is still open: the free between them was not
  recorded, so the open block ends where the new one starts
  (``{reader}.alloc_without_free``);
- a free with no open block: its memory was allocated before the trace, so it becomes a
  block from the trace's start (``{reader}.free_without_alloc``).

:func:`pair_events` applies it to whole columns of records at once (a log holds millions):
a reader reads its records as arrays, pairs them here and adds the blocks to the trace as
columns (:meth:`~traceconv.model.block_table.BlockTable.extend_columns`), with no
Python object per record.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .block_table import coded_column
from .diagnostics import Diagnostics


@dataclass(frozen=True)
class Pairing:
    """What :func:`pair_events` found, per event (in the order given): whether it
    ``allocates``; for an allocation, the event that ends its block (``freed_at``; -1:
    open at the end); whether it is a free that ends an open block (``freeing``)."""

    allocates: np.ndarray
    freed_at: np.ndarray
    freeing: np.ndarray

    def block_events(self) -> np.ndarray:
        """The events that make a block, in order: each allocation, and each free that
        ends no open block (memory allocated before the trace)."""
        return np.flatnonzero(self.allocates | ~self.freeing)

    def block_times(self, times: np.ndarray, events: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray]:
        """The (alloc_ns, free_ns) of the blocks of ``events`` (of :meth:`block_events`) as
        masked arrays (masked: None), given each event's time: an allocation's block ends
        at the time of the event that ends it, a free's block starts before the trace."""
        allocates = self.allocates[events]
        ends = self.freed_at[events]
        free_ns = np.where(allocates, times[np.maximum(ends, 0)], times[events])
        return (np.ma.array(times[events], mask=~allocates),
                np.ma.array(free_ns, mask=allocates & (ends < 0)))

    def frees_ending(self, allocations: np.ndarray) -> int:
        """How many frees end the blocks of the allocation events ``allocations`` (a
        reader that could not read an allocation cannot read its free either)."""
        ends = self.freed_at[allocations]
        return int(np.count_nonzero(~self.allocates[ends[ends >= 0]]))

    def count(self, diagnostics: Diagnostics, reader: str) -> None:
        """Count the records that broke the pairing under ``reader``'s codes."""
        ends = self.freed_at[self.freed_at >= 0]
        diagnostics.add(f"{reader}.alloc_without_free",
                        count=int(np.count_nonzero(self.allocates[ends])))
        diagnostics.add(f"{reader}.free_without_alloc",
                        count=int(np.count_nonzero(~self.allocates & ~self.freeing)))


def pair_events(keys: Sequence[np.ndarray], allocates: np.ndarray) -> Pairing:
    """Pair events given in time order, by the rule of the module text: ``keys`` holds the
    parts of each event's key as integer arrays (device code, address...), ``allocates``
    whether each event allocates (else it frees).

    Events 0, 1, 3 share a key: allocation 0 ends at allocation 1 (its free was not
    recorded), allocation 1 at free 3; free 2 ends nothing (allocated before the trace);
    allocation 4 stays open.

    >>> device, address = np.array([0, 0, 0, 0, 1]), np.array([8, 8, 16, 8, 8])
    >>> paired = pair_events([device, address], np.array([True, True, False, False, True]))
    >>> paired.freed_at.tolist(), paired.freeing.tolist(), paired.block_events().tolist()
    ([1, 3, -1, -1, -1], [False, False, False, True, False], [0, 1, 2, 4])
    >>> alloc_ns, free_ns = paired.block_times(np.array([10, 20, 30, 40, 50]),
    ...                                        paired.block_events())
    >>> alloc_ns.tolist(), free_ns.tolist()
    ([10, 20, None, 50], [20, 40, 30, None])
    """
    count = len(allocates)
    # (a part equal for every event separates nothing: one device, the usual case, is one
    # sort of the addresses)
    parts = [np.asarray(part) for part in keys]
    parts = [part for part in parts if count and (part != part[0]).any()]
    if not parts:
        by_key = np.arange(count)
    elif len(parts) == 1:
        by_key = np.argsort(parts[0], kind="stable")
    else:
        by_key = np.lexsort(parts[::-1])   # (stable: time order within a key)
    after, before = by_key[1:], by_key[:-1]
    same_key = np.ones(len(after), dtype=bool)
    for part in parts:
        same_key &= part[after] == part[before]
    ends = allocates[before] & same_key   # the next event of an allocation's key ends its block
    freeing = np.zeros(count, dtype=bool)
    freeing[after] = ends & ~allocates[after]
    freed_at = np.full(count, -1, dtype=np.int64)
    freed_at[before[ends]] = after[ends]
    return Pairing(np.asarray(allocates, dtype=bool), freed_at, freeing)


def key_codes(values: Iterable[object]) -> np.ndarray:
    """Per value (of any hashable kind: names, ints beyond int64), a number that is the same
    for equal values: a key part for :func:`pair_events`.

    >>> key_codes(["GPU_0_bfc", "cpu", "GPU_0_bfc", 2**70]).tolist()
    [0, 1, 0, 2]
    """
    return coded_column(values)[1]
