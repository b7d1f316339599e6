"""Many values used as keys at once: where each first came, and its code among the distinct
ones, in one C-level pass over the values (no Python call per value)."""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from itertools import count
from typing import Any

import numpy as np


def first_places(values: Iterable[Hashable], seen: dict[Any, int] | None = None) -> np.ndarray:
    """For each value, the index at which it first came (``seen``, when given, is filled with
    value → that index). ``TypeError`` when a value is not hashable (a list, a dict).

    >>> first_places(["b", "a", "b", "c"]).tolist()
    [0, 1, 0, 3]
    """
    seen = {} if seen is None else seen
    return np.fromiter(map(seen.setdefault, values, count()), dtype=np.int64)


def first_codes(values: Iterable[Hashable]) -> tuple[np.ndarray, np.ndarray]:
    """Each value's index among the distinct values (in first-seen order), and where each
    distinct value first came.

    >>> codes, firsts = first_codes(["b", "a", "b"]); codes.tolist(), firsts.tolist()
    ([0, 1, 0], [0, 1])
    """
    first = first_places(values)
    # a value's first place is where first[i] == i; numbering those in order numbers the
    # distinct values in first-seen order (no sort)
    firsts = np.flatnonzero(first == np.arange(len(first)))
    code = np.empty(len(first), dtype=np.int64)
    code[firsts] = np.arange(len(firsts))
    return code[first], firsts


def factorize(values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """Each value's index among the distinct values, and those values in first-seen order.

    >>> codes, distinct = factorize(["b", "a", "b"]); codes.tolist(), distinct
    ([0, 1, 0], ['b', 'a'])
    """
    codes, firsts = first_codes(values)
    return codes, [values[i] for i in firsts.tolist()]
