"""How many bytes of the input each window holds, known before the second pass, so that
``split --target-size`` can group consecutive windows into pieces of about that size and
route every event straight to its piece (cuts, flows and carried memory blocks are then
counted at the pieces' ends, not at every step inside a piece).

The first pass adds each event's text length to a histogram over time of fixed size
(:data:`BUCKETS` counts) whose range doubles when an event falls outside it, so memory
stays the same whatever the input, and the order of events does not matter. A window's
size is read off the histogram at its bounds: exact to one bucket at each end.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .windows import Window

BUCKETS = 1 << 16
# the size --then gives its pieces when --target-size is not given: about four pieces per
# worker (a late piece does not leave the others idle), none below MIN_AUTO_TARGET (each
# conversion pays a fixed cost: a process's imports, a trace's tables)
PIECES_PER_WORKER = 4
MIN_AUTO_TARGET = 32_000_000


class ByteHistogram:
    """Bytes of event text by start time.

    >>> h = ByteHistogram()
    >>> h.add(np.array([0.0, 10.0, 20.0, 30.0]), np.array([5, 5, 5, 7]))
    >>> h.between(-math.inf, 15.0), h.between(15.0, math.inf), h.total
    (10, 12, 22)
    >>> h.add(np.array([-1e6]), np.array([1]))   # the range doubles until it takes it in
    >>> h.between(-math.inf, -10.0), h.between(-10.0, math.inf), h.width > 15
    (1, 22, True)
    """

    def __init__(self) -> None:
        self.counts = np.zeros(BUCKETS, dtype=np.int64)
        self.origin = 0.0
        self.width = 0.0   # 0 until the first times arrive
        self.total = 0

    def add(self, times: np.ndarray, sizes: np.ndarray) -> None:
        """Count ``sizes`` bytes at ``times`` (file units; not finite ones are skipped)."""
        keep = np.isfinite(times)
        times, sizes = times[keep], sizes[keep]
        if not len(times):
            return
        low, high = float(times.min()), float(times.max())
        if self.width == 0.0:
            self.origin = low
            self.width = max((high - low) / (BUCKETS - 1), abs(low) * 1e-12, 1e-9)
        while low < self.origin:
            self._grow(left=True)
        while high >= self.origin + BUCKETS * self.width:
            self._grow(left=False)
        at = np.clip(((times - self.origin) / self.width).astype(np.int64), 0, BUCKETS - 1)
        self.counts += np.bincount(at, weights=sizes, minlength=BUCKETS).astype(np.int64)
        self.total += int(sizes.sum())

    def _grow(self, left: bool) -> None:
        """Double the range: pairs of buckets merge; the old range is one half of the new."""
        merged = self.counts.reshape(-1, 2).sum(axis=1)
        empty = np.zeros(BUCKETS // 2, dtype=np.int64)
        if left:
            self.counts = np.concatenate([empty, merged])
            self.origin -= BUCKETS * self.width
        else:
            self.counts = np.concatenate([merged, empty])
        self.width *= 2

    def between(self, start: float, end: float) -> int:
        """Bytes of the events starting in ``[start, end)``, to a bucket at each end."""
        if self.width == 0.0:
            return 0

        def edge(t: float) -> int:
            if t == -math.inf:
                return 0
            if t == math.inf:
                return BUCKETS
            return int(np.clip(math.floor((t - self.origin) / self.width), 0, BUCKETS))

        return int(self.counts[edge(start):edge(end)].sum())


def auto_target(input_bytes: int, workers: int) -> int:
    """The piece size ``--then`` uses when none is given (the rule ``split --help`` states).

    >>> auto_target(353_000_000, 2), auto_target(1_000_000, 8)
    (44125000, 32000000)
    """
    return max(MIN_AUTO_TARGET, input_bytes // (PIECES_PER_WORKER * max(workers, 1)))


def group_windows(windows: Sequence[Window], sizes: Sequence[int],
                  target: int) -> list[tuple[int, int]]:
    """Runs ``(first, last)`` of consecutive windows, each of at most ``target`` bytes
    unless one window alone is larger (a window is never cut further).

    >>> w = [Window(i, f"step{i}", float(i), float(i + 1)) for i in range(5)]
    >>> group_windows(w, [40, 40, 40, 90, 10], target=100)
    [(0, 1), (2, 2), (3, 4)]
    """
    groups: list[tuple[int, int]] = []
    first, held = 0, 0
    for i, size in enumerate(sizes):
        if i > first and held + size > target:
            groups.append((first, i - 1))
            first, held = i, 0
        held += size
    if windows:
        groups.append((first, len(windows) - 1))
    return groups


def merged(windows: Sequence[Window], groups: Sequence[tuple[int, int]]) -> list[Window]:
    """One window per group, from its first window's start to its last one's end, labelled
    by both (``step2-step9``).

    >>> w = [Window(0, "before", end=1.0), Window(1, "step1", 1.0, 2.0), Window(2, "step2", 2.0)]
    >>> [(m.label, m.start, m.end) for m in merged(w, [(0, 0), (1, 2)])]
    [('before', -inf, 1.0), ('step1-step2', 1.0, inf)]
    """
    out = []
    for index, (first, last) in enumerate(groups):
        a, b = windows[first], windows[last]
        label = a.label if first == last else f"{a.label}-{b.label}"
        out.append(Window(index, label, a.start, b.end))
    return out
