"""Advice rules, one module per family; :mod:`..registry` lists them all."""

from __future__ import annotations

from collections import Counter


def pct(share: float) -> str:
    """A 0..1 share as a percentage for titles.

    >>> pct(0.4567)
    '45.7%'
    """
    return f"{100 * share:.1f}%"


def grade(share: float, medium: float, high: float) -> str | None:
    """``high`` / ``medium`` by thresholds, None below both.

    >>> grade(0.5, 0.3, 0.6), grade(0.7, 0.3, 0.6), grade(0.1, 0.3, 0.6)
    ('medium', 'high', None)
    """
    if share >= high:
        return "high"
    return "medium" if share >= medium else None


def most_common(names: list[str], n: int) -> list[str]:
    """The ``n`` most frequent names, ties by name, so a report never depends on hash order.

    >>> most_common(["b", "a", "b", "c", "a"], 2)
    ['a', 'b']
    """
    counts = Counter(names)
    return sorted(counts, key=lambda name: (-counts[name], name))[:n]
