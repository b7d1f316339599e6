"""Protobuf wire-format encoding by hand: varints, tags and length-delimited fields.

The generated message classes cost about 10 µs per packet; these helpers build the same
bytes with a few dictionary lookups and ``bytes.join``, which is what lets the writer emit
a million events in seconds. Field numbers come from ``perfetto_trace.proto``.
"""

from __future__ import annotations

import struct

import numpy as np

from ...control_pictures import NUL_PICTURE

_SMALL = [bytes([v]) for v in range(0x80)]
_DOUBLE = struct.Struct("<d").pack
_FIXED64 = struct.Struct("<Q").pack
UINT64_MASK = (1 << 64) - 1
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

# Wire types.
VARINT, FIXED64, LENGTH = 0, 1, 2


def varint(value: int) -> bytes:
    """Base-128 varint of ``value``; negative numbers are two's complement (10 bytes).

    >>> varint(1), varint(300), len(varint(-1))
    (b'\\x01', b'\\xac\\x02', 10)
    """
    if 0 <= value < 0x80:
        return _SMALL[value]
    if 0 < value < 1 << 28:  # unrolled: most ids, sizes and lengths are 2 to 4 bytes
        if value < 1 << 14:
            return bytes(((value & 0x7F) | 0x80, value >> 7))
        if value < 1 << 21:
            return bytes(((value & 0x7F) | 0x80, ((value >> 7) & 0x7F) | 0x80, value >> 14))
        return bytes(((value & 0x7F) | 0x80, ((value >> 7) & 0x7F) | 0x80,
                      ((value >> 14) & 0x7F) | 0x80, value >> 21))
    value &= UINT64_MASK
    out = []
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def tag(field: int, wire_type: int) -> bytes:
    """The key of field ``field``.

    >>> tag(11, LENGTH)
    b'Z'
    """
    return varint((field << 3) | wire_type)


def uint_field(field: int, value: int) -> bytes:
    """A varint field (also for enums, bools and non-negative ints)."""
    return tag(field, VARINT) + varint(value)


def bytes_field(field: int, payload: bytes) -> bytes:
    """A length-delimited field (strings, bytes, sub-messages)."""
    return tag(field, LENGTH) + varint(len(payload)) + payload


def string_field(field: int, text: str) -> bytes:
    """A string field; text that is not valid UTF-8 (lone surrogates) is replaced, not fatal."""
    return bytes_field(field, utf8(text))


def double_field(field: int, value: float) -> bytes:
    return tag(field, FIXED64) + _DOUBLE(value)


def fixed64_field(field: int, value: int) -> bytes:
    return tag(field, FIXED64) + _FIXED64(value & UINT64_MASK)


# (trace_processor keeps a string only up to its first NUL, its string pool holding C
# strings: a NUL is written as its control picture, and counted: take_nul_replaced)
_nul_replaced: set[str] = set()   # the texts given a stand-in since take_nul_replaced


def utf8(text: str) -> bytes:
    """UTF-8 bytes of ``text``, replacing what cannot be encoded (lone surrogates) and
    every NUL (by its control picture, :data:`~traceconv.control_pictures.NUL_PICTURE`,
    counted for :func:`take_nul_replaced`). Every string
    the Perfetto writer writes comes through here.

    >>> utf8("a\\ud800b"), utf8("sub\\0tract").decode()
    (b'a?b', 'sub␀tract')
    """
    if "\0" in text:
        _nul_replaced.add(text)
        text = text.replace("\0", NUL_PICTURE)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def take_nul_replaced() -> set[str]:
    """The texts :func:`utf8` wrote with a NUL replaced since the last call (each once,
    however often it was written: per packet sequence, per worker).

    >>> _ = take_nul_replaced(); _ = utf8("a\\0b"), utf8("a\\0b"), utf8("c\\0")
    >>> sorted(take_nul_replaced()), take_nul_replaced()
    (['a\\x00b', 'c\\x00'], set())
    """
    texts = set(_nul_replaced)
    _nul_replaced.clear()
    return texts


