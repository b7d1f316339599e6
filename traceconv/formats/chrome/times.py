"""Chrome trace times in integer ns, by the one rule the reader and ``split`` share."""

from __future__ import annotations

INT64 = 1 << 63


def time_ns(value: int | float, unit: int) -> int:
    """A Chrome time (µs, or ns for some producers) in integer ns, exactly as written.

    Kineto writes µs with three decimals near 4.5e12, where a double is only good to about
    1 ns: ``round(ts * 1000)`` can land one ns off (and make a child outlive its parent).
    The whole part and the fraction are converted apart, which recovers the decimals.

    A time past int64 stops at its edge: the trace builder moves it into the time range
    and counts it (``model.time_beyond_range``), as it does every reader's; what is no
    number (inf, NaN) raises ``OverflowError``/``ValueError`` (the event is malformed).

    >>> time_ns(4482738043834.738, 1000), time_ns(1695835542481129, 1000), time_ns(0.0005, 1000)
    (4482738043834738, 1695835542481129000, 0)
    >>> time_ns(2**70, 1000) == INT64 - 1, time_ns(-1e300, 1000) == -INT64
    (True, True)
    """
    if type(value) is int:
        ns = value * unit
    else:
        whole = int(value)
        ns = whole * unit + round((value - whole) * unit)
    return at_int64_edge(ns)


def at_int64_edge(ns: int) -> int:
    """``ns``, or the int64 edge it passes."""
    return min(max(ns, -INT64), INT64 - 1)


def duration_ns(value: int | float, unit: int) -> int:
    """A Chrome duration in integer ns (``round(value * unit)``: a length, no epoch's digits
    to keep). A duration is a time: past int64 it stops at the edge as :func:`_ns` does (the
    builder then counts the slice's end, ``model.slice_end_beyond_int64`` and
    ``model.time_beyond_range``); inf and NaN raise (the event is malformed).

    >>> duration_ns(2.5, 1000), duration_ns(1e300, 1000) == INT64 - 1
    (2500, True)
    """
    return at_int64_edge(value * unit if type(value) is int else round(value * unit))
