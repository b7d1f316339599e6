"""How wide the command line draws: the terminal's width, unless ``--wide``.

Every table a command prints goes through :func:`console_for` (rich tables) or
:func:`table_width` (text rendered elsewhere), so one rule decides: ``COLUMNS`` when set,
else the terminal's width, else 80 columns (output to a pipe or file); ``--wide`` draws at
the tables' natural width. Inside that width :func:`fitted_table` draws every table: it
hides the least needed columns (and says so), elides names in the middle while they stay
distinct, and never wraps a cell, so that no word or number is ever cut in two.
"""

from __future__ import annotations

import os
import shutil
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

WIDE = 10_000      # "no limit": every table is narrower than this
FALLBACK = 80      # neither COLUMNS nor a terminal: what rich and the shell assume


def table_width(wide: bool = False) -> int:
    """The width to draw at: ``WIDE`` for ``--wide``, else ``COLUMNS``, the terminal's
    width, or 80.

    >>> import os; os.environ["COLUMNS"] = "72"; table_width(), table_width(wide=True)
    (72, 10000)
    >>> del os.environ["COLUMNS"]
    """
    if wide:
        return WIDE
    columns = os.environ.get("COLUMNS", "")
    if columns.isdecimal() and int(columns) > 0:
        return int(columns)
    return shutil.get_terminal_size((FALLBACK, 24)).columns or FALLBACK


def console_for(wide: bool = False, **options: Any) -> Console:
    """A rich console on standard output that draws at :func:`table_width`."""
    from rich.console import Console

    # emoji off: ":name:" in an op name (aten::x:) is data, not an emoji code
    return Console(width=table_width(wide), **{"emoji": False, **options})


@dataclass(frozen=True)
class Column:
    """One column of a :func:`fitted_table`. ``number``: right-aligned and never cut.
    ``drop``: in a narrow terminal the columns with the highest ``drop`` are hidden first
    (0: always kept). Text is elided in the middle (one cut per line of a cell), never
    wrapped, so that every token on screen is whole or visibly elided. ``symbols``: each
    line is a function's name, which a table too wide first shortens to its function name
    (:func:`~.symbol_names.shortened`: as far as the names stay distinct). ``blank``: what
    an empty cell says, as the caption of a column hidden for having no value says it."""

    header: str
    number: bool = False
    drop: int = 0
    style: str = ""
    symbols: bool = False   # function names (ops, kernels): shortened first when narrow
    blank: str = "N/A"      # (a change column's empty cell: no change)


TEXT_MIN = 8        # a text column is not narrowed below this (nor below its header words)
TEXT_COMFORT = 24   # hide columns before a text column must go under this


