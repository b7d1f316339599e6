"""Appending numpy values to the model's typed columns (``array.array``).

One way for every reader and transformation: the values converted to the column's type
and appended from the array's own memory, with no ``tobytes`` copy between.
"""

from __future__ import annotations

from array import array
from typing import Any

import numpy as np


def extend_typed(column: array[Any], values: Any) -> None:
    """Append ``values`` (an array or a sequence of numbers) to ``column``, converted to
    its type as numpy converts (``astype``).

    >>> column = array("i"); extend_typed(column, np.array([1, 2], dtype=np.int64)); column
    array('i', [1, 2])
    """
    column.frombytes(np.ascontiguousarray(values, dtype=column.typecode).data.cast("B"))


def read_only_view(column: Any) -> np.ndarray:
    """``column`` (an ``array.array`` or a frozen trace's
    :class:`~traceconv.model.frozen.FrozenArray`) as a read-only numpy array sharing its
    memory (an array cannot grow while the view is alive; a frozen column's view cannot be
    made writeable).

    >>> view = read_only_view(array("q", [5])); view.tolist(), view.flags.writeable
    ([5], False)
    """
    view = np.asarray(column)
    view.flags.writeable = False
    return view
