"""Where memory is allocated: memory blocks grouped by allocation site, ranked by peak bytes.

A site is what a reader recorded as the block's origin: ``args["site"]`` (an allocator
snapshot's innermost user frame), else the owning op, else the block's name. A site's peak
is the most bytes its own blocks held at one instant, which is what to shrink to lower the
trace's peak (total bytes allocated over time would rank a small, hot loop first).
"""

from __future__ import annotations

from collections.abc import Iterable
from copy import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..model import MemoryBlock
from ..model.block_table import BlockTable
from ..model.memory import live_bytes_by_group
from ..numbers import int64_total

UNNAMED = "(unnamed)"   # the site of a block that names no origin at all


@dataclass(frozen=True)
class AllocationSite:
    """One site: its peak live bytes (and when), how many blocks, and their total bytes.
    Sizes that sum past int64 are at its edge, ``beyond_int64`` counting those figures
    (a peak: the first moment it passed int64)."""

    site: str
    peak_bytes: int
    peak_ns: int
    blocks: int
    bytes: int
    beyond_int64: int = 0

    def as_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            "site": self.site, "peak_bytes": self.peak_bytes, "peak_ns": self.peak_ns,
            "blocks": self.blocks, "bytes": self.bytes}
        if self.beyond_int64:   # (said only where it happened: the usual object unchanged)
            found["figures_beyond_int64"] = self.beyond_int64
        return found


def site_of(block: MemoryBlock) -> str:
    """The site a block is attributed to (see the module docstring); an owning op shows as
    its name (``owner_name``).

    >>> site_of(MemoryBlock(0, 8, args={"site": "net.py:3 forward"}, name="x"))
    'net.py:3 forward'
    >>> site_of(MemoryBlock(0, 8, name="conv1:o0"))
    'conv1:o0'
    """
    return _site(block.args.get("site") if block.args else None, block.owner_name, block.name)


def _site(recorded: Any, owner_name: str | None, name: str) -> str:
    return str(recorded or owner_name or name or UNNAMED)


def block_sites(blocks: BlockTable) -> tuple[list[str], np.ndarray]:
    """:func:`site_of` every block, from the table's columns: (the distinct sites, per block
    the number of its site).

    >>> sites, numbers = block_sites(BlockTable([MemoryBlock(0, 8, name="a"),
    ...     MemoryBlock(8, 8, owner_name="mm"), MemoryBlock(16, 8, args={"site": "a"})]))
    >>> [sites[n] for n in numbers.tolist()]
    ['a', 'mm', 'a']
    """
    values, owners = blocks.coded("owner_name")
    pairs, of_block = np.unique(np.stack([owners, blocks.coded("name")[1]]), axis=1,
                                return_inverse=True)
    named = [_site(None, values[owner], values[name]) for owner, name in pairs.T.tolist()]
    of_block = of_block.reshape(-1)
    for row, args in blocks.held_args():   # (a recorded site comes first)
        if args.get("site"):
            of_block[row] = len(named)
            named.append(_site(args["site"], None, ""))
    sites, number = np.unique(np.array(named, dtype=object), return_inverse=True)
    return sites.tolist(), number.reshape(-1)[of_block] if len(of_block) else of_block


def top_allocation_sites(blocks: Iterable[MemoryBlock], top: int = 10) -> list[AllocationSite]:
    """The ``top`` sites by peak live bytes (``top`` 0 = all), biggest first.

    >>> blocks = [MemoryBlock(0, 100, 0, 10, name="a"), MemoryBlock(200, 100, 5, 15, name="a"),
    ...           MemoryBlock(400, 150, 20, 30, name="b")]
    >>> [(s.site, s.peak_bytes, s.blocks, s.bytes) for s in top_allocation_sites(blocks)]
    [('a', 200, 2, 200), ('b', 150, 1, 150)]
    >>> top_allocation_sites([MemoryBlock(0, 2**62, 0, 9), MemoryBlock(8, 2**62, 5)])[0]
    AllocationSite(site='(unnamed)', peak_bytes=9223372036854775807, peak_ns=5, blocks=2, \
bytes=9223372036854775807, beyond_int64=2)
    """
    table = blocks if isinstance(blocks, BlockTable) else BlockTable(map(copy, blocks))
    names, of_block = block_sites(table)
    sizes = table.numbers("size")
    order = np.argsort(of_block, kind="stable")
    bounds = np.searchsorted(of_block[order], np.arange(len(names) + 1))
    sites = []
    for site, curve, lo, hi in zip(names, live_bytes_by_group(table, of_block),
                                   bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        (peak_ns, peak), (total, moved) = curve.peak, int64_total(sizes[order[lo:hi]].tolist())
        sites.append(AllocationSite(site, peak, peak_ns, hi - lo, total,
                                    int(curve.beyond_int64 > 0) + moved))
    sites.sort(key=lambda s: (-s.peak_bytes, s.site))
    return sites[:top] if top else sites
