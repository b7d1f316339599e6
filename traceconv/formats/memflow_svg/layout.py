"""The gap-compressed address axis: disjoint address regions stacked with marked breaks.

A CPU process mixes heap (``0x55…``) and mmap (``0x7f…``) addresses ~45 TB apart; a linear
axis makes every block invisible. Here each address space ``(device, pool)`` is cut at its
gaps larger than :data:`GAP_FRACTION` of the bytes in use, largest first, as long as the
space's share of :data:`MAX_REGIONS` lasts. The pieces ("regions") are drawn
bottom-up in address order with a fixed-size break between them, and each region gets a
height proportional to its span (with a floor, so a lone small region stays readable).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Gaps smaller than this fraction of the bytes in use in their address space are never cut.
GAP_FRACTION = 0.05
# Regions in the whole picture (every address space gets at least one): more breaks than
# this read as noise, not as an axis.
MAX_REGIONS = 12
BREAK_PX = 10.0


@dataclass(frozen=True)
class Region:
    """A contiguous address range of one space, drawn from ``y_bottom`` up to ``y_top``."""

    space: int
    low: int
    high: int
    y_bottom: float
    y_top: float

    @property
    def span(self) -> int:
        return self.high - self.low

    def y(self, address: np.ndarray | float) -> np.ndarray | float:
        """Pixel y of ``address`` (higher addresses are higher up, i.e. smaller y)."""
        scale = (self.y_bottom - self.y_top) / max(self.span, 1)
        return self.y_bottom - (np.asarray(address, np.float64) - self.low) * scale


@dataclass(frozen=True)
class AddressAxis:
    regions: list[Region]
    region_of: np.ndarray   # per block: index into regions
    skipped: int            # bytes of address space left out by the breaks

    def y_range(self, address: np.ndarray, size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(top, bottom) pixel y of each block's address range."""
        top = np.empty(len(address))
        bottom = np.empty(len(address))
        for index, region in enumerate(self.regions):
            rows = self.region_of == index
            bottom[rows] = region.y(address[rows])
            top[rows] = region.y(address[rows] + size[rows])
        return top, bottom


def split_regions(space: np.ndarray, address: np.ndarray, size: np.ndarray,
                  gap_fraction: float = GAP_FRACTION, max_regions: int = MAX_REGIONS
                  ) -> tuple[list[tuple[int, int, int]], np.ndarray, int]:
    """Cut each address space at its largest gaps (see the module docstring).

    Returns ``[(space, low, high)]`` in drawing order (space, then address), the region index
    of each block, and the bytes skipped by the cuts.

    >>> regions, of, skipped = split_regions(np.array([0, 0, 0]),
    ...     np.array([0x1000, 0x1100, 0x7f0000000000]), np.array([256, 256, 4096]))
    >>> [(s, hex(lo), hex(hi)) for s, lo, hi in regions], of.tolist(), skipped > 1 << 40
    ([(0, '0x1000', '0x1200'), (0, '0x7f0000000000', '0x7f0000001000')], [0, 0, 1], True)
    """
    regions: list[tuple[int, int, int]] = []
    region_of = np.zeros(len(address), np.int64)
    skipped = 0
    spaces = np.unique(space).tolist()
    max_cuts = max(1, max_regions // max(len(spaces), 1)) - 1
    for s in spaces:
        rows = np.flatnonzero(space == s)
        order = rows[np.argsort(address[rows], kind="stable")]
        lo, hi = address[order], address[order] + size[order]
        reach = np.maximum.accumulate(hi)               # union of intervals, left to right
        gaps = lo[1:] - reach[:-1]                       # > 0 where the union has a hole
        reach_before = np.concatenate((lo[:1], reach[:-1]))
        used = int(np.maximum(0, hi - np.maximum(lo, reach_before)).sum())
        cuts = _choose_cuts(gaps, used, gap_fraction, max_cuts)
        skipped += int(gaps[cuts].sum())
        starts = np.concatenate(([0], cuts + 1))
        ends = np.concatenate((cuts + 1, [len(order)]))
        for first, stop in zip(starts.tolist(), ends.tolist(), strict=True):
            region_of[order[first:stop]] = len(regions)
            regions.append((s, int(lo[first]), int(reach[stop - 1])))
    return regions, region_of, skipped


def _choose_cuts(gaps: np.ndarray, used: int, gap_fraction: float, max_cuts: int) -> np.ndarray:
    """Indices ``i`` of the gaps (between sorted blocks ``i`` and ``i + 1``) to cut.

    >>> _choose_cuts(np.array([5, 900, -3, 400, 60]), 1000, 0.05, 2).tolist()
    [1, 3]
    """
    largest_first = np.argsort(-gaps, kind="stable")[:max_cuts]
    return np.sort(largest_first[gaps[largest_first] > gap_fraction * max(used, 1)])


def address_axis(space: np.ndarray, address: np.ndarray, size: np.ndarray,
                 top: float, bottom: float) -> AddressAxis:
    """Lay the regions of the blocks out between pixel rows ``top`` and ``bottom``.

    >>> axis = address_axis(np.array([0, 0]), np.array([0, 1 << 40]), np.array([100, 300]),
    ...                     0.0, 210.0)
    >>> [(r.low, r.high, round(r.y_bottom), round(r.y_top)) for r in axis.regions]
    [(0, 100, 210, 152), (1099511627776, 1099511628076, 142, 0)]
    """
    spans, region_of, skipped = split_regions(space, address, size)
    n = len(spans)
    if n == 0:
        return AddressAxis([], region_of, 0)
    breaks = BREAK_PX * (n - 1)
    available = max(bottom - top - breaks, float(n))
    floor = min(16.0, available / n / 2)   # room for a label and a visible block
    extents = np.array([max(hi - lo, 1) for _, lo, hi in spans], np.float64)
    heights = floor + (available - n * floor) * extents / extents.sum()
    regions, y = [], bottom
    for (s, lo, hi), h in zip(spans, heights.tolist(), strict=True):
        regions.append(Region(s, lo, hi, y, y - h))
        y -= h + BREAK_PX
    return AddressAxis(regions, region_of, skipped)


@dataclass(frozen=True)
class TimeAxis:
    """Linear time → pixel x over the window ``[start, end]``."""

    start: int
    end: int
    left: float
    right: float

    def x(self, t: np.ndarray | int) -> np.ndarray | float:
        scale = (self.right - self.left) / max(self.end - self.start, 1)
        # Subtract in integers first: epoch nanoseconds lose precision as float64.
        return self.left + (np.asarray(t, np.int64) - self.start).astype(np.float64) * scale
