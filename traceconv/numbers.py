"""Validated number conversion for every reader: the model holds int64 nanoseconds and sizes.

Files hold whatever a writer (or an editor, or a fuzzer) put there: ``1e308`` seconds,
``inf``, ids of 2**70. ``round()`` of an infinite float raises ``OverflowError``,
``array('q')`` and numpy refuse ints past int64, and orjson refuses to write them. Readers
convert through :func:`to_int64` / :func:`scaled_int` / :func:`finite`, which raise
:class:`NumberError` (a ``ValueError``) naming the value, so a reader counts the event as
malformed, or :func:`traceconv.api.load` reports it as an input error, instead of a crash
deep in the model.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # (the command line's help and format detection import no numpy)
    import numpy as np

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


class NumberError(ValueError):
    """A number a trace cannot hold: not finite, or beyond int64.

    ``location`` (a JSON path or line number) is set by a reader that knows where the
    number was, so the error line can name the place as well as the file.
    """

    def __init__(self, message: str, location: str | int | None = None) -> None:
        super().__init__(message)
        self.location = location


def finite(value: object, what: str = "value") -> float:
    """``value`` as a finite float.

    >>> finite("2.5"), finite(3)
    (2.5, 3.0)
    >>> finite(float("nan"), "ts")
    Traceback (most recent call last):
    traceconv.numbers.NumberError: ts is not a finite number: nan
    """
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        raise NumberError(f"{what} is not a number: {_show(value)}") from None
    if not math.isfinite(number):
        raise NumberError(f"{what} is not a finite number: {_show(value)}")
    return number


def int64(value: object) -> int | None:
    """``value`` when it is an int inside int64 (an id numpy can hold), else None.

    >>> int64(7), int64(2**63), int64(True), int64("7")
    (7, None, None, None)
    """
    return value if type(value) is int and -(1 << 63) <= value < 1 << 63 else None


def beyond_int64(value: object) -> bool:
    """An int (not a bool) that int64 cannot hold.

    >>> beyond_int64(2**63), beyond_int64(-2**63), beyond_int64(True), beyond_int64(1e30)
    (True, False, False, False)
    """
    return type(value) is int and int64(value) is None


def to_int64(value: object, what: str = "value") -> int:
    """``value`` (int, integral float or numeric text) as an int within int64.

    >>> to_int64(7.0), to_int64("12")
    (7, 12)
    >>> to_int64(2**70, "id")
    Traceback (most recent call last):
    traceconv.numbers.NumberError: id is out of the int64 range: 1180591620717411303424
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise NumberError(f"{what} is not a number: {_show(value)}")
    if isinstance(value, int):
        number = value
    else:
        try:
            number = int_text(value, what) if isinstance(value, str) and value.strip().lstrip("+-")\
                .isdecimal() else round(finite(value, what))
        except OverflowError:
            raise NumberError(f"{what} is out of the int64 range: {_show(value)}") from None
    if not INT64_MIN <= number <= INT64_MAX:
        raise NumberError(f"{what} is out of the int64 range: {_show(value)}")
    return number


# digits an int64 may need (19), with room for leading zeros; longer digit text is refused
# before int() reads it (int() of n digits takes time growing as n**2, and Python refuses
# past 4,300 digits with a ValueError no reader expects)
MAX_DIGITS = 40
DIGIT_LIMIT = "Exceeds the limit"   # how Python's refusal of long digit text begins


def int_text(text: str, what: str = "number") -> int:
    """Digit text (a regular expression's ``\\d+``, a report's column) as an int within
    int64, in time linear in its length whatever that is.

    >>> int_text("42"), int_text(" -0007 ")
    (42, -7)
    >>> int_text("9" * 5000, "step number")
    Traceback (most recent call last):
    traceconv.numbers.NumberError: step number has 5,000 digits: out of the int64 range
    >>> int_text("12a")
    Traceback (most recent call last):
    traceconv.numbers.NumberError: number is not a number: '12a'
    """
    body = text.strip().lstrip("+-").lstrip("0")
    if len(body) > MAX_DIGITS:
        raise NumberError(f"{what} has {len(body):,} digits: out of the int64 range")
    try:
        number = int(text)
    except ValueError:
        raise NumberError(f"{what} is not a number: {_show(text)}") from None
    if not INT64_MIN <= number <= INT64_MAX:
        raise NumberError(f"{what} is out of the int64 range: {_show(text)}")
    return number


