"""Human units for the memory-flow picture: byte sizes, durations, and "nice" tick steps.

Sizes are binary (KiB = 1024 B), as allocators and device memory are counted in powers of
two. Durations pick the largest unit that keeps the number at least 1.
"""

from __future__ import annotations

import math
import re

from ...errors import TraceconvError
from ...numbers import NumberError, scaled_int

BYTE_UNITS = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1))
TIME_UNITS = (("s", 1_000_000_000), ("ms", 1_000_000), ("µs", 1_000), ("ns", 1))
_PARSE_BYTES = {"b": 1, "k": 1 << 10, "kb": 1000, "kib": 1 << 10, "m": 1 << 20, "mb": 10**6,
                "mib": 1 << 20, "g": 1 << 30, "gb": 10**9, "gib": 1 << 30,
                "t": 1 << 40, "tb": 10**12, "tib": 1 << 40}
_PARSE_TIME = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
_QUANTITY = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-zµ]*)\s*$", re.IGNORECASE)


def format_bytes(n: float, digits: int = 3) -> str:
    """``n`` bytes with a binary unit and ``digits`` significant digits.

    >>> format_bytes(0), format_bytes(1536), format_bytes(3_054_392), format_bytes(-2048)
    ('0 B', '1.5 KiB', '2.91 MiB', '-2 KiB')
    """
    for unit, scale in BYTE_UNITS:
        if abs(n) >= scale or scale == 1:
            return f"{_significant(n / scale, digits)} {unit}"
    raise AssertionError("unreachable")


def format_duration(ns: float, digits: int = 4) -> str:
    """A duration in nanoseconds with the largest unit that keeps it at least 1.

    >>> format_duration(0), format_duration(1500), format_duration(2_500_000), format_duration(3e9)
    ('0 ns', '1.5 µs', '2.5 ms', '3 s')
    """
    for unit, scale in TIME_UNITS:
        if abs(ns) >= scale or scale == 1:
            return f"{_significant(ns / scale, digits)} {unit}"
    raise AssertionError("unreachable")


def _significant(value: float, digits: int) -> str:
    text = f"{value:.{digits}g}"
    if "e" in text:  # large numbers in plain digits: 12345 s, not 1.234e+04 s
        text = f"{value:.0f}"
    return text


def nice_step(span: float, target_ticks: int, base: int = 10) -> float:
    """A round tick step (1, 2 or 5 times a power of ``base``) giving about ``target_ticks``.

    With ``base=2`` steps are powers of two (for byte axes).

    >>> nice_step(1000, 5), nice_step(7, 4), nice_step(3 << 20, 4, base=2)
    (200.0, 2.0, 1048576.0)
    """
    if span <= 0 or target_ticks < 1:
        return 1.0
    raw = span / target_ticks
    if base == 2:
        return float(2 ** max(0, math.ceil(math.log2(raw))))
    power = 10.0 ** math.floor(math.log10(raw))
    for multiple in (1, 2, 5, 10):
        if raw <= multiple * power:
            return multiple * power
    return 10 * power


def time_unit_for(span_ns: float) -> tuple[str, int]:
    """The unit (name, ns per unit) in which ticks over ``span_ns`` read best.

    >>> time_unit_for(480_000_000), time_unit_for(900)
    (('ms', 1000000), ('ns', 1))
    """
    for unit, scale in TIME_UNITS:
        if span_ns >= 2 * scale:
            return unit, scale
    return "ns", 1


def parse_bytes(text: str) -> int:
    """A size such as ``4096``, ``4KiB``, ``1.5 MiB`` or ``2MB`` in bytes.

    >>> parse_bytes("4096"), parse_bytes("4KiB"), parse_bytes("1.5 MiB"), parse_bytes("2MB")
    (4096, 4096, 1572864, 2000000)
    """
    number, unit = _quantity(text, "size")
    scale = _PARSE_BYTES.get(unit.lower() or "b")
    if scale is None:
        raise TraceconvError(f"unknown size unit {unit!r} in {text!r} "
                             "(use B, KiB, MiB, GiB, TiB)")
    return int(number * scale)


def parse_duration(text: str) -> int:
    """A time such as ``1500`` (ns), ``12us``, ``3.5ms`` or ``2s`` in nanoseconds.

    >>> parse_duration("1500"), parse_duration("12us"), parse_duration("3.5ms")
    (1500, 12000, 3500000)
    """
    number, unit = _quantity(text, "time")
    scale = _PARSE_TIME.get(unit.lower() or "ns")
    if scale is None:
        raise TraceconvError(f"unknown time unit {unit!r} in {text!r} (use ns, us, ms, s)")
    try:
        return scaled_int(number, scale)
    except NumberError:
        raise TraceconvError(f"time out of range: {text!r}") from None


def _quantity(text: str, what: str) -> tuple[float, str]:
    match = _QUANTITY.match(text)
    if not match:
        raise TraceconvError(f"cannot read {what} {text!r}")
    return float(match.group(1)), match.group(2)
