"""Where an ``XSpace`` that the protobuf runtime refused is broken, as one located line.

The runtime only says "Error parsing message". This walks the wire format by hand along the
messages of :mod:`.proto` and names the first byte where it stops making sense: a length
running past its enclosing message, a wire type that does not exist (6, 7), a cut varint.
"""

from __future__ import annotations

from ..perfetto.wire import read_varint

# message -> {field number: (field name, sub-message or None)}
_SUB: dict[str, dict[int, tuple[str, str | None]]] = {
    "XSpace": {1: ("planes", "XPlane"), 2: ("errors", None), 3: ("warnings", None),
               4: ("hostnames", None)},
    "XPlane": {2: ("name", None), 3: ("lines", "XLine"),
               4: ("event_metadata", "EventMetadataEntry"),
               5: ("stat_metadata", "StatMetadataEntry"), 6: ("stats", "XStat")},
    "XLine": {2: ("name", None), 4: ("events", "XEvent"), 11: ("display_name", None)},
    "XEvent": {4: ("stats", "XStat")},
    "EventMetadataEntry": {2: ("value", "XEventMetadata")},
    "StatMetadataEntry": {2: ("value", "XStatMetadata")},
    "XEventMetadata": {2: ("name", None), 3: ("metadata", None), 4: ("display_name", None),
                       5: ("stats", "XStat")},
    "XStatMetadata": {2: ("name", None), 3: ("description", None)},
    "XStat": {5: ("str_value", None), 6: ("bytes_value", None)},
}
_FIXED = {1: 8, 5: 4}


class Damage(Exception):
    """The first broken place: ``offset`` (byte), ``path`` (``planes[0].lines[2]``), why."""

    def __init__(self, offset: int, path: str, reason: str) -> None:
        super().__init__(f"byte {offset:,} ({path or 'XSpace'}): {reason}")
        self.offset, self.path, self.reason = offset, path, reason


def locate(data: bytes) -> Damage | None:
    """The first broken place in ``data``, or None when the wire format holds together.

    >>> print(locate(b"\\x0a\\x05\\x12\\x02ab"))
    byte 1 (planes[0]): length 5 runs past the end of XSpace (4 bytes left)
    >>> locate(b"\\x22\\x03abc") is None
    True
    """
    try:
        _walk(data, 0, len(data), "XSpace", "")
    except Damage as damage:
        return damage
    return None


def _walk(data: bytes, pos: int, end: int, message: str, path: str) -> None:
    counts: dict[int, int] = {}
    fields = _SUB.get(message, {})
    while pos < end:
        key_at = pos
        try:
            key, pos = read_varint(data, pos)
        except ValueError:
            raise Damage(key_at, path, f"field key cut short in {message}") from None
        number, wire = key >> 3, key & 7
        name, sub = fields.get(number, (f"field {number}", None))
        index = counts[number] = counts.get(number, -1) + 1
        here = f"{path}.{name}" if path else name
        if sub is not None and name != "value":   # a map entry's value has no index
            here += f"[{index}]"
        if number == 0 or wire in (3, 4, 6, 7):
            raise Damage(key_at, path, f"wire type {wire} (field {number}) does not exist "
                         f"in {message}")
        if wire == 0:
            try:
                _, pos = read_varint(data, pos)
            except ValueError:
                raise Damage(pos, here, "varint cut short") from None
        elif wire in _FIXED:
            pos += _FIXED[wire]
        else:
            length_at = pos
            try:
                length, pos = read_varint(data, pos)
            except ValueError:
                raise Damage(length_at, here, "length cut short") from None
            if length > end - pos:
                raise Damage(length_at, here, f"length {length:,} runs past the end of "
                             f"{message} ({end - pos:,} bytes left)")
            if sub is not None:
                _walk(data, pos, pos + length, sub, here)
            pos += length
        if pos > end:
            raise Damage(key_at, here, f"value runs past the end of {message}")
