"""The rows of a CSV input, for every CSV reader (rocprof's CSV files, ``nsys stats``
reports; :func:`source_rows` is the one way to them): lines end where the ``csv`` module ends
them (:func:`.text_lines.csv_lines`), and two rules of what is not a row hold, once, each
counted under one code.

- **A row of another width**: a row whose number of cells differs from its header's is
  not guessed at (its cells would land in the wrong columns: a process id read as a start
  time): it is left out, counted as ``csv.row_width_mismatch`` with the line of the first.
  A reader may take such a row on purpose first (``fit``: rocprof v1's unquoted kernel
  names with commas joined back, nsys's lines of prose between its tables).
- **A last row cut**: a file cut mid-line (a copy stopped, a disk full) ends in a row
  with too few cells and no line end, or inside a quoted field never closed, or right
  after a comma: its last cell empty where the column holds a number (the row before
  says so); that row is left out, counted as ``csv.row_cut``. A whole last row without
  its line end is a row. A file that stops inside its header (a quoted field never
  closed before the reader has its header) has no row to read: one :class:`InputError`
  naming the line and column where it stops, not "an empty file".

Blank lines pass through as empty rows (the readers skip them or end a table there). Text
the ``csv`` module refuses (a field past its limit, a NUL) is one :class:`InputError`
naming the file and the line.
"""

from __future__ import annotations

import bisect
import csv
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import overload

import numpy as np

from ..errors import InputError
from ..io import Source
from ..model import Diagnostics
from .pasted_csv import CsvPaste
from .text_lines import csv_lines

# a row of another width that a reader takes on purpose: (cells, the raw text of the
# row's last line) -> the row to read, or None (left out)
Fit = Callable[[list[str], str], "list[str] | None"]


@dataclass(frozen=True)
class RowsLeftOut:
    """How many rows :class:`CsvRows` left out, and the line of the first of each kind."""

    width_mismatch: int = 0
    first_mismatch: str | None = None
    cut: int = 0
    first_cut: str | None = None

    def count(self, diagnostics: Diagnostics) -> None:
        """Add these to ``diagnostics`` under their codes.

        >>> from traceconv.model import Diagnostics
        >>> found = Diagnostics(); RowsLeftOut(2, "line 7: 8 cells, header 7").count(found)
        >>> found.count("csv.row_width_mismatch"), found.count("csv.row_cut")
        (2, 0)
        """
        diagnostics.add("csv.row_width_mismatch", count=self.width_mismatch,
                        example=self.first_mismatch)
        diagnostics.add("csv.row_cut", count=self.cut, example=self.first_cut)


