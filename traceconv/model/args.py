"""Compact storage for the argument dicts of events.

A dict per event costs ~200 bytes before its values, and millions of events repeat a few
dozen key sets. :class:`ArgsColumn` keeps each distinct key tuple once and, per row, only
the key set's id and where its values start in one flat list: the values stay the very
objects that were given (no re-encoding), the keys are shared.

A reader of JSON can also hand rows over as their JSON object text (:meth:`extend_json`):
they are kept as bytes, a third of the memory of the decoded values, and decoded when
asked for. The first use of the flat layout (:attr:`key_set`, :attr:`start`,
:attr:`values`) decodes them all into it; that changes how the rows are held, never what
they are.

Rows read back as new dicts, so the column cannot be changed through them: writes go
through :meth:`ArgsColumn.set` (the tables' ``set_args``).
"""

from __future__ import annotations

import bisect
import functools
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from copy import copy
from itertools import accumulate, chain, compress, repeat
from operator import is_, is_not
from typing import Any, overload

import msgspec
import numpy as np

from ..json_decode import lenient
from .frozen import (
    FrozenArray,
    FrozenList,
    FrozenTraceError,
    FrozenWhenUnpickled,
    deep_freeze,
    deep_freeze_in_place,
    frozen_array,
)
from .typed_arrays import extend_typed, read_only_view

Args = dict[str, Any] | None

_NONE = -1  # key-set id of a row without args (distinct from an empty dict)
_JSON = -2  # key-set id of a row held as JSON text (its start: its index in the texts)
_DECODE_ONE = lenient(dict[str, Any])
_DECODE_MANY = lenient(list[dict[str, Any]])
_BATCH = 1 << 14  # JSON rows decoded together (bounds the dicts alive at once)
_DECODE_RAW = msgspec.json.Decoder(list[dict[str, msgspec.Raw]]).decode
_DECODE_ANY = lenient()
_SHARED_FIRST = frozenset(b'[{"')   # arrays, objects and strings: decoded once per text
_SHARED_LIMIT = 1 << 20
_extend = list.extend   # (how the column adds to its values, which refuse everyone else)


def _values(dicts: list[dict[str, msgspec.Raw]], shared: dict[bytes, Any]) -> list[Any]:
    """The values of ``dicts`` (JSON texts) decoded, one after another. Values written
    alike are one object: a trace repeats a few hundred shapes and dtype lists over a
    million events, which as separate lists would cost hundreds of MB.

    >>> raw = msgspec.json.decode(b'[{"a": [1, 2], "b": 7}, {"a": [1, 2]}]',
    ...                           type=list[dict[str, msgspec.Raw]])
    >>> values = _values(raw, {}); values, values[0] is values[2]
    ([[1, 2], 7, [1, 2]], True)
    """
    texts = list(map(bytes, chain.from_iterable(map(dict.values, dicts))))
    values = list(map(shared.get, texts))
    missing = [i for i, value in enumerate(values) if value is None]
    if missing:
        decoded = _DECODE_ANY(b"[" + b",".join([texts[i] for i in missing]) + b"]")
        for i, value in zip(missing, decoded, strict=True):
            values[i] = value
            if texts[i][0] in _SHARED_FIRST:
                values[i] = shared.setdefault(texts[i], value)
    return values


_WHITESPACE = np.zeros(256, dtype=bool)
_WHITESPACE[list(b" \t\r\n")] = True


def _first_inside(text: np.ndarray, opens: np.ndarray) -> np.ndarray:
    """The first byte after each ``{`` at ``opens`` in ``text`` that is not JSON whitespace
    (all at once: the texts still in whitespace step on together).

    >>> _first_inside(np.frombuffer(b'{   }{"a":1}', dtype=np.uint8), np.array([0, 5]))
    array([125,  34], dtype=uint8)
    """
    at = opens + 1
    spaced = np.flatnonzero(_WHITESPACE[text[at]])
    while len(spaced):
        at[spaced] += 1
        spaced = spaced[_WHITESPACE[text[at[spaced]]]]
    return text[at]


def _fields(count: int) -> list[str]:
    return [f"key{i}" for i in range(count)]


