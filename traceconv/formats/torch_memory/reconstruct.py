"""Memory blocks from byte counts that carry no tensor ids or addresses.

PyTorch's memory-timeline export says "N bytes of category C appeared / went away at t", but
not which tensor or where. To draw it as blocks we pair each free with a live block of the
same category — the most recent one of exactly that size, else the most recent ones,
splitting the last if needed (last in, first out, as autograd frees activations) — and place
blocks at logical offsets with a best-fit allocator. Live bytes per category are exactly
those of the export; the block identities and offsets are a reconstruction, said so in
diagnostics.

A block's numbers are judged by the trace builder's rule for each, as every reader's are
(:mod:`traceconv.model.builder`): its size as stated (past int64: left out, counted as
``model.memory_block_unreadable``; negative: 0 bytes, ``model.negative_length``), its
offset, which the sizes placed before it make (past int64: left out, the same code). A
block of no positive size that int64 holds takes no room on the logical heap.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from dataclasses import dataclass

from ...model import MemoryBlock
from ...numbers import INT64_MAX


class BestFit:
    """A best-fit allocator over logical offsets starting at 0 (smallest hole that fits).

    Holes are kept twice, by start (to merge neighbours on free) and by (size, start) (to
    find the best hole by bisection), so each call is a few bisections and list moves.

    >>> heap = BestFit(); a, b = heap.alloc(64), heap.alloc(32); heap.free(a, 64)
    >>> a, b, heap.alloc(16), heap.alloc(64)
    (0, 64, 0, 96)
    """

    def __init__(self) -> None:
        self._holes: dict[int, int] = {}                 # start -> size, below the top
        self._starts: list[int] = []                     # sorted
        self._by_size: list[tuple[int, int]] = []        # sorted (size, start)
        self.top = 0

    def alloc(self, size: int) -> int:
        i = bisect.bisect_left(self._by_size, (size, -1))
        if i == len(self._by_size):
            address, self.top = self.top, self.top + size
            return address
        hole, address = self._by_size[i]
        self._remove(address)
        if hole > size:
            self._add(address + size, hole - size)
        return address

    def free(self, address: int, size: int) -> None:
        i = bisect.bisect_left(self._starts, address)
        after = self._starts[i] if i < len(self._starts) else None
        if after == address + size:                      # merge with the hole above
            size += self._remove(after)
        before = self._starts[i - 1] if i > 0 else None
        if before is not None and before + self._holes[before] == address:
            address, size = before, size + self._remove(before)
        if address + size == self.top:                   # give the tail back
            self.top = address
        else:
            self._add(address, size)

    def _add(self, start: int, size: int) -> None:
        self._holes[start] = size
        bisect.insort(self._starts, start)
        bisect.insort(self._by_size, (size, start))

    def _remove(self, start: int) -> int:
        size = self._holes.pop(start)
        del self._starts[bisect.bisect_left(self._starts, start)]
        del self._by_size[bisect.bisect_left(self._by_size, (size, start))]
        return size


@dataclass
class _Live:
    address: int
    size: int
    alloc_ns: int | None
    category: str
    serial: int
    dead: bool = False


class Reconstruction:
    """Builds blocks from create/destroy byte counts, one category at a time.

    >>> r = Reconstruction(pool="timeline")
    >>> _ = r.create(0, 64, "activation"); _ = r.create(5, 32, "activation")
    >>> r.destroy(9, 64, "activation"), r.unmatched
    (0, 0)
    >>> [(b.address, b.size, b.alloc_ns, b.free_ns) for b in r.finish()]
    [(0, 64, 0, 9), (64, 32, 5, None)]
    """

    def __init__(self, device: str = "", pool: str = "") -> None:
        self.device, self.pool = device, pool
        self.heap = BestFit()
        self._by_size: dict[tuple[str, int], list[_Live]] = defaultdict(list)
        self._by_category: dict[str, list[_Live]] = defaultdict(list)
        self._serials: dict[str, int] = defaultdict(int)
        self.blocks: list[MemoryBlock] = []
        self.unmatched = 0   # bytes freed that no live block of the category could cover
        self.split = 0       # frees that took part of a block
        self.impossible_frees = 0   # frees of no size a block can have (<= 0, past int64)
        self.backwards = 0      # rows earlier than the one before (read at its time)
        self.negative_totals = 0   # category totals below zero (read as 0)
        self._latest: int | None = None

    def in_order(self, t: int) -> int:
        """``t``, or the latest time seen when ``t`` is earlier (counted in ``backwards``):
        rows pair in file order, so a free never comes before its allocation.

        >>> r = Reconstruction(); r.in_order(5), r.in_order(3), r.in_order(9), r.backwards
        (5, 5, 9, 1)
        """
        if self._latest is not None and t < self._latest:
            self.backwards += 1
            return self._latest
        self._latest = t
        return t

    def create(self, t: int | None, size: int, category: str,
               address: int | None = None) -> int | None:
        """A block of ``size`` bytes appears at ``t`` (None: before the trace); its offset.
        One of no positive size that int64 holds is handed over as stated, alive to the end
        and taking no room (the builder judges it, see the module text); None returned.

        ``address`` places it on storage that it already holds (no allocation).

        >>> r = Reconstruction(); r.create(0, 2**64, "input"), r.create(0, 8, "input")
        (None, 0)
        >>> [(b.address, b.size) for b in r.finish()]
        [(0, 18446744073709551616), (0, 8)]
        """
        self._serials[category] += 1
        if not 0 < size <= INT64_MAX:
            self.blocks.append(self._block(self.heap.top, size, category, t, None))
            return None
        if address is None:
            address = self.heap.alloc(size)
        live = _Live(address, size, t, category, self._serials[category])
        self._by_size[(category, size)].append(live)
        self._by_category[category].append(live)
        return address

    def destroy(self, t: int, size: int, category: str) -> int | None:
        """``size`` bytes of ``category`` go away at ``t``; the offset when one block matched.

        >>> r = Reconstruction(); r.destroy(3, -64, "input"), r.destroy(3, 64, "input")
        (None, None)
        >>> r.impossible_frees, r.unmatched
        (1, 64)
        """
        if not 0 < size <= INT64_MAX:   # (no block has it: one of them taken would be wrong)
            self.impossible_frees += 1
            return None
        live = self._take_exact(category, size)
        if live is not None:
            self._end(live, t)
            return live.address
        remaining = size
        stack = self._by_category[category]
        while remaining > 0:
            while stack and stack[-1].dead:
                stack.pop()
            if not stack:
                self.unmatched += remaining
                return None
            live = stack[-1]
            if live.size <= remaining:
                remaining -= live.size
                self._end(live, t)
            else:   # free the tail of the block, keep its head alive
                self.split += 1
                self._emit(live, live.address + live.size - remaining, remaining, t)
                self.heap.free(live.address + live.size - remaining, remaining)
                self._by_size[(category, live.size - remaining)].append(live)
                live.size -= remaining
                remaining = 0
        return None

    def retag(self, t: int, size: int, old: str, new: str) -> None:
        """A tensor of ``size`` bytes changes category at ``t``, keeping its storage.

        >>> r = Reconstruction(); _ = r.create(0, 8, "input"); r.retag(4, 8, "input", "gradient")
        >>> [(b.address, b.category, b.alloc_ns, b.free_ns) for b in r.finish()]
        [(0, 'input', 0, 4), (0, 'gradient', 4, None)]
        """
        live = self._take_exact(old, size)
        if live is None:
            self.destroy(t, size, old)
            self.create(t, size, new)
            return
        live.dead = True
        self._emit(live, live.address, live.size, t)
        self.create(t, size, new, address=live.address)

    def _take_exact(self, category: str, size: int) -> _Live | None:
        """The most recent live block of ``category`` with exactly ``size`` bytes, if any."""
        same = self._by_size.get((category, size))
        while same and (same[-1].dead or same[-1].size != size):   # freed, or resized by a split
            same.pop()
        return same.pop() if same else None

    def _end(self, live: _Live, t: int) -> None:
        live.dead = True
        self._emit(live, live.address, live.size, t)
        self.heap.free(live.address, live.size)

    def _emit(self, live: _Live, address: int, size: int, t: int | None) -> None:
        self.blocks.append(self._block(address, size, live.category, live.alloc_ns, t,
                                       live.serial))

    def _block(self, address: int, size: int, category: str, alloc_ns: int | None,
               free_ns: int | None, serial: int | None = None) -> MemoryBlock:
        serial = self._serials[category] if serial is None else serial
        return MemoryBlock(address, size, alloc_ns, free_ns, device=self.device,
                           pool=self.pool, name=f"{category} #{serial}", category=category)

    def finish(self) -> list[MemoryBlock]:
        """All blocks, the ones still alive included, ordered by alloc time and offset."""
        for stack in self._by_category.values():
            for live in stack:
                if not live.dead:
                    live.dead = True
                    self._emit(live, live.address, live.size, None)
        return sorted(self.blocks, key=lambda b: (b.alloc_ns is not None, b.alloc_ns or 0,
                                                  b.address))