class CsvRows:
    """The rows of ``lines`` (a text opened with ``newline=""``) as lists of cells; once a
    reader sets :attr:`width` (its header's number of cells; None: any), a row of another
    width is left out unless ``fit`` takes it, and a cut last row always is
    (:attr:`left_out`).

    >>> rows = CsvRows(['a,b,c\\n', '1,2,3\\n', '4,5\\n', '6,7,8,9\\n', '10,11'], "t.csv")
    >>> rows.width = len(next(rows))
    >>> list(rows), rows.left_out
    ([['1', '2', '3']], RowsLeftOut(width_mismatch=2, first_mismatch='line 3: 2 cells, \
header 3', cut=1, first_cut='line 5: 2 cells, header 3, no line end'))
    >>> rows = CsvRows(['a,b\\n', '1,"open\\n', 'quote'], "t.csv")
    >>> rows.width = len(next(rows))
    >>> list(rows), rows.left_out.first_cut
    ([], 'line 2: a quoted field never closed')
    >>> list(CsvRows(['"Name","Cal'], "t.csv"))   # (no header yet: the header is cut)
    Traceback (most recent call last):
    traceconv.errors.InputError: t.csv:line 1:12: the file stops inside its CSV header (a quoted field never closed): cut short, no row to read
    >>> rows = CsvRows(['a,b\\n', 'k,5\\n', 'k,'], "t.csv")
    >>> rows.width = len(next(rows))
    >>> list(rows), rows.left_out.first_cut
    ([['k', '5']], 'line 3: the last cell empty where its column holds numbers, no line end')
    """

    def __init__(self, lines: Iterable[str], file: str, *, written_by: str = "",
                 fit: Fit | None = None, double_spaced: bool = False) -> None:
        self.file, self.written_by, self.fit = file, written_by, fit
        self.width: int | None = None
        self.left_out = RowsLeftOut()
        self._line = ""          # the raw text of the last line read
        self._at_end = False     # the lines ran out while the csv module read a row
        self._spacers = 0        # blank lines read with the line before (double spacing)
        self._reader = csv.reader(self._spaced(lines) if double_spaced else self._tracked(lines))
        self._rows = self._read()

    @property
    def line_num(self) -> int:
        """The number of lines of the file read so far (the last row's last line): a
        double-spaced file's blank line after a row, read with it
        (:mod:`.pasted_csv`), counts as the line it is in the file.

        >>> rows = CsvRows(['a,b\\n\\n', '1,2\\r\\n\\r\\n', '3\\n\\n'], "t.csv", double_spaced=True)
        >>> rows.width = len(next(rows)); list(rows), rows.line_num, rows.left_out.first_mismatch
        ([['1', '2']], 6, 'line 5: 1 cells, header 2')
        """
        return self._reader.line_num + self._spacers

    def _tracked(self, lines: Iterable[str]) -> Iterator[str]:
        for line in lines:
            self._line = line
            yield line
        self._at_end = True

    def _spaced(self, lines: Iterable[str]) -> Iterator[str]:
        """:meth:`_tracked`, counting the line ends of a line beyond its own."""
        for line in self._tracked(lines):
            self._spacers += max(len(_LINE_END.findall(line)) - 1, 0)
            yield line

    def __iter__(self) -> Iterator[list[str]]:
        return self._rows

    def __next__(self) -> list[str]:
        return next(self._rows)

    def _read(self) -> Iterator[list[str]]:
        reader, start = self._reader, 1
        previous = [""]   # the last whole row (does its last column hold numbers?)
        try:
            for row in reader:
                width = self.width
                # (a whole row ends at its line's end: the csv module reads on only inside a
                # quoted field, so lines running out under a row mean a quote never closed)
                if self._at_end:
                    if width is None:   # (the reader has no header yet: there is none)
                        self._header_cut()
                    self._leave_out(start, "a quoted field never closed", cut=True)
                elif width is None or not row:
                    yield row
                elif len(row) == width and row[-1]:   # (most rows: whole, read first)
                    previous = row
                    yield row
                elif len(row) < width and not self._line_ended():
                    self._leave_out(start, f"{len(row)} cells, header {width}, no line end",
                                    cut=True)
                elif (whole := row if len(row) == width else self._fitted(row)) is None:
                    self._leave_out(start, f"{len(row)} cells, header {width}", cut=False)
                elif not whole[-1] and _is_number(previous[-1]) and not self._line_ended():
                    self._leave_out(start, "the last cell empty where its column holds "
                                    "numbers, no line end", cut=True)
                else:
                    previous = whole
                    yield whole
                start = reader.line_num + self._spacers + 1
        except csv.Error as exc:
            raise InputError(f"not CSV as {self.written_by or 'its writer'} writes it: {exc}",
                             file=self.file, location=f"line {self.line_num}") from None

    def _fitted(self, row: list[str]) -> list[str] | None:
        return self.fit(row, self._line) if self.fit is not None else None

    def _line_ended(self) -> bool:
        return self._line.endswith(("\n", "\r"))

    def _header_cut(self) -> None:
        """The input stopped inside a quoted field before its header was read: an error
        naming where it stops (the line, and the column after its last character)."""
        raise InputError("the file stops inside its CSV header (a quoted field never "
                         "closed): cut short, no row to read", file=self.file,
                         location=f"line {self.line_num}:{len(self._line) + 1}")

    def _leave_out(self, line: int, why: str, *, cut: bool) -> None:
        was, example = self.left_out, f"line {line}: {why}"
        self.left_out = (replace(was, cut=was.cut + 1, first_cut=was.first_cut or example)
                         if cut else
                         replace(was, width_mismatch=was.width_mismatch + 1,
                                 first_mismatch=was.first_mismatch or example))


def _is_number(cell: str) -> bool:
    """Whether ``cell`` is a number as CSV writers print them (``42``, ``-0.5``, ``1e9``).

    >>> _is_number("255613145711522"), _is_number("0.25"), _is_number(""), _is_number("k")
    (True, True, False, False)
    """
    try:
        float(cell)
    except ValueError:
        return False
    return True


def source_rows(source: Source, *, written_by: str, fit: Fit | None = None) -> CsvRows:
    """The rows of the CSV ``source`` (written by ``written_by``; ``fit``: see
    :class:`CsvRows`), its lines split as the ``csv`` module splits them: a cell holding
    ``\\x1d`` or U+2028, quoted or not, is a cell of its row, as in ``csv.reader``'s. A CSV
    evidently pasted into a page (:mod:`.pasted_csv`) is read as the clean file, the paste
    noted as ``csv.pasted``; a double-spaced one is read single-spaced, its line numbers the
    file's (noted as ``input.double_spaced``).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "k.csv")
    >>> _ = open(path, "wb").write("Name,Calls\\nk\\x1dv,2\\n".encode())
    >>> list(source_rows(Source(path), written_by="rocprof"))
    [['Name', 'Calls'], ['k\\x1dv', '2']]
    """
    lines: Iterable[str] = csv_lines(source)
    paste = CsvPaste.of(source.head)
    if paste.marked:
        source.note("csv.pasted", example=paste.describe())
    if paste.double_spaced:   # (the rule and code of every text input's spacing)
        source.note("input.double_spaced", example="a blank line after every CSV line")
    if paste:
        lines = paste.undone(lines)
    return CsvRows(lines, source.name, written_by=written_by, fit=fit,
                   double_spaced=paste.double_spaced)


# rows gathered before a batch is packed: bounds the cells held as one str each
_BATCH = 16384
# a line end as the csv module reads one
_LINE_END = re.compile(r"\r\n?|\n")
# a whole cell that says its value was cut from view (a table printed with long cells cut)
ELISIONS = frozenset({"...", "\u2026"})


