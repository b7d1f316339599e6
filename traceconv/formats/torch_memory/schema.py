"""Pydantic models of PyTorch's ``export_memory_timeline`` documents (kineto.md §8).

``.json`` / ``.json.gz``: ``[times_us[], sizes[][]]`` where ``sizes[i]`` holds 9 cumulative
byte counts at ``times[i]``: a leading 0, then one per category in :data:`CATEGORIES` order.
``.raw.json.gz``: a list of ``[t_ns | -1, action, bytes, category]`` rows.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, RootModel

# torch.profiler._memory_profiler category order (_CATEGORY_TO_INDEX); index 7 = None.
CATEGORIES = ("parameter", "optimizer_state", "input", "temporary", "activation", "gradient",
              "autograd_detail", "unknown")


class Action(IntEnum):
    """The ``action`` column of the raw export (torch's ``_ACTION_TO_INDEX``)."""

    PREEXISTING = 1
    CREATE = 2
    INCREMENT_VERSION = 3   # two rows: -bytes in the old category, +bytes in the new one
    DESTROY = 4


def _whole(value: Any) -> Any:
    """A whole number that JSON wrote past 64 bits (orjson reads it as a float) stays a
    number, so the reader drops and counts it as out of range like any other; a fraction
    is still refused.

    >>> _whole(1e30) > 2**64, _whole(1.5), _whole(7)
    (True, 1.5, 7)
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# times and byte counts: any whole number here; the reader keeps the defined range
Whole = Annotated[int, BeforeValidator(_whole)]
SizesRow = Annotated[list[Whole], Field(min_length=len(CATEGORIES) + 1,
                                        max_length=len(CATEGORIES) + 1)]
Category = Annotated[int, Field(ge=0, lt=len(CATEGORIES))]


class MemoryTimeline(RootModel[tuple[list[Whole], list[SizesRow]]]):
    """``[times, sizes]``: times in epoch microseconds, sizes cumulative bytes per category."""


class RawMemoryTimeline(RootModel[list[tuple[Whole, Action, Whole, Category]]]):
    """``[[t_ns or -1, action, bytes, category], ...]`` in event order."""
