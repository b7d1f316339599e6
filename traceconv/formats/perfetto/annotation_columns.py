"""Debug annotations for many events at once: key set by key set, column by column.

The rows of one key set are a table (:func:`~traceconv.model.arg_groups.key_groups`): for
each key, the values of all its rows are encoded together (ints, floats and bools with
numpy, strings and lists through the per-name caches of :class:`~.annotations.ArgEncoder`),
then each row's annotations are joined. Rows a reader kept as JSON text stay text as long as
they can: a column of lists or dicts is looked up in the cache by each value's text, and
only texts not seen before are decoded. The bytes are exactly those of
:meth:`ArgEncoder.encode_items` for the same row.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import msgspec
import numpy as np

from ...json_decode import lenient
from ...model.arg_groups import KeyGroup, key_groups
from ...model.args import ArgsColumn
from ..json_texts import json_texts
from .annotations import _BOOL, _DOUBLE_TAG, _INT, ArgEncoder, _Key
from .wire import Part, pack_rows, varint_sizes

_FEW_ROWS = 8   # a key set with fewer rows in a batch is encoded row by row
_CONTAINERS = b"[{"   # the first byte of a list's or dict's JSON text
_DECODE_ANY = lenient()
_DECODE_ROWS = msgspec.json.Decoder(list[list[msgspec.Raw]]).decode
_JOINT_LIMIT = 1 << 16   # joint texts kept encoded (see ColumnEncoder._encode_joint)


class ColumnEncoder:
    """Encodes rows of an args column as TrackEvent ``debug_annotations`` bytes.

    Rows a reader kept as JSON text are decoded batch by batch, only while they are
    encoded (the column keeps them as text). Names are interned in the shared
    :class:`~.annotations.ArgEncoder` on first use; :meth:`take_names` hands over those the
    rows encoded since its last call used, for the writer to intern before them.

    >>> column = ArgsColumn([{"bytes": 64, "dtype": "float"}, None, {"bytes": 300.5}])
    >>> enc = ColumnEncoder(column)
    >>> enc.encode_rows(np.array([0, 1, 2])) == [ArgEncoder().encode(column[0]), b"",
    ...                                          enc.args.encode_items([("bytes", 300.5)])]
    True
    >>> enc.take_names()
    [(1, 'bytes'), (2, 'dtype')]
    """

    def __init__(self, column: ArgsColumn, args: ArgEncoder | None = None) -> None:
        self.column = column
        self.args = args or ArgEncoder()
        self._used: set[tuple[int, str]] = set()
        # joint texts of consecutive columns -> their annotations (see _encode_joint)
        self._joint: dict[tuple[_Key, ...], dict[bytes, bytes]] = {}
        self._joint_count = 0

    def take_names(self) -> list[tuple[int, str]]:
        """(iid, name) of the names used since the last call."""
        used, self._used = sorted(self._used), set()
        return used

    def encode_rows(self, rows: np.ndarray) -> list[bytes]:
        """The annotations of each row in ``rows`` (row indices), in that order."""
        flat: list[bytes] = []
        order: list[np.ndarray] = []
        for positions, columns in self.groups(rows):
            order.append(positions)
            flat += columns[0] if len(columns) == 1 else map(b"".join, zip(*columns, strict=True))
        if not flat:
            return []
        place = np.empty(len(rows), dtype=np.int64)
        place[np.concatenate(order)] = np.arange(len(rows))
        return list(map(flat.__getitem__, place.tolist()))

    def groups(self, rows: np.ndarray) -> Iterator[tuple[np.ndarray, list[list[bytes]]]]:
        """``rows`` grouped by key set: the positions in ``rows`` of each group's rows, and
        the pieces of their annotations (lists of per-row bytes, to be joined per row)."""
        for positions, lead, rest in self.parts(rows):
            pieces = [pack_rows(lead, len(positions)), *rest] if lead else rest
            yield positions, pieces or [[b""] * len(positions)]

    def parts(self, rows: np.ndarray
              ) -> Iterator[tuple[np.ndarray, list[Part], list[list[bytes]]]]:
        """:meth:`groups` with the leading numeric annotations of each group still as
        :func:`~.wire.pack_rows` parts (a writer packs them with the rest of its fields),
        followed by the other pieces."""
        for group in key_groups(self.column, rows):
            if not group.keys:
                yield group.positions, [], []
            else:   # names interned in the order of the rows: the same however held
                self._used.update(self.args.intern_names(group.keys))
                yield (group.positions, *self._key_set_parts(group))

    def _key_set_parts(self, group: KeyGroup) -> tuple[list[Part], list[list[bytes]]]:
        keys, args, rows = group.keys, self.args, len(group)
        assert keys is not None
        if rows < _FEW_ROWS:
            by_key = [group.values(j) for j in range(len(keys))]
            return [], [[args.encode_items(zip(keys, values, strict=True))
                         for values in zip(*by_key, strict=True)]]
        entries = [args.entry(key) for key in keys]
        lead: list[Part] | None = None   # the numeric columns before any other
        columns: list[list[bytes]] = []
        numeric: list[Part] = []   # consecutive numeric columns, packed together
        for first, stop, as_text in _column_runs(entries, group):
            entry = entries[first]
            if stop - first > 1:
                encoded = self._encode_joint(entries[first:stop], group.joint_texts(first, stop))
            elif as_text:
                encoded = self._encode_texts(entry, group.texts(first))
            else:
                numbers = group.ints(first)
                if numbers is not None:
                    numeric += _int_parts(entry, numbers)
                    continue
                values_j = group.values(first)
                parts = _numeric_parts(entry, values_j)
                if parts is not None:
                    numeric += parts
                    continue
                encoded = self._encode_column(entry, values_j)
            if lead is None:
                lead, numeric = numeric, []
            elif numeric:
                columns.append(pack_rows(numeric, rows))
                numeric = []
            columns.append(encoded)
        if lead is None:
            lead, numeric = numeric, []
        elif numeric:
            columns.append(pack_rows(numeric, rows))
        dotted = [j for j, entry in enumerate(entries) if entry.dotted]
        if dotted:   # after the others, as encode_items writes them
            columns.append(self._encode_dotted([keys[j] for j in dotted],
                                               [group.values(j) for j in dotted]))
        return lead, columns

    def _encode_texts(self, entry: _Key, texts: list[bytes] | None) -> list[bytes]:
        """A column given as JSON texts, through the name's cache keyed by the text itself
        (which tells 1, 1.0 and true apart as well as a dump would): only the texts not
        seen yet are decoded. Meant for lists and dicts, but right for any value: a text
        key (bytes) is never a string value's key (str), and a list's text is never the
        text of another value."""
        assert texts is not None
        found: list[bytes | None] = list(map(entry.values.get, texts))
        if None in found:
            missing = dict.fromkeys(text for text, framed in zip(texts, found, strict=True)
                                    if framed is None)
            decoded = _DECODE_ANY(b"[" + b",".join(missing) + b"]")
            store = self.args.store
            new = {text: store(entry, text, value)
                   for text, value in zip(missing, decoded, strict=True)}
            found = [new[text] if framed is None else framed
                     for text, framed in zip(texts, found, strict=True)]
        return found  # type: ignore[return-value]  # every None was filled

    def _encode_joint(self, entries: list[_Key], texts: list[bytes] | None) -> list[bytes]:
        """Consecutive columns given as one joint JSON text per row
        (:meth:`~traceconv.model.arg_groups.KeyGroup.joint_texts`), through one cache keyed
        by that text: only the rows with a combination not seen yet are split into their
        columns and encoded by :meth:`_encode_texts`, so the bytes are the same."""
        assert texts is not None
        cache = self._joint.setdefault(tuple(entries), {})
        found: list[bytes | None] = list(map(cache.get, texts))
        if None in found:
            missing = list(dict.fromkeys(text for text, framed in zip(texts, found, strict=True)
                                         if framed is None))
            split = _DECODE_ROWS(b"[" + b",".join(missing) + b"]")
            pieces = [self._encode_texts(entry, list(map(bytes, column)))
                      for entry, column in zip(entries, zip(*split, strict=True), strict=True)]
            new = dict(zip(missing, map(b"".join, zip(*pieces, strict=True)), strict=True))
            self._joint_count += len(new)
            if self._joint_count > _JOINT_LIMIT:   # bounded memory: start afresh
                for known in self._joint.values():
                    known.clear()
                self._joint_count = len(new)
            cache.update(new)
            found = [new[text] if framed is None else framed
                     for text, framed in zip(texts, found, strict=True)]
        return found  # type: ignore[return-value]  # every None was filled

    def _encode_dotted(self, keys: list[Any], columns: list[list[Any]]) -> list[bytes]:
        """The nested-dict annotations of dotted names, row by row, each distinct tuple of
        values (and of their types: 1, 1.0 and True differ) encoded once."""
        encode = self.args.encode_items
        seen: dict[tuple[Any, ...], bytes] = {}
        out = []
        for values in zip(*columns, strict=True):
            try:
                cache_key: tuple[Any, ...] | None = (values, tuple(map(type, values)))
                found = seen.get(cache_key)  # type: ignore[arg-type]
            except TypeError:   # a list or dict among the values: not hashable
                cache_key = found = None
            if found is None:
                found = encode(zip(keys, values, strict=True))
                if cache_key is not None:
                    seen[cache_key] = found
            out.append(found)
        return out

    def _encode_column(self, entry: _Key, column: list[Any]) -> list[bytes]:
        """Strings, lists and dicts through the name's cache; anything else one by one."""
        kinds = set(map(type, column))
        if kinds == {str}:
            return self._cached(entry, column, column)
        if kinds <= {list, dict}:
            try:
                cache_keys = json_texts(column)   # tells 1, 1.0 and true apart
            except TypeError:   # ints beyond 64 bits, non-JSON values: no cache
                pass
            else:
                return self._cached(entry, cache_keys, column)
        encode = self.args.encode_items
        name = entry.text
        return [encode(((name, value),)) for value in column]

    def _cached(self, entry: _Key, cache_keys: list[Any], column: list[Any]) -> list[bytes]:
        found: list[bytes | None] = list(map(entry.values.get, cache_keys))
        if None in found:
            store = self.args.store
            for i, framed in enumerate(found):
                if framed is None:
                    found[i] = store(entry, cache_keys[i], column[i])
        return found  # type: ignore[return-value]  # every None was filled


