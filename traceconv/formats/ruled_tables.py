"""Tables drawn in text with a rule under their header, in the two drawings tools print; one
rule for every text reader that meets them:

* the column layout: a rule of dash runs under the header (`` --------  -----``); a cell
  reaches from its run's start to the next run's (numbers are right-aligned in it), the
  last to the rule's end, as wide as its widest cell: what a paste wrote after a row
  (``poll  # waiting for the GPU``) is a remark, no part of its last cell
  (:meth:`Ruling.remark`);
* the box layout: ``+------+-----+`` rules over and under the header and after the last
  row, cells between ``|`` (``|  42.3 | 1159 | gemm |``), as ``nsys stats --format table``,
  psql, MySQL and Python's tabulate/prettytable print.

:func:`ruling_under` tells, from a header line and the line under it, how the table's lines
are cut into cells; a reader decides what the cells mean.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DASH_RULE = re.compile(r"^\s*-+(?:\s+-+)*\s*$")
_BOX_RULE = re.compile(r"^\s*\+-+(?:\+-+)*\+?\s*$")
_GAP = re.compile(r"  +")   # what parts a table's columns (a name holds single blanks)


def is_dash_rule(line: str) -> bool:
    """The dashes a column layout draws under a header.

    >>> is_dash_rule(" --------  ---------------  ----"), is_dash_rule("12.5  100")
    (True, False)
    """
    return _DASH_RULE.match(line) is not None


def is_box_rule(line: str) -> bool:
    """A box layout's rule (``+----+----+``; a paste may have cut its last ``+``).

    >>> is_box_rule("+----------+-----+"), is_box_rule("| 42.3 | 1 |"), is_box_rule("+---")
    (True, False, True)
    """
    return _BOX_RULE.match(line) is not None


def is_rule(line: str) -> bool:
    """A rule of either layout.

    >>> is_rule(" ----  --"), is_rule("+---+--+"), is_rule("---x")
    (True, True, False)
    """
    return is_dash_rule(line) or is_box_rule(line)


@dataclass(frozen=True)
class Ruling:
    """Where the cells of one drawn table are: the columns' starts (the dash runs' starts,
    or the ``|`` before each cell in the box layout), and the rule's drawn ``width``."""

    starts: tuple[int, ...]
    boxed: bool
    width: int = 0

    def reaches(self, line: str) -> bool:
        """Whether ``line`` is drawn to the table's end: to the rule's width (the column
        layout pads every row to it, as nsys prints it), in the box layout closed there by
        its last bar. A row the input stopped inside short of it lost its end
        (:func:`.stray_lines.count_input_end`), unless the paste trimmed the padding.

        >>> ruling = Ruling((0, 6), boxed=False, width=14)
        >>> ruling.reaches("12.5  gemm    "), ruling.reaches("12.5  ge")
        (True, False)
        >>> box = Ruling((0, 7), boxed=True, width=14)
        >>> box.reaches("| 42.3 | gemm |"), box.reaches("| 42.3 | gemm")
        (True, False)
        """
        if self.boxed:
            text = line.rstrip()
            return text.endswith("|") and len(text) >= self.width
        return len(line) >= self.width

    def remark(self, line: str) -> int | None:
        """Where a remark written after a row of the column layout starts, or None: the
        layout pads every cell to its column's rule and the widest cell sets the last
        rule's end, so a row drawn past the rule's width holds text after its cells (a
        tutorial's ``# comment`` on each line of output). The last cell ends at its first
        gap of two blanks (a name holds single ones), else at its last blank up to the rule's
        end (no name crosses it: a remark set off by one blank that opens before the rule's
        end keeps its words up to there); without either the row is left whole (where the
        remark starts cannot be told).

        >>> ruling = Ruling((0, 6), boxed=False, width=14)
        >>> [ruling.remark(row) for row in ("12.5  poll    # waits", "12.5  pthreads # x",
        ...     "12.5  a b  # xy", "12.5  gemm    ", "12.5  a_name_past_it")]
        [10, 14, 9, None, None]
        """
        text = line.rstrip()
        if self.boxed or not self.width or len(text) <= self.width:
            return None
        name = len(text) - len(text[self.starts[-1]:].lstrip())   # (where the last cell's
        # text starts)
        gap = _GAP.search(text, name, self.width + 1)
        if gap is not None:
            return gap.start()
        blank = text.rfind(" ", name, self.width + 1)
        return blank if blank > name else None

    def _within_last_column(self, cell: str) -> str:
        """A last cell read by its gaps (a table whose gaps were tabs) without a remark
        set off by one blank: as :meth:`remark` cuts a row, at its last blank within the
        last column's rule width, measured from the cell's start.

        >>> Ruling((0, 6), boxed=False, width=14)._within_last_column("pthreads # x")
        'pthreads'
        """
        room = self.width - self.starts[-1] if self.width else 0
        if room <= 0 or len(cell) <= room:
            return cell
        blank = cell.rfind(" ", 0, room + 1)
        return cell[:blank].rstrip() if blank > 0 else cell

    def cells(self, line: str) -> list[str] | None:
        """The cells of a line of the table; None when the line is no row of it (blank, or
        in the box layout not a ``|`` line). A box row whose bars are not where the rule's
        corners are is cut at its bars, its last cell taking the rest of the line (a name,
        the one free-text column, may hold ``|``); one with fewer bars than columns is given
        as the cells it has, a row its reader counts as unreadable, never skips.

        >>> Ruling((1, 11, 23), boxed=False).cells("     43.2  2613668540  cudaMemcpyAsync")
        ['43.2', '2613668540', 'cudaMemcpyAsync']
        >>> Ruling((0, 10, 20), boxed=False).cells("1  2222222222  3")   # (tabs untabbed)
        ['1', '2222222222', '3']
        >>> box = Ruling((0, 7, 14), boxed=True)
        >>> box.cells("| 42.3 | 1159 | a|b |"), box.cells("| 42.3 | 1159|  a|b  |"), box.cells("x")
        (['42.3', '1159', 'a|b'], ['42.3', '1159', 'a|b'], None)
        >>> box.cells("| 42.3 |gemm|")   # (a row short of a column)
        ['42.3', 'gemm']
        """
        if not line.strip():
            return None
        if not self.boxed:
            ends = [*self.starts[1:], self.remark(line) or len(line)]
            cells = [line[start:end].strip() for start, end in zip(self.starts, ends, strict=True)]
            if any("  " in cell for cell in cells[:-1]):
                # two values in one column: a table whose gaps were tabs (one tab a gap, each
                # to its tab stop) keeps no alignment; its gaps still cut its cells
                by_gaps = _GAP.split(line.strip())
                if len(by_gaps) > len(cells):   # (the last cell holds single blanks only:
                    by_gaps = by_gaps[:len(cells)]   # what follows a gap is a remark)
                if len(by_gaps) == len(cells):
                    by_gaps[-1] = self._within_last_column(by_gaps[-1])
                    return by_gaps
                return cells
            return cells
        text = line.rstrip()
        if not text.lstrip().startswith("|"):
            return None
        if all(at < len(text) and text[at] == "|" for at in self.starts):
            # the bars where the rule's corners are: a "|" inside a name is the name's
            ends = [*self.starts[1:], len(text)]
            return [text[start + 1:end].strip().removesuffix("|").strip()
                    for start, end in zip(self.starts, ends, strict=True)]
        return bar_cells(text, columns=len(self.starts))


