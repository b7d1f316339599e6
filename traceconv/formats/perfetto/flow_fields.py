"""The flow fields of slice BEGINs, kept as numpy columns and cut per group of events.

Each flow adds a 10-byte field (tag + fixed64 id) to its source's BEGIN (``flow_ids``)
and, when it runs forward in time, to its target's (``terminating_flow_ids``); a slice
can have several. A dict of bytes per slice row costs a Python object per row up front
(~0.4 µs each: 0.06 s for the 150 k flow ends of a 0.7 M-event H100 trace); here the
fields stay one matrix, and a group of events takes its rows' fields with numpy: as one
matrix when every row has the same number (kernels, launches), else as bytes per row
made a matrix at a time (rows with one field, rows with two, ...).
"""

from __future__ import annotations

import numpy as np

FIELD = 10   # bytes per flow field


class FlowFields:
    """The flow fields of slice rows.

    >>> fields = np.arange(30, dtype=np.uint8).reshape(3, FIELD)   # rows 4, 4, 7
    >>> flows = FlowFields(fields, np.array([4, 4, 7]), 9)
    >>> flows.of(np.array([7, 4])) is None, flows.of(np.array([0, 1])) is None
    (False, True)
    >>> [len(b) for b in flows.of(np.array([7, 4, 0]))]
    [10, 20, 0]
    >>> flows.of(np.array([7, 7])).shape
    (2, 10)
    """

    def __init__(self, fields: np.ndarray, rows: np.ndarray, slices: int) -> None:
        """``fields``: (k, FIELD) uint8, ordered by ``rows`` (the slice row of each)."""
        self.fields = fields
        firsts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]]) if len(rows) else rows
        self.rows = rows[firsts]
        self.first = firsts
        self.count = np.diff(np.r_[firsts, len(rows)])
        self.has = np.zeros(slices, dtype=bool)
        self.has[self.rows] = True

    def of(self, chosen: np.ndarray) -> np.ndarray | list[bytes] | None:
        """The fields of the slice rows ``chosen``: None when none has any, a
        (rows, FIELD * k) uint8 matrix when each has k, else bytes per row."""
        if not self.has[chosen].any():
            return None
        at = np.searchsorted(self.rows, chosen)
        hit = self.has[chosen]   # then the row is found at ``at``
        count = np.zeros(len(chosen), dtype=np.int64)
        count[hit] = self.count[at[hit]]
        if int(count.min()) == int(count.max()):
            return self._matrix(at, int(count[0]))
        out = np.full(len(chosen), b"", dtype=object)
        for width in np.unique(count[hit]).tolist():   # rows with as many fields, at once
            rows = np.flatnonzero(count == width)
            out[rows] = self._matrix(at[rows], width).view(f"V{FIELD * width}").ravel().tolist()
        return out.tolist()

    def _matrix(self, at: np.ndarray, width: int) -> np.ndarray:
        """The fields of the rows at ``at`` of :attr:`rows`, ``width`` each, as a matrix."""
        picked = self.first[at][:, None] + np.arange(width)
        return self.fields[picked].reshape(len(at), FIELD * width)