# digits grouped in threes by commas, as console tables print them (nsys's default layout:
# ``444,988,647``, ``75,910.7``)
# digits grouped by commas as locales group them: in threes (en_US: 444,988,647), or the
# last three and then twos (en_IN: 27,65,96,75,62,725); a comma anywhere else (1,23: a
# decimal comma) makes no grouped number
_GROUPED = re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d{1,2}(?:,\d{2})+,\d{3})(?:\.\d*)?")


def ungrouped(text: str) -> str:
    """Number text without the commas that group its digits (``444,988,647``, as nsys's
    console tables print numbers, or ``27,65,96,75,62,725`` under an Indian locale); any
    other text as given, so the conversion that follows refuses what is no number (``1,23``
    is not a grouped number).

    >>> ungrouped("444,988,647"), ungrouped(" 75,910.7 "), ungrouped("-1,000")
    ('444988647', '75910.7', '-1000')
    >>> ungrouped("27,65,96,75,62,725"), ungrouped("19,41,84,748.9"), ungrouped("3,46,812")
    ('2765967562725', '194184748.9', '346812')
    >>> ungrouped("1,23"), ungrouped("12,3456"), ungrouped("0.5"), ungrouped("1,23,45")
    ('1,23', '12,3456', '0.5', '1,23,45')
    """
    stripped = text.strip()
    return stripped.replace(",", "") if _GROUPED.fullmatch(stripped) else text


def saturated_int(text: str, base: int = 10) -> int:
    """Digit text (a sign, then digits in ``base``) as an int, exact up to
    :data:`MAX_DIGITS` digits and ±2**64 beyond, so that a number of any length meets the
    range checks every number meets (a statistic past int64 is moved to the edge and
    counted, a memory block's address left out and counted) instead of ``int()``'s quadratic
    time or its 4,300-digit refusal; :func:`int_text` refuses instead.

    >>> saturated_int("12"), saturated_int("-7"), saturated_int("9" * 5000) == 2**64
    (12, -7, True)
    >>> saturated_int("ff", 16), saturated_int("f" * 100_000, 16) == 2**64
    (255, True)
    """
    body = text.strip().lstrip("+-").lstrip("0")
    if len(body) <= MAX_DIGITS:
        return int(text, base)
    return -(1 << 64) if text.strip().startswith("-") else 1 << 64


def is_digit_limit(exc: BaseException) -> bool:
    """Whether ``exc`` is Python refusing to convert an int of more than 4,300 digits (to
    or from text): a file's number, wherever a reader or a writer met it.

    >>> try:
    ...     int("1" * 5000)
    ... except ValueError as exc:
    ...     is_digit_limit(exc)
    True
    """
    return isinstance(exc, ValueError) and str(exc).startswith(DIGIT_LIMIT)


def scaled_int(value: float | int, scale: float, what: str = "time") -> int:
    """``round(value * scale)`` (seconds → ns and the like), checked to fit int64.

    >>> scaled_int(0.0854199999999999, 1e9), scaled_int(3, 1000)
    (85420000, 3000)
    >>> scaled_int(1e300, 1e9, "start")
    Traceback (most recent call last):
    traceconv.numbers.NumberError: start is out of the int64 range: 1e+300 × 1000000000.0
    """
    product = finite(value, what) * scale
    if not math.isfinite(product) or not INT64_MIN <= product <= INT64_MAX:
        raise NumberError(f"{what} is out of the int64 range: {_show(value)} × {scale}")
    return round(product)


# a time past every range the model holds (its times stop at 35e17 ns, its statistics at
# 2**62): where a printed time past int64 lands, for the builder to move to the edge and count
BEYOND_NS = 1 << 64