def bar_cells(line: str, columns: int = 0) -> list[str]:
    """The cells of a line drawn between ``|`` bars (a box's row, a Markdown table's, a
    tool's ``| name | 1.5 |`` perf row): cut at every bar, the outer bars dropped; the one
    splitter of bar cells for every text reader. Given its table's ``columns``, the last
    cell takes what is left after the others, bars and all.

    >>> bar_cells("  | 42.3 | 1159 |  gemm |"), bar_cells("a | b")
    (['42.3', '1159', 'gemm'], ['a', 'b'])
    >>> bar_cells("| 42.3 | a | b |", columns=2), bar_cells("| 42.3 | a| |", columns=2)
    (['42.3', 'a | b'], ['42.3', 'a|'])
    """
    inner = line.strip().removeprefix("|").removesuffix("|")
    return [cell.strip() for cell in inner.split("|", columns - 1 if columns else -1)]


def ruling_under(header: str, rule: str) -> Ruling | None:
    """How the table whose ``header`` line is over ``rule`` is cut (None: ``rule`` is no
    rule, or a box rule under a line that is not a ``|`` line).

    >>> ruling_under(" Time (%)  Name", " --------  ----")
    Ruling(starts=(1, 11), boxed=False, width=15)
    >>> ruling_under("| Time (%) | Name |", "+----------+------+")
    Ruling(starts=(0, 11), boxed=True, width=19)
    >>> ruling_under("Time  Name", "+-----+"), ruling_under("Time  Name", "Time")
    (None, None)
    """
    width = len(rule.rstrip())
    if is_dash_rule(rule):
        return Ruling(tuple(m.start() for m in re.finditer(r"-+", rule)), boxed=False,
                      width=width)
    if is_box_rule(rule) and header.lstrip().startswith("|"):
        corners = [m.start() for m in re.finditer(r"\+", rule)]
        return Ruling(tuple(corners[:-1] if rule.rstrip().endswith("+") else corners),
                      boxed=True, width=width)
    return None
