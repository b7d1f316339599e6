"""Where memory is allocated: memory blocks grouped by allocation site, ranked by peak bytes.

A site is what a reader recorded as the block's origin: ``args["site"]`` (an allocator
snapshot's innermost user frame), else the owning op, else the block's name. A site's peak
is the most bytes its own blocks held at one instant, which is what to shrink to lower the
trace's peak (total bytes allocated over time would rank a small, hot loop first).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from ..model import MemoryBlock
from ..model.memory import live_bytes

UNNAMED = "(unnamed)"   # the site of a block that names no origin at all


@dataclass(frozen=True)
class AllocationSite:
    """One site: its peak live bytes (and when), how many blocks, and their total bytes."""

    site: str
    peak_bytes: int
    peak_ns: int
    blocks: int
    bytes: int

    def as_dict(self) -> dict[str, object]:
        return {"site": self.site, "peak_bytes": self.peak_bytes, "peak_ns": self.peak_ns,
                "blocks": self.blocks, "bytes": self.bytes}


def site_of(block: MemoryBlock) -> str:
    """The site a block is attributed to (see the module docstring); an owning op shows as
    its name (``owner_name``).

    >>> site_of(MemoryBlock(0, 8, args={"site": "net.py:3 forward"}, name="x"))
    'net.py:3 forward'
    >>> site_of(MemoryBlock(0, 8, name="conv1:o0"))
    'conv1:o0'
    """
    site = block.args.get("site") if block.args else None
    return str(site or block.owner_name or block.name or UNNAMED)


def top_allocation_sites(blocks: Iterable[MemoryBlock], top: int = 10) -> list[AllocationSite]:
    """The ``top`` sites by peak live bytes (``top`` 0 = all), biggest first.

    >>> blocks = [MemoryBlock(0, 100, 0, 10, name="a"), MemoryBlock(200, 100, 5, 15, name="a"),
    ...           MemoryBlock(400, 150, 20, 30, name="b")]
    >>> [(s.site, s.peak_bytes, s.blocks, s.bytes) for s in top_allocation_sites(blocks)]
    [('a', 200, 2, 200), ('b', 150, 1, 150)]
    """
    groups: dict[str, list[MemoryBlock]] = defaultdict(list)
    all_blocks = list(blocks)
    for block in all_blocks:
        groups[site_of(block)].append(block)
    start = min((t for b in all_blocks for t in (b.alloc_ns, b.free_ns) if t is not None),
                default=0)
    sites = []
    for site, mine in groups.items():
        peak_ns, peak = live_bytes(mine, start=start).peak
        sites.append(AllocationSite(site, peak, peak_ns, len(mine), sum(b.size for b in mine)))
    sites.sort(key=lambda s: (-s.peak_bytes, s.site))
    return sites[:top] if top else sites