def fitted_table(columns: list[Column], rows: list[list[str]], width: int,
                 **options: Any) -> Table:
    """A rich table of ``rows`` (plain text, drawn as text: no markup) that fits ``width``,
    drawn in one style whatever the width (light rules: a rule under the headers, no box),
    never with a column that says nothing (every cell ``N/A`` or empty: a caption names
    them, :func:`_empty_columns`); as is when the rest fits; else with ``symbols`` columns'
    names shortened, and hiding the
    columns with the highest ``drop``
    until the text columns keep :data:`TEXT_COMFORT` characters (a caption says which, and
    that ``--wide`` shows them),
    then eliding text in the middle, the widest column first,
    each column only as far as its names stay distinct (more columns are hidden for that
    only when it is enough: names that no width within ``width`` tells apart are cut with
    the columns kept). Numbers stay whole: a number column is never narrower than its
    widest cell.

    >>> cols = [Column("op"), Column("total ms", number=True), Column("calls", True, drop=1)]
    >>> rows = [["sm80_xmma_gemm_f32f32_tilesize128x128", "12.500", "6"],
    ...         ["sm80_xmma_gemm_f32f32_tilesize64x64", "3.000", "2"]]
    >>> print(_plain(fitted_table(cols, rows, 32)))
                               total
    op                            ms
    ────────────────────────────────
    sm80_xmma_g…esize128x128  12.500
    sm80_xmma_g…ilesize64x64   3.000
    1 column hidden at 32 columns:
    --wide shows it (calls)
    >>> print(_plain(fitted_table(cols, rows, 80)))
    op                                     total ms  calls
    ──────────────────────────────────────────────────────
    sm80_xmma_gemm_f32f32_tilesize128x128    12.500      6
    sm80_xmma_gemm_f32f32_tilesize64x64       3.000      2
    """
    from rich import box
    from rich.table import Table
    from rich.text import Text

    text = [[printable_cell(cell) for cell in cells] for cells in rows]
    natural = [_natural_width(c, [r[i] for r in text]) for i, c in enumerate(columns)]
    empty = _empty_columns(columns, text)
    keep = [i for i in range(len(columns)) if i not in empty]
    # (drawn as is, no cell wraps and headers take one line)
    compact = _compact_width([max(natural[i], len(columns[i].header)) for i in keep]) > width
    if compact and any(c.symbols for c in columns):
        text = _with_short_symbols(columns, text)
        natural = [_natural_width(c, [r[i] for r in text]) for i, c in enumerate(columns)]
    widths = dict(enumerate(natural))
    hidden: list[int] = []
    if compact:
        droppable = sorted((i for i in keep if columns[i].drop),
                           key=lambda i: (-columns[i].drop, -i))
        floors = {i: natural[i] if c.number else min(natural[i], max(
            TEXT_COMFORT, _header_floor(c))) for i, c in enumerate(columns)}
        while droppable and _compact_width([floors[i] for i in keep]) > width:
            hidden.append(droppable.pop(0))
            keep.remove(hidden[-1])
        widths = _narrowed(columns, text, natural, keep, width)
        if not _told_apart(columns, text, natural, [i for i in keep if i not in droppable],
                           width):
            droppable = []   # no column hidden tells the names apart: keep the columns
        while _compact_width([widths[i] for i in keep]) > width and droppable:
            hidden.append(droppable.pop(0))   # names that stay distinct only when wide
            keep.remove(hidden[-1])
            widths = _narrowed(columns, text, natural, keep, width)
        if _compact_width([widths[i] for i in keep]) > width:   # names no cut tells apart
            widths = _narrowed(columns, text, natural, keep, width, distinct=False)
    table = Table(**{**options, "box": box.SIMPLE_HEAD, "pad_edge": False, "show_edge": False,
                     "collapse_padding": True})
    for i in keep:
        column = columns[i]
        # (no_wrap holds for the header too: it is broken at its spaces here instead)
        header = textwrap.fill(column.header, widths[i], break_long_words=False) \
            if compact else column.header
        table.add_column(header, justify="right" if column.number else "left",
                         no_wrap=True, overflow="ellipsis", style=column.style or None,
                         width=widths[i] if compact else None)
    elided_columns = {i: _elided_distinct([r[i] for r in text], widths[i]) if not
                      columns[i].number else [r[i] for r in text] for i in keep}
    for j in range(len(text)):
        table.add_row(*(Text(elided_columns[i][j]) for i in keep))
    table.caption = "\n".join(_hidden_lines(columns, hidden, empty, width)) or None
    table.caption_justify = "left"
    return table


def _empty_columns(columns: list[Column], text: list[list[str]]) -> list[int]:
    """The columns with nothing in them (every cell empty or ``N/A``), at any width: they
    say nothing a caption cannot. None when the table has no rows, or when that would be
    every column.

    >>> cols = [Column("op"), Column("self host"), Column("self device", drop=1)]
    >>> _empty_columns(cols, [["gemm", "", "8.3us"], ["copy", "N/A", ""]])
    [1]
    >>> _empty_columns(cols, []), _empty_columns(cols[1:], [["", "N/A"]])
    ([], [])
    """
    empty = [i for i in range(len(columns))
             if text and all(r[i].strip() in ("", "N/A") for r in text)]
    return [] if len(empty) == len(columns) else empty


