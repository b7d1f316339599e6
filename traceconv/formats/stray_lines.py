"""What a text reader does with a line it did not read: one rule for every text reader.

Reports reach traceconv pasted into Markdown, rst and HTML pages, between prose, shell
commands and a program's own prints (``run_time = 2093``). Only a line inside one of the
report's tables that is shaped like a row of it, and still cannot be read, is a row lost
(the reader's own dropped code). A line before a table's header, after its end, or not
shaped like a row is foreign to the report: ``{reader}.foreign_lines``, a note, since
nothing of the report was lost. The markup around a paste (a code fence, an HTML
``<pre>``/``</code>`` tag, an rst directive) ends the pasted block, so it closes any open
table; a remark among a table's rows (``...``, ``# 此处有省略``: "left out here") says
the author left rows out there: ``{reader}.elided``. A remark once a table's rows are
over is no elision but other text, as a second report's header comment is (foreign): after
a blank line, or after the last line the format states for the table (a MIGraphX run's
``Complete`` line); a ``...`` is an elision wherever it stands in a report.

A cut table is rows lost, never a note: the line an input stops inside (no line end: a cut
file or paste), within a table, is a row lost whatever is left of it (the reader's dropped
code), and an input that ends inside a table (:func:`count_input_end`: mid-line on a line
not whole by the table's grammar, inside a row's indentation, or right after a section's
title) is ``{reader}.table_cut`` (dropped: the rows after the cut are gone, how many the
input cannot say).

The reader says whether a table is open and whether the line has its rows' shape; this
module decides what that makes the line and counts it.
"""

from __future__ import annotations

import re
from typing import Literal

from ..model import Diagnostics
from .pasted_text import PastedLines, is_markup

Stray = Literal["row", "elided", "foreign"]
# the codes of rows a table lost (by this rule, or cut off): a total over the rows read
# is then the listed rows' only
ROW_LOSSES = ("elided", "cut_row", "row_cut", "row_width_mismatch", "unreadable_row",
              "unparsed_line", "table_cut", "rows_missing")

_ELISION = re.compile(r"^\s*(?:(?:\.\.\.|\[\.\.\.\])(?:\s|$)|…)")   # ("....." is progress dots)
_REMARK = re.compile(r"^\s*#")


def is_elision(line: str) -> bool:
    """Whether ``line`` says that lines were left out there (``...``, ``…``, ``[...]``).

    >>> is_elision("  ... 12 more"), is_elision("conv2d 3 0.5"), is_elision("........")
    (True, False, False)
    """
    return _ELISION.match(line) is not None


def stray_kind(line: str, *, in_table: bool, row_shaped: bool, cut: bool = False,
               rows_over: bool = False) -> Stray:
    """What an unread ``line`` is: a ``row`` lost (inside a table, shaped like its rows, or
    ``cut``: the input stopped inside it), an ``elided`` mark (an elision, or a ``#``
    remark among a table's rows: not once they are ``rows_over``, after a blank line or the
    table's stated last line), else ``foreign`` to the report.

    >>> stray_kind("```", in_table=True, row_shaped=True)
    'foreign'
    >>> stray_kind("conv2d  200  60.5", in_table=True, row_shaped=True)
    'row'
    >>> stray_kind("# rows omitted", in_table=True, row_shaped=False)
    'elided'
    >>> stray_kind("conv2d  200  60.5", in_table=False, row_shaped=True)
    'foreign'
    >>> stray_kind("    conv2d/compute", in_table=True, row_shaped=False, cut=True)
    'row'
    >>> stray_kind("# provenance: run 2", in_table=True, row_shaped=False, rows_over=True)
    'foreign'
    """
    if is_markup(line) or not in_table:
        return "foreign"
    if is_elision(line) or (_REMARK.match(line) and not rows_over):
        return "elided"
    return "row" if row_shaped or cut else "foreign"


def count_stray(diagnostics: Diagnostics, reader: str, lineno: int, line: str, *,
                in_table: bool, row_shaped: bool, dropped: str, cut: bool = False) -> Stray:
    """Count an unread ``line`` by :func:`stray_kind`: under ``dropped`` (the reader's code
    for a row lost), ``{reader}.elided`` or ``{reader}.foreign_lines``; returns the kind.

    >>> found = Diagnostics()
    >>> count_stray(found, "paddle_report", 126, "run_time = 2093", in_table=True,
    ...             row_shaped=False, dropped="paddle_report.cut_row")
    'foreign'
    >>> found["paddle_report.foreign_lines"].example
    'line 126: run_time = 2093'
    """
    kind = stray_kind(line, in_table=in_table, row_shaped=row_shaped, cut=cut)
    code = {"row": dropped, "elided": f"{reader}.elided",
            "foreign": f"{reader}.foreign_lines"}[kind]
    diagnostics.add(code, example=f"line {lineno}: {line.strip()}")
    return kind


