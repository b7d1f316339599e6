"""``DebugAnnotation`` values read back as Python values (the inverse of :mod:`.annotations`).

Scalars of many annotations are read at once by :func:`scalar_values` (numpy); dicts,
arrays, the legacy ``nested_value`` and JSON values go through :func:`decode_annotation`,
one annotation at a time, remembered by their bytes (a trace repeats its shapes and dtype
lists many times).

Mapping: bool, int (int64 and uint64), double, string as themselves; ``pointer_value`` as
hex text (as trace_processor shows it); ``dict_entries`` as a dict, ``array_values`` as a
list; ``legacy_json_value`` decoded (its text when it is not JSON); ``proto_value`` as a
:class:`ProtoValue` (its type's descriptor may come later in the trace: the reader decodes
it at the end, :mod:`.typed_fields`); interned strings (``string_value_iid``) and type
names looked up.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import orjson

from ..protowire.scalar import LENGTH, iter_fields
from .dotted_names import NestedGroup, expanded
from .model_attribute import NESTED_MARK, SPELLED_DICT, SPELLED_LIST, SPELLED_MARK, SPELLED_NULL

# DebugAnnotation fields.
NAME_IID, BOOL, UINT, INT, DOUBLE, STRING, POINTER, NESTED, JSON, NAME = range(1, 11)
DICT, ARRAY, PROTO_TYPE_IID, PROTO_VALUE, PROTO_TYPE, STRING_IID = 11, 12, 13, 14, 16, 17
SCALARS = frozenset({BOOL, UINT, INT, DOUBLE, STRING, POINTER, STRING_IID})
COMPOSITE = frozenset({NESTED, JSON, DICT, ARRAY, PROTO_VALUE})
_DOUBLE = struct.Struct("<d").unpack_from
StringLookup = Callable[[int], str]
# A null, [] and {} that traceconv's writer marked by field SPELLED_MARK (:mod:`.annotations`;
# older files also spell them as text, which the mark overrides): the mark's value -> what
# it stands for.
SPELLED: dict[int, Callable[[], Any]] = {SPELLED_NULL: lambda: None, SPELLED_LIST: list,
                                         SPELLED_DICT: dict}


def text(data: bytes | memoryview) -> str:
    """UTF-8 text; bytes that are not UTF-8 are replaced (a name must be text).

    >>> text(b"ok"), text(b"\\xff")
    ('ok', '\\ufffd')
    """
    return bytes(data).decode("utf-8", "replace")


def _fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(number, wire type, value) of each field: an int, or the payload bytes.

    >>> _fields(b"\\x08\\x96\\x01\\x12\\x02hi")
    [(1, 0, 150), (2, 2, b'hi')]
    """
    return [(number, wire, data[value:after] if wire == LENGTH else value)
            for number, wire, value, after in iter_fields(data)]


class ProtoValue:
    """A ``proto_value`` annotation's message, not decoded yet: its type's full name (as
    the trace gives it) and bytes. Its text is what is shown of one that cannot be.

    >>> str(ProtoValue("perfetto.protos.FrameSinkId", b"\\x08\\x01"))
    '<proto perfetto.protos.FrameSinkId: 2 bytes>'
    """

    __slots__ = ("data", "type_name")

    def __init__(self, type_name: str, data: bytes) -> None:
        self.type_name, self.data = type_name, data

    def __repr__(self) -> str:
        return f"<proto {self.type_name or '?'}: {len(self.data)} bytes>"


def holds_proto(value: Any) -> bool:
    """Whether ``value`` is or holds (in its dicts and lists) a :class:`ProtoValue`.

    >>> holds_proto({"a": [1, ProtoValue("T", b"")]}), holds_proto([{"a": 1}])
    (True, False)
    """
    if type(value) is ProtoValue:
        return True
    if isinstance(value, dict):
        return any(map(holds_proto, value.values()))
    return isinstance(value, list) and any(map(holds_proto, value))


def _no_types(iid: int) -> str:
    return ""


