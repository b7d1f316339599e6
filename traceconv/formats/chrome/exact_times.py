"""Times a double cannot hold, read again from their text.

A JSON decoder gives ``"ts": 1712195495505582.988`` (epoch µs with ns decimals, 19
significant digits) as a double, which holds about 16: at 1.7e15 its spacing is 0.25 µs,
so the ns digits are gone before any reader sees the number. Below :data:`EXACT_BELOW` a
double still holds every ns of a µs time, and the reader recovers the written decimals
(``reader._ns``). A piece of the event array with a float ``ts`` beyond it is refused by the
typed records (``records.py``: a bound on the type, free for ordinary pieces) and read as
plain values, where :func:`exact_times` reads each such ``ts`` again from the text as a
:class:`~decimal.Decimal`, which the reader converts exactly. Kineto's usual times (below
9e12 µs, or whole µs, which decode as ints) never take that way.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import msgspec

from .times import time_ns

# A double holds every integer below 2**53: µs times below this keep all their ns digits.
EXACT_BELOW = 2 ** 53 / 1000


class _Time(msgspec.Struct):
    ts: msgspec.Raw = msgspec.Raw()   # the number's text, as written


_TIMES = msgspec.json.Decoder(list[_Time]).decode


def written_time_ns(value: int | float, unit: int) -> int:
    """The ns the reader gives ``value`` once written as JSON (its shortest digits, as
    ``orjson`` and ``repr`` write a float): a double below :data:`EXACT_BELOW` converted as
    decoded (:func:`~.times.time_ns`), one beyond it from its text's exact value. A time
    ``split`` writes into a piece (a cut, a carried copy's start) and gives in its manifest
    is read by this one rule, so the two agree to the ns (``...030.7295`` µs is 729 ns past
    the µs, as the reader reads it, not the 730 the decimal digits would round to; a
    Paddle time in ns near 1.8e18 is its digits', not the double's ``...698880``).

    >>> written_time_ns(4482851316030.7295, 1000), written_time_ns(1.795339941560699e+18, 1)
    (4482851316030729, 1795339941560699000)
    """
    if type(value) is float and not -EXACT_BELOW < value < EXACT_BELOW:
        return time_ns(Decimal(repr(value)), unit)   # type: ignore[arg-type]
    return time_ns(value, unit)


def exact_times(events: list[Any], piece: bytes | bytearray) -> list[Any]:
    """``events`` (the plain values decoded from ``piece``, in its order), each float
    ``ts`` a double cannot hold exactly replaced by the exact value of its text.

    >>> import json
    >>> piece = b'[{"ph": "X", "ts": 1712195495505582.988}, {"ph": "X", "ts": 2.5}]'
    >>> [e["ts"] for e in exact_times(json.loads(piece), piece)]
    [Decimal('1712195495505582.988'), 2.5]
    """
    far = [i for i, e in enumerate(events) if type(e) is dict
           and type(t := e.get("ts")) is float and not -EXACT_BELOW < t < EXACT_BELOW]
    if not far:
        return events
    try:
        texts = _TIMES(piece)
    except msgspec.DecodeError:   # (an element that is not an object: nothing is replaced)
        return events
    for i in far:
        events[i]["ts"] = Decimal(bytes(texts[i].ts).decode())
    return events