def count_tallied(diagnostics: Diagnostics, reader: str, kind: Stray, count: int,
                  first: tuple[int, str] | None) -> None:
    """Count ``count`` unread lines of one ``kind`` (``foreign`` or ``elided``) at once, for
    a reader that tallies them as it reads; ``first`` the (line number, text) of the first.

    >>> found = Diagnostics()
    >>> count_tallied(found, "migraphx", "foreign", 3, (4, "- **Hardware**: HX370"))
    >>> found["migraphx.foreign_lines"].count, found["migraphx.foreign_lines"].example
    (3, 'line 4: - **Hardware**: HX370')
    >>> count_tallied(found, "migraphx", "elided", 1, (9, "..."))
    >>> found["migraphx.elided"].kind
    'dropped'
    """
    code = {"elided": f"{reader}.elided", "foreign": f"{reader}.foreign_lines"}[kind]
    diagnostics.add(code, count=count,
                    example=None if first is None else f"line {first[0]}: {first[1].strip()}")


def ended_inside(lines: PastedLines, *, table: str | None, expects_rows: bool,
                 awaiting_rows: bool, whole: bool) -> str | None:
    """Where the input ended inside a table, judged alike for every text reader (None if it
    did not). Once a table began (``table``: the title of the last one that did, None if
    none), the input ended inside it when

    * a section title was the last thing read, no row after it (``awaiting_rows``: a title
      promises a table), whatever the line end;
    * it stopped inside a line of content (``lines.cut_line``, read to its end) that was not
      ``whole`` by the table's own grammar (every column present, parseable and padded to
      the table's width; or a line foreign to the tables);
    * it stopped inside a row's indentation (``lines.cut_in_blanks``) while the table
      ``expects_rows`` (not closed by its rule).

    >>> lines = PastedLines(["Kernel Summary", "---", "conv2d  3  0.5", "  "]); _ = list(lines)
    >>> lines.cut_line, lines.cut_in_blanks = 4, True   # (as a file without its line end)
    >>> ended_inside(lines, table="Kernel Summary", expects_rows=True, awaiting_rows=False,
    ...              whole=False)
    "line 4: the input stops inside a row's indentation (in or after the Kernel Summary)"
    >>> ended_inside(lines, table="Kernel Summary", expects_rows=False, awaiting_rows=False,
    ...              whole=False) is None
    True
    """
    if table is None:
        return None
    if awaiting_rows:
        how = "after its title, before any row"
    elif lines.cut_line and lines.cut_in_blanks and expects_rows:
        how = "inside a row's indentation"
    elif lines.cut_line and not lines.cut_in_blanks and not whole:
        how = "mid-line"
    else:
        return None
    return f"line {lines.cut_line or lines.last_line}: the input stops {how} (in or after " \
        f"the {table})"


def count_input_end(diagnostics: Diagnostics, reader: str, lines: PastedLines, *,
                    table: str | None, expects_rows: bool, awaiting_rows: bool,
                    whole: bool) -> bool:
    """Count an input that :func:`ended_inside` a table as ``{reader}.table_cut`` (the rows
    after the end are lost, how many the input cannot say); returns whether it did.

    >>> found = Diagnostics(); lines = PastedLines(["Kernel Summary"]); _ = list(lines)
    >>> count_input_end(found, "paddle_summary", lines, table="Kernel Summary",
    ...                 expects_rows=True, awaiting_rows=True, whole=True)
    True
    >>> found["paddle_summary.table_cut"].example
    'line 1: the input stops after its title, before any row (in or after the Kernel Summary)'
    """
    place = ended_inside(lines, table=table, expects_rows=expects_rows,
                         awaiting_rows=awaiting_rows, whole=whole)
    if place is not None:
        count_table_cut(diagnostics, reader, place)
    return place is not None


def count_table_cut(diagnostics: Diagnostics, reader: str, place: str) -> None:
    """Count ``{reader}.table_cut`` where the input :func:`ended_inside` a table (``place``).

    >>> found = Diagnostics(); count_table_cut(found, "migraphx", "line 9: the input stops")
    >>> found["migraphx.table_cut"].kind
    'dropped'
    """
    diagnostics.add(f"{reader}.table_cut", example=place)


def padded_whole(line: str, width: int) -> bool:
    """Whether a row of a table whose cells are padded to their columns' widths (as Paddle
    prints them) reaches the table's ``width`` (its header's): a row cut in the padding
    after its last cell has every cell, but not its width, and the rows after it are lost.

    >>> padded_whole("relu    4    2.0     ", 21), padded_whole("relu    4    2.0  ", 21)
    (True, False)
    """
    return len(line) >= width


def open_rows_left_out(open_rows: list[int], depth: int) -> list[int]:
    """Which rows still open (outermost first, one per depth) may have lost children where
    a nested table left rows out (an elision, a row lost or cut) at ``depth``: those above
    it. A mark at the margin (depth 0) says nothing of its depth: then each open row that
    already lists a child (the last row read, a leaf so far, may be followed by siblings).
    Such a row's self time is unknown (:data:`~traceconv.model.entities.CHILDREN_LEFT_OUT`).

    >>> open_rows_left_out([3, 4, 9], 2), open_rows_left_out([3, 4, 9], 0)
    ([3, 4], [3, 4])
    >>> open_rows_left_out([7], 0), open_rows_left_out([3, 4], 5)
    ([], [3, 4])
    """
    return open_rows[:depth or -1]


def rows_left_out(diagnostics: Diagnostics) -> int:
    """How many rows the tables of a text lost: elided, cut off or unreadable (dropped).

    >>> found = Diagnostics(); found.add("paddle_summary.elided", count=2)
    >>> rows_left_out(found)
    2
    """
    return sum(d.count for d in diagnostics
               if d.kind == "dropped" and d.code.rsplit(".", 1)[-1] in ROW_LOSSES)
