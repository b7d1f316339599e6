"""``XStat`` values as plain Python values, and the encodings xprof packs into some of them.

A stat names its metadata (``XStatMetadata.name`` is the arg key) and holds one value of a
``oneof``: double, uint64, int64, string, bytes, or ``ref_value`` — the id of another stat
metadata whose *name* is the (interned) string value. Binary values are serialized protos
(``memory_access_breakdown``, ``core_details``) that traceconv does not decode: they are
left out and counted.
"""

from __future__ import annotations

from typing import Any, NamedTuple

_METADATA, _REF, _BYTES = "metadata_id", "ref_value", "bytes_value"
_ID_MASK = (1 << 56) - 1


class StatReader:
    """Stats into an args dict (this is the reader's inner loop: a million stats in a
    230 k-event file). The fields on the wire are taken by number: ``metadata_id`` first
    when it is there, the ``oneof`` value last.

    >>> from traceconv.formats.xplane.proto import XStat
    >>> stats = [XStat.decode(b"\\x08\\x01\\x20\\x07"), XStat.decode(b"\\x08\\x02\\x38\\x03"),
    ...          XStat.decode(b"\\x08\\x04\\x32\\x02\\x08\\x01")]
    >>> reader = StatReader(); args = {}
    >>> reader.into(args, stats, {1: "flops", 2: "hlo_category", 3: "convolution", 4: "x"})
    >>> args, reader.binary
    ({'flops': 7, 'hlo_category': 'convolution'}, 1)
    """

    def __init__(self) -> None:
        self.missing: list[int] = []   # stat metadata ids the plane does not define
        self.binary = 0                # binary values left out
        self.repaired: list[bytes] = []  # string values that were not UTF-8

    def into(self, args: dict[str, Any], stats, names: dict[int, str]) -> None:
        get = names.get
        for stat in stats:
            fields = list(stat.__dict__.items())   # (as decoded: by number, usually)
            if len(fields) == 2 and fields[0][0] == _METADATA:   # the usual stat
                (_, key_id), (field, value) = fields
            elif len(fields) > 1:
                fields = stat.set_fields()
            if len(fields) == 2:   # a metadata id and one value
                (_, key_id), (field, value) = fields
            elif not fields:
                key_id, value, field = 0, None, None
            else:
                first = fields[0]
                key_id = first[1] if first[0] == _METADATA else 0
                field, value = fields[-1]
                if field == _METADATA:
                    value = field = None
            if field == _REF:
                ref = get(value)
                if ref is None:
                    self.missing.append(value)
                    ref = f"stat#{value}"
                value = ref
            elif field == _BYTES:
                self.binary += 1
                continue
            elif type(value) is bytes:   # a string field that was not UTF-8
                self.repaired.append(value)
                value = value.decode("utf-8", errors="replace")
            key = get(key_id)
            if key is None:
                self.missing.append(key_id)
                key = f"stat#{key_id}"
            args[key] = value


class XFlow(NamedTuple):
    """A ``flow`` stat: one end of a flow arrow between events (``xprof``'s ``XFlow``),
    packed into 64 bits as direction (bits 0-1), id (2-57) and category (58-63).

    >>> XFlow.decode((7 << 58) | (154042009 << 2) | 2)
    XFlow(id=154042009, direction=2, category=7)
    >>> XFlow.decode(2).leaves, XFlow.decode(2).enters, XFlow.decode(3).enters
    (True, False, True)
    """

    id: int
    direction: int   # 1 = flow in (an arrow ends here), 2 = out (starts here), 3 = both
    category: int

    @classmethod
    def decode(cls, value: int) -> XFlow:
        return cls((value >> 2) & _ID_MASK, value & 3, value >> 58)

    @property
    def leaves(self) -> bool:
        return bool(self.direction & 2)

    @property
    def enters(self) -> bool:
        return bool(self.direction & 1)