def _hidden_lines(columns: list[Column], hidden: list[int], empty: list[int],
                  width: int) -> list[str]:
    """The caption's lines on the columns not drawn: those N/A on every row, then those
    hidden for want of width.

    >>> cols = [Column("op"), Column("FLOPS", drop=1), Column("calls", drop=2),
    ...         Column("Δ ms", blank="no change")]
    >>> for line in _hidden_lines(cols, [2], [1, 3], 80): print(line)
    hidden, N/A on every row: FLOPS
    hidden, no change on every row: Δ ms
    1 column hidden at 80 columns: --wide shows it (calls)
    """
    lines = []
    for blank in dict.fromkeys(columns[i].blank for i in sorted(empty)):
        lines.append(f"hidden, {blank} on every row: " + ", ".join(
            columns[i].header for i in sorted(empty) if columns[i].blank == blank))
    if hidden:
        names = ", ".join(columns[i].header for i in sorted(hidden))
        count = f"{len(hidden)} column{'s' if len(hidden) > 1 else ''}"
        them = "them" if len(hidden) > 1 else "it"
        lines.append(f"{count} hidden at {width} columns: --wide shows {them} ({names})")
    return lines


def _with_short_symbols(columns: list[Column], text: list[list[str]]) -> list[list[str]]:
    """``text`` with every line of its ``symbols`` columns in its short form."""
    from .symbol_names import shortened

    out = [list(cells) for cells in text]
    for i, column in enumerate(columns):
        if column.symbols:
            short = shortened([line for cells in text for line in cells[i].split("\n")])
            for cells in out:
                cells[i] = "\n".join(short[line] for line in cells[i].split("\n"))
    return out


