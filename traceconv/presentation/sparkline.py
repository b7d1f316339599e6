"""A terminal sparkline: a row of block characters, one per time bucket."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

BARS = "▁▂▃▄▅▆▇█"


def bucket_peaks(times: np.ndarray, levels: np.ndarray, start: int, end: int,
                 width: int) -> list[int]:
    """The highest level of a step function (``levels[i]`` from ``times[i]``) in each of
    ``width`` equal buckets of ``[start, end]``.

    >>> bucket_peaks(np.array([0, 5]), np.array([3, 7]), 0, 9, 2)
    [3, 7]
    """
    edges = np.linspace(start, end, width + 1)
    peaks = []
    for left, right in zip(edges[:-1], edges[1:], strict=True):
        first = max(int(np.searchsorted(times, left, side="right")) - 1, 0)
        last = max(int(np.searchsorted(times, right, side="right")), first + 1)
        peaks.append(int(levels[first:last].max()) if len(levels) else 0)
    return peaks


def sparkline(values: Sequence[int], top: int | None = None) -> str:
    """``values`` as bars scaled to ``top`` (default: their maximum).

    >>> sparkline([0, 4, 8]), sparkline([1, 2], top=16)
    ('▁▅█', '▁▂')
    """
    top = top or max(values, default=0)
    if top <= 0:
        return BARS[0] * len(values)
    return "".join(BARS[min(len(BARS) - 1, int(v * len(BARS) / top))] if v > 0 else BARS[0]
                   for v in values)
