"""The peak of Python allocations while a call runs (tracemalloc), for the tests that
bound a read's memory by its input."""

from __future__ import annotations

import gc
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
    result, _, peak = traced_memory(call)
    return result, peak


def traced_memory(call: Callable[[], T]) -> tuple[T, int, int]:
    """``call()``'s result, the bytes Python still held when it returned (what the result
    keeps) and the most it held at once while it ran.

    >>> kept, held, peak = traced_memory(lambda: (bytearray(1 << 20), len(bytearray(4 << 20))))
    >>> held >= 1 << 20, peak >= 5 << 20
    (True, True)
    """
    # Garbage left by earlier code (a discarded trace's reference cycles) would otherwise be
    # freed at whatever moment the cyclic collector runs inside ``call``: the peak would
    # depend on what ran before, not on ``call``.
    gc.collect()
    tracemalloc.start()
    try:
        result = call()
        held, peak = tracemalloc.get_traced_memory()
        return result, held, peak
    finally:
        tracemalloc.stop()
