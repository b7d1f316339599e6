"""Protobuf wire format decoded for many messages at once, with numpy (the reader's hot path).

:mod:`.scalar` reads one field at a time; a million packets read that way cost several
seconds of Python. Here every step works on all messages of a block together: one
round reads the next field of every message that has one left, so a block of packets takes
as many rounds as its longest packet has fields (a dozen), not one round per packet.

A :class:`Fields` table holds, per field met: the message it belongs to, its number, wire
type, value (varint, fixed64 or fixed32 bits) and, for length-delimited fields, where its
payload lies in the buffer. Rows come round by round, so each message's fields keep their
order among themselves (what repeated fields need).

>>> buf = padded(b"\\x08\\x96\\x01\\x12\\x02hi" + b"\\x08\\x01")
>>> f = decode_fields(buf, np.array([0, 7]), np.array([7, 9])).where_in(np.array([1, 2]))
>>> f.msg.tolist(), f.field.tolist(), f.value.tolist(), f.offset.tolist(), f.length.tolist()
([0, 1, 0], [1, 1, 2], [150, 1, 0], [1, 8, 5], [0, 0, 2])
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .scalar import FIXED32, FIXED64, LENGTH, VARINT, WireError

PAD = 16   # zero bytes after the data: a gather of 10 varint bytes never leaves the buffer
_BYTES8 = np.arange(8, dtype=np.int64)


def padded(data: bytes | bytearray | memoryview) -> np.ndarray:
    """``data`` as a uint8 array followed by :data:`PAD` zero bytes."""
    buf = np.zeros(len(data) + PAD, dtype=np.uint8)
    buf[:len(data)] = np.frombuffer(data, dtype=np.uint8)
    return buf


_HIGH = np.uint64(0x8080808080808080)
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_ONE = np.uint64(1)
# Squeezing the 7-bit groups of a word together, a doubling at a time: pairs of groups,
# then pairs of 14 bits, then of 28 (three steps, not a shift per group).
_SQUEEZE = [(np.uint64(mask), np.uint64(keep), np.uint64(shift)) for mask, keep, shift in (
    (0x7F007F007F007F00, 0x007F007F007F007F, 1), (0x3FFF00003FFF0000, 0x00003FFF00003FFF, 2),
    (0x0FFFFFFF00000000, 0x000000000FFFFFFF, 4))]
_BYTE_BITS = np.uint64(0x0101010101010101)


def words(buf: np.ndarray) -> np.ndarray:
    """Every 8-byte little-endian word of ``buf``, one starting at each byte (a strided view:
    no copy), so that one gather reads up to 8 bytes of a varint."""
    return np.ndarray(shape=(len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))


def varints(buf: np.ndarray, pos: np.ndarray, word: np.ndarray | None = None
            ) -> tuple[np.ndarray, np.ndarray]:
    """The varint at each position of ``pos`` (uint64) and the position after it.

    Varints of up to 8 bytes (all but ids and negative numbers) are read from one 8-byte
    word each, with bit operations; longer ones a byte at a time.

    >>> varints(padded(b"\\x01\\xac\\x02"), np.array([0, 1]))
    (array([  1, 300], dtype=uint64), array([1, 3]))
    """
    first = buf[pos]
    values = first.astype(np.uint64)
    after = pos + 1
    going = np.flatnonzero(first >= 0x80)
    if not len(going):
        return values, after
    at = pos[going]
    word = (words(buf) if word is None else word)[at]
    stops = ~word & _HIGH                  # the high bit of each byte that ends it
    lowest = stops & (~stops + _ONE)       # the first of them
    below = lowest - _ONE                  # the bits before it (all 64 when none: long)
    value = word & below & _LOW7
    for mask, keep, shift in _SQUEEZE:
        value = ((value & mask) >> shift) | (value & keep)
    values[going] = value
    # its bytes but the last have bit 7 of ``below`` set: their count, summed by a multiply
    size = ((below >> np.uint64(7)) & _BYTE_BITS) * _BYTE_BITS >> np.uint64(56)
    after[going] = at + size.astype(np.int64) + 1
    long = going[stops == 0]
    if len(long):   # 9 or 10 bytes (timestamps, ids): the 9th and 10th bytes after the word
        tail = buf[pos[long] + 8].astype(np.uint64)
        tenth = buf[pos[long] + 9].astype(np.uint64)
        ten = tail >= 0x80
        if (tenth[ten] >= 0x80).any():
            raise WireError("a varint runs over 10 bytes",
                            int(pos[long[ten][np.argmax(tenth[ten] >= 0x80)]]))
        values[long] |= ((tail & np.uint64(0x7F)) << np.uint64(56)) | np.where(
            ten, tenth << np.uint64(63), np.uint64(0))
        after[long] = pos[long] + 9 + ten
    return values, after


def fixed(buf: np.ndarray, pos: np.ndarray, width: int) -> np.ndarray:
    """The little-endian fixed64 (``width`` 8) or fixed32 (4) at each position, as uint64."""
    window = np.ascontiguousarray(buf[pos[:, None] + _BYTES8[:width]])
    kind = "<u8" if width == 8 else "<u4"
    return window.view(kind).ravel().astype(np.uint64)


class FieldRows(NamedTuple):
    """Fields of a set of messages (see the module docstring)."""

    msg: np.ndarray      # int64: the message's index in the ``starts`` given
    field: np.ndarray    # int64 field number
    wire: np.ndarray     # int64 wire type
    value: np.ndarray    # uint64: varint value, fixed64/fixed32 bits (0 when length-delimited)
    offset: np.ndarray   # int64: where the payload starts (length-delimited fields)
    length: np.ndarray   # int64: the payload's length

    @property
    def rows(self) -> int:
        """How many fields (``len()`` is the tuple's: 6)."""
        return len(self.msg)

    def last_per_message(self, count: int, fill: int = 0) -> tuple[np.ndarray, np.ndarray]:
        """(value per message, whether present) of a singular field: the last one wins, as
        protobuf merges. ``count``: the number of messages."""
        values = np.full(count, fill, dtype=np.uint64)
        present = np.zeros(count, dtype=bool)
        values[self.msg] = self.value   # rows come in field order: the last write wins
        present[self.msg] = True
        return values, present


class Fields:
    """Every field of a set of messages, kept as the rounds that read them (selecting one
    field number touches only its rows; nothing is concatenated that is not asked for)."""

    def __init__(self, rounds: list[FieldRows]) -> None:
        self.rounds = rounds
        self._index: list[tuple[np.ndarray, dict[int, tuple[int, int]]]] | None = None

    def _by_number(self) -> list[tuple[np.ndarray, dict[int, tuple[int, int]]]]:
        """Per round: its rows sorted by field number, and where each number's rows lie."""
        if self._index is None:
            self._index = []
            for r in self.rounds:
                order = np.argsort(np.minimum(r.field, 0xFFFF).astype(np.uint16), kind="stable")
                numbers = r.field[order]
                cuts = np.flatnonzero(np.r_[True, numbers[1:] != numbers[:-1], True])
                self._index.append((order, {int(numbers[lo]): (int(lo), int(hi)) for lo, hi
                                            in zip(cuts[:-1], cuts[1:], strict=True)}))
        return self._index

    def where(self, number: int, wire: int | None = None) -> FieldRows:
        """The rows of field ``number`` (of wire type ``wire`` when given), in round order."""
        parts = []
        for r, (order, spans) in zip(self.rounds, self._by_number(), strict=True):
            span = spans.get(number)
            if span is None:
                continue
            rows = order[span[0]:span[1]]
            if wire is not None:
                rows = rows[r.wire[rows] == wire]
            parts.append(FieldRows(*(column[rows] for column in r)))
        return _joined(parts)

    def last_per_message(self, number: int, wire: int, count: int
                         ) -> tuple[np.ndarray, np.ndarray]:
        """``where(number, wire).last_per_message(count)``, reading two of the six
        columns (a singular field of every packet or event: millions of rows).

        >>> f = decode_fields(padded(b"\\x08\\x01\\x08\\x02\\x10\\x03"), np.array([0, 4, 6]),
        ...                   np.array([4, 6, 6]))
        >>> [column.tolist() for column in f.last_per_message(1, VARINT, 3)]
        [[2, 0, 0], [True, False, False]]
        """
        values = np.zeros(count, dtype=np.uint64)
        present = np.zeros(count, dtype=bool)
        for r, (order, spans) in zip(self.rounds, self._by_number(), strict=True):
            span = spans.get(number)
            if span is not None:   # (rounds in field order: a later one's value wins)
                rows = order[span[0]:span[1]]
                rows = rows[r.wire[rows] == wire]
                values[r.msg[rows]] = r.value[rows]
                present[r.msg[rows]] = True
        return values, present

    def payloads(self, number: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(message, offset, length) of the length-delimited fields ``number``, sorted by
        message, each message's in their order: :meth:`where` then
        :func:`in_message_order` for the three columns a submessage needs, not all six
        (a million debug annotations).

        >>> f = decode_fields(padded(b"\\x0a\\x01a\\x0a\\x00\\x0a\\x01b"), np.array([0, 5]),
        ...                   np.array([5, 8]))
        >>> [column.tolist() for column in f.payloads(1)]
        [[0, 0, 1], [2, 5, 7], [1, 0, 1]]
        """
        parts = []
        for r, (order, spans) in zip(self.rounds, self._by_number(), strict=True):
            span = spans.get(number)
            if span is not None:
                rows = order[span[0]:span[1]]
                rows = rows[r.wire[rows] == LENGTH]
                parts.append((r.msg[rows], r.offset[rows], r.length[rows]))
        if not parts:
            return _NOTHING, _NOTHING, _NOTHING
        msg, offset, length = (np.concatenate(c) if len(parts) > 1 else c[0]
                               for c in zip(*parts, strict=True))
        if len(msg) > 1 and not (msg[1:] >= msg[:-1]).all():
            order = np.argsort(msg, kind="stable")
            msg, offset, length = msg[order], offset[order], length[order]
        return msg, offset, length

    def where_in(self, numbers: np.ndarray) -> FieldRows:
        """The rows whose field number is one of ``numbers``."""
        table = _number_table(numbers, True)
        return self._select(lambda r: table[np.minimum(r.field, len(table) - 1)])

    def where_not_in(self, numbers: np.ndarray) -> FieldRows:
        """The rows whose field number is none of ``numbers``."""
        table = _number_table(numbers, False)
        return self._select(lambda r: table[np.minimum(r.field, len(table) - 1)])

    def _select(self, test: Any) -> FieldRows:
        parts = []
        for r in self.rounds:
            keep = test(r)
            if keep.all():
                parts.append(r)
            elif keep.any():
                parts.append(FieldRows(*(column[keep] for column in r)))
        return _joined(parts)


def _number_table(numbers: np.ndarray, listed: bool) -> np.ndarray:
    """Per field number up to the largest of ``numbers``, then one entry for all larger
    ones: whether it is ``listed`` (one lookup per row, a fifth of ``np.isin``'s time).

    >>> _number_table(np.array([1, 3]), True).tolist()
    [False, True, False, True, False]
    """
    table = np.full(int(numbers.max()) + 2, not listed)
    table[numbers] = listed
    return table


def _joined(parts: list[FieldRows]) -> FieldRows:
    if not parts:
        return _EMPTY
    if len(parts) == 1:
        return parts[0]
    return FieldRows(*(np.concatenate(columns) for columns in zip(*parts, strict=True)))


_NOTHING = np.zeros(0, dtype=np.int64)
_EMPTY = FieldRows(_NOTHING, _NOTHING, _NOTHING, np.zeros(0, dtype=np.uint64), _NOTHING,
                   _NOTHING)


def decode_fields(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> Fields:
    """All fields of the messages ``buf[starts[i]:ends[i]]`` (see :class:`Fields`).

    Raises :class:`WireError` on bytes that are not wire format (a field running past its
    message, a group, an unknown wire type).
    """
    index = np.flatnonzero(starts < ends)
    cursor = starts[index].astype(np.int64)
    limit = ends[index].astype(np.int64)
    rounds: list[FieldRows] = []
    while len(index):
        tags, at = varints(buf, cursor)
        wire = (tags & np.uint64(7)).astype(np.int64)
        number = (tags >> np.uint64(3)).astype(np.int64)
        value = np.zeros(len(index), dtype=np.uint64)
        length = np.zeros(len(index), dtype=np.int64)
        after = np.empty(len(index), dtype=np.int64)
        offset = at.copy()
        for kind in np.flatnonzero(np.bincount(wire, minlength=8)).tolist():
            rows = np.flatnonzero(wire == kind)
            pos = at[rows]
            if kind == VARINT:
                value[rows], after[rows] = varints(buf, pos)
            elif kind == LENGTH:
                size, body = varints(buf, pos)
                if (size > np.uint64(1 << 40)).any():
                    bad = int(pos[np.argmax(size > np.uint64(1 << 40))])
                    raise WireError("a length-delimited field is longer than its message", bad)
                length[rows] = size.astype(np.int64)
                offset[rows] = body
                after[rows] = body + length[rows]
            elif kind == FIXED64:
                value[rows] = fixed(buf, pos, 8)
                after[rows] = pos + 8
            elif kind == FIXED32:
                value[rows] = fixed(buf, pos, 4)
                after[rows] = pos + 4
            else:
                raise WireError(f"unsupported wire type {kind}", int(cursor[rows[0]]))
        past = after > limit
        if past.any():
            raise WireError("a field runs past the end of its message",
                            int(cursor[np.argmax(past)]))
        if (number == 0).any():
            raise WireError("field number 0", int(cursor[np.argmax(number == 0)]))
        rounds.append(FieldRows(index, number, wire, value, offset, length))
        more = after < limit
        index, cursor, limit = index[more], after[more], limit[more]
    return Fields(rounds)


def in_message_order(fields: FieldRows) -> FieldRows:
    """``fields`` sorted by message, each message's fields in their order (stable).

    >>> f = decode_fields(padded(b"\\x08\\x01\\x08\\x02\\x08\\x03"), np.array([0, 4]), np.array([4, 6]))
    >>> in_message_order(f.where(1)).value.tolist()
    [1, 2, 3]
    """
    if fields.rows < 2 or (fields.msg[1:] >= fields.msg[:-1]).all():
        return fields
    order = np.argsort(fields.msg, kind="stable")
    return FieldRows(*(column[order] for column in fields))


def as_int64(values: np.ndarray) -> np.ndarray:
    """uint64 bits read as int64 (two's complement, as int64 varints are written).

    >>> as_int64(np.array([2**64 - 5], dtype=np.uint64)).tolist()
    [-5]
    """
    return values.view(np.int64)
