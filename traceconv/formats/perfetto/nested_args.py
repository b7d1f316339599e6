"""Decoding packets whose debug annotations nest deeper than protobuf's recursion limit.

The Python protobuf runtime refuses messages nested more than 100 deep; trace_processor's
decoder has no such limit and loads debug-annotation dicts and arrays of any depth. So a
packet that fails to decode is decoded again with the nested values of its annotations
cut off (only their names and kinds matter here), and the check goes on.
"""

from __future__ import annotations

from collections.abc import Callable

from ..protowire.scalar import WireError, read_varint, skip_value

_TRACK_EVENT = 11          # TracePacket.track_event
_DEBUG_ANNOTATIONS = 4     # TrackEvent.debug_annotations
_NESTED = (8, 11, 12)      # DebugAnnotation.nested_value, dict_entries, array_values


def _fields(data: bytes) -> list[tuple[int, int, int, int]]:
    """(field number, wire type, start, end) of each top-level field of a message.

    >>> _fields(b"\\x08\\x01\\x12\\x01x")
    [(1, 0, 0, 2), (2, 2, 2, 5)]
    """
    out: list[tuple[int, int, int, int]] = []
    pos, size = 0, len(data)
    while pos < size:
        start = pos
        key, pos = read_varint(data, pos, size)
        if key < 8:
            raise WireError("field number 0", start)
        pos = skip_value(data, key & 7, pos, size, start)
        out.append((key >> 3, key & 7, start, pos))
    return out


def _payload(data: bytes, start: int) -> tuple[int, int]:
    """(payload start, payload end) of the length-delimited field at ``start``."""
    _, pos = read_varint(data, start)
    length, pos = read_varint(data, pos)
    return pos, pos + length


def _length_delimited(number: int, payload: bytes) -> bytes:
    out = bytearray()
    for value in (number << 3 | 2, len(payload)):
        while value > 0x7F:
            out.append(value & 0x7F | 0x80)
            value >>= 7
        out.append(value)
    return bytes(out) + payload


def _rewrite(data: bytes, number: int, edit: Callable[[bytes], bytes]) -> bytes:
    """``data`` with each length-delimited field ``number`` replaced by ``edit(payload)``."""
    out = bytearray()
    for field, wire, start, end in _fields(data):
        if field == number and wire == 2:
            begin, stop = _payload(data, start)
            out += _length_delimited(number, edit(data[begin:stop]))
        else:
            out += data[start:end]
    return bytes(out)


def without_nested_annotations(packet: bytes) -> bytes:
    """The packet with the nested values of its track event's debug annotations removed.

    Raises ``ValueError`` when the packet is not valid protobuf wire format.

    >>> inner = b"\\x5a\\x02\\x50\\x01"                 # dict_entries { name: ... }
    >>> annotation = b"\\x08\\x07" + inner              # name_iid 7, one dict entry
    >>> event = b"\\x22" + bytes([len(annotation)]) + annotation
    >>> without_nested_annotations(b"\\x5a" + bytes([len(event)]) + event)
    b'Z\\x04"\\x02\\x08\\x07'
    """
    def annotation(data: bytes) -> bytes:
        return b"".join(data[start:end] for field, _, start, end in _fields(data)
                        if field not in _NESTED)

    def event(data: bytes) -> bytes:
        return _rewrite(data, _DEBUG_ANNOTATIONS, annotation)

    return _rewrite(packet, _TRACK_EVENT, event)
