"""What a report states about its own tables, compared with the rows read: one rule for
every text and table reader.

Reports state totals of what they list: Paddle's Overview Summary the calls of its operator,
kernel and user-defined tables, its Model Summary a step that its phases make up, shares that
add up to 100 %; MIGraphX's ``Summary:`` and ``Total instructions time:`` the instruction
times; ``nsys stats`` shares of 100 %. A table cut at a line end, a paste that left rows out,
or rows edited after the fact read as a table that looks whole; the stated total tells.

**Tolerance, from the printed precision.** A printed number stands for any value within half
a unit of its last digit (``12.71``: 12.705 to 12.715; ``5e-05``: 4.5e-05 to 5.5e-05): a sum
of printed parts may be off by the sum of their half units, and the stated total by its
own. A number printed in full (a double's shortest form, as rocprof prints its shares) is
no nearer the truth than the double it was printed from, which the profiler's own arithmetic
rounded (a share is ``100 * ns / total``: two roundings): each part may also be off by
:data:`DOUBLE_SLACK` of itself, which no shorter printing ever comes near. A count of calls
or rows is exact, and so is a whole the format implies without
printing it (shares of 1 or 100 %), given as an ``int``. Every other number is given as the
text printed it, never as a float: a float keeps no digits (``1.0`` for a total printed
``1``, which stands for 0.5 to 1.5), and a reader that had to keep one would judge a report
by digits it never printed.

**Outcome**, one finding per comparison, the numbers in its example:

* within the tolerance: the report agrees with itself as printed; nothing is recorded
  (rounding alone is no finding);
* the rows read fall short: ``{reader}.rows_missing`` (dropped): rows were lost, a cut at a
  line end or a partial paste, or their numbers edited down; unless the input's lost rows
  are counted already (a cut line, an elision, an unreadable row:
  :func:`.stray_lines.rows_left_out`), which is then what the shortfall is, never counted
  twice;
* the rows read exceed it: ``{reader}.stated_total_differs`` (note): nothing is lost, but the
  report disagrees with itself (numbers edited, rows of another run).

A table whose format prints text after its rows (a closing rule, the rule after a Note, a
report that always follows it) states where it ends: an input that stops before that text
lost the rows after the last one read (:func:`missing_end`). Blank lines state nothing (an
editor trims them from a file's end).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from ..model import Diagnostics
from ..numbers import shown
from .stray_lines import rows_left_out

Printed = str   # a number as the report printed it: its digits are its precision
# How far a double the profiler computed may be from the value it stands for, relative to
# it: a unit in the last place (2**-52) for the two half-unit roundings of a share
# (a division, a scaling), doubled for the sum of doubles its total may be.
DOUBLE_SLACK = 2.0 ** -51


def half_unit(printed: Printed) -> float:
    """Half a unit of the last digit of ``printed`` (the text as printed): how far the value
    it stands for may be from it (0 for a non-finite number, which bounds nothing; infinite
    for a unit past the largest float, ``0e999``, which bounds nothing either).

    >>> half_unit("12.71"), half_unit("100"), half_unit("5e-05"), half_unit("1.2E+3")
    (0.005, 0.5, 5e-06, 50.0)
    >>> half_unit("444,988,647"), half_unit("1"), half_unit("nan"), half_unit("0e999")
    (0.5, 0.5, 0.0, inf)
    >>> half_unit(1.0)
    Traceback (most recent call last):
    TypeError: a printed number is its text, not a float: 1.0
    """
    text = _text(printed).strip().replace(",", "")
    mantissa, _, exponent = text.lower().partition("e")
    try:
        scale = int(exponent) if exponent else 0
        if not math.isfinite(float(mantissa)):
            return 0.0
    except ValueError:
        return 0.0
    decimals = len(mantissa.partition(".")[2])
    try:
        return 0.5 * 10.0 ** (scale - decimals)
    except OverflowError:
        return math.inf


def _text(printed: Printed) -> str:
    """``printed``, refused when it is no text (a float has lost the digits it was printed
    with; module docstring)."""
    if not isinstance(printed, str):
        raise TypeError(f"a printed number is its text, not a float: {printed!r}")
    return printed


def _exact(printed: Printed) -> Decimal:
    """The value ``printed`` states, exactly: summed as floats, the parts of a whole printed
    to 16 digits (rocprof's shares) drift past the half units they were printed to.

    >>> _exact("444,988,647"), _exact("2.5e-05"), _exact("nan").is_nan()
    (Decimal('444988647'), Decimal('0.000025'), True)
    """
    try:
        return Decimal(_text(printed).replace(",", "").strip())
    except InvalidOperation:
        raise _NotPrinted(printed) from None


class _NotPrinted(ValueError):
    """Text given as a printed number that is no number (shown cut: it is the file's)."""

    def __init__(self, printed: str) -> None:
        self.text = shown(printed, 40)
        super().__init__(f"not a number: {self.text}")


def compare_total(diagnostics: Diagnostics, reader: str, where: str, stated: Printed | int,
                  parts: Iterable[Printed], *, what: str) -> bool:
    """Compare the total a report states (``stated``, the text printed) with the sum of the
    rows read (``parts``, the texts printed), within the printed precision (module
    docstring); record a finding under ``{reader}.rows_missing`` or
    ``{reader}.stated_total_differs`` named by ``where`` (line and table) and ``what``; an
    ``int`` total is exact (a whole the format implies). Returns whether they agree.
    A ``nan`` part (never timed) is left out of the sum; an infinite one is a number past
    range as ``1e400`` is (the text readers' one rule, :func:`traceconv.numbers.printed_ns`),
    which makes the sum exceed any finite total; a non-finite total is never compared.

    >>> found = Diagnostics()
    >>> compare_total(found, "paddle_summary", "line 56: Model Summary", "101.66",
    ...               ["32.74", "20.83", "36.15", "8.32", "3.63"], what="ms of ProfileStep")
    True
    >>> compare_total(found, "paddle_summary", "line 56: Model Summary", "101.66",
    ...               ["32.74", "20.83", "36.15"], what="ms of ProfileStep")
    False
    >>> found["paddle_summary.rows_missing"].example
    'line 56: Model Summary: 101.66 ms of ProfileStep stated, the rows read give 89.72'

    A total or part printed as no number (a cell edited, text of another column) leaves
    nothing to compare: counted as ``{reader}.stated_total_unchecked``, never a finding.

    >>> compare_total(found, "paddle_summary", "line 68: Operator Summary", 100,
    ...               ["30.79", "abcde"], what="% of the time")
    True
    >>> found["paddle_summary.stated_total_unchecked"].example
    "line 68: Operator Summary: % of the time printed 'abcde', no number: not compared"
    """
    try:
        total = Decimal(stated) if isinstance(stated, int) else _exact(stated)
        values = [(part, _exact(part)) for part in parts]
    except _NotPrinted as exc:   # (one line per file is for what cannot be read at all)
        diagnostics.add(f"{reader}.stated_total_unchecked",
                        example=f"{where}: {what} printed {exc.text}, no number: not compared")
        return True
    if not total.is_finite():
        return True
    read = Decimal(0)
    tolerance = 0.0 if isinstance(stated, int) else _slack(stated, total)
    finest = tolerance or math.inf   # (the sum is shown to the finest printed digit)
    for part, value in values:
        if value.is_nan():
            continue
        read += value
        if value.is_finite():   # (an infinite part's printed digits bound nothing)
            tolerance += _slack(part, value)
            finest = min(finest, half_unit(part) or math.inf)
    if float(abs(read - total)) <= tolerance * (1 + 1e-9):
        return True
    _record(diagnostics, reader, where, read < total,
            f"{_spelled(stated)} {what} stated, the rows read give {read:.{_digits(finest)}f}")
    return False


def _slack(printed: Printed, value: Decimal) -> float:
    """How far the value ``printed`` stands for may be from it: half a unit of its last
    digit, and the rounding of the double it was printed from (module docstring).

    >>> _slack("12.71", Decimal("12.71")) == 0.005 + 12.71 * DOUBLE_SLACK
    True
    """
    return half_unit(printed) + float(abs(value)) * DOUBLE_SLACK


def compare_count(diagnostics: Diagnostics, reader: str, where: str, stated: int, read: int,
                  *, what: str) -> bool:
    """Compare a count a report states (calls, rows) with the count of the rows read:
    exact; a finding as :func:`compare_total` records one.

    >>> found = Diagnostics()
    >>> compare_count(found, "paddle_summary", "line 20: Operator Summary", 544, 500,
    ...               what="operator calls (Overview Summary)")
    False
    >>> found["paddle_summary.rows_missing"].kind, found["paddle_summary.rows_missing"].example
    ('dropped', 'line 20: Operator Summary: 544 operator calls (Overview Summary) stated, \
the rows read give 500')
    """
    if stated == read:
        return True
    _record(diagnostics, reader, where, read < stated,
            f"{stated} {what} stated, the rows read give {read}")
    return False


def missing_end(diagnostics: Diagnostics, reader: str, where: str, end: str) -> None:
    """Count a table whose format states its own ``end`` (a closing rule, a total line)
    when the input stops before it: the rows after the last one read are lost, as
    ``{reader}.rows_missing`` (a cut at a line end; one inside a line is
    ``{reader}.table_cut``, :mod:`.stray_lines`).

    >>> found = Diagnostics()
    >>> missing_end(found, "paddle_summary", "line 68: Operator Summary", "its closing rule")
    >>> found["paddle_summary.rows_missing"].example
    'line 68: Operator Summary: the input ends before its closing rule'
    """
    diagnostics.add(f"{reader}.rows_missing", example=f"{where}: the input ends before {end}")


def _record(diagnostics: Diagnostics, reader: str, where: str, short: bool, text: str) -> None:
    missing = f"{reader}.rows_missing"
    if short and rows_left_out(diagnostics) > diagnostics.count(missing):
        return   # (the rows lost are counted where they were lost)
    diagnostics.add(missing if short else f"{reader}.stated_total_differs",
                    example=f"{where}: {text}")


def _spelled(printed: Printed | int) -> str:
    return str(printed) if isinstance(printed, int) else printed.strip()


def _digits(half: float) -> int:
    """Decimals of a number printed to within ``half`` (half a unit of its last digit).

    >>> _digits(0.05), _digits(0.005), _digits(0.5), _digits(math.inf)
    (1, 2, 0, 0)
    """
    return max(0, min(12, -math.floor(math.log10(2 * half)))) if math.isfinite(half) else 0
