"""JSON decoders that read a number beyond a double's range as ±infinity.

msgspec and orjson refuse ``1e400``; JavaScript's ``JSON.parse`` (which Chrome's own trace
viewer uses) and Python's ``json`` read it as infinity, and so does traceconv, on every
path: the typed-record reader keeps arguments as text and decodes them later, so a
refusal there would come long after the file was read. Each decoder first runs as it is
(no cost on ordinary text); only a text holding such a number is decoded again, with a
hook that makes it ±infinity.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable
from typing import Any

import msgspec
import orjson


def lenient(type_: Any = Any) -> Callable[[bytes | bytearray | memoryview], Any]:
    """A decoder of JSON text into ``type_`` that reads out-of-range numbers as ±inf.

    >>> decode = lenient(dict[str, Any])
    >>> decode(b'{"a": 1e400, "b": -1e999, "c": 1.5, "d": 123456789012345678901234567890}')
    {'a': inf, 'b': -inf, 'c': 1.5, 'd': 123456789012345678901234567890}
    >>> huge = b"9" * 5000   # (more digits than Python makes an int of)
    >>> decode(b'{"a": 1e400, "b": ' + huge + b'}'), decode(b'{"b": ' + huge + b', "a": 1e400}')
    ({'a': inf, 'b': inf}, {'b': inf, 'a': inf})
    """
    strict = msgspec.json.Decoder(type_).decode
    again = msgspec.json.Decoder(type_, float_hook=float).decode

    def decode(text: bytes | bytearray | memoryview) -> Any:
        try:
            return strict(text)
        except msgspec.ValidationError as exc:
            if not str(exc).startswith((_OUT_OF_RANGE, _TOO_MANY_DIGITS)):
                raise
        # (the error names the first such number only: a text may hold both kinds)
        return again(_huge_integers_as_infinity(text))

    return decode


_OUT_OF_RANGE = "Number out of range"
_TOO_MANY_DIGITS = "Integer value out of range"   # (more digits than Python converts)


@functools.lru_cache(maxsize=4)
def _huge_integer(digits: int) -> re.Pattern[bytes]:
    """A JSON string, or an integer of more than ``digits`` digits (its sign captured)."""
    return re.compile(rb'"(?:[^"\\]|\\.)*"|(-?)\d{%d,}' % (digits + 1), re.DOTALL)


def _huge_integers_as_infinity(text: bytes | bytearray | memoryview) -> bytes:
    """``text`` with each integer of more digits than Python converts to an int
    (``sys.get_int_max_str_digits()``: 4,300 unless set) written as ±infinity, as
    ``JSON.parse`` reads it; strings are left as they are.

    >>> _huge_integers_as_infinity(b'[' + b'9' * 4301 + b', "' + b'9' * 4301 + b'", -1]')[:8]
    b'[1e999, '
    >>> lenient()(b'{"a": -' + b'1' * 5000 + b', "b": 2}')
    {'a': -inf, 'b': 2}
    """
    def number(match: re.Match[bytes]) -> bytes:
        found = match.group(0)
        return found if found[:1] == b'"' else match.group(1) + b"1e999"

    return _huge_integer(sys.get_int_max_str_digits() or sys.maxsize).sub(number, bytes(text))


def first_not_utf8(data: bytes | bytearray | memoryview) -> int | None:
    """The offset of the first byte of ``data`` that is not UTF-8; None when all are.

    >>> first_not_utf8(b"ab\\xc3\\xa9c"), first_not_utf8(b"ab\\xa2c")
    (None, 2)
    """
    text = bytes(data)
    if text.isascii():
        return None
    try:
        text.decode()
    except UnicodeDecodeError as exc:
        return exc.start
    return None


def error_at(message: str, data: bytes | bytearray | memoryview, at: int
             ) -> orjson.JSONDecodeError:
    """orjson's error ``message`` placed at byte ``at`` of UTF-8 ``data`` valid before it
    (its line and its column in characters, as orjson counts them).

    >>> error = error_at("here", "a\\n\\u00e9x".encode(), 4); error.lineno, error.colno
    (2, 2)
    """
    before = bytes(data[:at]).decode()
    return orjson.JSONDecodeError(message, before, len(before))


_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def too_deep(data: bytes | bytearray | memoryview, limit: int) -> tuple[int, int] | None:
    """The ``(line, column)`` of the first bracket nested deeper than ``limit``, else None
    (a decoder that recursed too deep says nothing of where).

    >>> too_deep(b'{"a": [[["x"]]]}', 3), too_deep(b'{"a": "[[[[["}', 3)
    ((1, 8), None)
    """
    text, depth = bytes(data), 0
    for token in _TOKENS.finditer(text):
        bracket = token.group()
        if bracket in (b"[", b"{"):
            depth += 1
            if depth > limit:
                at = token.start()
                line = text.count(b"\n", 0, at) + 1
                return line, at - (text.rfind(b"\n", 0, at) + 1)
        elif bracket in (b"]", b"}"):
            depth -= 1
    return None


def any_value(value: Any, test: Callable[[Any], bool]) -> bool:
    """Whether ``test`` holds for ``value`` or for a value nested in it (in lists and
    objects, at any depth: walked without recursion).

    >>> any_value({"a": [1, {"b": 2**64}]}, lambda v: type(v) is int and v >= 2**63)
    True
    """
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif test(item):
            return True
    return False