class _Texts:
    """Bytes kept in the pieces they were added in, addressed as one run of bytes.

    >>> texts = _Texts(); texts.add(b"abc"); texts.add(b"de")
    >>> bytes(texts.cut(1, 2)), bytes(texts.cut(2, 4))
    (b'b', b'cd')
    """

    __slots__ = ("pieces", "starts")

    def __init__(self) -> None:
        self.pieces: list[bytes] = []
        self.starts = array("q", [0])   # where each piece starts; one more: the end

    def add(self, piece: bytes | bytearray) -> None:
        if piece:
            self.pieces.append(bytes(piece))
            self.starts.append(self.starts[-1] + len(piece))

    def cut(self, start: int, end: int) -> bytes | memoryview:
        """The bytes from ``start`` to ``end`` (a view when they are in one piece)."""
        parts = self.parts(start, end)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def parts(self, start: int, end: int) -> list[bytes | memoryview]:
        """The bytes from ``start`` to ``end`` as views of the pieces they lie in (for a
        caller that joins them with more bytes around: one copy, not two).

        >>> texts = _Texts(); texts.add(b"abc"); texts.add(b"de")
        >>> list(map(bytes, texts.parts(1, 4)))
        [b'bc', b'd']
        """
        first = bisect.bisect_right(self.starts, start) - 1
        offset = self.starts[first]
        if end <= self.starts[first + 1]:
            return [memoryview(self.pieces[first])[start - offset:end - offset]]
        last = bisect.bisect_left(self.starts, end) - 1
        return [memoryview(self.pieces[first])[start - offset:], *self.pieces[first + 1:last],
                memoryview(self.pieces[last])[:end - self.starts[last]]]

    def cut_many(self, starts: np.ndarray, ends: np.ndarray) -> list[bytes | memoryview]:
        """:meth:`cut` of each (start, end), the usual case (each in one piece) with one
        search for all and C-level slicing.

        >>> texts = _Texts(); texts.add(b"abc"); texts.add(b"de")
        >>> list(map(bytes, texts.cut_many(np.array([3, 0, 2]), np.array([5, 1, 4]))))
        [b'de', b'a', b'cd']
        """
        bounds = np.frombuffer(self.starts, dtype=np.int64)
        first = np.searchsorted(bounds, starts, "right") - 1
        if not len(first) or (ends > bounds[first + 1]).any():   # one spans two pieces
            return list(map(self.cut, starts.tolist(), ends.tolist()))
        offset = bounds[first]
        return list(map(bytes.__getitem__, map(self.pieces.__getitem__, first.tolist()),
                        map(slice, (starts - offset).tolist(), (ends - offset).tolist())))

    def copy(self) -> _Texts:
        new = _Texts()
        new.pieces, new.starts = list(self.pieces), array("q", self.starts)
        return new


@functools.lru_cache(maxsize=64)
def _keys_decoder(keys: tuple[str, ...]) -> Any:
    """Decodes a JSON array of objects into records holding only the values of ``keys``
    (fields key0, key1, ...; UNSET where absent): the other values are skipped, not built."""
    fields = _fields(len(keys))
    record: Any = msgspec.defstruct("Keys", [(f, Any, msgspec.UNSET) for f in fields],
                                    rename=dict(zip(fields, keys, strict=True)), gc=False)
    return lenient(list[record])


@functools.lru_cache(maxsize=64)
def _int_keys_decoder(keys: tuple[str, ...], defaults: tuple[int | None, ...]) -> Any:
    """:func:`_keys_decoder` whose values must be integers (or null, or absent, where the
    key's default is None): a decode of anything else fails."""
    fields = _fields(len(keys))
    record: Any = msgspec.defstruct(
        "IntKeys", [(f, int | None, None) if d is None else (f, int, d)
                    for f, d in zip(fields, defaults, strict=True)],
        rename=dict(zip(fields, keys, strict=True)), gc=False)
    return msgspec.json.Decoder(list[record]).decode


@functools.lru_cache(maxsize=64)
def _field_values(field: str) -> Callable[[list[Any]], list[Any]]:
    """A function giving the value of ``field`` (an identifier: key0, key1, ...) in each of
    many records, as a list comprehension: its attribute load is specialised by the
    interpreter, four times as fast as ``attrgetter`` on a decoded Struct (10^5 records
    times a few keys shows).

    >>> _field_values("real")([1, 2.5])
    [1, 2.5]
    """
    if not field.isidentifier():
        raise ValueError(field)
    function: Callable[[list[Any]], list[Any]] = eval(  # noqa: S307 (an identifier only)
        f"lambda records: [r.{field} for r in records]")
    return function


def _put_ints(found: list[int | None], values: np.ndarray, known: np.ndarray,
              at: np.ndarray) -> None:
    """Write ``found`` (ints, None for unknown) to ``values`` at ``at``, and False to
    ``known`` where one is None (OverflowError for an int beyond int64).

    >>> values, known = np.zeros(4, dtype=np.int64), np.ones(4, dtype=bool)
    >>> _put_ints([4, None, 6], values, known, np.array([0, 1, 3]))
    >>> values.tolist(), known.tolist()
    ([4, 0, 0, 6], [True, False, True, True])
    """
    try:   # (the usual case: every value there)
        values[at] = np.fromiter(found, dtype=np.int64, count=len(found))
    except TypeError:   # a None among them
        there = np.fromiter(map(is_not, found, repeat(None)), dtype=bool, count=len(found))
        known[at[~there]] = False
        values[at[there]] = np.fromiter(compress(found, there), dtype=np.int64)