def decode_annotation(data: bytes, strings: StringLookup, names: StringLookup,
                      texts: Callable[[bytes | memoryview], str] = text,
                      types: StringLookup = _no_types) -> tuple[str | None, Any]:
    """(name, value) of one ``DebugAnnotation``; the name is None when it has none (an
    array element). ``strings``/``names``/``types`` look interned string values / names /
    proto type names up, ``texts`` makes inline strings text (the reader's counts the ones
    that are not UTF-8). A null, [] or {} that traceconv's writer marked
    (:data:`SPELLED_MARK`) reads back so.

    >>> decode_annotation(b"\\x52\\x01a\\x62\\x02\\x20\\x01\\x62\\x02\\x20\\x02", str, str)
    ('a', [1, 2])
    """
    name: str | None = None
    value: Any = None
    entries: list[tuple[str, Any]] | None = None
    items: list[Any] | None = None
    proto_type = ""
    proto_type_iid = 0
    spelled = -1
    for number, wire, raw in _fields(data):
        if number == NAME_IID and wire == 0:
            name = names(raw)
        elif number == NAME and wire == 2:
            name = texts(raw)
        elif number == DICT and wire == 2:
            key, item = decode_annotation(raw, strings, names, texts, types)
            entries = [] if entries is None else entries
            entries.append((key or "", item))
        elif number == ARRAY and wire == 2:
            items = [] if items is None else items
            items.append(decode_annotation(raw, strings, names, texts, types)[1])
        elif number == NESTED and wire == 2:
            value = _nested(raw, texts)
        elif number == JSON and wire == 2:
            value = _json(raw, texts)
        elif number == PROTO_TYPE and wire == 2:
            proto_type = texts(raw)
        elif number == PROTO_TYPE_IID and wire == 0:
            proto_type_iid = raw
        elif number == PROTO_VALUE and wire == 2:
            value = ProtoValue("", bytes(raw))
        elif number in SCALARS:
            value = scalar(number, raw, strings, texts)
        elif number == SPELLED_MARK and wire == 0:
            spelled = raw
    if type(value) is ProtoValue:   # (its type named before or after it)
        value.type_name = proto_type or (types(proto_type_iid) if proto_type_iid else "")
    if entries is not None:   # (a dict the writer made of dotted names: flat, marked)
        value = NestedGroup(expanded(entries)) if spelled == NESTED_MARK \
            else dict(expanded(entries))
    elif items is not None:
        value = items
    elif spelled in SPELLED:
        value = SPELLED[spelled]()
    return name, value


def scalar(number: int, raw: Any, strings: StringLookup,
           texts: Callable[[bytes | memoryview], str] = text) -> Any:
    """One scalar value field as a Python value.

    >>> scalar(INT, 2**64 - 1, str), scalar(POINTER, 255, str), scalar(BOOL, 1, str)
    (-1, '0xff', True)
    """
    if number == STRING:
        return texts(raw) if isinstance(raw, bytes | memoryview) else str(raw)
    if not isinstance(raw, int):   # a number field written with the bytes wire type
        raise ValueError(f"annotation field {number} is not a number")
    if number == INT:
        return raw - (1 << 64) if raw >= 1 << 63 else raw
    if number == UINT:
        return raw
    if number == BOOL:
        return bool(raw)
    if number == DOUBLE:
        return _DOUBLE(struct.pack("<Q", raw))[0]
    if number == POINTER:
        return f"0x{raw:x}"
    return strings(raw)   # STRING_IID


def _json(raw: bytes, texts: Callable[[bytes | memoryview], str]) -> Any:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return texts(raw)


def _nested(data: bytes, texts: Callable[[bytes | memoryview], str]) -> Any:
    """The legacy ``NestedValue``: a dict, an array or a scalar."""
    kind = 0
    keys: list[str] = []
    values: list[Any] = []
    scalar_value: Any = None
    for number, _, raw in _fields(data):
        if number == 1:
            kind = raw
        elif number == 2:
            keys.append(texts(raw))
        elif number in (3, 4):
            values.append(_nested(raw, texts))
        elif number == 5:
            scalar_value = raw - (1 << 64) if raw >= 1 << 63 else raw
        elif number == 6:
            scalar_value = _DOUBLE(struct.pack("<Q", raw))[0]
        elif number == 7:
            scalar_value = bool(raw)
        elif number == 8:
            scalar_value = texts(raw)
    if kind == 1:
        return dict(zip(keys, values, strict=False))
    if kind == 2:
        return values
    return scalar_value
