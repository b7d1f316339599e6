"""The track, name id and category id of many typed records at once.

A piece of a large trace holds thousands of slices but only a few distinct (name,
category, pid, tid) combinations. Each new combination is resolved once, in the order the
records come (so tracks and strings are made in the order the per-event loop makes them),
and every record is then looked up at C speed: one pass to take the keys, one dict lookup
per record, numpy for the three columns.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from itertools import compress, repeat
from typing import Any

import numpy as np

Key = tuple[Any, Any, Any, Any]   # (name, category, pid, tid) as the records hold them
LIMIT = 1 << 16   # combinations remembered (a trace of unique names must not grow this)


class RecordKeys:
    """Records' (name, category, pid, tid) combinations seen so far, and what they resolved
    to (the resolver is given per call: holding the reader's method would make a cycle that
    keeps the reader alive until the garbage collector runs).

    >>> made = []
    >>> def resolve(key): made.append(key); return len(made), 10 + len(made), 0
    >>> class R:
    ...     def __init__(self, name): self.name, self.cat, self.pid, self.tid = name, "op", 1, 1
    >>> [column.tolist() for column in RecordKeys().columns([R("a"), R("b"), R("a")], resolve)]
    [[1, 2, 1], [11, 12, 11], [0, 0, 0]]
    >>> len(made)
    2
    """

    def __init__(self) -> None:
        self._codes: dict[Key, int] = {}
        self._tracks, self._names, self._categories = array("i"), array("i"), array("i")

    def columns(self, records: Sequence[Any], resolve: Callable[[Key], tuple[int, int, int]]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(track, name id, category id) of each record, as int32 arrays; ``resolve`` gives
        them for one new combination."""
        keys = [(r.name, r.cat, r.pid, r.tid) for r in records]
        codes = self._codes
        at = np.array(list(map(codes.get, keys, repeat(-1))), dtype=np.int64)
        new = at < 0   # (found by numpy: a scan of the list for None costs more)
        if new.any():
            if len(codes) > LIMIT:   # (then every key of the piece is resolved again)
                self._forget()
                new[:] = True
            for key in dict.fromkeys(compress(keys, new.tolist())):
                if key not in codes:
                    self._add(key, *resolve(key))
            at = np.array(list(map(codes.__getitem__, keys)), dtype=np.int64)
        return tuple(np.frombuffer(column, dtype=np.int32)[at]  # type: ignore[return-value]
                     for column in (self._tracks, self._names, self._categories))

    def _add(self, key: Key, track: int, name: int, category: int) -> None:
        self._codes[key] = len(self._tracks)
        self._tracks.append(track)
        self._names.append(name)
        self._categories.append(category)

    def _forget(self) -> None:
        self._codes.clear()
        for column in (self._tracks, self._names, self._categories):
            del column[:]
