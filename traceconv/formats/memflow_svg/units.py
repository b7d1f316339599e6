"""Tick steps for the memory-flow picture's axes (sizes and times are written with
:mod:`traceconv.units`)."""

from __future__ import annotations

import math

from ...units import TIME_UNITS


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
