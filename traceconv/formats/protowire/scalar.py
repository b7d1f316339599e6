"""One protobuf field at a time: varints of 64 bits, field keys, bounds-checked lengths.

Every read takes the end of the enclosing message, so a length or a varint that runs past
it is a :class:`WireError` naming the byte where the field starts (a cut file), never a
read past the buffer or a silently short value. No numpy here: the sniffers import this.

>>> read_varint(b"\\xac\\x02", 0)
(300, 2)
>>> read_varint(b"\\xff" * 9 + b"\\x01", 0)[0] == 2**64 - 1
True
>>> list(iter_fields(b"\\x08\\x96\\x01\\x12\\x02hi"))
[(1, 0, 150, 3), (2, 2, 5, 7)]
"""

from __future__ import annotations

from collections.abc import Iterator

UINT64_MASK = (1 << 64) - 1
VARINT, FIXED64, LENGTH, START_GROUP, END_GROUP, FIXED32 = 0, 1, 2, 3, 4, 5
MAX_VARINT_BYTES = 10


class WireError(ValueError):
    """Bytes that are not protobuf wire format; ``offset`` is where in the buffer."""

    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.offset = offset


def read_varint(data: bytes | bytearray | memoryview, pos: int, end: int | None = None
                ) -> tuple[int, int]:
    """The varint at ``pos`` (as unsigned 64 bits) and the position after it.

    Raises :class:`WireError` when it runs past ``end`` (default: the buffer's end) or
    over ten bytes. Bits past the 64th, which a tenth byte may carry, are dropped as the
    protobuf runtime drops them.

    >>> read_varint(b"\\x80", 0)
    Traceback (most recent call last):
    ...
    traceconv.formats.protowire.scalar.WireError: a varint is cut short
    """
    if end is None:
        end = len(data)
    start = pos
    value = shift = 0
    while pos < end:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value & UINT64_MASK, pos
        shift += 7
        if shift >= 7 * MAX_VARINT_BYTES:
            raise WireError("a varint runs over 10 bytes", start)
    raise WireError("a varint is cut short", start)


def skip_value(data: bytes | bytearray | memoryview, wire: int, pos: int, end: int,
               field_at: int) -> int:
    """The position after the value of wire type ``wire`` at ``pos``: what an unknown field
    costs. Groups (3, 4, deprecated since proto2 and written by no profiler) and wire types
    6 and 7 are refused.

    >>> skip_value(b"\\x05abcde", LENGTH, 0, 6, 0)
    6
    """
    if wire == VARINT:
        return read_varint(data, pos, end)[1]
    if wire == LENGTH:
        field_at = pos   # (a length past the end: the length is what is wrong)
        length, pos = read_varint(data, pos, end)
        after = pos + length
    elif wire == FIXED64:
        after = pos + 8
    elif wire == FIXED32:
        after = pos + 4
    else:
        raise WireError(f"wire type {wire} is not supported (a group, or not protobuf)",
                        field_at)
    if after > end:
        raise WireError(past_end(after - pos, end - pos), field_at)
    return after


def past_end(needed: int, left: int) -> str:
    """The text of a value that runs past its message (the file was cut, or is not this).

    >>> past_end(5, 3)
    'a field of 5 bytes runs past the end of its message (3 bytes left): the file is cut or damaged'
    """
    return (f"a field of {needed:,} bytes runs past the end of its message "
            f"({left:,} bytes left): the file is cut or damaged")


def iter_fields(data: bytes | bytearray | memoryview, pos: int = 0, end: int | None = None
                ) -> Iterator[tuple[int, int, int, int]]:
    """(number, wire type, value, after) of each field of the message ``data[pos:end]``:
    ``value`` is the varint, the fixed bits, or for a length-delimited field where its
    payload starts (``after`` is where it ends)."""
    if end is None:
        end = len(data)
    while pos < end:
        field_at = pos
        key, pos = read_varint(data, pos, end)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0", field_at)
        if wire == VARINT:
            value, pos = read_varint(data, pos, end)
            yield number, wire, value, pos
        elif wire == LENGTH:
            length, start = read_varint(data, pos, end)
            if start + length > end:
                raise WireError(past_end(length, end - start), pos)
            pos = start + length
            yield number, wire, start, pos
        else:
            after = skip_value(data, wire, pos, end, field_at)
            yield number, wire, int.from_bytes(data[pos:after], "little"), after
            pos = after