class ArgsColumn(FrozenWhenUnpickled, Sequence[Args]):
    """Per-row argument dicts held as interned key sets plus a flat list of values.

    >>> column = ArgsColumn()
    >>> column.append({"bytes": 64, "stream": 7}); column.append(None)
    >>> column.append({"bytes": 128, "stream": 7})
    >>> column[2], column[1], len(column), len(column.key_sets)
    ({'bytes': 128, 'stream': 7}, None, 3, 1)
    >>> column.set(0, {"note": "moved"}); list(column)[0]
    {'note': 'moved'}
    """

    __slots__ = ("_frozen", "_ids", "_in_row_order", "_key_set", "_start", "_text_bounds",
                 "_texts", "_unfrozen_inside", "_values", "key_sets")

    def __init__(self, rows: Iterable[Args] = ()) -> None:
        self._frozen = False
        self._ids: dict[tuple[Any, ...], int] = {}
        self.key_sets: list[tuple[Any, ...]] = []   # id -> keys, in insertion order
        self._key_set = array("i")   # per row: key-set id, -1 for None, -2 for JSON text
        self._start = array("q")     # per row: its first value in ``values`` (JSON: its text)
        # read-only to whoever it is handed to (writers, API users), so that freezing the
        # column copies nothing; the column itself adds through list's own extend
        self._values: FrozenList[Any] = FrozenList()
        # the JSON rows' texts, each followed by ",", in the pieces they came in (never
        # copied into one growing buffer, whose reallocations would double the peak)
        self._texts = _Texts()
        self._text_bounds = array("q", [0])   # where JSON text i starts; one more: the end
        self._in_row_order = True   # key sets numbered in the order of their first row
        # frozen, but the lists and dicts among the values not yet: they are frozen in
        # place when first handed out (see freeze)
        self._unfrozen_inside = False
        self.extend(rows)

    # -- the flat layout (writers encode from it) --------------------------------------

    @property
    def key_set(self) -> array[int]:
        """Per row: its key-set id in :attr:`key_sets`, or -1 for a row without args."""
        self._settle()
        return self._key_set

    @property
    def start(self) -> array[int]:
        """Per row: where its values begin in :attr:`values`."""
        self._settle()
        return self._start

    @property
    def values(self) -> list[Any]:
        """Every row's values, one after another (a row may have left unused ones)."""
        self._settle()
        return self._handed_out()

    def _handed_out(self) -> list[Any]:
        """The values, each list and dict among them read-only once the column is frozen
        (frozen in place: the values list is not copied)."""
        if self._unfrozen_inside:
            deep_freeze_in_place(self._values)
            object.__setattr__(self, "_unfrozen_inside", False)   # (the column's own note)
        return self._values

    def _settle(self) -> None:
        """The flat layout as writers see it: no JSON row left, and key sets numbered in
        the order of their first row, however the rows came in (so that output made from
        the numbering does not depend on it). A frozen column settles too: the rows it
        gives do not change, and the values it decodes are read-only as the others."""
        if len(self._text_bounds) == 1 and self._in_row_order:
            return
        frozen = self._frozen
        held = len(self._values)
        if frozen:   # (settled in editable copies of the two columns, frozen again after)
            object.__setattr__(self, "_frozen", False)
            self.key_sets = list(self.key_sets)
            self._key_set, self._start = copy(self._key_set), copy(self._start)
        try:
            self._decode_texts()
            if not self._in_row_order:
                self._number_in_row_order()
        finally:
            if frozen:
                if not self._unfrozen_inside:
                    deep_freeze_in_place(self._values, held)
                self.key_sets = FrozenList(self.key_sets)
                self._key_set = frozen_array(self._key_set)  # type: ignore[assignment]  # (read as an array)
                self._start = frozen_array(self._start)  # type: ignore[assignment]
                self._frozen = True

    def _number_in_row_order(self) -> None:
        key_set = np.frombuffer(self._key_set, dtype=np.int32)
        has_args = key_set >= 0
        used, first_row = np.unique(key_set[has_args], return_index=True)
        order = used[np.argsort(first_row)].tolist()
        order += sorted(set(range(len(self.key_sets))) - set(order))   # (left by set())
        renumber = np.empty(len(order), dtype=np.int32)
        renumber[order] = np.arange(len(order), dtype=np.int32)
        key_set[has_args] = renumber[key_set[has_args]]
        self.key_sets = [self.key_sets[k] for k in order]
        self._ids = {keys: k for k, keys in enumerate(self.key_sets)}
        self._in_row_order = True

    def _decode_texts(self) -> None:
        """Move every JSON row into the flat layout (a batch of rows at a time)."""
        if len(self._text_bounds) == 1:
            return
        rows = np.flatnonzero(np.frombuffer(self._key_set, dtype=np.int32) == _JSON)
        shared: dict[bytes, Any] = {}
        for lo in range(0, len(rows), _BATCH):
            batch = rows[lo:lo + _BATCH]
            dicts = self._decoded(batch, _DECODE_RAW)
            keys = list(map(tuple, dicts))
            sizes = list(map(len, keys))
            ids = list(map(self._ids.get, keys))
            if None in ids:
                ids = [self._key_set_id(k) if i is None else i
                       for i, k in zip(ids, keys, strict=True)]
            np.frombuffer(self._key_set, dtype=np.int32)[batch] = ids  # type: ignore[assignment]
            np.frombuffer(self._start, dtype=np.int64)[batch] = list(
                accumulate(sizes[:-1], initial=len(self._values)))
            _extend(self._values, _values(dicts, shared))
            if len(shared) > _SHARED_LIMIT:
                shared.clear()
        self._texts = _Texts()
        self._text_bounds = array("q", [0])

    def _decoded(self, rows: np.ndarray, decode: Any = _DECODE_MANY) -> list[Any]:
        """The dicts of JSON rows ``rows`` (decoded together), or what ``decode`` makes
        of the JSON array of their texts."""
        return decode(self._array_text(rows))  # type: ignore[no-any-return]

    def _array_text(self, rows: np.ndarray) -> bytes:
        """One JSON array of the texts of JSON rows ``rows``, made by one join (a text of
        tens of MB copied once: each extra copy costs as much as a decode's share).

        >>> column = ArgsColumn(); column.extend_json(b'{"a": 1},{"b": 2},', [8, 8])
        >>> column._array_text(np.array([0, 1])), column._array_text(np.array([1, 0]))
        (b'[{"a": 1},{"b": 2}]', b'[{"b": 2},{"a": 1}]')
        """
        bounds = self._text_bounds
        texts = read_only_view(self._start)[rows]
        if not len(texts):
            return b"[]"
        if texts[-1] - texts[0] == len(texts) - 1 and (np.diff(texts) == 1).all():   # one run
            return b"".join([b"[", *self._texts.parts(bounds[int(texts[0])],
                                                       bounds[int(texts[-1]) + 1] - 1), b"]"])
        ends = np.frombuffer(bounds, dtype=np.int64)
        pieces: list[bytes | memoryview] = [b","] * (2 * len(texts) + 1)   # [ t , t , t ]
        pieces[1::2] = self._texts.cut_many(ends[texts], ends[texts + 1] - 1)
        pieces[0], pieces[-1] = b"[", b"]"
        return b"".join(pieces)

    # -- adding rows --------------------------------------------------------------------

    def _key_set_id(self, keys: tuple[Any, ...]) -> int:
        found = self._ids.get(keys)
        if found is None:
            found = self._ids[keys] = len(self.key_sets)
            self.key_sets.append(keys)
        return found

    def append(self, args: Args) -> None:
        """Add one row (``args`` is read now: later changes to that dict are not seen)."""
        values = self._values
        self._start.append(len(values))   # first: a frozen column refuses before any change
        if args is None:
            self._key_set.append(_NONE)
            return
        keys = tuple(args)
        found = self._ids.get(keys)   # inlined lookup: this is the readers' hot path
        self._key_set.append(self._key_set_id(keys) if found is None else found)
        _extend(values, args.values())

    def extend(self, rows: Iterable[Args]) -> None:
        """Add many rows at once (each read now, as :meth:`append` reads one).

        >>> column = ArgsColumn(); column.extend([{"a": 1}, None, {"a": 2, "b": 3}, {"a": 4}])
        >>> list(column), column.key_sets
        ([{'a': 1}, None, {'a': 2, 'b': 3}, {'a': 4}], [('a',), ('a', 'b')])
        """
        if isinstance(self._start, FrozenArray):
            raise FrozenTraceError
        rows = rows if isinstance(rows, list) else list(rows)
        if not rows:
            return
        get = self._ids.get
        if None in rows:
            keys: list[tuple[Any, ...] | None] = [None if a is None else tuple(a) for a in rows]
            found = [_NONE if k is None else get(k) for k in keys]
            sizes = [0 if k is None else len(k) for k in keys]
            rows = [a for a in rows if a]
        else:   # every row has args (a Kineto slice does): C-level maps, no Python per row
            keys = list(map(tuple, rows))  # type: ignore[arg-type]
            found = list(map(get, keys))  # type: ignore[arg-type]
            sizes = list(map(len, keys))  # type: ignore[arg-type]
        if None in found:   # new key sets: the distinct ones interned in row order, then
            # every row looked up again at C speed (not a Python call per row)
            for new in dict.fromkeys(compress(keys, map(is_, found, repeat(None)))):
                self._key_set_id(new)  # type: ignore[arg-type]
            found = list(map(self._ids.get, keys, repeat(_NONE)))  # type: ignore[arg-type]
        values = self._values
        self._start.extend(accumulate(sizes[:-1], initial=len(values)))
        self._key_set.extend(found)  # type: ignore[arg-type]
        _extend(values, chain.from_iterable(map(dict.values, rows)))  # type: ignore[arg-type]

    def extend_sets(self, key_sets: Sequence[tuple[Any, ...]], sets: np.ndarray,
                    values: list[Any]) -> None:
        """Add rows given as the number of their key set in ``key_sets`` (-1: a row without
        args) and all their values one row after another: no Python work per row (a reader
        that numbers its key sets itself). The keys of a key set must be distinct.

        >>> column = ArgsColumn()
        >>> column.extend_sets([("a", "b"), ("a",)], np.array([0, -1, 1]), [1, 2, 3])
        >>> list(column)
        [{'a': 1, 'b': 2}, None, {'a': 3}]
        """
        if isinstance(self._start, FrozenArray):
            raise FrozenTraceError
        sets = np.asarray(sets, dtype=np.int64)
        used = np.unique(sets[sets >= 0]).tolist()
        ids = np.full(len(key_sets) + 1, _NONE, dtype=np.int32)   # (the last: no args)
        widths = np.zeros(len(key_sets) + 1, dtype=np.int64)
        for k in used:
            ids[k] = self._key_set_id(key_sets[k])
            widths[k] = len(key_sets[k])
        sets = np.where(sets >= 0, sets, len(key_sets))
        sizes = widths[sets]
        extend_typed(self._key_set, ids[sets])
        extend_typed(self._start, len(self._values) + np.cumsum(sizes) - sizes)
        _extend(self._values, values)
        self._in_row_order = False   # (key sets were numbered in their order, not the rows')

    def keep_texts_in(self, store: Any) -> None:
        """Hold the JSON texts of the rows added from now on in ``store`` instead of in
        memory: an object with the methods of the in-memory store (``add``, ``cut``,
        ``parts``, ``cut_many``, ``copy``), such as
        :class:`traceconv.spilled_texts.SpilledTexts` (a scratch file). Only a column that
        holds no text yet can move.

        >>> column = ArgsColumn(); column.keep_texts_in(_Texts())
        >>> column.extend_json(b'{"a": 1},', [8]); column[0]
        {'a': 1}
        """
        if len(self._text_bounds) != 1:
            raise ValueError("the column holds texts already")
        self._texts = store

    def extend_json(self, texts: bytes | bytearray, sizes: Sequence[int] | np.ndarray) -> None:
        """Add rows given as JSON object texts: in ``texts`` those of the rows with args,
        each followed by a comma (as ``b",".join(texts) + b","`` makes them), and
        ``sizes`` their lengths without it (0: a row without args). The caller vouches that
        each text is one valid JSON object, as its parser found it.

        >>> column = ArgsColumn(); column.extend_json(b'{"a": [1, 2]},{"b": 3},', [13, 0, 8])
        >>> list(column), column.json(0)
        ([{'a': [1, 2]}, None, {'b': 3}], b'{"a": [1, 2]}')
        """
        sizes = np.asarray(sizes, dtype=np.int64)
        present = sizes > 0
        first_text = len(self._text_bounds) - 1
        text_index = np.cumsum(present) - present + first_text
        extend_typed(self._key_set, np.where(present, _JSON, _NONE))
        extend_typed(self._start, np.where(present, text_index, len(self._values)))
        extend_typed(self._text_bounds, self._text_bounds[-1] + np.cumsum(sizes[present] + 1))
        self._texts.add(texts)
        self._in_row_order = False

    def set(self, row: int, args: Args) -> None:
        """Replace the args of ``row`` (its old values stay unused in the flat list)."""
        if not -len(self) <= row < len(self):
            raise IndexError(row)
        self._start[row] = len(self._values)
        self._in_row_order = False
        if args is None:
            self._key_set[row] = _NONE
            return
        self._key_set[row] = self._key_set_id(tuple(args))
        _extend(self._values, args.values())

    def freeze(self) -> None:
        """Refuse new rows and changed rows from now on (reading may still settle the
        layout in place: the rows it gives do not change). A list or dict among the values
        is handed out read-only: a row's own as a read-only copy, the flat layout (values,
        held, columns, iteration) made read-only in place when first asked for, so that a
        reader that is never asked for its args pays nothing (a million rows of shapes).
        The values list itself is read-only to all but the column from the start: freezing
        copies nothing.

        >>> column = ArgsColumn([{"dims": [2, 3]}]); column.freeze()
        >>> column[0]["dims"].append(4)
        Traceback (most recent call last):
        ...
        traceconv.model.frozen.FrozenTraceError: this trace is frozen (read-only): build a new one (Trace.copy(), traceconv.model.copying)
        """
        if self._frozen:
            return
        self._key_set = frozen_array(self._key_set)  # type: ignore[assignment]  # (an array)
        self._start = frozen_array(self._start)  # type: ignore[assignment]
        self.key_sets = FrozenList(self.key_sets)
        if not isinstance(self._values, FrozenList):   # (a copy or a pickle holds a list)
            self._values = FrozenList(self._values)
        self._unfrozen_inside = True
        self._frozen = True

    def copy(self) -> ArgsColumn:
        """A column with the same rows that grows and changes on its own."""
        new = ArgsColumn()
        new._ids, new.key_sets = dict(self._ids), list(self.key_sets)
        new._key_set, new._start = copy(self._key_set), copy(self._start)
        new._values = FrozenList(self._handed_out())   # (never a list the frozen one holds)
        new._texts, new._text_bounds = self._texts.copy(), array("q", self._text_bounds)
        new._in_row_order = self._in_row_order
        return new

    def take(self, rows: np.ndarray) -> ArgsColumn:
        """A column of ``rows`` of this one, in that order, that grows and changes on its
        own; nothing is decoded (JSON rows stay text).

        >>> column = ArgsColumn([{"a": 1}, None]); column.extend_json(b'{"b": 2},', [8])
        >>> list(column.take(np.array([2, 0])))
        [{'b': 2}, {'a': 1}]
        """
        new = self.copy()   # (the values and texts are shared out: the rows point into them)
        rows = np.asarray(rows, dtype=np.int64)
        new._key_set = array("i", read_only_view(self._key_set)[rows].tobytes())
        new._start = array("q", read_only_view(self._start)[rows].tobytes())
        new._in_row_order = False   # (key sets numbered in the order of rows no longer here)
        return new

    # -- reading ------------------------------------------------------------------------

    def json(self, row: int) -> bytes | None:
        """The JSON text of ``row`` when it is held as text, else None (a writer of JSON
        can copy it as it is)."""
        if self._key_set[row] != _JSON:
            return None
        i = self._start[row]
        return bytes(self._texts.cut(self._text_bounds[i], self._text_bounds[i + 1] - 1))

    def held(self) -> tuple[np.ndarray, np.ndarray, list[Any]]:
        """(key_set, start, values) as they are held now, decoding nothing: a row held as
        JSON text has key-set id -2 there (:meth:`json_rows` gives its text).

        >>> column = ArgsColumn([{"a": 1}]); column.extend_json(b'{"b": 2},', [8])
        >>> key_set, start, values = column.held(); key_set.tolist(), values
        ([0, -2], [1])
        """
        return read_only_view(self._key_set), read_only_view(self._start), self._handed_out()

    def json_rows(self, rows: np.ndarray) -> tuple[np.ndarray, bytes, np.ndarray]:
        """The rows held as JSON text among ``rows``, decoding nothing: their positions in
        ``rows``, one JSON array of their objects (for one decode), and the positions of the
        others. Rows stored one after another are cut out as one run, not one by one.

        >>> column = ArgsColumn([{"a": 1}]); column.extend_json(b'{"b": 2},{"c": 3},', [8, 0, 8])
        >>> held, array_text, others = column.json_rows(np.array([3, 2, 1, 0]))
        >>> held.tolist(), array_text, others.tolist()
        ([0, 2], b'[{"c": 3},{"b": 2}]', [1, 3])
        """
        held, starts, ends, runs = self._held_runs(rows)
        pieces: list[bytes | memoryview] = [b"["]   # joined once (the text may be 100s of MB)
        for lo, hi in runs:
            pieces += self._texts.parts(int(starts[lo]), int(ends[hi - 1]))
            pieces.append(b",")
        pieces[-1:] = [b"]"] if runs else [b"[", b"]"]
        return np.flatnonzero(held), b"".join(pieces), np.flatnonzero(~held)

    def json_texts(self, rows: np.ndarray) -> tuple[np.ndarray, list[bytes], np.ndarray]:
        """The rows held as JSON text among ``rows`` (ascending row indices), decoding
        nothing: their positions in ``rows``, each one's object text as the source wrote it
        (a writer of JSON copies it), and whether it is an empty object (however spaced).

        >>> column = ArgsColumn([{"a": 1}]); column.extend_json(b'{"b": 2},{ },', [8, 0, 3])
        >>> at, texts, empty = column.json_texts(np.array([0, 1, 2, 3]))
        >>> at.tolist(), texts, empty.tolist()
        ([1, 3], [b'{"b": 2}', b'{ }'], [False, True])
        """
        held, starts, ends, runs = self._held_runs(rows)
        texts: list[bytes] = []
        empty = np.zeros(len(starts), dtype=bool)
        for lo, hi in runs:
            run = bytes(self._texts.cut(int(starts[lo]), int(ends[hi - 1])))
            first, last = starts[lo:hi] - starts[lo], ends[lo:hi] - starts[lo]
            texts += map(run.__getitem__, map(slice, first.tolist(), last.tolist()))
            empty[lo:hi] = _first_inside(np.frombuffer(run, dtype=np.uint8), first) == ord("}")
        return np.flatnonzero(held), texts, empty

    def _held_runs(self, rows: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[int, int]]]:
        """Which of ``rows`` are held as JSON text, where each of their texts starts and
        ends among the stored texts (without the comma after it), and the runs of those
        stored one after another ((first, last + 1) among them): one cut each, not one per row.
        """
        key_set = read_only_view(self._key_set)[rows] if len(rows) else \
            np.zeros(0, dtype=np.int32)
        held = key_set == _JSON
        index = read_only_view(self._start)[rows[held]]
        bounds = np.frombuffer(self._text_bounds, dtype=np.int64)
        breaks = np.flatnonzero(index[1:] != index[:-1] + 1) + 1
        runs = list(zip(np.r_[0, breaks].tolist(), np.r_[breaks, len(index)].tolist(),
                        strict=True)) if len(index) else []
        return held, bounds[index], bounds[index + 1] - 1, runs

    def _positions(self, key: str) -> np.ndarray:
        """Per key-set id, where ``key`` is in it (-1: absent); one more entry, -1, serves
        the rows without args (key-set id -1)."""
        return np.array([keys.index(key) if key in keys else -1 for keys in self.key_sets]
                        + [-1], dtype=np.int64)

    def get_many(self, rows: np.ndarray, key: str, default: Any = None) -> list[Any]:
        """The value of ``key`` in the args of each of ``rows`` (``default`` where absent).

        >>> column = ArgsColumn([{"a": 1}, None, {"b": 2, "a": 3}])
        >>> column.extend_json(b'{"a": 4},', [8])
        >>> column.get_many(np.array([2, 1, 0, 3]), "a")
        [3, None, 1, 4]
        """
        return self.get_columns(rows, (key,), (default,))[0]

    def rows_where_true(self, key: str) -> np.ndarray:
        """The rows whose args hold ``key`` with the value ``true`` (ascending), decoding
        no JSON row whose text does not hold the key as written (``"key"``: a key spelt
        with ``\\u`` escapes, which no writer makes of a plain ASCII key, is not seen).

        >>> column = ArgsColumn([{"done": True}, None, {"done": 1}])
        >>> column.extend_json(b'{"x": "done"},{"done": true},', [13, 14])
        >>> column.rows_where_true("done").tolist()
        [0, 4]
        """
        key_sets = read_only_view(self._key_set) if len(self) else \
            np.zeros(0, dtype=np.int32)
        at = self._positions(key)[np.maximum(key_sets, -1)]   # (a JSON row reads as absent)
        rows = np.sort(np.concatenate([np.flatnonzero(at >= 0), self._json_rows_holding(key)]))
        values = self.get_many(rows, key)
        return rows[np.fromiter((v is True for v in values), bool, len(rows))]

    def _json_rows_holding(self, key: str) -> np.ndarray:
        """The JSON rows whose text holds ``key`` in quotes (as a key or as a value)."""
        if len(self._text_bounds) == 1:
            return np.zeros(0, dtype=np.int64)
        needle, found = msgspec.json.encode(key), []
        for piece, offset in zip(self._texts.pieces, self._texts.starts, strict=False):
            at = piece.find(needle)
            while at >= 0:
                found.append(offset + at)
                at = piece.find(needle, at + 1)
        if not found:
            return np.zeros(0, dtype=np.int64)
        texts = np.searchsorted(np.frombuffer(self._text_bounds, dtype=np.int64), found,
                                "right") - 1
        json_rows = np.flatnonzero(read_only_view(self._key_set) == _JSON)
        # (a text whose row was set() since is no row's: only the rows still held as JSON)
        held = np.isin(read_only_view(self._start)[json_rows], texts)
        return json_rows[held]

    def get_columns(self, rows: np.ndarray, keys: tuple[str, ...],
                    defaults: tuple[Any, ...]) -> list[list[Any]]:
        """:meth:`get_many` for several keys at once: one list per key (JSON rows are
        decoded once, keeping only those keys).

        >>> column = ArgsColumn([{"a": 1, "b": 2}]); column.extend_json(b'{"b": 3},', [8])
        >>> column.get_columns(np.array([0, 1]), ("a", "b"), (None, -1))
        [[1, None], [2, 3]]
        """
        if not len(rows):
            return [[] for _ in keys]
        key_sets = read_only_view(self._key_set)[rows]
        starts = read_only_view(self._start)[rows]
        values = self._handed_out()
        columns = []
        for key, default in zip(keys, defaults, strict=True):
            at = self._positions(key)[np.maximum(key_sets, -1)]  # (a JSON row reads as absent)
            column = [default] * len(rows)
            present = np.flatnonzero(at >= 0)
            for i, first in zip(present.tolist(), (starts[present] + at[present]).tolist(),
                                strict=True):
                column[i] = values[first]
            columns.append(column)
        texts = np.flatnonzero(key_sets == _JSON)
        decode = _keys_decoder(keys)
        unset = msgspec.UNSET
        for lo in range(0, len(texts), _BATCH):
            batch = texts[lo:lo + _BATCH]
            records = self._decoded(rows[batch], decode)
            together = batch[-1] - batch[0] == len(batch) - 1   # rows side by side
            for field, column, default in zip(_fields(len(keys)), columns, defaults,
                                              strict=True):
                found = _field_values(field)(records)
                if unset in found:
                    found = [default if value is unset else value for value in found]
                if together:
                    column[batch[0]:batch[-1] + 1] = found
                else:
                    for i, value in zip(batch.tolist(), found, strict=True):
                        column[i] = value
        return columns

    def int_columns(self, rows: np.ndarray, keys: tuple[str, ...], defaults: tuple[int | None, ...]
                    ) -> tuple[np.ndarray, np.ndarray] | None:
        """The values of ``keys`` in the args of ``rows`` as int64, one array row per key,
        and whether each is known (False where a key whose default is None is absent or
        null: its value there is 0), when each value there is an integer that fits int64
        (or absent); else None, and :meth:`get_columns` takes whatever there is. Rows held
        as JSON text are read by one typed decode, which makes no Python object per value
        but the int, and no list per key.

        >>> column = ArgsColumn(); column.extend_json(b'{"a": 1, "b": 2},{"a": 3},', [16, 8])
        >>> values, known = column.int_columns(np.array([0, 1]), ("a", "b"), (None, -1))
        >>> values.tolist(), bool(known.all())
        ([[1, 3], [2, -1]], True)
        >>> values, known = column.int_columns(np.array([0, 1]), ("b",), (None,))
        >>> values.tolist(), known.tolist()
        ([[2, 0]], [[True, False]])
        >>> column.extend_json(b'{"a": 1.5},', [10]); column.int_columns(np.array([2]), ("a",), (0,))
        >>> column.append({"b": 9}); column.append(None)   # rows held as values: the same rules
        >>> values, known = column.int_columns(np.array([1, 3, 4]), ("b",), (None,))
        >>> values.tolist(), known.tolist()
        ([[0, 9, 0]], [[False, True, False]])
        """
        held = read_only_view(self._key_set)[rows] == _JSON if len(rows) else \
            np.zeros(0, dtype=bool)
        texts, others = np.flatnonzero(held), np.flatnonzero(~held)
        decode = _int_keys_decoder(keys, defaults)
        values = np.zeros((len(keys), len(rows)), dtype=np.int64)
        known = np.ones((len(keys), len(rows)), dtype=bool)
        try:
            for lo in range(0, len(texts), _BATCH):
                at = texts[lo:lo + _BATCH]
                records = self._decoded(rows[at], decode)
                for k, field in enumerate(_fields(len(keys))):
                    _put_ints(_field_values(field)(records), values[k], known[k], at)
        except (msgspec.MsgspecError, OverflowError):   # a float, a text, a list, > int64
            return None
        if len(others):   # rows held as values (or without args): the same rules
            for k, (found, default) in enumerate(zip(self.get_columns(
                    rows[others], keys, defaults), defaults, strict=True)):
                if not set(map(type, found)) <= ({int, type(None)} if default is None else {int}):
                    return None
                try:
                    _put_ints(found, values[k], known[k], others)
                except OverflowError:
                    return None
        return values, known

    def __len__(self) -> int:
        return len(self._key_set)

    @overload
    def __getitem__(self, row: int) -> Args: ...

    @overload
    def __getitem__(self, row: slice) -> list[Args]: ...

    def __getitem__(self, row: int | slice) -> Args | list[Args]:
        if isinstance(row, slice):
            return [self[i] for i in range(*row.indices(len(self)))]
        key_set = self._key_set[row]
        if key_set == _NONE:
            return None
        first = self._start[row]
        if key_set == _JSON:
            bounds = self._text_bounds
            decoded: dict[str, Any] = _DECODE_ONE(
                self._texts.cut(bounds[first], bounds[first + 1] - 1))
            return decoded
        keys = self.key_sets[key_set]
        values: Iterable[Any] = self._values[first:first + len(keys)]
        if self._unfrozen_inside:   # (one row: read-only copies, the column left as it is)
            values = map(deep_freeze, values)
        return dict(zip(keys, values, strict=True))

    def __iter__(self) -> Iterator[Args]:
        if len(self._text_bounds) > 1:   # JSON rows: decoded a row at a time
            yield from (self[row] for row in range(len(self)))
            return
        key_sets, values = self.key_sets, self._handed_out()
        for key_set, first in zip(self._key_set, self._start, strict=True):
            if key_set == _NONE:
                yield None
            else:
                keys = key_sets[key_set]
                yield dict(zip(keys, values[first:first + len(keys)], strict=True))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ArgsColumn | list):
            return len(self) == len(other) and all(
                a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by content

    def __repr__(self) -> str:
        return f"ArgsColumn({len(self)} rows, {len(self.key_sets)} key sets)"