def _told_apart(columns: list[Column], text: list[list[str]], natural: list[int],
                keep: list[int], width: int) -> bool:
    """Whether the text columns of ``keep`` stay distinct within ``width`` by a cut that
    keeps at least :data:`TEXT_MIN` characters of their start (names told apart by their
    last characters alone, such as C++ templates' closing arguments, are not worth a
    column).

    >>> cols, natural = [Column("op")], [40]
    >>> _told_apart(cols, [["k" * 30 + "_a" + "z" * 8], ["k" * 30 + "_b" + "z" * 8]], natural, [0], 30)
    True
    >>> _told_apart(cols, [["k" * 40 + "_a" + "z" * 22], ["k" * 40 + "_b" + "z" * 22]], [64], [0], 30)
    False
    """
    widths = _narrowed(columns, text, natural, keep, width)
    if _compact_width(list(widths.values())) > width:
        return False
    for i in keep:
        if not columns[i].number:
            head = _head({line for r in text for line in r[i].split("\n")}, widths[i])
            if head is None or head < min(TEXT_MIN, (widths[i] - 1) // 2):
                return False
    return True


def printable_cell(cell: str) -> str:
    """A cell's text with control characters escaped (see :mod:`traceconv.terminal`)."""
    from ..terminal import printable

    return "\n".join(printable(line) for line in str(cell).split("\n"))


def _natural_width(column: Column, cells: list[str]) -> int:
    """The widest line of the column's cells (or its header's longest word)."""
    lines = (len(line) for cell in cells for line in cell.split("\n"))
    return max(max(lines, default=0), _header_floor(column))


def _header_floor(column: Column) -> int:
    """Headers wrap at their spaces: a column is never narrower than its longest word."""
    return max(len(word) for word in column.header.split() or [""])


def _compact_width(widths: list[int]) -> int:
    """The width of a compact table (two spaces between columns, no edges)."""
    return sum(widths) + 2 * max(len(widths) - 1, 0)


def _narrowed(columns: list[Column], text: list[list[str]], natural: list[int],
              keep: list[int], width: int, distinct: bool = True) -> dict[int, int]:
    """Column widths within ``width``, one character at a time: the widest text column down
    to :data:`TEXT_COMFORT`, then headers go on several lines (the one with the most header
    beyond its cells first), then text columns further, as long as their names stay distinct
    (``distinct=False``: even when they do not) and not below :data:`TEXT_MIN`."""
    lines = {i: {line for r in text for line in r[i].split("\n")}
             for i in keep if not columns[i].number}
    # a text column starts no wider than the table may be (narrowing is one character a
    # step: a name of 100,000 characters would take as many steps)
    widths = {i: min(max(natural[i], len(columns[i].header)), width) if i in lines
              else max(natural[i], len(columns[i].header)) for i in keep}
    floors = {i: max(_header_floor(columns[i]), min(TEXT_MIN, natural[i])) for i in lines}
    excess = _compact_width(list(widths.values())) - width
    while excess > 0:
        wide = [i for i in lines if widths[i] > max(floors[i], TEXT_COMFORT)]
        headers = [i for i in keep if widths[i] > natural[i]]
        if not wide and headers:
            longest = max(headers, key=lambda i: (widths[i] - natural[i], -i))
            widths[longest] -= 1
            excess -= 1
            continue
        wide = wide or [i for i in lines if widths[i] > floors[i]]
        if not wide:
            break
        widest = max(wide, key=lambda i: (widths[i], -i))
        if distinct and _head(lines[widest], widths[widest] - 1) is None:
            floors[widest] = widths[widest]   # narrower, two names would read the same
            continue
        widths[widest] -= 1
        excess -= 1
    return widths


def _head(lines: set[str], width: int) -> int | None:
    """How many leading characters to keep when ``lines`` are elided to ``width`` (the rest
    from their ends) so that distinct lines stay distinct: the middle cut if it does, else
    the cut nearest the middle that does (names that differ near their start or end keep
    more of it); None when no cut does.

    >>> _head({"gemm_nn_tile128_cublas", "gemm_nt_tile128_cublas"}, 10)
    7
    """
    long = [line for line in lines if len(line) > width]
    if not long:
        return (width - 1) // 2
    middle = (width - 1) // 2
    for shift in range(width):
        for head in (middle - shift, middle + shift):
            if 0 <= head <= width - 1 and len(
                    {_cut(line, width, head) for line in lines}) == len(lines):
                return head
    return None


def _in_number(line: str, at: int) -> bool:
    """Whether a cut before ``line[at]`` falls inside a number (digits, with their "," and
    "." between them)."""
    return 0 < at < len(line) and all(c.isdecimal() or c in ",." for c in line[at - 1:at + 1])


def _cut(line: str, width: int, head: int) -> str:
    """``line`` elided to ``width`` keeping ``head`` characters of its start, and never a
    part of a number in a name: a cut inside one takes the whole number out (``thread
    3132278`` cut to ``thread 31322…`` would read as another thread).

    >>> _cut("waiting on thread 3132278 (python3): sync", 30, 23), _cut("gemm_128x64_nn", 9, 4)
    ('waiting on thread …: sync', 'gemm…_nn')
    """
    if len(line) <= width:
        return line
    tail = width - 1 - head
    end, start = head, len(line) - tail
    while _in_number(line, end):
        end -= 1
    while tail and _in_number(line, start):
        start += 1
    return f"{line[:end]}…{line[start:] if tail else ''}"


def _elided_distinct(cells: list[str], width: int) -> list[str]:
    """Every line of every cell elided to ``width``, cut where the lines stay distinct."""
    cut = _distinct_cuts({line for cell in cells for line in cell.split("\n")}, width)
    return ["\n".join(cut[line] for line in cell.split("\n")) for cell in cells]


RECUTS = 4   # rounds of re-cutting lines that read the same before one cut for all


def _distinct_cuts(lines: set[str], width: int) -> dict[str, str]:
    """Each line elided to ``width`` in the middle, but lines that would read the same are
    cut where they differ (:func:`_head` of those lines), so that one pair differing at one
    place does not move the cut of every line of the column (the start of a name is what
    names it); lines that no cut tells apart stay cut in the middle, and when re-cut lines
    meet others again (rare) one cut for every line settles it.

    >>> cut = _distinct_cuts({"gemm_nn_tile128_cublas", "gemm_nt_tile128_cublas",
    ...                       "softmax_forward_kernel"}, 10)
    >>> sorted(cut.values())
    ['gemm_nn…as', 'gemm_nt…as', 'soft…ernel']
    """
    middle = (width - 1) // 2
    cut = {line: _cut(line, width, middle) for line in lines}
    for _ in range(RECUTS):
        readings: dict[str, list[str]] = {}
        for line, shown in cut.items():
            readings.setdefault(shown, []).append(line)
        recut = {line: _cut(line, width, head) for same in readings.values() if len(same) > 1
                 if (head := _head(set(same), width)) is not None for line in same}
        if all(cut[line] == shown for line, shown in recut.items()):
            return cut
        cut.update(recut)
    head = _head(lines, width)
    return {line: _cut(line, width, middle if head is None else head) for line in lines}


def _plain(table: Table, width: int = 200) -> str:
    """``table`` drawn as plain text, trailing spaces trimmed (for examples and tests)."""
    import io

    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=width, color_system=None, emoji=False).print(table)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


