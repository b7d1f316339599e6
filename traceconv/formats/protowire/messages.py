"""Protobuf messages decoded from a compact field table, without protoc, generated code or
the protobuf runtime.

A vendor ``.proto`` is transcribed as ``{message: [(field, number, type), ...]}``, ``type``
a scalar (``string bytes uint64 int64 uint32 int32 sint64 sint32 fixed64 sfixed64 fixed32
sfixed32 float double bool enum``), the name of another message of the table, or either
after ``repeated``. :func:`message_classes` makes one class per message; ``decode`` reads
bytes into it with the rules of proto2 as the protobuf runtime applies them:

- every varint has 64 bits (an id of 2**40 stays 2**40); ``int32``/``enum`` keep the low 32
  bits, signed, ``uint32`` the low 32 bits; every field is optional (a missing "required"
  field never stops a read) and enums are plain integers (writers add values over time);
- a field read twice: the last value wins, a message field's two payloads merge, a repeated
  scalar accepts both the packed and the unpacked encoding;
- unknown fields and fields of an unexpected wire type are skipped;
- a ``string`` that is not UTF-8 comes back as ``bytes`` (the reader repairs and counts it);
- every length is checked against its enclosing message and messages nest at most
  ``max_depth`` deep: a cut or damaged file is one :class:`WireError` with the byte offset.

Repeated message fields are decoded lazily: the parent keeps where each element lies (16
bytes per element) and an element is decoded when it is iterated, so a file of millions
of events never holds millions of decoded messages at once. A damaged element is found when
it is reached; :func:`locate_damage` walks the whole file to say where, as a path.

>>> classes = message_classes("demo", {"Pair": [("key", 1, "string"),
...                                            ("values", 2, "repeated uint64")],
...                                    "Map": [("pairs", 1, "repeated Pair")]})
>>> pair = classes["Pair"].decode(b"\\x0a\\x01k\\x10\\x05\\x10\\x80\\x80\\x80\\x80\\x80\\x01")
>>> pair.key, pair.values, pair.has("key"), classes["Pair"]().key
('k', [5, 34359738368], True, '')
>>> [p.key for p in classes["Map"].decode(b"\\x0a\\x03\\x0a\\x01a\\x0a\\x00").pairs]
['a', '']
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Iterator, Sequence
from operator import attrgetter
from typing import Any, ClassVar

from .scalar import (
    FIXED32,
    FIXED64,
    LENGTH,
    UINT64_MASK,
    VARINT,
    WireError,
    past_end,
    read_varint,
    skip_value,
)

MAX_DEPTH = 100   # messages inside messages, as the protobuf runtime allows
Field = tuple[str, int, str]  # (name, number, scalar type | message name | "repeated <type>")

_SIGN64, _TWO64 = 1 << 63, 1 << 64
_DOUBLE, _FLOAT = struct.Struct("<d").unpack_from, struct.Struct("<f").unpack_from


def _int64(v: int) -> int:
    return v - _TWO64 if v >= _SIGN64 else v


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - 0x100000000 if v >= 0x80000000 else v


def _zigzag(v: int) -> int:
    return (v >> 1) ^ -(v & 1)


# scalar type -> (wire type, conversion of the varint / fixed bits; None: as read)
_SCALARS: dict[str, tuple[int, Any]] = {
    "uint64": (VARINT, None), "int64": (VARINT, _int64), "uint32": (VARINT, 0xFFFFFFFF),
    "int32": (VARINT, _int32), "enum": (VARINT, _int32), "bool": (VARINT, bool),
    "sint64": (VARINT, _zigzag), "sint32": (VARINT, lambda v: _zigzag(v & 0xFFFFFFFF)),
    "fixed64": (FIXED64, None), "sfixed64": (FIXED64, _int64), "double": (FIXED64, "d"),
    "fixed32": (FIXED32, None), "sfixed32": (FIXED32, _int32), "float": (FIXED32, "f"),
    "string": (LENGTH, str), "bytes": (LENGTH, bytes),
}
_DEFAULTS = {"string": "", "bytes": b"", "bool": False, "double": 0.0, "float": 0.0}
# numpy type of each scalar that is a number (MessageList.fields)
_NUMPY_TYPES = {"uint64": "u8", "int64": "i8", "uint32": "u4", "int32": "i4", "enum": "i4",
                "bool": "?", "sint64": "i8", "sint32": "i4", "fixed64": "u8", "sfixed64": "i8",
                "double": "f8", "fixed32": "u4", "sfixed32": "i4", "float": "f4"}
# how a field is read (a spec's first item; ordered so that one comparison picks the kind)
_VARINT, _VARINT_LIST, _FIXED, _FIXED_LIST, _TEXT, _TEXT_LIST, _MESSAGE, _MESSAGES, _PACKED = \
    range(9)
_VARINTS, _FIXEDS, _TEXTS = _VARINT_LIST, _FIXED_LIST, _TEXT_LIST
_READ_AS = {VARINT: _VARINT, FIXED64: _FIXED, FIXED32: _FIXED, LENGTH: _TEXT}


class _Source:
    """The bytes messages are decoded from, and their numpy copy for :meth:`Message._batch`
    (made once, when a batch first needs it)."""

    __slots__ = ("data", "_buf")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._buf: Any = None   # (the padded buffer, made when first asked)

    @property
    def buf(self) -> Any:
        if self._buf is None:
            from .columns import padded

            self._buf = padded(self.data)
        return self._buf


class MessageList(Sequence):  # type: ignore[type-arg]
    """The elements of a repeated message field, decoded when reached (see the module):
    :data:`BATCH` at a time with numpy when there are many, else one by one."""

    __slots__ = ("_source", "_cls", "_starts", "_ends", "_depth")

    def __init__(self, source: _Source, cls: type[Message], starts: array, ends: array,
                 depth: int) -> None:
        self._source, self._cls, self._starts, self._ends, self._depth = (source, cls, starts,
                                                                          ends, depth)

    def __len__(self) -> int:
        return len(self._starts)

    def __bool__(self) -> bool:
        return len(self._starts) > 0

    def __iter__(self) -> Iterator[Any]:
        return self._decoded(self._starts, self._ends)

    def in_order(self, order: Any) -> Iterator[Any]:
        """The elements at the indices ``order`` (a numpy integer array), in that order,
        decoded as iteration decodes them: a reader can sort a list by :meth:`fields`
        without holding every element decoded at once.

        >>> Span = message_classes("demo", {"Span": [("id", 1, "uint64")],
        ...                                 "Spans": [("spans", 1, "repeated Span")]})["Spans"]
        >>> spans = Span.decode(b"\\x0a\\x02\\x08\\x07\\x0a\\x02\\x08\\x05").spans
        >>> import numpy as np
        >>> [span.id for span in spans.in_order(np.array([1, 0]))]
        [5, 7]
        """
        import numpy as np

        starts = np.frombuffer(self._starts, dtype=np.int64)[order]
        ends = np.frombuffer(self._ends, dtype=np.int64)[order]
        return self._decoded(array("q", starts.tobytes()), array("q", ends.tobytes()))

    def fields(self, *names: str) -> Any:
        """The scalar fields ``names`` of every element as one numpy record array (a field
        an element lacks reads as its default), 16 bytes per element for two 64-bit
        fields where the decoded elements would take hundreds: they are decoded a batch
        at a time, as iteration decodes them, and dropped.

        >>> Span = message_classes("demo", {"Span": [("id", 1, "uint64"), ("ok", 2, "bool")],
        ...                                 "Spans": [("spans", 1, "repeated Span")]})["Spans"]
        >>> spans = Span.decode(b"\\x0a\\x04\\x08\\x07\\x10\\x01\\x0a\\x00").spans
        >>> table = spans.fields("id", "ok"); table["id"].tolist(), table["ok"].tolist()
        ([7, 0], [True, False])
        >>> len(Span.decode(b"").spans.fields("id", "ok"))   # a list not on the wire
        0
        """
        import numpy as np

        types = self._cls._types
        dtype = np.dtype([(name, _NUMPY_TYPES[types[name]]) for name in names])
        get = attrgetter(*names)
        rows = map(get, self) if len(names) > 1 else zip(map(get, self))   # (1-tuples)
        return np.fromiter(rows, dtype, count=len(self))

    def _decoded(self, starts: array, ends: array) -> Iterator[Any]:
        """The elements ``data[starts[i]:ends[i]]``, :data:`BATCH` at a time with numpy
        when there are many, else one by one."""
        count = len(starts)
        if not count:
            return
        cls, source, depth = self._cls, self._source, self._depth
        if count < BATCH_MIN:
            for start, end in zip(starts, ends, strict=True):
                yield cls._decode(source, start, end, depth)
            return
        import numpy as np

        all_starts = np.frombuffer(starts, dtype=np.int64)
        all_ends = np.frombuffer(ends, dtype=np.int64)
        for lo in range(0, count, BATCH):
            yield from cls._batch(source, all_starts[lo:lo + BATCH], all_ends[lo:lo + BATCH],
                                  depth)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self._cls._decode(self._source, self._starts[index], self._ends[index],
                                 self._depth)

    def __repr__(self) -> str:
        return f"<{len(self)} {self._cls.__name__}>"


_NO_DATA = _Source(b"")
BATCH_MIN = 16         # fewer elements are decoded one by one (numpy costs per call)
BATCH = 4096           # elements decoded together: memory stays bounded on any list
EAGER_MAX = 1 << 16    # nested elements of a batch decoded with it when no more than this
LONG_MESSAGE = 512     # bytes: a longer message of a batch is decoded on its own (a batch
#                        takes as many numpy rounds as its longest message has fields)


class Message:
    """A decoded message: the fields read are instance attributes, the others read as their
    default (0, "", b"", False, 0.0, an empty message or an empty sequence)."""

    _specs: ClassVar[dict[int, tuple[Any, ...]]] = {}   # field key (number << 3 | wire) -> spec
    _numbers: ClassVar[dict[str, int]] = {}             # field name -> number
    _types: ClassVar[dict[str, str]] = {}               # field name -> type, as in the table
    _max_depth: ClassVar[int] = MAX_DEPTH

    def has(self, name: str) -> bool:
        """Whether the field ``name`` was on the wire (a repeated one: at least once)."""
        return name in self.__dict__

    def set_fields(self) -> list[tuple[str, Any]]:
        """(name, value) of the fields on the wire, by field number (as the runtime's
        ``ListFields``)."""
        items = list(self.__dict__.items())
        if len(items) > 1:
            numbers = self._numbers
            if len(items) > 2:
                items.sort(key=lambda item: numbers[item[0]])
            elif numbers[items[0][0]] > numbers[items[1][0]]:
                items.reverse()
        return items

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.set_fields())
        return f"{type(self).__name__}({inner})"

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> Any:
        """The message in ``data``; :class:`WireError` when it is not wire format (repeated
        message fields are checked when their elements are reached)."""
        data = bytes(data) if not isinstance(data, bytes) else data
        return cls._decode(_Source(data), 0, len(data), 0)

    @classmethod
    def _decode(cls, source: _Source, pos: int, end: int, depth: int) -> Any:
        # (the reader's inner loop: varints are read inline, the spec says in one lookup
        # how the field is read; see message_classes for what each code means)
        if depth > cls._max_depth:
            raise WireError(f"messages nested more than {cls._max_depth} deep", pos)
        specs, data = cls._specs, source.data
        values: dict[str, Any] = {}
        value: Any   # (an int, bytes or text, as the field's spec says)
        while pos < end:
            field_at = pos
            key = data[pos]
            pos += 1
            if key >= 0x80:
                key, pos = read_varint(data, field_at, end)
            spec = specs.get(key)
            if spec is None:   # unknown, or not the wire type the table says: skipped
                if key < 8:
                    raise WireError("field number 0", field_at)
                pos = skip_value(data, key & 7, pos, end, field_at)
                continue
            how, name, convert, size = spec
            if how <= _VARINTS:
                if pos >= end:
                    raise WireError("a varint is cut short", pos)
                value = data[pos]
                pos += 1
                if value >= 0x80:   # (inline: a call per timestamp costs a third more)
                    value &= 0x7F
                    shift = 7
                    while True:
                        if pos >= end:
                            raise WireError("a varint is cut short", field_at)
                        byte = data[pos]
                        pos += 1
                        value |= (byte & 0x7F) << shift
                        if byte < 0x80:
                            break
                        shift += 7
                        if shift >= 70:
                            raise WireError("a varint runs over 10 bytes", field_at)
                    value &= UINT64_MASK
                if convert is not None:
                    value = value & convert if convert.__class__ is int else convert(value)
                if how == _VARINT:
                    values[name] = value
                else:
                    values.setdefault(name, []).append(value)
                continue
            if how <= _FIXEDS:
                if pos + size > end:
                    raise WireError(past_end(size, end - pos), field_at)
                value = _fixed(data, pos, size, convert)
                pos += size
                if how == _FIXED:
                    values[name] = value
                else:
                    values.setdefault(name, []).append(value)
                continue
            length_at = pos
            length = data[pos] if pos < end else 0x80
            if length < 0x80:
                pos += 1
            else:
                length, pos = read_varint(data, pos, end)
            after = pos + length
            if after > end:
                raise WireError(past_end(length, end - pos), length_at)
            if how <= _TEXTS:
                value = data[pos:after]
                if convert is str:
                    try:   # noqa: SIM105  (a with-block per string costs more)
                        value = value.decode()
                    except UnicodeDecodeError:
                        pass   # kept as bytes, as the protobuf runtime hands it over
                if how == _TEXT:
                    values[name] = value
                else:
                    values.setdefault(name, []).append(value)
            elif how == _MESSAGES:
                spans = values.get(name)
                if spans is None:
                    spans = values[name] = (array("q"), array("q"))
                spans[0].append(pos)
                spans[1].append(after)
            elif how == _MESSAGE:
                earlier = values.get(name)   # a message given twice: merged
                values[name] = (pos, after) if earlier is None else \
                    _joined(data, earlier, pos, after)
            else:
                values.setdefault(name, []).extend(_packed(data, pos, after, size, convert))
            pos = after
        message = cls.__new__(cls)
        message.__dict__ = values
        if values:
            for name, sub in cls._subs.items():
                found = values.get(name)
                if found is None:
                    continue
                if type(found) is tuple and type(found[0]) is array:
                    values[name] = MessageList(source, sub, found[0], found[1], depth + 1)
                elif type(found) is tuple:
                    values[name] = sub._decode(source, found[0], found[1], depth + 1)
                else:   # merged payloads, decoded on their own
                    values[name] = sub._decode(_Source(found), 0, len(found), depth + 1)
        return message

    @classmethod
    def _batch(cls, source: _Source, starts: Any, ends: Any, depth: int) -> list[Any]:
        """The messages ``data[starts[i]:ends[i]]`` decoded together: every field of all
        of them read with numpy (:func:`.columns.decode_fields`), then each field number's
        values converted as one column and set on its messages. Nested repeated messages
        come decoded with them as lists (up to :data:`EAGER_MAX`), else as lazy lists."""
        import numpy as np

        from .columns import decode_fields

        if depth > cls._max_depth:
            raise WireError(f"messages nested more than {cls._max_depth} deep", int(starts[0]))
        count = len(starts)
        long = np.flatnonzero(ends - starts > LONG_MESSAGE)
        if len(long):   # numpy reads a field of every message per round: one by one
            out: list[Any] = [None] * count
            for i in long.tolist():
                out[i] = cls._decode(source, int(starts[i]), int(ends[i]), depth)
            short = np.flatnonzero(ends - starts <= LONG_MESSAGE)
            if len(short):
                for i, message in zip(short.tolist(), cls._batch(
                        source, starts[short], ends[short], depth), strict=True):
                    out[i] = message
            return out
        values: list[dict[str, Any]] = [{} for _ in range(count)]
        fields = decode_fields(source.buf, starts, ends)
        data = source.data
        for key, spec in cls._ordered:
            rows = fields.where(key >> 3, key & 7)
            if not rows.rows:
                continue
            how, name, convert, size = spec
            msgs = rows.msg.tolist()
            if how <= _FIXEDS:
                column = _column(rows.value, convert)
                if how in (_VARINT, _FIXED):
                    for m, value in zip(msgs, column, strict=True):
                        values[m][name] = value
                else:
                    for m, value in zip(msgs, column, strict=True):
                        values[m].setdefault(name, []).append(value)
            elif how <= _TEXTS:
                single = how == _TEXT
                for m, at, length in zip(msgs, rows.offset.tolist(), rows.length.tolist(),
                                         strict=True):
                    value = data[at:at + length]
                    if convert is str:
                        try:   # noqa: SIM105  (a with-block per string costs more)
                            value = value.decode()
                        except UnicodeDecodeError:
                            pass   # kept as bytes, as the protobuf runtime hands it over
                    if single:
                        values[m][name] = value
                    else:
                        values[m].setdefault(name, []).append(value)
            elif how == _MESSAGES:
                cls._nested_lists(source, values, name, rows, depth + 1)
            elif how == _MESSAGE:
                cls._nested_messages(source, values, name, rows, depth + 1)
            else:
                for m, at, length in zip(msgs, rows.offset.tolist(), rows.length.tolist(),
                                         strict=True):
                    values[m].setdefault(name, []).extend(
                        _packed(data, at, at + length, size, convert))
        out = []
        new = cls.__new__
        for found in values:
            message = new(cls)
            message.__dict__ = found
            out.append(message)
        return out

    @classmethod
    def _nested_lists(cls, source: _Source, values: list[dict[str, Any]], name: str,
                      rows: Any, depth: int) -> None:
        """Set repeated message field ``name`` from its ``rows`` (a batch's fields)."""
        import numpy as np

        order = np.argsort(rows.msg, kind="stable")   # each message's, in wire order
        msgs = rows.msg[order]
        starts = rows.offset[order]
        ends = starts + rows.length[order]
        cuts = np.flatnonzero(np.r_[True, msgs[1:] != msgs[:-1], True]).tolist()
        sub = cls._subs[name]
        if len(msgs) <= EAGER_MAX:
            if len(msgs) < BATCH_MIN:
                decoded = [sub._decode(source, a, b, depth) for a, b in
                           zip(starts.tolist(), ends.tolist(), strict=True)]
            else:
                decoded = sub._batch(source, starts, ends, depth)
            for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
                values[int(msgs[lo])][name] = decoded[lo:hi]
            return
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
            values[int(msgs[lo])][name] = MessageList(
                source, sub, array("q", starts[lo:hi].tobytes()),
                array("q", ends[lo:hi].tobytes()), depth)

    @classmethod
    def _nested_messages(cls, source: _Source, values: list[dict[str, Any]], name: str,
                         rows: Any, depth: int) -> None:
        """Set message field ``name`` from its ``rows``; one given twice is merged."""
        sub = cls._subs[name]
        msgs = rows.msg.tolist()
        starts, lengths = rows.offset.tolist(), rows.length.tolist()
        if len(set(msgs)) < len(msgs):   # (rare) a message field given twice: merged
            merged: dict[int, bytes] = {}
            for m, at, length in zip(msgs, starts, lengths, strict=True):
                merged[m] = merged.get(m, b"") + source.data[at:at + length]
            for m, payload in merged.items():
                values[m][name] = sub._decode(_Source(payload), 0, len(payload), depth)
            return
        if len(msgs) < BATCH_MIN:
            for m, at, length in zip(msgs, starts, lengths, strict=True):
                values[m][name] = sub._decode(source, at, at + length, depth)
            return
        decoded = sub._batch(source, rows.offset, rows.offset + rows.length, depth)
        for m, message in zip(msgs, decoded, strict=True):
            values[m][name] = message

    _subs: ClassVar[dict[str, type[Message]]] = {}
    _ordered: ClassVar[list[tuple[int, tuple[Any, ...]]]] = []


def _column(bits: Any, convert: Any) -> list[Any]:
    """The values of a column of varints or fixed bits (uint64), converted as one array."""
    import numpy as np

    if convert is None:
        return bits.tolist()
    if convert is _int64:
        return bits.view(np.int64).tolist()
    if convert is _int32:
        return bits.astype(np.uint32).view(np.int32).tolist()
    if convert.__class__ is int:
        return (bits & np.uint64(convert)).tolist()
    if convert is bool:
        return (bits != 0).tolist()
    if convert == "d":
        return bits.view(np.float64).tolist()
    if convert == "f":
        return bits.astype(np.uint32).view(np.float32).tolist()
    return [convert(v) for v in bits.tolist()]


def _joined(data: bytes, earlier: tuple[int, int] | bytes, pos: int, after: int) -> bytes:
    head = earlier if isinstance(earlier, bytes) else data[earlier[0]:earlier[1]]
    return head + data[pos:after]


def _fixed(data: bytes, pos: int, size: int, convert: Any) -> Any:
    if convert == "d":
        return _DOUBLE(data, pos)[0]
    if convert == "f":
        return _FLOAT(data, pos)[0]
    value = int.from_bytes(data[pos:pos + size], "little")
    return value if convert is None else convert(value)


def _packed(data: bytes, pos: int, end: int, wire: int, convert: Any) -> list[Any]:
    """The values of a packed repeated scalar held in ``data[pos:end]``."""
    out = []
    if wire == VARINT:
        while pos < end:
            value, pos = read_varint(data, pos, end)
            if convert is not None:
                value = value & convert if convert.__class__ is int else convert(value)
            out.append(value)
        return out
    size = 8 if wire == FIXED64 else 4
    if (end - pos) % size:
        raise WireError(f"a packed field of {end - pos:,} bytes is not a whole number of "
                        f"{size}-byte values", pos)
    return [_fixed(data, at, size, convert) for at in range(pos, end, size)]


def message_classes(package: str, messages: dict[str, list[Field]],
                    max_depth: int = MAX_DEPTH) -> dict[str, type[Message]]:
    """One :class:`Message` class per entry of ``messages`` (names local to ``package``)."""
    classes: dict[str, type[Message]] = {
        name: type(name, (Message,), {"__module__": f"traceconv.protowire.{package}",
                                      "_max_depth": max_depth})
        for name in messages}
    for message_name, fields in messages.items():
        cls = classes[message_name]
        specs: dict[int, tuple[Any, ...]] = {}
        subs: dict[str, type[Message]] = {}
        for name, number, spec in fields:
            repeated = spec.startswith("repeated ")
            kind = spec.removeprefix("repeated ")
            if kind in _SCALARS:
                wire, convert = _SCALARS[kind]
                size = 8 if wire == FIXED64 else 4   # (fixed fields)
                specs[number << 3 | wire] = (_READ_AS[wire] + repeated, name, convert, size)
                if repeated and wire != LENGTH:
                    specs[number << 3 | LENGTH] = (_PACKED, name, convert, wire)
                default: Any = () if repeated else _DEFAULTS.get(kind, 0)
            elif kind in classes:
                sub = subs[name] = classes[kind]
                specs[number << 3 | LENGTH] = (_MESSAGES if repeated else _MESSAGE, name, None,
                                               0)
                # (an absent list knows its element type: fields() of it is an empty table)
                default = (MessageList(_NO_DATA, sub, array("q"), array("q"), 0) if repeated
                           else _Empty(sub))
            else:
                raise ValueError(f"{package}.{message_name}.{name}: unknown type {kind!r}")
            setattr(cls, name, default)
        cls._specs, cls._subs = specs, subs
        cls._ordered = sorted(specs.items())   # by field number: batches set them so
        cls._numbers = {name: number for name, number, _ in fields}
        cls._types = {name: spec for name, _, spec in fields}
    for cls in classes.values():   # empty sub-messages, made once every class has its table
        for name, value in list(vars(cls).items()):
            if isinstance(value, _Empty):
                setattr(cls, name, value.cls())
    return classes


class _Empty:
    """Placeholder for the default of a message field until its class has its table."""

    def __init__(self, cls: type[Message]) -> None:
        self.cls = cls


def locate_damage(cls: type[Message], data: bytes) -> tuple[int, str, str] | None:
    """(byte offset, path such as ``planes[0].lines[2]``, why) of the first place where
    ``data`` is not a ``cls`` on the wire, or None when it decodes whole.

    >>> Map = message_classes("demo", {"Pair": [("key", 1, "string")],
    ...                                "Map": [("pairs", 1, "repeated Pair")]})["Map"]
    >>> locate_damage(Map, b"\\x0a\\x02\\x0a\\x05")
    (3, 'pairs[0].key', 'a field of 5 bytes runs past the end of its message (0 bytes left): the file is cut or damaged')
    """
    try:
        _walk(cls, _Source(data), 0, len(data), 0, "")
    except _Damage as damage:
        return damage.args
    return None


class _Damage(Exception):
    pass


def _walk(cls: type[Message], source: _Source, pos: int, end: int, depth: int, path: str
          ) -> None:
    """Decode every message, depth first, keeping the path for the error."""
    try:
        message = cls._decode(source, pos, end, depth)
    except WireError as exc:
        raise _Damage(exc.offset, _field_path(cls, source.data, pos, end, exc.offset, path),
                      str(exc)) from None
    for name, sub in cls._subs.items():
        value = message.__dict__.get(name)
        if isinstance(value, MessageList):
            for index, (start, stop) in enumerate(zip(value._starts, value._ends,
                                                      strict=True)):
                _walk(sub, source, start, stop, depth + 1, f"{path}.{name}[{index}]".lstrip("."))


def _field_path(cls: type[Message], data: bytes, pos: int, end: int, offset: int,
                path: str) -> str:
    """``path`` and the field of ``data[pos:end]`` in which byte ``offset`` lies (with its
    index when repeated), found by skipping fields up to it."""
    counts: dict[int, int] = {}
    number = None
    try:
        while pos <= offset and pos < end:
            key, after_key = read_varint(data, pos, end)
            number = key >> 3
            counts[number] = counts.get(number, -1) + 1
            pos = skip_value(data, key & 7, after_key, end, pos)
    except WireError:
        pass
    if number is None:
        return path or cls.__name__
    names = {n: name for name, n in cls._numbers.items()}
    spec = cls._specs.get(number << 3 | LENGTH)
    name = names.get(number, f"field {number}")
    if spec is not None and spec[0] in (_MESSAGES, _TEXT_LIST, _PACKED) or any(
            cls._specs.get(number << 3 | wire, (0,))[0] in (_VARINT_LIST, _FIXED_LIST)
            for wire in (VARINT, FIXED64, FIXED32)):
        name += f"[{counts[number]}]"
    return f"{path}.{name}" if path else name
