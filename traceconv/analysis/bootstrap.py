"""The median change between two sets of samples, with a 95 % confidence interval from a
seeded bootstrap: the same inputs always give the same interval.

Samples are steps (or runs); each row of ``a`` and ``b`` is one quantity (an op's time in
each step, a kind's, the step total). The bootstrap redraws each side's samples with
replacement ``RESAMPLES`` times and takes the 2.5th and 97.5th percentiles of the change of
the medians. With one sample a side every redraw is that sample: the interval is the point.

Why it is fast: the median of a redraw only needs order statistics. Sorting each row's
samples once, and each redraw's positions once, the redraw's sorted values are the sorted
row read at the sorted positions, so its median is one or two lookups (no per-redraw sort).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
SEED = 36            # fixed: the report is the same on every run
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Changes:
    """Per row: the medians of A and B, the change of the medians (B − A) and its interval
    (ns; floats, as a median of an even count is a half-way value)."""

    median_a: np.ndarray
    median_b: np.ndarray
    low: np.ndarray
    high: np.ndarray
    samples_a: int
    samples_b: int

    @property
    def change(self) -> np.ndarray:
        return self.median_b - self.median_a


def _redraw_medians(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(rows, RESAMPLES): each row's median in each redraw of its samples (columns)."""
    n = values.shape[1]
    ordered = np.sort(values, axis=1).astype(np.float64)
    positions = np.sort(rng.integers(0, n, (RESAMPLES, n)), axis=1)
    low, high = positions[:, (n - 1) // 2], positions[:, n // 2]
    return (ordered[:, low] + ordered[:, high]) / 2


def median_change(a: np.ndarray, b: np.ndarray, seed: int = SEED) -> Changes:
    """The median change from ``a`` (rows × samples of A) to ``b`` (rows × samples of B),
    with its interval.

    >>> a = np.array([[10, 11, 9, 10, 12, 10]]); b = a * 2
    >>> c = median_change(a, b); c.change.tolist(), c.low.tolist(), c.high.tolist()
    ([10.0], [8.5], [13.0])
    >>> c = median_change(np.array([[5]]), np.array([[7]])); c.low.tolist(), c.high.tolist()
    ([2.0], [2.0])
    """
    if a.shape[0] != b.shape[0] or not a.shape[1] or not b.shape[1]:
        raise ValueError("both sides need the same rows and at least one sample")
    rng = np.random.default_rng(seed)
    median_a, median_b = np.median(a, axis=1), np.median(b, axis=1)
    drawn = _redraw_medians(b, rng) - _redraw_medians(a, rng)
    tail = 100 * (1 - CONFIDENCE) / 2
    low, high = np.percentile(drawn, [tail, 100 - tail], axis=1)
    return Changes(median_a, median_b, low, high, a.shape[1], b.shape[1])
