"""The line grammar of Paddle's old Profiling Report: its banners and titles, and the rows
of its tables, whose columns come from the header when there is one. (Outside the reader's
package, and light: detection matches these lines without importing the reader.)

A header names the columns (``Event  Calls  Total  Min.  Max.  Ave.  Ratio.``, with
``CPU Time (Ratio)  GPU Time (Ratio)`` after ``Total`` for ``Place: All``); a paste may cut
it after any column, and its rows then carry exactly that prefix. Rows without a header are
read when their shape is unambiguous: every column of one of the two layouts, with numbers
that obey a row's arithmetic (min <= ave <= max <= total, ratio <= 1). A line that starts
like a row but stops short of the columns is a row cut off by the paste.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from .line_patterns import SPACED_NAME

NUM = r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)"
CPU, GPU = "CPU Time (Ratio)", "GPU Time (Ratio)"
LAYOUTS = (("Calls", "Total", "Min.", "Max.", "Ave.", "Ratio."),
           ("Calls", "Total", CPU, GPU, "Min.", "Max.", "Ave.", "Ratio."))
_CELLS = {
    "Calls": r"(?P<calls>\d+)",
    "Total": rf"(?P<total>{NUM})",
    CPU: rf"(?P<cpu>{NUM})\s*\((?P<cpur>{NUM})\)",
    GPU: rf"(?P<gpu>{NUM})\s*\((?P<gpur>{NUM})\)",
    "Min.": rf"(?P<min>{NUM})",
    "Max.": rf"(?P<max>{NUM})",
    "Ave.": rf"(?P<ave>{NUM})",
    "Ratio.": rf"(?P<ratio>{NUM})(?P<star>\*)?",
}
# Each column's name in a header, after the blanks before it
_HEADER_WORDS = {name: re.compile("".join(r"\s+" + re.escape(word) for word in name.split()))
                 for name in _CELLS}
EVENT_HEADER = re.compile(r"^(?P<indent>\s*)Event\s+Calls\s+Total\b")
MEMORY_HEADER = re.compile(r"^\s*Event\s+Alloc\s+Calls\s+Size\(MB\)")
MEMORY_ROW = re.compile(
    rf"^\s*(?P<event>{SPACED_NAME})\s+(?P<ac>\d+)\s+(?P<am>{NUM})\s+(?P<fc>\d+)\s+(?P<fm>{NUM})\s*$")
# What a row cut short still shows: a name, then the calls, then only numbers (some with
# their "(ratio)"). Read token by token from the right: a pattern letting the name end at
# each token re-read the rest of the line each time (quadratic on "x 1 1 1 ... y").
_CUT_CALLS = re.compile(r"\d+")
_CUT_CELL = re.compile(r"[-+\d.eEnaif()*]+")
# How any row starts: a name, then the calls (the first whole number after it).
ROW_START = re.compile(rf"^\s*(?P<name>{SPACED_NAME})\s+(?P<calls>\d+)(?=\s|$)(?P<rest>.*)$")
MEMORY_PLACE = re.compile(r"^\s*Place\(")

BANNER = re.compile(r"^\s*-{5,}>\s*Profiling Report\s*<-{5,}\s*$")
MEMORY_BANNER = re.compile(r"^\s*-{5,}>\s*Memory Profiling Report\s*<-{5,}\s*$")
SECTION_TITLE = re.compile(r"^\s*-{5,}\s*(Overhead|GpuMemCpy|Event) Summary\s*-{5,}\s*$")
OVERHEAD_SPLIT = re.compile(
    rf"^\s*(Computation time|Framework overhead)\s+Total:\s*({NUM})\s*Ratio:\s*({NUM})%\s*$")
MEMCPY = re.compile(
    rf"^\s*(GpuMemcpy\w*)\s+Calls:\s*(\d+)\s+Total:\s*({NUM})\s*Ratio:\s*({NUM})%\s*$")
# Lines that say "a Paddle report" on their own (the sniffer looks for any of them).
SIGNATURE = (BANNER, MEMORY_BANNER, SECTION_TITLE, OVERHEAD_SPLIT, MEMCPY, MEMORY_HEADER,
             re.compile(r"^\s*Event\s+Calls\s+Total\s+(?:Min\.|CPU\s+Time)"))


def number(text: str) -> float | None:
    """A printed ``%g`` number, or None for ``nan``/``-nan`` (never timed); ``inf`` is a
    number past every range, as ``1e400`` is (the text readers' one rule:
    :func:`traceconv.numbers.printed_ns`).

    >>> number("9.54908e-05"), number("-nan"), number("1"), number("inf")
    (9.54908e-05, None, 1.0, inf)
    """
    value = float(text)
    return None if math.isnan(value) else value


def header_columns(line: str) -> tuple[str, ...] | None:
    """The columns an Event Summary header names (any prefix of a layout), or None.

    >>> header_columns("Event   Calls   Total   CPU Time (Ratio)   GPU Time (Ratio)")
    ('Calls', 'Total', 'CPU Time (Ratio)', 'GPU Time (Ratio)')
    >>> header_columns("Event Calls Total Min. Max. Ave. Ratio.")[-1]
    'Ratio.'
    """
    match = EVENT_HEADER.match(line)
    if match is None:
        return None
    rest = line[match.end():]
    layout = LAYOUTS[1] if _HEADER_WORDS[CPU].match(rest) else LAYOUTS[0]
    columns = ["Calls", "Total"]
    for name in layout[2:]:
        step = _HEADER_WORDS[name].match(rest)
        if step is None:
            break
        columns.append(name)
        rest = rest[step.end():]
    return tuple(columns)


@lru_cache(maxsize=64)
def row_pattern(columns: tuple[str, ...], touching: bool) -> re.Pattern[str]:
    """The regex of a row with ``columns``; ``touching``: the name runs into the calls
    digits (a name longer than its ``setw`` cell), split later by Ave. = Total / Calls."""
    name = (r"^(?P<indent> *)(?P<name>\S.*?\D)(?=\d+\s)" if touching
            else rf"^(?P<indent> *)(?P<name>{SPACED_NAME})\s+")
    # A "(ratio)" cell may touch the next one when its value overflows the setw() width.
    cells = "".join(_CELLS[c] + (r"\s*" if c in (CPU, GPU) else r"\s+") for c in columns)
    return re.compile(name + cells.removesuffix(r"\s*").removesuffix(r"\s+") + r"\s*$")


_NUMERIC_TOKEN = re.compile(r"[-+(]*(?:\d|nan|inf)[-+\d.eE()naif*]*")


def _numeric_tail(line: str) -> bool:
    """Whether ``line`` ends in two number-like tokens, as every row does (a cheap test
    that spares the row patterns the log lines around a report).

    >>> _numeric_tail("relu  4  2.0"), _numeric_tail("I1122 step 3 loss 0.5")
    (True, False)
    """
    tokens = line.rsplit(None, 2)[-2:]
    return len(tokens) == 2 and all(_NUMERIC_TOKEN.fullmatch(t) for t in tokens)


def match_row(line: str, columns: tuple[str, ...]) -> re.Match[str] | None:
    """``line`` as a row of ``columns`` (spaced name first, then a name touching its calls,
    only where Ave. = Total / Calls confirms the split).

    >>> match_row("  relu  4  2.0", ("Calls", "Total"))["name"]
    'relu'
    """
    if not _numeric_tail(line):
        return None
    match = row_pattern(columns, False).match(line)
    if match is not None:
        return match
    match = row_pattern(columns, True).match(line)
    if match is None or "ave" not in match.groupdict():
        return None
    total, ave = number(match["total"]), number(match["ave"])
    return match if split_touching(match["name"], match["calls"], total, ave) else None


def split_touching(name: str, digits: str, total: float | None,
                   ave: float | None) -> tuple[str, str] | None:
    """Split a name that ran into its calls digits, using Ave. = Total / Calls (%g, 6
    digits); None when no split agrees (then the text is not a row with touching cells).

    >>> split_touching("conv2d", "110", 1.1, 0.11)
    ('conv2d1', '10')
    >>> split_touching("grad0/prepare_data", "5", 0.014251, 0.0028502)
    ('grad0/prepare_data', '5')
    >>> split_touching("fetch_v", "2", 1.0, 0.031247) is None    # "fetch_v2  1  ..." cut
    True
    """
    if total is not None and ave:
        for cut in range(len(digits)):
            calls = int(digits[cut:])
            if calls and digits[cut] != "0" and abs(total / calls - ave) <= 5e-6 * abs(ave):
                return name + digits[:cut], digits[cut:]
    return None



def _plausible(match: re.Match[str]) -> bool:
    """A row's own arithmetic: min <= ave <= max <= total (+ rounding), ratio <= 1."""
    values = {key: number(match[key]) for key in ("total", "min", "max", "ave", "ratio")}
    if any(value is None for value in values.values()):
        return True                     # nan rows exist (legacy GPU reports)
    low, ave, high, total, ratio = (values[k] or 0.0 for k in ("min", "ave", "max", "total",
                                                              "ratio"))
    slack = 1e-5 * max(abs(total), abs(high), 1e-9)
    return (low <= ave + slack and ave <= high + slack and high <= total + slack
            and 0 <= ratio <= 1.0001)


