"""Events as ``split`` handles them: the few fields that decide a window, and the text.

Routing needs an event's phase, name, category, times, process, thread and flow id; the
piece needs the event exactly as it was written. So a piece of the event array is decoded
twice by msgspec, both cheaply: once into :class:`Head` records (arguments skipped
unread) and once into the raw text of each element, which is copied to the piece as is.
Only an event that ``split`` changes or reads further (a clipped slice, a ``[memory]``
event, a metadata event) is decoded whole.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from operator import attrgetter
from typing import Any, TypeGuard

import msgspec
import numpy as np
import orjson

from ..formats.chrome.exact_times import written_time_ns
from ..formats.chrome.stream import DocumentError, json_loads
from ..formats.chrome.times import duration_ns
from ..numbers import int64


class Arguments(msgspec.Struct, gc=False):
    """Of an event's arguments, only what routing reads: the launch correlation id
    (Kineto's ``correlation``, Paddle's ``correlation id``) and a ``[memory]`` event's
    block (size, address, device, the allocator's total); the rest is skipped."""

    correlation: Any = None
    correlation_id: Any = msgspec.field(default=None, name="correlation id")
    size: Any = msgspec.field(default=None, name="Bytes")
    address: Any = msgspec.field(default=None, name="Addr")
    device_type: Any = msgspec.field(default=None, name="Device Type")
    device_id: Any = msgspec.field(default=None, name="Device Id")
    total_allocated: Any = msgspec.field(default=None, name="Total Allocated")


class Head(msgspec.Struct, gc=False):
    """The routing fields of one event (None when absent). A phase or category that is
    not a text fails the typed decode, and its piece is read as plain values instead
    (:func:`as_pairs`; there a list or an object is made a text, other values are kept:
    :func:`_texts_for_objects`), so that the common case checks no type in Python."""

    ph: str | None = None
    name: Any = None
    cat: str | None = None
    ts: Any = None
    dur: Any = None
    pid: Any = None
    tid: Any = None
    id: Any = None
    id2: Any = None
    args: Arguments | None = None

    @property
    def correlation(self) -> int | None:
        """The launch correlation id (Kineto's ``args.correlation``), when it is an int64."""
        args = self.args
        if args is None:
            return None
        return int64(args.correlation if args.correlation is not None else args.correlation_id)


Pair = tuple[Head, Any]   # (head, the element's JSON text: bytes or msgspec.Raw)
_heads = msgspec.json.Decoder(list[Head]).decode
_texts = msgspec.json.Decoder(list[msgspec.Raw]).decode


def decode_pairs(piece: bytes | bytearray) -> list[Pair] | None:
    """A piece of event array text → (head, text) per event; None when an element is not
    an object (the caller then takes plain values).

    >>> [(h.ph, h.ts, bytes(t)) for h, t in decode_pairs(b'[{"ph": "X", "ts": 2}]')]
    [('X', 2, b'{"ph": "X", "ts": 2}')]
    """
    try:
        heads = _heads(piece)
    except msgspec.ValidationError:
        return None
    return list(zip(heads, _texts(piece), strict=True))


_TEXT_OR_NONE = frozenset({str, type(None)})
_TS = attrgetter("ts")


def _texts_for_objects(heads: list[Head]) -> None:
    """A phase or category that is a list or an object (a hostile file) as its text: the
    rules compare them with strings, some as members of a set, which an unhashable value
    cannot be looked up in. (Checked a column at a time: texts are the rule.)

    >>> heads = [Head(ph=["X"], cat={"a": 1}), Head(ph="X", cat="cpu_op")]
    >>> _texts_for_objects(heads); [(h.ph, h.cat) for h in heads]
    [("['X']", "{'a': 1}"), ('X', 'cpu_op')]
    """
    for field in ("ph", "cat"):
        if not set(map(type, map(attrgetter(field), heads))) <= _TEXT_OR_NONE:
            for h in heads:
                value = getattr(h, field)
                if isinstance(value, list | dict):
                    setattr(h, field, repr(value))


def as_pairs(chunk: list[Any]) -> list[Pair]:
    """A chunk as (head, text) pairs, whether it was decoded as pairs or as plain values.

    >>> [(h.ph, t) for h, t in as_pairs([{"ph": "i", "ts": 1}, 3])]
    [('i', b'{"ph":"i","ts":1}'), (None, b'3')]
    """
    if chunk and isinstance(chunk[0], tuple):
        return chunk
    pairs = []
    for e in chunk:
        head = _head(e) if isinstance(e, dict) else Head()
        pairs.append((head, dump_events([e])))
    _texts_for_objects([head for head, _ in pairs])
    return pairs


def _head(e: dict[str, Any]) -> Head:
    args = e.get("args")
    found = Arguments(**{f: args.get(name) for f, name in zip(
        Arguments.__struct_fields__, Arguments.__struct_encode_fields__, strict=True)}) \
        if isinstance(args, dict) else None
    return Head(**{k: e.get(k) for k in Head.__struct_fields__ if k != "args"}, args=found)


def whole(text: Any) -> Any:
    """The decoded event (integers of any size kept); an event that is not JSON (bytes
    that are not UTF-8 in a part the routing fields skipped) is a :class:`DocumentError`,
    which names the file where it is caught.

    >>> whole(b'{"id": 123456789012345678901234567890}')
    {'id': 123456789012345678901234567890}
    """
    try:
        return json_loads(bytes(text))
    except ValueError as exc:   # (orjson's JSONDecodeError)
        raise DocumentError(f"an event is not valid JSON: {exc}") from None


def dump_events(events: list[Any]) -> bytes:
    """The JSON text of ``events`` without the array's brackets (integers of any size kept,
    and a time the reader kept exact as a Decimal written as its digits).

    >>> from decimal import Decimal
    >>> dump_events([{"ph": "X", "ts": 1.5}, {"id": 2**70}, {"ts": Decimal("1.125")}])
    b'{"ph":"X","ts":1.5},{"id":1180591620717411303424},{"ts":1.125}'
    """
    try:
        return orjson.dumps(events, default=_number_text)[1:-1]
    except (orjson.JSONEncodeError, TypeError):   # an integer beyond 64 bits
        return json.dumps(events, separators=(",", ":"), ensure_ascii=False,
                          default=float).encode()[1:-1]   # (Decimals: here, rare, rounded)


def _number_text(value: Any) -> Any:
    if isinstance(value, Decimal):
        return orjson.Fragment(str(value))
    raise TypeError(type(value).__name__)


EXACT = float(1 << 52)   # below this, a double holds every integer and the sum of two exactly


def exact_times(values: list[Any]) -> np.ndarray | None:
    """``values`` (times or durations as written) as doubles, NaN where absent, when every
    one is None, an int or a float that a double holds exactly (so that comparing and
    adding them in numpy gives what Python gives); None otherwise (the caller then decides
    event by event).

    >>> exact_times([1, None, 2.5]).tolist()
    [1.0, nan, 2.5]
    >>> exact_times([1, True]), exact_times([1, "2"]), exact_times([1 << 60])
    (None, None, None)
    """
    if not set(map(type, values)) <= _EXACT_TYPES:
        return None
    try:
        column = np.array(values, dtype=np.float64)
    except OverflowError:   # an int past a double's range
        return None
    with np.errstate(invalid="ignore"):
        if len(column) and np.nanmax(np.abs(column), initial=0.0) >= EXACT:
            return None
    return column


_EXACT_TYPES = frozenset({int, float, type(None)})


def is_number(value: Any) -> TypeGuard[int | float]:
    """An int or a float (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def as_float(value: Any) -> float:
    """A number as a float; NaN for anything else (a bool, a text, an int past a float).

    >>> as_float(3), as_float(True), as_float(10**400)
    (3.0, nan, nan)
    """
    if not is_number(value):
        return math.nan
    try:
        return float(value)
    except OverflowError:
        return math.nan


def time_of(value: Any) -> Any:
    """A start or an end as written, when it is a number a double can hold; else None (a
    text, a bool, an int of 400 digits: no time for the windows and the span).

    >>> time_of(1.5), time_of(10**400), time_of(True)
    (1.5, None, None)
    """
    return value if math.isfinite(as_float(value)) else None


def end_of(ts: Any, dur: Any) -> Any:
    """``ts + dur`` as written, when both and the sum are numbers a double can hold; else
    None (the event's end is not a time).

    >>> end_of(1, 2.5), end_of(1e308, 1e308), end_of(1.0, 10**400), end_of(1, None)
    (3.5, None, None, None)
    """
    if time_of(ts) is None or time_of(dur) is None:
        return None
    return time_of(ts + dur)


EDGE_NS = 1 << 62


def ns_time(value: float, unit: int) -> int:
    """A finite time in file units as integer ns, as a piece's reader reads it where split
    writes it (:func:`~traceconv.formats.chrome.exact_times.written_time_ns`: the reader's
    one rule); one past a double once in ns held at ±2^62, beyond the model's time range,
    so that the builder's one rule moves it to the edge and counts it.

    >>> ns_time(1.5, 1000), ns_time(4482851316030.7295, 1000), ns_time(1e307, 1000) == EDGE_NS
    (1500, 4482851316030729, True)
    """
    scaled = value * unit
    if math.isfinite(scaled) and abs(scaled) < EDGE_NS:
        return written_time_ns(value, unit)
    return EDGE_NS if scaled > 0 else -EDGE_NS


def ns_length(value: float, unit: int) -> int:
    """:func:`ns_time` for a duration: rounded as the reader rounds one (no epoch's digits
    to keep), held at ±2^62 past a double's reach as a time is.

    >>> ns_length(2.5, 1000), ns_length(float("inf"), 1000) == EDGE_NS
    (2500, True)
    """
    scaled = value * unit
    if math.isfinite(scaled) and abs(scaled) < EDGE_NS:
        return duration_ns(value, unit)
    return EDGE_NS if scaled > 0 else -EDGE_NS


def floats(values: list[Any]) -> np.ndarray:
    """:func:`as_float` of each value, at numpy speed when a double holds them all exactly.

    >>> floats([1, None, 2.5]).tolist(), floats([True, 10**400, 3]).tolist()
    ([1.0, nan, 2.5], [nan, nan, 3.0])
    """
    column = exact_times(values)
    return column if column is not None else np.array(list(map(as_float, values)), np.float64)


def time_columns(heads: list[Head]) -> tuple[np.ndarray, np.ndarray] | None:
    """The starts and (of ``X`` slices; NaN for the others) durations of ``heads`` as
    :func:`exact_times` columns, or None when a double cannot hold them all exactly.

    >>> ts, dur = time_columns([Head(ph="X", ts=5, dur=2), Head(ph="i", ts=7, dur=9)])
    >>> ts.tolist(), dur.tolist()
    ([5.0, 7.0], [2.0, nan])
    """
    ts = exact_times(list(map(_TS, heads)))
    if ts is None:
        return None
    dur = exact_times([h.dur if h.ph == "X" else None for h in heads])
    return None if dur is None else (ts, dur)


def hashable(*values: Any) -> tuple[Any, ...]:
    """``values`` as a dict key: a list or an object (a hostile id, pid, ...) by its text.

    >>> hashable(1, "a", {"local": 2})
    (1, 'a', "{'local': 2}")
    """
    for value in values:
        if isinstance(value, dict | list):
            return tuple(repr(v) if isinstance(v, dict | list) else v for v in values)
    return values   # (the common case, once per event: no copy)