def printed_ns(value: float | None, scale: float) -> int | None:
    """A time a text report printed (``value`` in its unit, ``scale`` ns per unit) as ns,
    to the nearest integer: the one number rule of the text readers. A time past int64,
    infinity included, is ±:data:`BEYOND_NS`, past every range, which the builder moves to
    the edge and counts (``model.time_beyond_range``, ``model.statistic_beyond_range``)
    as it does for every binary and JSON reader; NaN (and an absent cell) is None: never
    timed.

    >>> printed_ns(0.00057782, 1e6), printed_ns(None, 1e6), printed_ns(float("nan"), 1e6)
    (578, None, None)
    >>> printed_ns(1e308, 1e6) == printed_ns(float("inf"), 1) == BEYOND_NS
    True
    >>> printed_ns(-1e300, 1e9) == -BEYOND_NS
    True
    """
    return _printed(value, scale)


def printed_bytes(value: float | None, scale: float) -> int | None:
    """A size a text report printed (``value`` in its unit, ``scale`` bytes per unit: a
    report's ``Size(MB)``) as bytes, by the rule of :func:`printed_ns`: past int64,
    infinity included, ±:data:`BEYOND_NS` for the builder to move to its edge and count
    (``model.statistic_beyond_range``); NaN (and an absent cell) is None: not stated.

    >>> printed_bytes(12.5, 1 << 20), printed_bytes(float("nan"), 1 << 20)
    (13107200, None)
    >>> printed_bytes(float(2**62), 1 << 20) == printed_bytes(float("inf"), 1) == BEYOND_NS
    True
    """
    return _printed(value, scale)


def printed_whole(text: str, what: str = "number") -> int | None:
    """A count or size a text report printed (``2396160``, ``1e+06``, ``nan``) as an int,
    by the rule of :func:`printed_bytes`: digits exactly (past int64: ±:data:`BEYOND_NS`,
    whatever their length), other number text to the nearest integer; NaN is None (not
    stated); text that is no number, :class:`NumberError`.

    >>> printed_whole("2396160"), printed_whole("-1"), printed_whole("1e+06"), printed_whole("nan")
    (2396160, -1, 1000000, None)
    >>> printed_whole("9" * 5000) == printed_whole("1e400") == BEYOND_NS
    True
    >>> printed_whole("12 MB", "Free Size")
    Traceback (most recent call last):
    traceconv.numbers.NumberError: Free Size is not a number: '12 MB'
    """
    if text.strip().lstrip("+-").isdecimal():
        number = saturated_int(text)
        return number if INT64_MIN <= number <= INT64_MAX else \
            (BEYOND_NS if number > 0 else -BEYOND_NS)
    try:
        value = float(text)
    except ValueError:
        raise NumberError(f"{what} is not a number: {_show(text)}") from None
    return printed_bytes(value, 1)


def _printed(value: float | None, scale: float) -> int | None:
    if value is None or math.isnan(value):
        return None
    product = value * scale
    if not -BEYOND_NS < product < BEYOND_NS:   # (infinite, or past int64 and then some)
        return BEYOND_NS if product > 0 else -BEYOND_NS
    return round(product)


def int64_edge(number: int) -> int:
    """``number`` (exact: a sum of sizes, a difference of two) at the nearer int64 edge
    when int64 cannot hold it: where every total traceconv makes of a trace's sizes and
    counts lands, for its caller to say that it moved (never a number wrapped around).

    >>> int64_edge(5), int64_edge(2**64) == INT64_MAX, int64_edge(-2**70) == INT64_MIN
    (5, True, True)
    """
    return min(max(number, INT64_MIN), INT64_MAX)


def int64_of_floats(values: np.ndarray, where: str) -> np.ndarray:
    """Doubles that stand for whole numbers (a counter's samples: the allocator's totals a
    file states, bytes a writer rounded) as int64, each to the nearest integer; one that
    int64 cannot hold (infinity too) at the nearer edge, where every total traceconv makes
    of a trace lands (:func:`int64_edge`), never the value numpy's ``astype`` wraps it to
    (2**63, the double nearest int64's maximum, became -2**63). NaN is no number of any
    size: :class:`NumberError` naming ``where`` (the builder makes a counter's NaN 0, so only
    a trace made by hand meets it).

    >>> import numpy as np
    >>> int64_of_floats(np.array([2.4, 2.0**63, -1e300, float("inf")]), "x").tolist() == [
    ...     2, INT64_MAX, INT64_MIN, INT64_MAX]
    True
    >>> int64_of_floats(np.array([1.0, float("nan")]), "counter 'CUDA:0 allocated'")
    Traceback (most recent call last):
    traceconv.numbers.NumberError: counter 'CUDA:0 allocated': NaN where a whole number must be
    """
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    if np.isnan(values).any():
        raise NumberError(f"{where}: NaN where a whole number must be", where)
    inside = (values >= INT64_MIN) & (values < 2.0 ** 63)   # (2**63: the first double past)
    whole = np.where(values > 0, INT64_MAX, INT64_MIN).astype(np.int64)
    whole[inside] = np.rint(values[inside]).astype(np.int64)
    return whole


