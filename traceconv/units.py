"""Sizes and times for people: one meaning for every unit, one formatter for each.

**Sizes.** ``kB``/``KB``, ``MB``, ``GB``, ``TB`` are decimal (SI: ``2MB`` is 2,000,000
bytes); ``KiB``, ``MiB``, ``GiB``, ``TiB`` are binary (``2MiB`` is 2,097,152 bytes); a bare
``K``, ``M``, ``G``, ``T`` is binary too, as memory sizes are counted in powers of two
(``--max-bytes 4G`` is 4 GiB). Case does not matter; a space may stand before the unit;
``B`` alone (or nothing) is bytes. Every option that takes a size reads it with
:func:`parse_bytes` (``--max-bytes``, ``memflow --min-size``, ``advise --device-memory``).

**Times.** ``ns`` (the default), ``us``/``µs``, ``ms``, ``s``: :func:`parse_duration`.

**Output.** :func:`format_bytes` writes binary units (``1.5 KiB``) and :func:`format_duration`
the largest time unit that keeps the number at least 1 (``2.5 ms``, ``300 ns``): every lone
duration shown to a person (a headline, a sentence, a title, an SVG label) is written by it,
so a short one never reads ``0.000 ms``. A table column of durations keeps one unit for all
its figures, :func:`column_unit`, and writes each with :func:`in_column_unit`. Tables that copy a
framework's own print-out keep that framework's format, digit for digit: ``traceconv ops``
prints bytes as ``torch.profiler`` does (``146.76 MB`` for 146.76 MiB,
:func:`traceconv.presentation.summary.ops.format_bytes`) and ``traceconv summary`` as MegEngine's
``profile_analyze`` (``786.00 KiB``, :func:`traceconv.presentation.summary.number_with_unit`).

>>> parse_bytes("2MB"), parse_bytes("2MiB"), parse_bytes("2M"), parse_bytes("1.5 kib")
(2000000, 2097152, 2097152, 1536)
>>> format_bytes(parse_bytes("2MB")), format_duration(parse_duration("3.5ms"))
('1.91 MiB', '3.5 ms')
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .errors import TraceconvError
from .numbers import NumberError, scaled_int, shown

BYTE_UNITS = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1))
TIME_UNITS = (("s", 1_000_000_000), ("ms", 1_000_000), ("µs", 1_000), ("ns", 1))
_SIZES = {"": 1, "b": 1,
          **{f"{p}": 1 << (10 * n) for n, p in enumerate("kmgt", 1)},           # K: binary
          **{f"{p}ib": 1 << (10 * n) for n, p in enumerate("kmgt", 1)},         # KiB
          **{f"{p}b": 1000 ** n for n, p in enumerate("kmgt", 1)}}              # kB: SI
_TIMES = {"": 1, "ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
# each run of digits read once ("[0-9]*\.?[0-9]+" tried each split of a long run)
_QUANTITY = re.compile(r"^\s*+((?:[0-9]*+\.)?[0-9]++(?:e[+-]?[0-9]++)?)\s*+([a-zµ]*+)\s*+$",
                       re.IGNORECASE)


class UnitError(TraceconvError, ValueError):
    """A size or a time that cannot be read (a ``ValueError`` too, for option parsers)."""


def _quantity(text: str, what: str) -> tuple[float, str]:
    match = _QUANTITY.match(text) if isinstance(text, str) else None
    if not match:
        raise UnitError(f"cannot read {what} {shown(text)}")
    return float(match.group(1)), match.group(2)


def parse_bytes(text: str) -> int:
    """A size such as ``4096``, ``4KiB``, ``1.5 MiB``, ``2MB`` or ``32G`` in bytes (see the
    module text for what each unit means).

    >>> parse_bytes("4096"), parse_bytes("4KiB"), parse_bytes("2 GB"), parse_bytes("1t")
    (4096, 4096, 2000000000, 1099511627776)
    """
    number, unit = _quantity(text, "size")
    scale = _SIZES.get(unit.lower())
    if scale is None:
        raise UnitError(f"unknown size unit {unit!r} in {shown(text)} (use B, KiB, MiB, GiB, TiB "
                        "or kB, MB, GB, TB)")
    try:
        return scaled_int(number, scale)
    except NumberError:
        raise UnitError(f"size out of range: {shown(text)}") from None


def parse_duration(text: str) -> int:
    """A time such as ``1500`` (ns), ``12us``, ``3.5ms`` or ``2s`` in nanoseconds.

    >>> parse_duration("1500"), parse_duration("12us"), parse_duration("3.5ms")
    (1500, 12000, 3500000)
    """
    number, unit = _quantity(text, "time")
    scale = _TIMES.get(unit.lower())
    if scale is None:
        raise UnitError(f"unknown time unit {unit!r} in {shown(text)} (use ns, us, ms, s)")
    try:
        return scaled_int(number, scale)
    except NumberError:
        raise UnitError(f"time out of range: {shown(text)}") from None


def format_bytes(n: float, digits: int = 3) -> str:
    """``n`` bytes with a binary unit and ``digits`` significant digits.

    >>> format_bytes(0), format_bytes(1536), format_bytes(3_054_392), format_bytes(-2048)
    ('0 B', '1.5 KiB', '2.91 MiB', '-2 KiB')
    """
    for unit, scale in BYTE_UNITS:
        if abs(n) >= scale or scale == 1:
            return f"{_significant(n / scale, digits)} {unit}"
    raise AssertionError("unreachable")


def format_duration(ns: float, digits: int = 4, signed: bool = False) -> str:
    """A duration in nanoseconds with the largest unit that keeps it at least 1, to ``digits``
    significant digits; ``signed``: a change, with its sign (``+`` too).

    >>> format_duration(0), format_duration(1500), format_duration(2_500_000), format_duration(3e9)
    ('0 ns', '1.5 µs', '2.5 ms', '3 s')
    >>> format_duration(300), format_duration(1_234_567), format_duration(-40_000, signed=True)
    ('300 ns', '1.235 ms', '-40 µs')
    >>> format_duration(1_400_000, signed=True), format_duration(0, signed=True)
    ('+1.4 ms', '0 ns')
    >>> format_duration(1_795_339_764.4e9)   # (inputs on clocks 56 years apart)
    '1,795,339,764 s'
    """
    for unit, scale in TIME_UNITS:
        if abs(ns) >= scale or scale == 1:
            return f"{_significant(ns / scale, digits, signed and ns != 0, grouped=True)} {unit}"
    raise AssertionError("unreachable")


# finest first; ms is the coarsest so that short rows of a long column keep µs
COLUMN_UNITS = (("ns", 1), ("µs", 1_000), ("ms", 1_000_000))


def column_unit(largest_ns: float) -> tuple[str, int]:
    """The one unit (name, ns per unit) of a table column of durations whose largest value
    is ``largest_ns``: the finest of ns, µs and ms in which it has at most four digits before
    the point, else ms.

    >>> column_unit(300), column_unit(5_000_000), column_unit(20_000_000), column_unit(9e12)
    (('ns', 1), ('µs', 1000), ('ms', 1000000), ('ms', 1000000))
    """
    for unit, scale in COLUMN_UNITS:
        if abs(largest_ns) < 10_000 * scale:
            return unit, scale
    return COLUMN_UNITS[-1]


def in_column_unit(ns: float, scale: int, signed: bool = False) -> str:
    """``ns`` as a figure of a column in the unit of ``scale`` (from :func:`column_unit`):
    thousands grouped, three decimals, none in ns (whole nanoseconds).

    >>> in_column_unit(1_234_567, 1000), in_column_unit(30, 1), in_column_unit(1500, 1000, True)
    ('1,234.567', '30', '+1.500')
    """
    return f"{ns / scale:{'+' if signed else ''},.{3 if scale > 1 else 0}f}"


def column_figures(values_ns: Sequence[float], signed: bool = False) -> tuple[str, list[str]]:
    """A table column of durations: its unit (:func:`column_unit` of the largest) and its
    figures in that unit (``signed``: changes, with their signs).

    >>> column_figures([30, 100, 0]), column_figures([1_500_000, -400], signed=True)
    (('ns', ['30', '100', '0']), ('µs', ['+1,500.000', '-0.400']))
    """
    unit, scale = column_unit(max((abs(v) for v in values_ns), default=0))
    return unit, [in_column_unit(v, scale, signed) for v in values_ns]


def _significant(value: float, digits: int, signed: bool = False, grouped: bool = False) -> str:
    sign = "+" if signed else ""
    text = f"{value:{sign}.{digits}g}"
    if "e" in text:  # large numbers in plain digits: 12345 s, not 1.234e+04 s
        text = f"{value:{sign}{',' if grouped else ''}.0f}"
    return text