def add_nul_replaced(texts: set[str]) -> None:
    """Texts another process (a forked encoder) wrote with a NUL replaced, for the next
    :func:`take_nul_replaced` of this one."""
    _nul_replaced.update(texts)


def message(*fields: bytes) -> bytes:
    """Concatenate encoded fields into one message body."""
    return b"".join(fields)


def varint_sizes(values: np.ndarray) -> np.ndarray:
    """Bytes in the varint of each uint64 in ``values`` (1 to 10).

    >>> varint_sizes(np.array([0, 127, 128, 2**64 - 1], dtype=np.uint64)).tolist()
    [1, 1, 2, 10]
    """
    sizes = varint_size_column(values)
    return np.full(len(values), sizes, dtype=np.int64) if isinstance(sizes, int) else sizes


def varint_size_column(values: np.ndarray) -> np.ndarray | int:
    """:func:`varint_sizes`, or one int when every value takes the same size (timestamps,
    track uuids and name ids mostly do), so that no column of equal sizes is made.

    >>> varint_size_column(np.array([300, 16383], dtype=np.uint64))
    2
    """
    if not len(values):
        return 1
    # every size lies between those of the smallest and the largest value: only the
    # steps between are compared
    least, most = (len(varint(int(v))) for v in (values.min(), values.max()))
    if least == most:
        return least
    sizes = np.full(len(values), least, dtype=np.int64)
    for k in range(least, most):
        sizes += values >= np.uint64(1 << (7 * k))
    return sizes


Field = tuple[bytes, np.ndarray, np.ndarray]   # (tag, uint64 values, present): optional
Part = bytes | np.ndarray | Field
_MAX_SHAPES = 64   # distinct row layouts packed apart; beyond, rows are packed one by one


def part_sizes(part: Part) -> np.ndarray | int:
    """Bytes that ``part`` takes in each row (an int when the same in every row)."""
    if isinstance(part, bytes):
        return len(part)
    if isinstance(part, tuple):
        tag, values, present = part
        if not present.any():
            return 0
        sizes = len(tag) + varint_size_column(values)
        return sizes if present.all() else np.where(present, sizes, 0)
    return part.shape[1] if part.ndim == 2 else varint_size_column(part)


def pack_rows(parts: list[Part], rows: int,
              sizes: list[np.ndarray | int] | None = None) -> list[bytes]:
    """Per row, the concatenation of ``parts``, built with numpy: a ``bytes`` part is the
    same in every row, a 1-D uint64 array gives each row its varint (negative numbers as
    two's complement, as :func:`varint` writes them), a 2-D uint8 array its row of bytes, a
    (tag, values, present) field the tag and the varint in the rows where it is present.

    Rows whose varints have the same sizes share a layout and are written as one
    fixed-width matrix (numpy's boolean compaction of ragged rows costs more than this).
    ``sizes``: the :func:`part_sizes` of the parts, when the caller has them.

    >>> pack_rows([b"\\x08", np.array([1, 300, 2], dtype=np.uint64), b"!"], 3)
    [b'\\x08\\x01!', b'\\x08\\xac\\x02!', b'\\x08\\x02!']
    >>> pack_rows([np.array([[1, 2], [3, 4]], dtype=np.uint8),
    ...            (b"P", np.array([5, 6], dtype=np.uint64), np.array([True, False]))], 2)
    [b'\\x01\\x02P\\x05', b'\\x03\\x04']
    """
    if not rows:
        return []
    if sizes is None:
        sizes = [part_sizes(part) for part in parts]
    widths = {i: size for i, size in enumerate(sizes) if isinstance(size, int)}
    varying = {i: size for i, size in enumerate(sizes) if not isinstance(size, int)}
    if not varying:
        return _pack_fixed(parts, widths, rows)
    layout = np.zeros(rows, dtype=np.int64)   # the sizes of a row's varints, in base 16
    for size in varying.values():
        layout = layout * 16 + size
        if int(layout.max()) >= 1 << 58:   # renumber before the next digit overflows
            layout = np.unique(layout, return_inverse=True)[1].astype(np.int64)
    if int(layout.min()) == int(layout.max()):
        return _pack_fixed(parts, widths | {i: int(size[0]) for i, size in varying.items()},
                           rows)
    shapes = np.flatnonzero(np.bincount(layout)) if int(layout.max()) < 1 << 16 else \
        np.unique(layout)
    if len(shapes) > _MAX_SHAPES:
        return [varint_row(parts, row) for row in range(rows)]
    shape_of = np.searchsorted(shapes, layout).astype(np.uint8)
    order = np.argsort(shape_of, kind="stable")   # a radix sort on uint8
    cuts = np.cumsum(np.bincount(shape_of)).tolist()
    packed: list[bytes] = []
    for lo, hi in zip([0, *cuts[:-1]], cuts, strict=True):
        picked = order[lo:hi]
        first = int(picked[0])
        packed += _pack_fixed([_rows_of(p, picked) for p in parts],
                              widths | {i: int(size[first]) for i, size in varying.items()},
                              hi - lo)
    place = np.empty(rows, dtype=np.int64)
    place[order] = np.arange(rows)
    return list(map(packed.__getitem__, place.tolist()))


