"""Perf tables pasted in column layout: a header row ``Instructions … Time(ms) Percentage``
and one row per instruction with its numbers in columns, as spreadsheets, docs and chat
pastes lay out the driver's ``<instruction>: <ms>ms, <pct>%`` lines.

Each such row is rewritten to the driver's own line form, so the rest of the reader (the
grammar of every dialect, hard-wrap repair) reads it like any perf report. The numbers
are the row's last whitespace- or ``|``-separated cells, one per header column after the
instruction column, wherever the header puts them: a long instruction pushes them right.
Where some cells are empty (the ``(b, m, n, k)``, ``Flops(TFlops/s)`` and
``Throughput(GB/s)`` columns of some driver branches are filled for GEMMs only), the
cells are read by their position under the header instead, the driver padding each
column to a fixed width; a row that fits neither way is left out and counted as an
unparsed line, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ..ruled_tables import bar_cells

# (one run of spaces before the pipe, one after it: two ``\s*`` around an optional
# ``\|?`` split a long indentation every way, quadratic in its length)
_HEADER = re.compile(r"^\s*(?:\|\s*)?Instructions?\b(?P<rest>.*\bTime\s*\(\s*ms\s*\).*)$",
                     re.I)
_NUMBER = re.compile(r"^[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)"
                     r"\s*(?:ms|%)?$", re.I)


def _cells(text: str) -> list[str]:
    """The cells of a header or row tail: ``|``-separated when pipes are there, else
    separated by runs of two or more spaces."""
    if "|" in text.strip().strip("|"):
        return bar_cells(text)
    return [c for c in re.split(r"\s{2,}|\t", text.strip().strip("|").strip()) if c]


def rows_as_lines(lines: Iterable[str], unfit: list[tuple[int, str]] | None = None
                  ) -> Iterator[str]:
    """``lines`` with the rows of every column-layout perf table in the driver's line form
    (other lines unchanged). A table runs from its header to the first line whose tail is
    not one number per column; with ``unfit``, a row that reads neither by its last cells
    nor by the header's positions is appended there as (line number, text) and given as
    an empty line.

    >>> list(rows_as_lines(["Instructions                        Time(ms)   Percentage",
    ...                "@0 = add(x,y) -> float_type, {2}, {1}   0.5   100%", "", "Summary:"]))
    ['', '@0 = add(x,y) -> float_type, {2}, {1}: 0.5ms, 100%', '', 'Summary:']
    """
    table: _Header | None = None
    in_rows = False   # (the line before was a row: an unfit line between rows is one too)
    for number, line in enumerate(lines, 1):
        header = _HEADER.match(line)
        if header:
            table, in_rows = _Header(line, header), True
            yield ""   # (keeps line numbers)
            continue
        row = table.row(line) if table else None
        if row is not None:
            in_rows = True
            yield row
        elif in_rows and unfit is not None and table and table.looks_like_a_row(line):
            unfit.append((number, line.strip()))
            yield ""
        else:
            table = None if line.strip() else table
            in_rows = False
            yield line


class _Header:
    """A table's header: its column names and, in a space layout, where each starts."""

    def __init__(self, line: str, found: re.Match[str]) -> None:
        cells = _cells(found["rest"])
        self.columns = [c.lower().replace(" ", "") for c in cells]
        self.offsets: list[int] | None = None
        if "|" not in line:
            at, offsets = found.start("rest"), []
            for cell in cells:
                at = line.find(cell, at)
                offsets.append(at)
                at += len(cell)
            self.offsets = offsets

    def row(self, line: str) -> str | None:
        """The driver's line form of one table row, None when it is not one."""
        cells = _last_cells(line, len(self.columns))
        if cells is None and self.offsets is not None:
            cells = _placed_cells(line, self.offsets)
        if cells is None:
            return None
        head, tail = cells
        values = dict(zip(self.columns, (t.rstrip("ms%").strip() for t in tail), strict=True))
        ms = values.get("time(ms)")
        if not ms or not _NUMBER.match(ms):
            return None
        percent = values.get("percentage", values.get("percent", values.get("%"))) or "0"
        if not _NUMBER.match(percent):
            return None
        return f"{head}: {ms}ms, {percent}%"

    def looks_like_a_row(self, line: str) -> bool:
        """An instruction line under the header (``@N = ...`` or ``name = @param...``) that
        should have a time (the driver times every instruction but ``@return``)."""
        return " = " in line and "@return(" not in line \
            and not line.lstrip().startswith(("Summary", "Batch size"))


def _last_cells(line: str, count: int) -> tuple[str, list[str]] | None:
    """(instruction, the last ``count`` cells) when every one of them is a number."""
    text = line.strip()
    if not text:
        return None
    if text.startswith("|"):
        cells = bar_cells(text)
        head, tail = cells[0], cells[1:]
    else:
        tokens = text.rsplit(None, count)
        head, tail = tokens[0], tokens[1:]
    if len(tail) != count or not head or not all(map(_NUMBER.match, tail)):
        return None
    return head, tail


def _placed_cells(line: str, offsets: list[int]) -> tuple[str, list[str]] | None:
    """(instruction, cells) read at the header's column positions, None when a cell
    crosses into the next column (a long instruction or value pushed the row right).

    >>> _placed_cells("@1 = load  0.5    3     ", [10, 16])
    ('@1 = load', ['0.5', '3'])
    >>> _placed_cells("@1 = a_long_name 0.5  3", [10, 16]) is None
    True
    """
    head = line[:offsets[0]].strip()
    if not head:
        return None
    for at in offsets:   # (a cell may be empty, never cut in two by a column start)
        if at < len(line) and line[at - 1] > " " and line[at] > " ":
            return None
    ends = [*offsets[1:], len(line)]
    return head, [line[a:b].strip() for a, b in zip(offsets, ends, strict=True)]
