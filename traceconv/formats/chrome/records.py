"""Typed event records: the reader's fast path for the bulk of a large trace.

A large trace is almost all complete slices (``X``), instants and flow points, with the
same few fields each. msgspec decodes a piece of such events straight into records, one
class per phase, and checks every field's type on the way, so the reader can take them a
column at a time (:meth:`~traceconv.formats.chrome.reader.ChromeReader.read`) without
asking, per event, whether a name is a string or a time a number.

The types say exactly what the column path reads as the per-event path would: a piece
with anything else (another phase, a field of another type, a missing time, a negative
duration, a flow v2 binding, an instant of process or global scope, a time with more digits
than a double holds: :mod:`.exact_times`) fails to decode and is
read event by event, as plain dicts; the reader does the same with a piece that holds a
``[memory]`` slice, which only the per-event path turns into an instant, or arguments that
are not an object. Arguments stay JSON text (``msgspec.Raw``): most are never looked at
before a writer needs them, and text is a third of the memory of decoded values. Fields
that neither path uses are not kept.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import msgspec

from ...json_decode import lenient
from .exact_times import EXACT_BELOW

_Duration = Annotated[int, msgspec.Meta(ge=0)] | Annotated[float, msgspec.Meta(ge=0)]
_Time = int | Annotated[float, msgspec.Meta(gt=-EXACT_BELOW, lt=EXACT_BELOW)]


class Record(msgspec.Struct, gc=False, kw_only=True, tag_field="ph"):
    """The fields every record has; an absent field reads as None (as ``dict.get`` gives
    it to the per-event path)."""

    phase: ClassVar[str]
    name: str | None = None
    cat: str | None = None
    pid: int | str | None = None
    tid: int | str | None = None
    # its JSON text, decoded only when asked for (empty when absent; may be ``null``)
    args: msgspec.Raw = msgspec.Raw()

    def as_dict(self) -> dict[str, Any]:
        """The event as the per-event path sees it (absent fields left out).

        >>> Metadata(name="thread_name", pid=1, args=msgspec.Raw(b'{"name": "main"}')).as_dict()
        {'ph': 'M', 'name': 'thread_name', 'pid': 1, 'args': {'name': 'main'}}
        """
        event = {"ph": self.phase, **{k: v for k in self.__struct_fields__
                                      if (v := getattr(self, k)) is not None}}
        event.pop("args")
        if self.args:
            event["args"] = _DECODE_ARGS(self.args)
        return event


class Slice(Record, tag="X"):
    phase = "X"
    ts: _Time
    dur: _Duration
    bind_id: None = None   # a flow v2 binding (any value) is for the per-event path


class Instant(Record, tag="i"):
    phase = "i"
    ts: _Time
    s: Literal["t"] | None = None   # thread scope only
    bind_id: None = None   # a flow v2 binding, counted by the per-event path


class _InstantUpper(Instant, tag="I"):   # the old spelling of "i"
    phase = "I"


class _Mark(Instant, tag="R"):
    phase = "R"


class FlowPoint(Record, tag="s"):
    phase = "s"
    ts: _Time
    id: int | str
    bp: str | None = None


class _FlowStep(FlowPoint, tag="t"):
    phase = "t"


class FlowEnd(FlowPoint, tag="f"):
    phase = "f"


class Metadata(Record, tag="M"):
    phase = "M"


_DECODE_ARGS = lenient()
_DECODE = msgspec.json.Decoder(
    list[Slice | Instant | _InstantUpper | _Mark | FlowPoint | _FlowStep | FlowEnd
         | Metadata]).decode


def decode(piece: bytes | bytearray) -> list[Any]:
    """The records of a piece of event array text (raises ``msgspec.DecodeError`` when an
    event does not fit the types: the piece is then read event by event).

    >>> [slice] = decode(b'[{"ph": "X", "name": "mm", "ts": 1, "dur": 2, "tid": "7", "x": 0}]')
    >>> slice.name, slice.ts, slice.tid, bytes(slice.args)
    ('mm', 1, '7', b'')
    """
    if not piece.isascii():   # the decoder skips over args texts without checking them
        bytes(piece).decode()   # UnicodeDecodeError: the piece goes to the parser that locates
    return _DECODE(piece)  # type: ignore[no-any-return]