def _rows_of(part: Part, picked: np.ndarray) -> Part:
    if isinstance(part, bytes):
        return part
    if isinstance(part, tuple):
        return part[0], part[1][picked], part[2][picked]
    return part[picked]


def varint_row(parts: list[Part], row: int) -> bytes:
    """Row ``row`` of :func:`pack_rows`, one at a time."""
    out = []
    for part in parts:
        if isinstance(part, bytes):
            out.append(part)
        elif isinstance(part, tuple):
            if part[2][row]:
                out += (part[0], varint(int(part[1][row])))
        else:
            out.append(bytes(part[row]) if part.ndim == 2 else varint(int(part[row])))
    return b"".join(out)


def _pack_fixed(parts: list[Part], widths: dict[int, int], rows: int) -> list[bytes]:
    """:func:`pack_rows` for rows of one layout: ``widths`` gives each varint's size
    (with its tag, for a field; 0 for a field that is absent).

    A varint byte is written as its value shifted by 7k, cut to its low 8 bits by the
    assignment to uint8; the continuation bits are then or-ed on for all columns at once
    (bit 7 of a last byte is always 0: the value fits its width).
    """
    template = bytearray()   # the bytes that are the same in every row, zeros elsewhere
    more = bytearray()       # 0x80 where a varint continues
    varints: list[tuple[int, int, np.ndarray]] = []   # (column, width, values)
    blocks: list[tuple[int, np.ndarray]] = []        # (column, 2-D part)
    for i, part in enumerate(parts):
        if isinstance(part, bytes):
            template += part
        elif isinstance(part, np.ndarray) and part.ndim == 2:
            blocks.append((len(template), part))
            template += bytes(part.shape[1])
        else:
            width = widths[i]
            if isinstance(part, tuple):
                if not width:
                    continue
                template += part[0]
                width -= len(part[0])
                part = part[1]
            more += bytes(len(template) - len(more)) + b"\x80" * (width - 1)
            varints.append((len(template), width, part))
            template += bytes(width)
    total = len(template)
    if not total:
        return [b""] * rows
    matrix = np.empty((rows, total), dtype=np.uint8)
    matrix[:] = np.frombuffer(bytes(template), dtype=np.uint8)
    for column, block in blocks:
        matrix[:, column:column + block.shape[1]] = block
    for column, width, values in varints:
        rest = values.astype(np.uint64) if width > 1 else values
        for k in range(width):
            matrix[:, column + k] = rest   # its low 8 bits
            if k < width - 1:
                rest >>= np.uint64(7)
    if more:
        matrix |= np.frombuffer(bytes(more + bytes(total - len(more))), dtype=np.uint8)
    return matrix.view(f"V{total}").ravel().tolist()   # one bytes object per row, in C
