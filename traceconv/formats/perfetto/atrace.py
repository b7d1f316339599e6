"""Android/Linux atrace lines: what apps write to the ftrace ``print`` event (trace_marker).

A line is ``PHASE|tgid|...``: ``B|tgid|name`` opens a slice on the writing thread, ``E``
(or ``E|tgid``, with or without a name) closes the thread's latest open slice,
``C|tgid|name|value`` sets a process counter, ``S|tgid|name|cookie`` and
``F|tgid|name|cookie`` begin and finish an async slice of the process, ``I|tgid|name`` is
an instant. After a counter's value or a cookie, anything more (a category) is left out;
a slice name keeps every '|' it holds. A line of another shape is not atrace (counted by the caller).
"""

from __future__ import annotations

from typing import NamedTuple

BEGIN, END, COUNTER, ASYNC_BEGIN, ASYNC_END, INSTANT = "B", "E", "C", "S", "F", "I"
_FIELDS = {BEGIN: 3, END: 1, COUNTER: 4, ASYNC_BEGIN: 4, ASYNC_END: 4, INSTANT: 3}


class AtraceLine(NamedTuple):
    """One parsed line: ``value`` is the counter value or the async cookie (0 otherwise)."""

    phase: str
    tgid: int
    name: str
    value: float


def parse(text: str) -> AtraceLine | None:
    """The atrace line ``text`` (one ``print`` buffer), or None when it is not one.

    >>> parse("B|9305|Choreographer#doFrame 1234\\n")
    AtraceLine(phase='B', tgid=9305, name='Choreographer#doFrame 1234', value=0.0)
    >>> parse("E|9305"), parse("C|7|queue|-3").value, parse("S|7|Sync|42").value
    (AtraceLine(phase='E', tgid=9305, name='', value=0.0), -3.0, 42.0)
    >>> parse("hello world") is None, parse("B|x|name") is None, parse("C|7|c|many") is None
    (True, True, True)
    """
    parts = text.rstrip("\n").split("|", 3)
    needed = _FIELDS.get(parts[0])
    if needed is None or len(parts) < needed:
        return None
    tgid = 0
    if len(parts) > 1 and parts[1]:
        if not parts[1].strip().lstrip("-").isdecimal():
            return None
        tgid = int(parts[1])
    name = parts[2] if len(parts) > 2 and parts[0] != END else ""
    if parts[0] in (BEGIN, INSTANT) and len(parts) > 3:   # (a slice name keeps its '|')
        name = f"{name}|{parts[3]}"
    value = 0.0
    if needed == 4:
        try:
            value = float(parts[3].split("|", 1)[0])
        except ValueError:
            return None
    return AtraceLine(parts[0], tgid, name, value)
