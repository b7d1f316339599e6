"""Rows of an args column grouped by key set: the shape that column-wise writers encode.

Writers encode arguments a key set at a time (one template, then each key's values as a
column) instead of a dict per row: :func:`key_groups` gives them the groups as
:class:`KeyGroup` objects, in the order of each group's first row, so that what a writer
makes of them does not depend on how the rows are held. Rows a reader kept as JSON text
are decoded for the batch only (the column keeps them as text), and may keep each value as
its JSON text until a column is asked for: a writer can then decode a column of numbers in
one call, and look up lists and dicts by their text in a cache, without building a Python
object per value.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain
from operator import itemgetter
from typing import Any

import msgspec
import numpy as np

from ..json_decode import lenient
from ..keys import first_places
from .args import ArgsColumn

_DECODE = lenient(list[dict[str, Any]])
_DECODE_RAW = msgspec.json.Decoder(list[dict[str, msgspec.Raw]]).decode
_DECODE_ANY = lenient()
_ENCODE = msgspec.json.Encoder().encode
_INTEGER_BYTES = np.zeros(256, dtype=bool)   # what JSON integers and the commas between are
_INTEGER_BYTES[list(b"0123456789-,")] = True
_LISTS_PER_ROW = 2   # lists a row from which args are decoded into texts (_wants_texts)
_SAMPLE_WINDOWS, _SAMPLE_BYTES = 16, 1 << 14   # what _wants_texts reads of a long text

def key_set_groups(column: ArgsColumn, rows: np.ndarray
                   ) -> Iterator[tuple[np.ndarray, tuple[Any, ...] | None, np.ndarray]]:
    """For each key set among ``rows`` (row indices): the positions in ``rows`` of its
    rows (ascending), its keys (None: rows without args) and where each row's values start.
    Rows held as JSON text are left out (and stay text).

    >>> column = ArgsColumn([{"a": 1}, None, {"a": 2}, {"b": 3, "c": 4}])
    >>> [(p.tolist(), keys, s.tolist()) for p, keys, s in key_set_groups(column, np.arange(4))]
    [([1], None, [1]), ([0, 2], ('a',), [0, 1]), ([3], ('b', 'c'), [2])]
    """
    if not len(rows):
        return
    key_sets, starts = column.held()[:2]
    key_set = key_sets[rows]
    order = np.argsort(key_set, kind="stable")
    grouped = key_set[order]
    cuts = (np.flatnonzero(grouped[1:] != grouped[:-1]) + 1).tolist()
    starts = starts[rows][order]
    for lo, hi in zip([0, *cuts], [*cuts, len(rows)], strict=True):
        k = int(grouped[lo])
        if k >= -1:   # (-2: held as JSON text)
            yield order[lo:hi], column.key_sets[k] if k >= 0 else None, starts[lo:hi]


def gather(column: ArgsColumn, starts: np.ndarray, position: int) -> list[Any]:
    """The values at ``position`` in the key set of the rows that start at ``starts`` (rows
    in the flat layout, as :func:`key_set_groups` gives them).

    >>> column = ArgsColumn([{"a": 1, "b": "x"}, {"a": 2, "b": "y"}])
    >>> gather(column, np.array([0, 2]), 1)
    ['x', 'y']
    """
    values = column.held()[2]
    at = (starts + position).tolist()
    if len(at) < 2:   # itemgetter of one index gives the item, not a 1-tuple
        return [values[i] for i in at]
    return list(itemgetter(*at)(values))   # one C call: twice map(__getitem__)'s speed


def _wants_texts(array_text: bytes, rows: int) -> bool:
    """Whether rows given as one JSON array of objects are better decoded into their
    values' texts than into their values: when lists are many among them (counted by their
    "[", also inside strings, to no harm). Texts cost a second decode of each column of
    numbers; values cost an object per element of each list, and a dump of each list for
    the cache. Measured on Kineto traces: CPU ops (shapes, strides and dtypes, about 12
    lists a row) encode 4× faster from texts; kernels (grid and block, about 1) a little
    faster from values.

    A long text is judged by evenly spaced windows of it (lists and objects counted there,
    the objects standing for the rows): the choice changes the speed, never the bytes,
    and a count over all of it cost as much as a tenth of the decode.

    >>> _wants_texts(b'[{"a": [1]},{"a": [2]}]', 2), _wants_texts(b'[{"a": [[1], [2]]}]', 1)
    (False, True)
    >>> _wants_texts(b'[' + b'{"a": [[1], [2]]},' * 40000 + b'{}]', 40001)
    True
    """
    if len(array_text) <= _SAMPLE_WINDOWS * _SAMPLE_BYTES:
        return array_text.count(b"[") - 1 >= _LISTS_PER_ROW * rows
    step = len(array_text) // _SAMPLE_WINDOWS
    lists = objects = 0
    for start in range(0, _SAMPLE_WINDOWS * step, step):
        lists += array_text.count(b"[", start, start + _SAMPLE_BYTES)
        objects += array_text.count(b"{", start, start + _SAMPLE_BYTES)
    return lists >= _LISTS_PER_ROW * objects


class KeyGroup:
    """The rows of one key set among some rows of an args column, read column by column.

    ``positions``: where the rows are in the rows asked for (by ascending row); ``keys``:
    the key set (None: rows without args). Values come per key, in the order of
    ``positions``.

    >>> column = ArgsColumn(); column.extend_json(b'{"a": [[1], 2], "b": 1.0},', [25])
    >>> group = key_groups(column, np.array([0]))[0]
    >>> group.keys, group.values(1), group.texts(0)
    (('a', 'b'), [1.0], [b'[[1], 2]'])
    """

    __slots__ = ("_column", "_flat", "_starts", "_texts", "keys", "positions")

    def __init__(self, positions: np.ndarray, keys: tuple[Any, ...] | None, *,
                 column: ArgsColumn | None = None, starts: np.ndarray | None = None,
                 flat: list[Any] | None = None, texts: bool = False) -> None:
        self.positions, self.keys = positions, keys
        self._column, self._starts = column, starts   # rows in the flat layout, or
        self._flat = flat   # rows held as text: their values, row after row,
        self._texts = texts   # ... as msgspec.Raw texts or (False) decoded

    def __len__(self) -> int:
        return len(self.positions)

    def values(self, position: int) -> list[Any]:
        """The values of the key at ``position`` in :attr:`keys` (texts decoded at once)."""
        if self._flat is None:
            assert self._column is not None and self._starts is not None
            return gather(self._column, self._starts, position)
        if not self._texts:
            return self._column_of(position)
        # msgspec writes a list of Raw texts as one JSON array at C speed (bytes.join
        # takes the slow buffer-protocol path for them)
        return _DECODE_ANY(_ENCODE(self._column_of(position)))  # type: ignore[no-any-return]

    def ints(self, position: int) -> np.ndarray | None:
        """The values of the key at ``position`` as int64 when the rows were held as text and
        decoded into texts and every value is written as an integer of at most 18 digits
        (parsed by numpy from one text, no int object per value); else None (ask
        :meth:`values`: other numbers, ``null``, or ints that may be past int64).

        >>> column = ArgsColumn()
        >>> column.extend_json(b'{"a": -7, "b": [[2]]},{"a": 30, "b": [[1]]},', [21, 21])
        >>> group = key_groups(column, np.array([0, 1]))[0]
        >>> group.ints(0).tolist(), group.ints(1)
        ([-7, 30], None)
        """
        if not self._texts or not len(self):
            return None
        text = _ENCODE(self._column_of(position))   # b"[1,-2,3]"
        body = np.frombuffer(text, dtype=np.uint8)[1:-1]
        if not _INTEGER_BYTES[body].all():
            return None
        ends = np.flatnonzero(body == ord(","))
        if int(np.diff(ends, prepend=-1, append=len(body)).max()) > 19:   # digits + comma
            return None
        return np.fromstring(text[1:-1], dtype=np.int64, sep=",")

    def texts(self, position: int) -> list[bytes] | None:
        """The JSON texts of the values of the key at ``position`` when the rows were held as
        text and decoded into texts (see :func:`key_groups`; as written in the source: ``1.0`` and
        ``1``, ``[1,2]`` and ``[1, 2]`` differ), else None.

        >>> column = ArgsColumn(); column.extend_json(b'{"a": [[1]], "b": 2},', [20])
        >>> group = key_groups(column, np.array([0]))[0]
        >>> group.texts(0), group.texts(1)
        ([b'[[1]]'], [b'2'])
        """
        if not self._texts:
            return None
        return list(map(bytes, self._column_of(position)))

    def text_starts(self, position: int, first: bytes) -> bool:
        """Whether the values of the key at ``position`` are held as JSON texts (see
        :meth:`texts`) and the first of them starts with one of the bytes ``first`` (a cheap
        test before making every text).

        >>> column = ArgsColumn(); column.extend_json(b'{"a": [[1]], "b": 2},', [20])
        >>> group = key_groups(column, np.array([0]))[0]
        >>> group.text_starts(0, b"[{"), group.text_starts(1, b"[{")
        (True, False)
        """
        if not self._texts or not len(self):
            return False
        return bytes(self._column_of(position)[0])[0] in first

    def joint_texts(self, first: int, stop: int) -> list[bytes] | None:
        """Per row, the JSON texts of the values of the keys at ``first`` to ``stop - 1``
        as one JSON array (``[v1,v2]``, each value as :meth:`texts` gives it), when the
        rows were held as text and decoded into texts, else None. One text per row makes
        one cache key for values that come together (a Kineto op's shapes, strides and
        dtypes), where :meth:`texts` makes one per value.

        >>> column = ArgsColumn(); column.extend_json(b'{"a": [1], "b": [2, 3], "c": 4},', [31])
        >>> key_groups(column, np.array([0]))[0].joint_texts(0, 2)
        [b'[[1],[2, 3]]']
        """
        if not self._texts:
            return None
        columns = [self._column_of(j) for j in range(first, stop)]
        return list(map(_ENCODE, zip(*columns, strict=True)))

    def _column_of(self, position: int) -> list[Any]:
        assert self._flat is not None and self.keys is not None
        return self._flat[position::len(self.keys)]


def key_groups(column: ArgsColumn, rows: np.ndarray) -> list[KeyGroup]:
    """``rows`` (row indices) by key set, in the order of each group's first row. Rows held as JSON text are decoded into their values' texts
    when lists are many among them (a writer can look those up by text, and decode the
    other columns at once), else into their values.

    >>> column = ArgsColumn([{"a": 1}, None]); column.extend_json(b'{"a": 2},{"b": 3},', [8, 8])
    >>> [(g.positions.tolist(), g.keys, g.values(0) if g.keys else None)
    ...  for g in key_groups(column, np.array([3, 1, 0, 2]))]
    [([0], ('b',), [3]), ([1], None, None), ([2], ('a',), [1]), ([3], ('a',), [2])]
    """
    ascending = np.argsort(rows, kind="stable")   # stored texts in runs: few cuts
    held, array_text, others = column.json_rows(rows[ascending])
    held, others = ascending[held], ascending[others]
    groups = [KeyGroup(others[at], keys, column=column, starts=starts)
              for at, keys, starts in key_set_groups(column, rows[others])]
    if len(held):
        texts = _wants_texts(array_text, len(held))
        dicts = (_DECODE_RAW if texts else _DECODE)(array_text)
        # a key set's id: the row number where it first came (one C-level pass, no list)
        first_row: dict[tuple[Any, ...], int] = {}
        key_ids = first_places(map(tuple, dicts), first_row)
        order = np.argsort(key_ids, kind="stable")
        cuts = (np.flatnonzero(np.diff(key_ids[order])) + 1).tolist()
        key_sets = sorted(first_row, key=first_row.__getitem__)
        for lo, hi, key_set in zip([0, *cuts], [*cuts, len(order)], key_sets, strict=True):
            at = order[lo:hi]
            flat = list(chain.from_iterable(map(dict.values, map(dicts.__getitem__,
                                                                 at.tolist()))))
            groups.append(KeyGroup(held[at], key_set, flat=flat, texts=texts))
    groups.sort(key=lambda group: int(group.positions.min()))
    return groups