class CellColumns(Sequence[list[str]]):
    """A table's rows kept column by column in packed batches, so that a large CSV costs
    about its own size rather than a Python object per cell: a column whose cells of a
    batch are mostly distinct integers written plainly (``42``, ``-7``: the text that
    ``str`` gives back) is one int64 array, and any other column keeps each distinct cell
    once. Rows read back are the same lists of cells that went in.

    >>> table = CellColumns(3)
    >>> for row in (["1", "k", "2.50"], ["-7", "k", "x"], ["007", "k", ""]):
    ...     table.append(row)
    >>> len(table), table[1], list(table)[2]
    (3, ['-7', 'k', 'x'], ['007', 'k', ''])

    ``elided_in``: the columns where a cell that is all :data:`ELISIONS` (``...``: a table
    printed with its long cells cut, then saved or pasted as CSV) stands for a value not
    shown: it is read as an empty cell, no value, and counted in :attr:`elided` (column ->
    cells), found where each batch's distinct cells are (no pass over the cells of its own).

    >>> table = CellColumns(2, elided_in={1})
    >>> for row in (["k", "..."], ["...", "7"], ["k", "\u2026"]):
    ...     table.append(row)
    >>> list(table), table.elided
    ([['k', ''], ['...', '7'], ['k', '']], {1: 2})
    """

    def __init__(self, width: int, *, elided_in: Collection[int] = ()) -> None:
        self.width = width
        self.elided_in = frozenset(elided_in)
        self.elided: dict[int, int] = {}   # column -> its cells read as empty (elided)
        self._packed: list[list[np.ndarray | list[str]]] = []   # a batch: its columns
        self._starts: list[int] = []                             # each batch's first row
        self._pending: list[list[str]] = []                     # rows not packed yet
        self._count = 0

    def append(self, row: list[str]) -> None:
        """Add ``row`` (``width`` cells)."""
        if len(row) != self.width:
            raise ValueError(f"a row of {len(row)} cells, not {self.width}")
        self._pending.append(row)
        self._count += 1
        if len(self._pending) >= _BATCH:
            self.pack()

    def pack(self) -> None:
        """Pack the rows added since the last batch (after the last row: frees them)."""
        if self._pending:
            self._starts.append(self._count - len(self._pending))
            self._packed.append([self._column(at, list(cells)) for at, cells
                                 in enumerate(zip(*self._pending, strict=True))])
            self._pending = []

    def _column(self, at: int, cells: list[str]) -> np.ndarray | list[str]:
        packed, distinct = _packed_column(cells)
        if at in self.elided_in and any(mark in distinct for mark in ELISIONS):   # (O(1))
            elided = sum(cells.count(mark) for mark in ELISIONS)
            self.elided[at] = self.elided.get(at, 0) + elided
            packed, _ = _packed_column(["" if cell in ELISIONS else cell for cell in cells])
        return packed

    def __len__(self) -> int:
        return self._count

    def _batches(self) -> Iterator[list[list[str]]]:
        self.pack()
        for batch in self._packed:
            yield [_cells(column) for column in batch]

    def __iter__(self) -> Iterator[list[str]]:
        for columns in self._batches():
            yield from map(list, zip(*columns, strict=True))

    def column(self, at: int) -> Iterator[str]:
        """The cells of the column at position ``at``, row by row."""
        self.pack()
        for batch in self._packed:
            yield from _cells(batch[at])

    @overload
    def __getitem__(self, at: int) -> list[str]: ...
    @overload
    def __getitem__(self, at: slice) -> list[list[str]]: ...
    def __getitem__(self, at: int | slice) -> list[str] | list[list[str]]:
        if isinstance(at, slice):
            return [self[i] for i in range(*at.indices(self._count))]
        if not -self._count <= at < self._count:
            raise IndexError(at)
        at %= self._count
        self.pack()
        batch = bisect.bisect_right(self._starts, at) - 1
        within = at - self._starts[batch]
        return [str(c[within]) if isinstance(c, np.ndarray) else c[within]
                for c in self._packed[batch]]


def _packed_column(cells: list[str]) -> tuple[np.ndarray | list[str], Collection[str]]:
    """One column of a batch: its cells with each distinct one kept once, or, when most are
    distinct (times, ids), an int64 array if every cell is an integer whose text is what
    ``str`` writes back (``007``, ``+1`` and ``1.0`` are not); and its distinct cells."""
    distinct: dict[str, str] = {}
    kept = [distinct.setdefault(cell, cell) for cell in cells]
    if len(distinct) * 4 < len(cells):   # (a few repeated values: one object each already)
        return kept, distinct.keys()
    try:
        numbers = np.array(cells, dtype=np.int64)
    except (ValueError, OverflowError):
        return kept, distinct.keys()
    return (numbers if list(map(str, numbers.tolist())) == cells else kept), distinct.keys()


def _cells(column: np.ndarray | list[str]) -> list[str]:
    return list(map(str, column.tolist())) if isinstance(column, np.ndarray) else column