NAME_MIN = 16   # a heading's file name is not elided below this


def heading_name(name: str, rest: str, width: int) -> str:
    """``name`` elided in the middle so that a heading ``name + rest`` fits ``width`` (a
    file's path before what the command says of it), never under :data:`NAME_MIN`.

    >>> heading_name("tests/data/rocprof/kernel_trace_of_a_long_run.csv", ": rocprof", 40)
    'tests/data/rocp…_a_long_run.csv'
    """
    return elided(name, max(width - len(rest), NAME_MIN))


def inputs_heading(inputs: Sequence[str], rest: str, width: int) -> str:
    """The inputs of a command as its heading names them before ``rest``: one by its path
    (:func:`heading_name`), several by their file names, all when they fit, else the first
    and how many more (a cut in the middle of several names would read as one name).

    >>> files = ["runs/a/results.csv", "runs/a/results.hip_stats.csv"]
    >>> inputs_heading(files, ": rocprof", 80), inputs_heading(files, ": rocprof", 36)
    ('results.csv, results.hip_stats.csv', 'results.csv + 1 more')
    """
    if len(inputs) == 1:
        return heading_name(inputs[0], rest, width)
    names = [os.path.basename(path) or path for path in inputs]
    if len(", ".join(names)) + len(rest) <= width:
        return ", ".join(names)
    more = f" + {len(names) - 1} more"
    return heading_name(names[0], more + rest, width) + more


def packed(items: list[str], width: int, indent: str = "  ") -> str:
    """``items`` joined by ", " into lines of at most ``width`` characters, each line
    starting with ``indent`` and breaking only between items (a label stays with its
    number); an item longer than a line has a line of its own.

    >>> print(packed(["cpu 9.507 ms (16.0%)", "kernel 4.109 ms (6.9%)", "wait 0.170 ms"], 40))
      cpu 9.507 ms (16.0%),
      kernel 4.109 ms (6.9%), wait 0.170 ms
    """
    lines: list[str] = []
    line = ""
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else "")
        if line and len(indent) + len(line) + 1 + len(piece) > width:
            lines.append(indent + line)
            line = piece
        else:
            line = f"{line} {piece}" if line else piece
    if line:
        lines.append(indent + line)
    return "\n".join(lines)


def elided(text: str, width: int) -> str:
    """``text`` cut in the middle to ``width`` characters (its start and its end kept: a
    file's folder and its name).

    >>> elided("runs/2026-11-29/rank0/trace.json", 20)
    'runs/2026…trace.json'
    """
    if len(text) <= width:
        return text
    keep = width - 1
    return f"{text[:keep // 2]}…{text[len(text) - (keep - keep // 2):]}"
