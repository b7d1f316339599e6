"""Event arguments as ``DebugAnnotation`` bytes, with interned argument names.

Value mapping: bool → ``bool_value``; int → ``int_value``, or its decimal ``string_value``
outside int64 (trace_processor shows a ``uint_value`` above int64 as a negative number, and
Kineto's ``Comms Id`` exceeds 2^63); float → ``double_value``;
str → ``string_value``; dict → ``dict_entries``; list/tuple → ``array_values``; ``None`` →
the string ``"null"`` (the sources are JSON, and it is how the Chrome writer spells it);
empty dicts and lists → ``"{}"``/``"[]"`` (an annotation with no value would vanish);
bytes → their UTF-8 text; anything else → ``str(value)``.
"""

from __future__ import annotations

from typing import Any

import orjson

from .wire import (
    FIXED64,
    INT64_MAX,
    INT64_MIN,
    LENGTH,
    VARINT,
    double_field,
    string_field,
    tag,
    utf8,
    varint,
)

# DebugAnnotation fields.
NAME_IID, BOOL, INT, DOUBLE, STRING, NAME, DICT, ARRAY = 1, 2, 4, 5, 6, 10, 11, 12
TRACK_EVENT_ANNOTATION = tag(4, LENGTH)  # TrackEvent.debug_annotations
_BOOL = {True: tag(BOOL, VARINT) + b"\x01", False: tag(BOOL, VARINT) + b"\x00"}
_INT, _STRING = tag(INT, VARINT), tag(STRING, LENGTH)
_DOUBLE_TAG = tag(DOUBLE, FIXED64)
_DICT, _ARRAY = tag(DICT, LENGTH), tag(ARRAY, LENGTH)
_CACHE_LIMIT = 1 << 18   # distinct string values kept encoded
_SMALL_LIMIT = 1 << 14   # ints (and frame sizes) below this come from tables


def encode_value(value: Any) -> bytes:
    """The value fields of one DebugAnnotation (without its name).

    >>> encode_value(3), encode_value(None)
    (b' \\x03', b'2\\x04null')
    """
    kind = type(value)
    if kind is str:
        data = utf8(value)
        return _STRING + varint(len(data)) + data
    if kind is bool:
        return _BOOL[value]
    if kind is int:
        if INT64_MIN <= value <= INT64_MAX:
            return _INT + varint(value)
        return string_field(STRING, str(value))
    if kind is float:
        return double_field(DOUBLE, value)
    if value is None:
        return string_field(STRING, "null")
    if isinstance(value, dict):
        if not value:
            return string_field(STRING, "{}")
        parts = []
        for key, item in value.items():
            entry = string_field(NAME, str(key)) + encode_value(item)
            parts += (_DICT, varint(len(entry)), entry)
        return b"".join(parts)
    if isinstance(value, (list, tuple)):
        if not value:
            return string_field(STRING, "[]")
        parts = []
        for item in value:
            element = encode_value(item)
            parts += (_ARRAY, varint(len(element)), element)
        return b"".join(parts)
    if isinstance(value, (bytes, bytearray)):
        return string_field(STRING, bytes(value).decode("utf-8", "replace"))
    return encode_value(_plain(value))


def _plain(value: Any) -> Any:
    """numpy scalars and other number-likes as Python numbers; the rest as text."""
    for kind in (bool, int, float):
        if isinstance(value, kind):
            return kind(value)
    item = getattr(value, "item", None)
    if callable(item):
        plain = item()
        if type(plain) in (bool, int, float, str):
            return plain
    return str(value)


_SMALL_INTS = [_INT + varint(v) for v in range(_SMALL_LIMIT)]
_FRAMES = [TRACK_EVENT_ANNOTATION + varint(size) for size in range(_SMALL_LIMIT)]


class ArgEncoder:
    """Encodes argument dicts as TrackEvent ``debug_annotations`` with interned names.

    Names get iids in first-use order; :meth:`take_new_names` hands the entries that still
    have to be emitted in ``InternedData.debug_annotation_names``. Small ints and repeated
    strings and lists (op names, dtypes, shapes) are encoded once.

    >>> enc = ArgEncoder()
    >>> enc.encode({"dtype": "float32"}) == b'"\\x0b\\x08\\x012\\x07float32'
    True
    >>> enc.take_new_names()
    [(1, 'dtype')]
    """

    __slots__ = ("_composites", "_count", "_names", "_new", "_strings")

    def __init__(self) -> None:
        self._names: dict[object, bytes] = {}     # name -> encoded name_iid field
        self._new: list[tuple[int, str]] = []
        self._strings: dict[str, bytes] = {}      # str value -> encoded string_value field
        self._composites: dict[bytes, bytes] = {}  # JSON text -> encoded list/dict value
        self._count = 0

    def encode(self, args: dict[str, Any]) -> bytes:
        """All annotations of one event, each framed as a TrackEvent field 4."""
        names, strings, parts = self._names, self._strings, []
        for key, value in args.items():
            name = names.get(key) or self._intern(key)
            kind = type(value)
            if kind is int and 0 <= value < _SMALL_LIMIT:
                encoded = _SMALL_INTS[value]
            elif kind is str:
                encoded = strings.get(value)
                if encoded is None:
                    if len(strings) >= _CACHE_LIMIT:
                        strings.clear()
                    encoded = strings[value] = encode_value(value)
            elif kind is list or kind is dict:
                encoded = self._composite(value)
            else:
                encoded = encode_value(value)
            size = len(name) + len(encoded)
            parts += (_FRAMES[size] if size < _SMALL_LIMIT else
                      TRACK_EVENT_ANNOTATION + varint(size), name, encoded)
        return b"".join(parts)

    def _composite(self, value: list | dict) -> bytes:
        """Lists and dicts repeat a lot (Kineto's shapes, strides, input types): encode each
        distinct one once, keyed by its JSON text (which tells 1, 1.0 and true apart)."""
        try:
            key = orjson.dumps(value)
        except TypeError:   # ints beyond 64 bits, non-JSON values: no cache
            return encode_value(value)
        cache = self._composites
        encoded = cache.get(key)
        if encoded is None:
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            encoded = cache[key] = encode_value(value)
        return encoded

    def _intern(self, key: object) -> bytes:
        text = str(key)
        encoded = self._names.get(text)
        if encoded is None:
            self._count += 1
            iid = self._count
            encoded = self._names[text] = tag(NAME_IID, VARINT) + varint(iid)
            self._new.append((iid, text))
        self._names[key] = encoded
        return encoded

    def take_new_names(self) -> list[tuple[int, str]]:
        """Names interned since the last call, as (iid, name)."""
        new, self._new = self._new, []
        return new
