"""Perf tables pasted in column layout: a header row ``Instructions … Time(ms) Percentage``
and one row per instruction with its numbers in columns, as spreadsheets, docs and chat
pastes lay out the driver's ``<instruction>: <ms>ms, <pct>%`` lines.

Each such row is rewritten to the driver's own line form, so the rest of the reader (the
grammar of every dialect, hard-wrap repair) reads it like any perf report. The numbers
are the row's last whitespace- or ``|``-separated cells, one per header column after the
instruction column, wherever the header puts them: a long instruction pushes them right.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

# (one run of spaces before the pipe, one after it: two ``\s*`` around an optional
# ``\|?`` split a long indentation every way, quadratic in its length)
_HEADER = re.compile(r"^\s*(?:\|\s*)?Instructions?\b(?P<rest>.*\bTime\s*\(\s*ms\s*\).*)$",
                     re.I)
_NUMBER = re.compile(r"^[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)"
                     r"\s*(?:ms|%)?$", re.I)


def _cells(text: str) -> list[str]:
    """The cells of a header or row tail: ``|``-separated when pipes are there, else
    separated by runs of two or more spaces."""
    text = text.strip().strip("|").strip()
    if "|" in text:
        return [c.strip() for c in text.split("|")]
    return [c for c in re.split(r"\s{2,}|\t", text) if c]


def rows_as_lines(lines: Iterable[str]) -> Iterator[str]:
    """``lines`` with the rows of every column-layout perf table in the driver's line form
    (other lines unchanged). A table runs from its header to the first line whose tail is
    not one number per column.

    >>> list(rows_as_lines(["Instructions                        Time(ms)   Percentage",
    ...                "@0 = add(x,y) -> float_type, {2}, {1}   0.5   100%", "", "Summary:"]))
    ['', '@0 = add(x,y) -> float_type, {2}, {1}: 0.5ms, 100%', '', 'Summary:']
    """
    columns: list[str] | None = None
    for line in lines:
        header = _HEADER.match(line)
        if header:
            columns = [c.lower().replace(" ", "") for c in _cells(header["rest"])]
            yield ""   # (keeps line numbers)
            continue
        row = _row(line, columns) if columns else None
        if row is None:
            columns = None if line.strip() else columns
            yield line
        else:
            yield row


def _row(line: str, columns: list[str]) -> str | None:
    """The driver's line form of one table row, None when it is not one."""
    text = line.strip()
    if not text:
        return None
    if text.startswith("|"):
        cells = [c.strip() for c in text.strip("|").split("|")]
        head, tail = cells[0], cells[1:]
    else:
        tokens = text.rsplit(None, len(columns))
        head, tail = tokens[0], tokens[1:]
    if len(tail) != len(columns) or not head or not all(map(_NUMBER.match, tail)):
        return None
    values = dict(zip(columns, (t.rstrip("ms%").strip() for t in tail), strict=True))
    ms = values.get("time(ms)")
    if ms is None:
        return None
    percent = values.get("percentage", values.get("percent", values.get("%", "0")))
    return f"{head}: {ms}ms, {percent}%"