def headerless_columns(line: str) -> tuple[str, ...] | None:
    """The layout of a row printed without its header, when its shape says it for sure.

    >>> headerless_columns("relu 4 2.0 0.4 0.6 0.5 0.16")[-1]
    'Ratio.'

    A name that ends in a number leaves the columns unknown: ``x 1 1 1 1 1 1 1 1`` fits
    any layout, its name taking the numbers the layout leaves over (no real row's name
    ends in a spaced number).

    >>> headerless_columns("step 4 2.0 0.9 0.6 0.5 7") is None   # ave > max, ratio > 1
    True
    >>> headerless_columns("x 1 1 1 1 1 1 1 1") is None
    True
    """
    for columns in reversed(LAYOUTS):
        match = match_row(line, columns)
        if match is not None and _plausible(match) and \
                not _NUMERIC_TOKEN.fullmatch(match["name"].rsplit(None, 1)[-1]):
            return columns
    return None


def is_cut_row(line: str) -> bool:
    """A line that starts like a row (name, calls, numbers) but stops short of the columns.

    >>> is_cut_row("conv2d   200   60.5   10.500000 (0.17"), is_cut_row("I1122 started")
    (True, False)
    """
    tokens = line.split()
    for token in reversed(tokens[1:]):   # the first token is (part of) the name
        if _CUT_CALLS.fullmatch(token):
            return True
        if not _CUT_CELL.fullmatch(token):
            return False
    return False


def is_memory_row(line: str, *, header_seen: bool) -> re.Match[str] | None:
    """A Memory Profiling Report row; without its header only a ``Place(...)`` event counts.

    >>> bool(is_memory_row("Place(gpu:0):Unknown 3 0.000244141 0 0", header_seen=False))
    True
    """
    match = MEMORY_ROW.match(line)
    if match is None or (not header_seen and not MEMORY_PLACE.match(line)):
        return None
    return match
