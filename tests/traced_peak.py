"""The peak of Python allocations while a call runs (tracemalloc), for the tests that
bound a read's memory by its input."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def traced_peak(call: Callable[[], T]) -> tuple[T, int]:
    """``call()``'s result and the most bytes Python held at once while it ran.

    >>> result, peak = traced_peak(lambda: len(bytearray(1 << 20)))
    >>> result, peak >= 1 << 20
    (1048576, True)
    """
    tracemalloc.start()
    try:
        result = call()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
