"""What a text reader does with a line it did not read: one rule for every text reader.

Reports reach traceconv pasted into Markdown, rst and HTML pages, between prose, shell
commands and a program's own prints (``run_time = 2093``). Only a line inside one of the
report's tables that is shaped like a row of it, and still cannot be read, is a row lost
(the reader's own dropped code). A line before a table's header, after its end, or not
shaped like a row is foreign to the report: ``{reader}.foreign_lines``, a note, since
nothing of the report was lost. The markup around a paste (a code fence, an HTML
``<pre>``/``</code>`` tag, an rst directive) ends the pasted block, so it closes any open
table; a remark among a table's rows (``...``, ``# 此处有省略``: "left out here") says
the author left rows out there: ``{reader}.elided`` (a remark after a blank line starts
other text, as a second report's header comment does: foreign).

A cut table is rows lost, never a note: the line an input stops inside (no line end: a cut
file or paste), within a table, is a row lost whatever is left of it (the reader's dropped
code), and a stop mid-line once a report's tables began, on a line not foreign to them, is
``{reader}.table_cut`` (dropped: the rows after the cut are gone, how many the input
cannot say).

The reader says whether a table is open and whether the line has its rows' shape; this
module decides what that makes the line and counts it.
"""

from __future__ import annotations

import re
from typing import Literal

from ..model import Diagnostics

Stray = Literal["row", "elided", "foreign"]
# the codes of rows a table lost (by this rule, or cut off): a total over the rows read
# is then the listed rows' only
ROW_LOSSES = ("elided", "cut_row", "row_cut", "row_width_mismatch", "unreadable_row",
              "unparsed_line", "table_cut", "rows_missing")

_MARKUP = re.compile(r"^\s*(?:(?:```|~~~).*|(?:</?(?:pre|code|div|details|summary)\b[^>]*>\s*)+"
                     r"|\.\. [\w-]+::.*)$", re.IGNORECASE)
_ELISION = re.compile(r"^\s*(?:(?:\.\.\.|\[\.\.\.\])(?:\s|$)|…)")   # ("....." is progress dots)
_REMARK = re.compile(r"^\s*#")


def is_markup(line: str) -> bool:
    """Whether ``line`` is the markup a page wraps around a paste, never report text.

    >>> [is_markup(s) for s in ("```", "```text", "</pre></code>", ".. code-block:: text",
    ...                          "run_time = 2093", "<b>3</b> rows")]
    [True, True, True, True, False, False]
    """
    return _MARKUP.match(line) is not None


def is_elision(line: str) -> bool:
    """Whether ``line`` says that lines were left out there (``...``, ``…``, ``[...]``).

    >>> is_elision("  ... 12 more"), is_elision("conv2d 3 0.5"), is_elision("........")
    (True, False, False)
    """
    return _ELISION.match(line) is not None


def stray_kind(line: str, *, in_table: bool, row_shaped: bool, cut: bool = False,
               after_blank: bool = False) -> Stray:
    """What an unread ``line`` is: a ``row`` lost (inside a table, shaped like its rows, or
    ``cut``: the input stopped inside it), an ``elided`` mark (an elision, or a ``#``
    remark among a table's rows, not ``after_blank``), else ``foreign`` to the report.

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
    >>> stray_kind("# provenance: run 2", in_table=True, row_shaped=False, after_blank=True)
    'foreign'
    """
    if is_markup(line) or not in_table:
        return "foreign"
    if is_elision(line) or (_REMARK.match(line) and not after_blank):
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


def count_table_cut(diagnostics: Diagnostics, reader: str, lineno: int, table: str) -> None:
    """Count that the input stopped mid-line in ``table`` (the title of the last one that
    began): ``{reader}.table_cut``, the rows after the cut lost.

    >>> found = Diagnostics()
    >>> count_table_cut(found, "paddle_summary", 48, "Kernel Summary")
    >>> found["paddle_summary.table_cut"].kind, found["paddle_summary.table_cut"].example
    ('dropped', 'line 48: the input stops mid-line (in or after the Kernel Summary)')
    """
    diagnostics.add(f"{reader}.table_cut",
                    example=f"line {lineno}: the input stops mid-line (in or after the {table})")


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
