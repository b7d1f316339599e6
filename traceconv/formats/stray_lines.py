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

A foreign line is nothing lost only while no other tool's report stands there: where
the lines foreign to a reader's report hold one another text format's sniffer claims (two
tools' output in one log: an nsys stats report, then a MIGraphX perf report), that report
is left unread, its lines counted from where it shows as ``{reader}.other_report``
(dropped, :class:`ForeignLines`). The file is read, not refused: unlike two formats' keys
in one JSON, the reports are blocks apart and the reader's own is read whole.

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from ..implementations import implementation
from ..model import Diagnostics
from .pasted_text import PastedLines, is_markup

if TYPE_CHECKING:
    from collections.abc import Callable


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


def count_stray(diagnostics: Diagnostics, foreign: ForeignLines, lineno: int, line: str, *,
                in_table: bool, row_shaped: bool, dropped: str, cut: bool = False) -> Stray:
    """Count an unread ``line`` by :func:`stray_kind`: under ``dropped`` (the reader's code
    for a row lost) or ``{reader}.elided``, or tally it in ``foreign``; returns the kind.

    >>> found, foreign = Diagnostics(), ForeignLines("paddle_report")
    >>> count_stray(found, foreign, 126, "run_time = 2093", in_table=True,
    ...             row_shaped=False, dropped="paddle_report.cut_row")
    'foreign'
    >>> foreign.count_in(found); found["paddle_report.foreign_lines"].example
    'line 126: run_time = 2093'
    """
    kind = stray_kind(line, in_table=in_table, row_shaped=row_shaped, cut=cut)
    if kind == "foreign":
        foreign.add(lineno, line)
    else:
        code = dropped if kind == "row" else f"{foreign.reader}.elided"
        diagnostics.add(code, example=f"line {lineno}: {line.strip()}")
    return kind


_BLOCK_LINES = 4096   # foreign lines sniffed at once for another format's report
# a sniffer's score for a format's signature (a title, a header under its rule, a marker),
# not the guess it makes from lines shaped like rows (0.6)
_SIGNATURE_SCORE = 0.9


# where another tool's report starts among a text's foreign lines: (line number, its
# format, the foreign lines from there on)
OtherReport = tuple[int, str, int]


@dataclass
class ForeignLines:
    """The lines a text ``reader`` (its diagnostics' prefix: ``nsys_stats``) found foreign
    to its report, tallied as it reads them. Each block of consecutive ones is shown to the
    sniffers of the other text formats (:func:`other_format`); from the first line of the
    first block one of them claims, the lines are another tool's report, left unread.

    >>> foreign, found = ForeignLines("paddle_summary"), Diagnostics()
    >>> foreign.add(1, "$ python train.py")
    >>> for number, line in enumerate(["Run instruction: @0 = @literal -> float_type, {1}, {0}",
    ...         "@1 = add(@0, @0) -> float_type, {1}, {0}: 0.5ms, 100%"], 2):
    ...     foreign.add(number, line)
    >>> foreign.count_in(found)
    >>> found["paddle_summary.foreign_lines"].count, found["paddle_summary.other_report"].example
    (1, "line 2: another format's report (migraphx) starts here, not read (2 lines from there); \
split the file to read it")
    """

    reader: str
    count: int = 0                                # foreign lines before another report
    first: tuple[int, str] | None = None          # (line number, text) of the first
    other: OtherReport | None = None
    _block: list[tuple[int, str]] = field(default_factory=list)

    def add(self, number: int, line: str) -> None:
        """Tally the foreign ``line`` numbered ``number``."""
        if self._block and (number != self._block[-1][0] + 1 or
                            len(self._block) >= _BLOCK_LINES):
            self._sniff(keep_last=number == self._block[-1][0] + 1)
        if self.other is None:
            self._block.append((number, line))
        else:
            self.other = (*self.other[:2], self.other[2] + 1)

    def finish(self) -> None:
        """Judge the lines still held (once the text is read)."""
        if self._block:
            self._sniff(keep_last=False)

    def count_in(self, diagnostics: Diagnostics) -> None:
        """Count what was tallied (:func:`count_foreign`)."""
        self.finish()
        count_foreign(diagnostics, self.reader, self.count, self.first, self.other)

    def _sniff(self, keep_last: bool) -> None:
        """Ask the other formats of the block tallied; keep its last line for the next
        block (a header and its rule may stand on both sides of the cut)."""
        block, self._block = self._block, []
        found = other_format([line for _, line in block], self.reader)
        if found is None:
            self._block = block[-1:] if keep_last else []
            counted = block[:len(block) - len(self._block)]
        else:
            start, name = found
            counted = block[:start]
            self.other = (block[start][0], name, len(block) - start)
        self.count += len(counted)
        self.first = self.first or (counted[0] if counted else None)


def count_foreign(diagnostics: Diagnostics, reader: str, count: int,
                  first: tuple[int, str] | None, other: OtherReport | None) -> None:
    """Count a text's foreign lines (:class:`ForeignLines`): ``count`` of them nothing lost,
    ``{reader}.foreign_lines`` (``first`` the first's number and text), and the lines of
    ``other``, another tool's report left unread, ``{reader}.other_report``.

    >>> found = Diagnostics()
    >>> count_foreign(found, "migraphx", 3, (4, "- **Hardware**: HX370"), (40, "nsys-stats", 9))
    >>> found["migraphx.foreign_lines"].example, found["migraphx.other_report"].kind
    ('line 4: - **Hardware**: HX370', 'dropped')
    """
    diagnostics.add(f"{reader}.foreign_lines", count=count,
                    example=None if first is None else f"line {first[0]}: {first[1].strip()}")
    if other is not None:
        number, name, lines = other
        diagnostics.add(f"{reader}.other_report", count=lines, example=(
            f"line {number}: another format's report ({name}) starts here, not read "
            f"({lines} lines from there); split the file to read it"))


def other_format(lines: list[str], reader: str) -> tuple[int, str] | None:
    """The first of ``lines`` (foreign to the report of ``reader``) from which another text
    format's sniffer is sure of them (by a signature, not rows' shapes), and its name; None
    if none is.

    >>> other_format(["See the log:", " ** CUDA API Summary (cuda_api_sum):", "",
    ...     " Time (%)  Total Time (ns)  Num Calls  Name", " --------  ---------------  "
    ...     "---------  ----", "     90.0              900          3  cudaMalloc"], "migraphx")
    (3, 'nsys-stats')
    >>> other_format(["See the log:", "loss 0.5"], "migraphx") is None
    True
    """
    own = reader.replace("_", "-")
    # (the format table, a layer above, names the text formats: reached by registration)
    for name, sniff in implementation("text_sniffers")():
        if name != own and _claims(sniff, lines):
            return _report_start(sniff, lines), name
    return None


def _report_start(sniff: Callable[..., float], lines: list[str]) -> int:
    """Where in ``lines``, which ``sniff`` is sure of, the report shows: the fewest last
    lines of the fewest first lines it is sure of (tried one more at a time: a sniffer that
    joins wrapped lines may be sure of a tail, not of a longer one). Its evidence, not its
    first line: a few lines of it (a banner, a command) may come before."""
    end = _bisect(len(lines), lambda n: _claims(sniff, lines[:n]))
    return next(start for start in range(end - 1, -1, -1) if _claims(sniff, lines[start:end]))


def _bisect(size: int, enough: Callable[[int], bool]) -> int:
    """The least ``n`` up to ``size`` that is ``enough`` (``enough(size)`` is).

    >>> _bisect(10, lambda n: n >= 4)
    4
    """
    low, high = 1, size
    while low < high:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _claims(sniff: Callable[..., float], lines: list[str]) -> bool:
    return sniff("\n".join(lines).encode(), None) >= _SIGNATURE_SCORE


def count_elided(diagnostics: Diagnostics, reader: str, count: int,
                 first: tuple[int, str] | None) -> None:
    """Count ``count`` elision marks at once, for a reader that tallies them as it reads;
    ``first`` the (line number, text) of the first.

    >>> found = Diagnostics()
    >>> count_elided(found, "migraphx", 1, (9, "..."))
    >>> found["migraphx.elided"].kind, found["migraphx.elided"].example
    ('dropped', 'line 9: ...')
    """
    diagnostics.add(f"{reader}.elided", count=count,
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
