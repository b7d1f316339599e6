"""Event arguments as ``DebugAnnotation`` bytes, with interned argument names.

Value mapping: bool → ``bool_value``; int → ``int_value``, or its decimal ``string_value``
outside int64 (trace_processor shows a ``uint_value`` above int64 as a negative number, and
Kineto's ``Comms Id`` exceeds 2^63); float → ``double_value``;
str → ``string_value``; dict → ``dict_entries``; list/tuple → ``array_values``; ``None``,
empty dicts and lists → no value field, only field :data:`SPELLED_MARK` saying which
(trace_processor skips the field and shows no arg, as it shows none for a JSON null, ``[]``
or ``{}`` and for a Perfetto annotation without a value; traceconv's reader reads them
back by it); bytes → their UTF-8 text; anything else → ``str(value)``.

An empty list or dict that is an element of a list, before an element trace_processor
shows, is written as its text (``"[]"``, ``"{}"``) beside the mark: trace_processor numbers
a list's elements by the args they add, so an element that adds none would move every later
one down an index (Kineto's ``Input Dims`` ``[[8192, 512], [], [8192]]`` would show its third
input's dims as ``Input Dims[1][0]``, beside the second input's type), where a JSON input
keeps them at ``[2][0]``. The mark still reads back as the empty value; an empty element
after the last shown one moves nothing and stays only its mark.

Names are kept as written: trace_processor turns a ``.`` in an annotation name into ``_``
(the dot separates the parts of its arg keys), but joins nested dict names with dots, so a
dotted name is written as nested dicts (``est. achieved occupancy %`` → ``est`` →
`` achieved occupancy %``) and reads back as ``debug.est. achieved occupancy %``. Each
dict made so carries field :data:`SPELLED_MARK` with :data:`NESTED_MARK`, so that
traceconv's reader flattens exactly those (:func:`nest_dotted`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from .model_attribute import NESTED_MARK, SPELLED_DICT, SPELLED_LIST, SPELLED_MARK, SPELLED_NULL
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
_CACHE_LIMIT = 1 << 18   # distinct repeated values kept encoded, over all names
# A null, [] and {} are only a field trace_processor skips (unknown to it), saying which:
# it shows no arg for them, as for the inputs' (see the module docstring).
_SPELLED_NULL = tag(SPELLED_MARK, VARINT) + varint(SPELLED_NULL)
_SPELLED_LIST = tag(SPELLED_MARK, VARINT) + varint(SPELLED_LIST)
_SPELLED_DICT = tag(SPELLED_MARK, VARINT) + varint(SPELLED_DICT)
_NESTED = tag(SPELLED_MARK, VARINT) + varint(NESTED_MARK)   # a dict made of dotted names
# An empty list or dict as a list's element before a shown one: its text too, so that the
# later elements keep their indexes in trace_processor (see the module docstring)
_EMPTY_LIST_ELEMENT = _STRING + varint(2) + b"[]" + _SPELLED_LIST
_EMPTY_DICT_ELEMENT = _STRING + varint(2) + b"{}" + _SPELLED_DICT


def encode_value(value: Any) -> bytes:
    """The value fields of one DebugAnnotation (without its name); a value nested past
    Python's recursion limit as a marker text.

    >>> encode_value(3), encode_value(None)
    (b' \\x03', b'\\xf8\\x7f\\x00')
    """
    try:
        return _encode(value)
    except RecursionError:
        return string_field(STRING, f"<{type(value).__name__} nested too deep to write>")


def _encode(value: Any) -> bytes:
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
        return _SPELLED_NULL
    if kind is Group:   # (before lists: a group is one)
        return _dict_entries(value) + _NESTED
    if isinstance(value, dict):
        return _dict_entries(nest_dotted(value.items())) if value else _SPELLED_DICT
    if isinstance(value, (list, tuple)):
        if not value:
            return _SPELLED_LIST
        parts: list[bytes] = []
        held = _last_shown(value)   # (the elements before it keep their places)
        for at, item in enumerate(value):
            element = _encode(item) if at >= held or not _is_empty(item) else \
                _EMPTY_DICT_ELEMENT if isinstance(item, dict) else _EMPTY_LIST_ELEMENT
            parts += (_ARRAY, varint(len(element)), element)
        return b"".join(parts)
    if isinstance(value, (bytes, bytearray)):
        return string_field(STRING, bytes(value).decode("utf-8", "replace"))
    return _encode(_plain(value))


def _is_empty(item: Any) -> bool:
    """An empty list or dict (that trace_processor shows no arg for)."""
    return not item and isinstance(item, (list, tuple, dict))


def _last_shown(items: list[Any] | tuple[Any, ...]) -> int:
    """The index of the last element that is neither None nor an empty list or dict, -1
    when there is none: the empty elements before it are written as text.

    >>> _last_shown([[8192, 512], [], [8192]]), _last_shown([[1, 8], [], []]), _last_shown([[]])
    (2, 0, -1)
    """
    for at in range(len(items) - 1, -1, -1):
        if items[at] is not None and not _is_empty(items[at]):
            return at
    return -1


class Group(list):  # type: ignore[type-arg]
    """The (part, value) pairs under one part of dotted names (see :func:`nest_dotted`):
    written as a dict marked :data:`NESTED_MARK`, whose pairs may repeat a part."""

    __slots__ = ("children",)

    def __init__(self) -> None:
        super().__init__()
        self.children: dict[str, Group] = {}

    def child(self, part: str) -> Group:
        found = self.children.get(part)
        if found is None:
            found = self.children[part] = Group()
            self.append((part, found))
        return found


def _dict_entries(pairs: Iterable[tuple[str, Any]]) -> bytes:
    parts: list[bytes] = []
    for key, item in pairs:
        entry = string_field(NAME, key) + _encode(item)
        parts += (_DICT, varint(len(entry)), entry)
    return b"".join(parts)


def nest_dotted(items: Iterable[tuple[Any, Any]]) -> list[tuple[str, Any]]:
    """Names with dots as nested groups, split at every dot (see the module docstring);
    others unchanged. A group is written marked, so the reader flattens exactly the groups
    made here: a plain name beside a group of the same name ("est" beside "est. a"), a
    dotted name that is the start of another ("x.y" beside "x.y.z") and a dict value whose
    keys look like parts all come back as they were.

    >>> nest_dotted([("est. occupancy", 50), ("grid", [1]), ("a.b.c", 1), ("a.d", 2),
    ...              ("a.b", 3), ("a", 4)])
    [('est', [(' occupancy', 50)]), ('grid', [1]), ('a', [('b', [('c', 1)]), ('d', 2), ('b', 3)]), ('a', 4)]
    """
    root = Group()
    for key, value in items:
        name = str(key)
        if "." not in name:
            root.append((name, value))
            continue
        *parts, last = name.split(".")
        group = root
        for part in parts:
            group = group.child(part)
        group.append((last, value))
    return list(root)


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


_TABLE_INTS = 1 << 14
_INT_VARINTS = [varint(v) for v in range(_TABLE_INTS)]


class _Key:
    """Everything precomputed for one argument name: its interned name field, the framed
    prefix of an int value by varint length, and its encoded repeated values."""

    __slots__ = ("dotted", "iid", "int_prefix", "name", "small", "text", "values")

    def __init__(self, text: str, iid: int) -> None:
        self.text, self.iid = text, iid
        self.dotted = not iid   # written as nested dicts (see nest_dotted): no iid
        self.name = tag(NAME_IID, VARINT) + varint(iid) if iid else b""
        self.int_prefix: list[bytes] | None = None   # see int_prefixes
        self.small: list[bytes] | None = None   # see small_ints
        self.values: dict[object, bytes] = {}   # str or JSON text -> whole framed annotation

    def int_prefixes(self) -> list[bytes]:
        """The framed prefix of an int value under this name, by the value's varint length
        (made on first use, as :meth:`small_ints`)."""
        if self.int_prefix is None:
            self.int_prefix = [_frame(len(self.name) + 1 + size) + self.name + _INT
                               for size in range(11)]
        return self.int_prefix

    def small_ints(self) -> list[bytes]:
        """The framed annotations of the values 0..127 under this name, made on first use:
        made for every name, they cost 9 KB each (an event with 500 k distinct argument
        names needed 4 GB)."""
        if self.small is None:
            self.small = [self.int_prefixes()[1] + varint(v) for v in range(0x80)]
        return self.small

    def framed(self, encoded: bytes) -> bytes:
        return _frame(len(self.name) + len(encoded)) + self.name + encoded


def _frame(size: int) -> bytes:
    return TRACK_EVENT_ANNOTATION + varint(size)


class ArgEncoder:
    """Encodes argument dicts as TrackEvent ``debug_annotations`` with interned names.

    Names get iids in first-use order (:meth:`entry`), once for the whole encoder: the
    writer interns, at the start of each packet sequence, the names its events use.
    Repeated strings and lists (op names, dtypes, shapes) are encoded once per name.

    >>> enc = ArgEncoder()
    >>> enc.encode({"dtype": "float32"}) == b'"\\x0b\\x08\\x012\\x07float32'
    True
    >>> enc.entry("dtype").iid, enc.intern_names(("grid", "est. occupancy"))
    (1, [(2, 'grid'), (3, 'est')])
    """

    __slots__ = ("_cached", "_count", "_keys")

    def __init__(self) -> None:
        self._keys: dict[object, _Key] = {}
        self._cached = 0   # values held in the per-name caches
        self._count = 0    # names interned so far

    def encode(self, args: dict[str, Any]) -> bytes:
        """All annotations of one event, each framed as a TrackEvent field 4."""
        return self.encode_items(args.items())

    def encode_items(self, items: Iterable[tuple[Any, Any]]) -> bytes:
        """:meth:`encode` for (name, value) pairs: an args column's row, without its dict.

        >>> ArgEncoder().encode_items(zip(("dtype",), ["float32"])) == b'"\\x0b\\x08\\x012\\x07float32'
        True
        """
        keys = self._keys
        parts: list[bytes] = []
        append = parts.append
        dotted: list[tuple[Any, Any]] = []
        for key, value in items:
            entry = keys.get(key) or self.entry(key)
            if entry.dotted:
                dotted.append((key, value))
                continue
            kind = type(value)
            if kind is int:
                if 0 <= value < 0x80:
                    append((entry.small or entry.small_ints())[value])
                elif 0 < value < _TABLE_INTS:
                    encoded = _INT_VARINTS[value]
                    append((entry.int_prefix or entry.int_prefixes())[len(encoded)])
                    append(encoded)
                elif INT64_MIN <= value <= INT64_MAX:
                    encoded = varint(value)
                    append((entry.int_prefix or entry.int_prefixes())[len(encoded)])
                    append(encoded)
                else:
                    append(entry.framed(encode_value(value)))
                continue
            if kind is str:
                cache_key: object = value
            elif kind is list or kind is dict:
                try:
                    cache_key = orjson.dumps(value)   # tells 1, 1.0 and true apart
                except TypeError:   # ints beyond 64 bits, non-JSON values: no cache
                    append(entry.framed(encode_value(value)))
                    continue
            else:
                append(entry.framed(encode_value(value)))
                continue
            framed = entry.values.get(cache_key)
            append(self.store(entry, cache_key, value) if framed is None else framed)
        for name, value in nest_dotted(dotted):
            entry = keys.get(name) or self.entry(name)
            append(entry.framed(encode_value(value)))
        return b"".join(parts)

    def store(self, entry: _Key, cache_key: object, value: Any) -> bytes:
        """``value`` framed under ``entry``'s name, kept in its cache under ``cache_key``."""
        framed = entry.values[cache_key] = entry.framed(encode_value(value))
        self._cached += 1
        if self._cached > _CACHE_LIMIT:
            for known in self._keys.values():
                known.values.clear()
            self._cached = 0
        return framed

    def entry(self, key: object) -> _Key:
        """The name ``key`` as written (``str(key)``), interned on first use; a dotted
        name has no iid of its own (its first part gets one, see :func:`nest_dotted`)."""
        found = self._keys.get(key)
        if found is not None:
            return found
        text = str(key)
        found = self._keys.get(text)
        if found is None:
            if "." in text:
                found = _Key(text, 0)
            else:
                self._count += 1
                found = _Key(text, self._count)
            self._keys[text] = found
        self._keys[key] = found   # a non-str key is also remembered as given
        return found

    def intern_names(self, keys: Iterable[object]) -> list[tuple[int, str]]:
        """Intern the names that args with these keys are written under; their (iid, name)."""
        out = []
        for key in keys:
            entry = self.entry(key)
            if entry.dotted:
                entry = self.entry(entry.text.split(".", 1)[0])
            out.append((entry.iid, entry.text))
        return out