def _column_runs(entries: list[_Key], group: KeyGroup) -> list[tuple[int, int, bool]]:
    """The columns of ``group`` but the dotted ones, in key order, as (first, stop, as
    text): the columns held as texts of lists or dicts that come one after another as one
    run, any other column alone."""
    runs: list[tuple[int, int, bool]] = []
    for j, entry in enumerate(entries):
        if entry.dotted:
            continue
        as_text = group.text_starts(j, _CONTAINERS)
        if as_text and runs and runs[-1][2] and runs[-1][1] == j:
            runs[-1] = (runs[-1][0], j + 1, True)
        else:
            runs.append((j, j + 1, as_text))
    return runs


_DOUBLES = struct.Struct("<d")


def _int_parts(entry: _Key, numbers: np.ndarray) -> list[Part]:
    """:func:`pack_rows` parts for a column of int64 (see :func:`_numeric_parts`)."""
    value = numbers.astype(np.uint64)
    length = varint_sizes(value) + (len(entry.name) + len(_INT))   # < 128: one byte
    return [b"\x22", length.astype(np.uint8).reshape(-1, 1), entry.name + _INT, value]


def _numeric_parts(entry: _Key, column: list[Any]) -> list[Part] | None:
    """:func:`pack_rows` parts for a column of only int64 ints, only floats or only bools
    (the framed annotation: field 4 tag, length, name, value); None for any other column."""
    kinds = set(map(type, column))
    if len(kinds) != 1:
        return None
    kind = kinds.pop()
    name = entry.name
    if kind is int:
        try:
            return _int_parts(entry, np.array(column, dtype=np.int64))
        except OverflowError:   # beyond int64: written as text, one by one
            return None
    if kind is float:
        raw = np.array(column, dtype="<f8").view(np.uint8).reshape(len(column), 8)
        head = b"\x22" + bytes([len(name) + len(_DOUBLE_TAG) + _DOUBLES.size])
        return [head + name + _DOUBLE_TAG, raw]
    if kind is bool:
        flags = np.array(column, dtype=np.uint8).reshape(len(column), 1)
        true = _BOOL[True]
        head = b"\x22" + bytes([len(name) + len(true)]) + name + true[:-1]
        return [head, flags]
    return None



