"""Log lines a system trace recorded (``TracePacket.android_log``: logcat on Android, the
``android.log`` data source), decoded from a field table (numbers from Perfetto's
``android_log.proto``), as trace_processor's ``android_logs`` table has them: the writing
thread, the priority, the tag and the message; a structured line without a message reads
as its arguments, ``name=value`` each, in order (a string value in double quotes).

A line's timestamp is on the realtime clock: the reader moves it onto the trace clock through
the ClockSnapshots (a trace without one places no line, as trace_processor places none).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from ..protowire import message_classes

ANDROID_LOG = 39   # TracePacket field
REALTIME = 1       # BUILTIN_CLOCK_REALTIME, the clock of a line's timestamp
_VALUES = ("int_value", "float_value", "string_value")
_MESSAGES = message_classes("perfetto_android_log", {
    "Arg": [("name", 1, "string"), ("int_value", 2, "int64"), ("float_value", 3, "float"),
            ("string_value", 4, "string")],
    "LogEvent": [("pid", 2, "int32"), ("tid", 3, "int32"), ("timestamp", 5, "uint64"),
                 ("tag", 6, "string"), ("prio", 7, "enum"), ("message", 8, "string"),
                 ("args", 9, "repeated Arg")],
    "AndroidLogPacket": [("events", 1, "repeated LogEvent")],
})


class LogLine(NamedTuple):
    """One log line (``ts`` on the realtime clock until the reader moves it)."""

    ts: int
    pid: int
    tid: int
    prio: int
    tag: str
    message: str
    clock: int = REALTIME


def log_lines(payload: bytes, text: Callable[[Any], Any] = str) -> list[LogLine]:
    """The lines of one AndroidLogPacket; ``text`` makes each string field text (the
    reader's :class:`~traceconv.formats._proto.Utf8Repair`: the decoder hands a string
    that is not UTF-8 over as bytes), the arguments' names and values included.

    >>> event = b"\\x10\\x07\\x18\\x08\\x28\\x64\\x32\\x03app\\x38\\x04\\x42\\x02hi"
    >>> log_lines(b"\\x0a" + bytes([len(event)]) + event)
    [LogLine(ts=100, pid=7, tid=8, prio=4, tag='app', message='hi', clock=1)]
    """
    return [LogLine(event.timestamp if event.has("timestamp") else 0, event.pid, event.tid,
                    event.prio, text(event.tag), text(event.message) if event.has("message")
                    else " ".join(f"{text(arg.name)}={_value(arg, text)}" for arg in event.args))
            for event in _MESSAGES["AndroidLogPacket"].decode(payload).events]


def _value(arg: Any, text: Callable[[Any], Any]) -> object:
    """An argument's value as trace_processor writes it (a string in double quotes)."""
    if arg.has("string_value"):
        return f'"{text(arg.string_value)}"'
    return next((getattr(arg, name) for name in _VALUES if arg.has(name)), "")