def int64_total(values: Iterable[int]) -> tuple[int, bool]:
    """The exact sum of ``values`` at the int64 edge (:func:`int64_edge`), and whether
    it had to move there.

    >>> int64_total([2**62, 2**62 - 1])
    (9223372036854775807, False)
    >>> int64_total([2**62, 2**62]) == (INT64_MAX, True), int64_total([])
    (True, (0, False))
    """
    total = sum(values)
    return int64_edge(total), not INT64_MIN <= total <= INT64_MAX


def int64_running_sums(steps: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """``np.cumsum(steps)`` as int64 that never wraps around: a running sum that int64
    cannot hold (thousands of near-2**53 sizes live at once, two of 2**62) is put at the
    nearer int64 edge (:func:`int64_edge`); also returns which sums moved (None: none did),
    for the caller to count. ``steps`` are ints (int64, or Python ints in an object array).
    The usual case costs a min and a max: n steps none larger than int64 / n cannot sum
    past it.

    >>> import numpy as np
    >>> sums, moved = int64_running_sums(np.array([2**62, 2**62, -2**62, -2**62]))
    >>> sums.tolist() == [2**62, INT64_MAX, 2**62, 0], moved.tolist()
    (True, [False, True, False, False])
    >>> int64_running_sums(np.array([5, -2, 4]))
    (array([5, 3, 7]), None)
    """
    import numpy as np

    if not len(steps):
        return np.zeros(0, np.int64), None
    largest = max(-int(steps.min()), int(steps.max()))
    if steps.dtype != object and largest * len(steps) <= INT64_MAX:
        return np.cumsum(steps, dtype=np.int64), None
    exact = np.cumsum(steps.astype(object))
    sums = np.array([int64_edge(s) for s in exact.tolist()], np.int64)
    moved = sums != exact
    return sums, moved.astype(bool) if moved.any() else None


@contextmanager
def located(location: str | int | None) -> Iterator[None]:
    """Name ``location`` (a line number or JSON path) in a ``NumberError`` raised inside,
    unless a deeper ``located`` named it already (None: nothing to add).

    >>> with located(12):
    ...     to_int64(2**64, "count")
    Traceback (most recent call last):
    traceconv.numbers.NumberError: count is out of the int64 range: 18446744073709551616
    >>> try:
    ...     with located(12):
    ...         finite("x")
    ... except NumberError as exc:
    ...     exc.location
    12
    """
    try:
        yield
    except NumberError as exc:
        if exc.location is None:
            exc.location = location
        raise


def shape(dims: object, where: str) -> tuple[int, ...]:
    """A tensor shape: every dimension an int within int64, else ``NumberError`` at ``where``.

    >>> shape([2, 3.0], "$.var.1.shape")
    (2, 3)
    >>> shape([2, float("inf")], "$.var.1.shape")
    Traceback (most recent call last):
    traceconv.numbers.NumberError: shape dimension is not a finite number: inf
    """
    if not isinstance(dims, (list, tuple)):
        raise NumberError(f"shape is not a list: {_show(dims)}", where)
    try:
        return tuple(to_int64(d, "shape dimension") for d in dims)
    except NumberError as exc:
        raise NumberError(str(exc), where) from None


def _show(value: object) -> str:
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 128 else \
        f"<an integer of {value.bit_length()} bits>"
    return text if len(text) <= 40 else text[:37] + "..."


def shown(text: str, limit: int = 60) -> str:
    """``repr(text)`` for a message, cut at ``limit`` characters (a value of 5,000 digits
    given on the command line is not echoed whole).

    >>> shown("12ms"), shown("9" * 5000, 12)
    ("'12ms'", "'99999999'...")
    """
    quoted = repr(text)
    return quoted if len(quoted) <= limit else repr(text[:limit - 4]) + "..."
