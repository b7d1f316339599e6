"""A rocprof CSV file as its header and rows, with the columns a reader needs checked.

The rows come from :mod:`..csv_rows` (rows of another width than the header and a cut last
row left out and counted). Two spellings of older rocprof versions are read as the newer
ones here, once for every reader: rocprofv2's ``Correlation_ID`` is rocprofv3's
``Correlation_Id``, and a row longer than its header, which rocprof v1 wrote when a kernel
name with commas was not quoted (``void f<int, 2u>(int*, int),1,5336,...``), has its name's
cells joined back into one; a longer row whose cells were quoted (rocprofv3 quotes every
cell) is no such name, and is left out as any row of another width.

A cell written as ``...`` (a table printed with its long cells cut, then saved or pasted
as CSV: a counter value, a time, a size) holds no value: it is read as an empty cell, so
each reader treats it as the value it does not have (an argument or counter left out, a
row without its time not read), and counted once here (``rocprof.value_elided``), never
read as 0 or as the text ``...``. A name so written stays the name it shows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from ...errors import InputError
from ...io import Source
from ...model import Diagnostics
from ..csv_rows import CellColumns, RowsLeftOut, source_rows


@dataclass(frozen=True)
class Table:
    """The rows of one CSV, each a list of cells in the header's order (a CSV's are
    :class:`~traceconv.formats.csv_rows.CellColumns`: packed, read back row by row)."""

    file: str
    header: list[str]
    rows: Sequence[list[str]]
    rejoined: int = field(default=0, compare=False)   # rows whose name was joined back
    left_out: RowsLeftOut = field(default=RowsLeftOut(), compare=False)
    # column -> its cells written as "..." (read as empty: no value)
    elided: dict[str, int] = field(default_factory=dict, compare=False)

    def require(self, *columns: str) -> dict[str, int]:
        """The position of each of ``columns``; the first one missing is an error naming
        it and the file.

        >>> Table("k.csv", ["Name", "Calls"], []).require("Name", "TotalDurationNs")
        Traceback (most recent call last):
        ...
        traceconv.errors.InputError: k.csv:line 1: no column 'TotalDurationNs' in the header
        """
        for column in columns:
            if column not in self.header:
                raise InputError(f"no column {column!r} in the header", file=self.file,
                                 location="line 1")
        return {column: self.header.index(column) for column in columns}

    def count_repairs(self, diagnostics: Diagnostics) -> None:
        """Add to ``diagnostics`` how many rows :func:`read_table` repaired or left out."""
        diagnostics.add("rocprof.name_rejoined", count=self.rejoined, example=self.file)
        self.left_out.count(diagnostics)
        diagnostics.add("rocprof.value_elided", count=sum(self.elided.values()),
                        example="; ".join(f"{self.file}: {cells} in {column}"
                                          for column, cells in self.elided.items()) or None)

    def records(self) -> Iterator[dict[str, object]]:
        """Each row as ``{column: cell}``, made as it is read (a large table's dicts are
        never all held at once).

        >>> list(Table("a.csv", ["x", "y"], [["1", "2"], ["3", "4"]]).records())
        [{'x': '1', 'y': '2'}, {'x': '3', 'y': '4'}]
        """
        header = self.header
        return (dict(zip(header, row, strict=True)) for row in self.rows)

    def column(self, name: str) -> Iterator[object]:
        """The cells of column ``name`` row by row (None in each row where it is missing).

        >>> list(Table("a.csv", ["x", "y"], [["1", "2"], ["3", "4"]]).column("y"))
        ['2', '4']
        """
        if name not in self.header:
            return (None for _ in range(len(self.rows)))
        if isinstance(self.rows, CellColumns):
            return self.rows.column(self.header.index(name))
        at = self.header.index(name)
        return (row[at] for row in self.rows)


# rocprofv2's spelling of a column -> rocprofv3's, which the readers use
_V3_SPELLING = {"Correlation_ID": "Correlation_Id"}
# the columns that hold a name (one of them in a header): where unquoted commas split a row
NAME_COLUMNS = ("KernelName", "Kernel_Name", "Name")
# the columns of names, read as the text they show: "..." there is a name cut short, no
# value lost
TEXT_COLUMNS = frozenset({*NAME_COLUMNS, "Counter_Name", "Function", "Operation"})


def read_table(source: Source) -> Table:
    """The whole CSV of ``source``; text that the ``csv`` module refuses is an error with
    its line. A row with more cells than the header, its name's cells unquoted, gets them
    joined back (:func:`rejoin`; counted in :attr:`Table.rejoined`); other rows of another
    width, and a cut last row, are left out (:attr:`Table.left_out`).

    >>> table = read_table(Source("tests/data/rocprof/ROCm__rocprofiler-sdk__docs_memory_copy_trace.csv"))
    >>> table.header[:2], len(table.rows)
    (['Kind', 'Direction'], 2)
    """
    rows = source_rows(source, written_by="rocprof")
    header = next((row for row in rows if row), None)   # (a pasted file's fence: blank)
    if not header:
        raise InputError("an empty file: no CSV header", file=source.name,
                         location="line 1")
    header = [_V3_SPELLING.get(name, name) for name in header]
    rows.width = len(header)
    name = next((header.index(c) for c in NAME_COLUMNS if c in header), None)
    rejoined = 0

    def unquoted_name(row: list[str], line: str) -> list[str] | None:
        nonlocal rejoined
        if name is None or len(row) < len(header):
            return None
        joined = rejoin(row, name, len(header))
        if joined[name] not in line:   # (its cells were quoted: no name split by commas)
            return None
        rejoined += 1
        return joined

    rows.fit = unquoted_name
    body = CellColumns(len(header), elided_in=[at for at, column in enumerate(header)
                                               if column not in TEXT_COLUMNS])
    for row in rows:
        if row:
            body.append(row)
    body.pack()
    return Table(source.name, header, body, rejoined, rows.left_out,
                 {header[at]: cells for at, cells in sorted(body.elided.items())})


def rejoin(row: list[str], name: int, columns: int) -> list[str]:
    """``row`` with the cells that an unquoted name was split into (from position
    ``name`` on) joined back with the commas between them, so that it has ``columns``
    cells.

    >>> rejoin(["void f<int", " 2u>(int*", " int)", "1", "5336"], 0, 3)
    ['void f<int, 2u>(int*, int)', '1', '5336']
    """
    extra = len(row) - columns
    return [*row[:name], ",".join(row[name:name + extra + 1]), *row[name + extra + 1:]]
