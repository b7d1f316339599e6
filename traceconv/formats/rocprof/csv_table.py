"""A rocprof CSV file as its header and rows, with the columns a reader needs checked.

Two spellings of older rocprof versions are read as the newer ones here, once for every
reader: rocprofv2's ``Correlation_ID`` is rocprofv3's ``Correlation_Id``, and a row longer
than its header, which rocprof v1 wrote when a kernel name with commas was not quoted
(``void f<int, 2u>(int*, int),1,5336,...``), has its name's cells joined back into one.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field

from ...errors import InputError
from ...io import Source
from ...model import Diagnostics


@dataclass(frozen=True)
class Table:
    """The rows of one CSV, each a list of cells in the header's order."""

    file: str
    header: list[str]
    rows: list[list[str]]
    rejoined: int = field(default=0, compare=False)   # rows whose name was joined back

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
        """Add to ``diagnostics`` how many rows :func:`read_table` repaired."""
        diagnostics.add("rocprof.name_rejoined", count=self.rejoined, example=self.file)

    def records(self) -> list[dict[str, object]]:
        """Each row as ``{column: cell}`` (a short row lacks its last columns).

        >>> Table("a.csv", ["x", "y"], [["1", "2"], ["3"]]).records()
        [{'x': '1', 'y': '2'}, {'x': '3'}]
        """
        return [dict(zip(self.header, row, strict=False)) for row in self.rows]


# rocprofv2's spelling of a column -> rocprofv3's, which the readers use
_V3_SPELLING = {"Correlation_ID": "Correlation_Id"}
# the columns that hold a name (one of them in a header): where unquoted commas split a row
NAME_COLUMNS = ("KernelName", "Kernel_Name", "Name")


def read_table(source: Source) -> Table:
    """The whole CSV of ``source``; text that the ``csv`` module refuses is an error with
    its line. A row with more cells than the header gets its name's cells joined back
    (:func:`rejoin`; counted in :attr:`Table.rejoined`).

    >>> table = read_table(Source("tests/data/rocprof/ROCm__rocprofiler-sdk__docs_memory_copy_trace.csv"))
    >>> table.header[:2], len(table.rows)
    (['Kind', 'Direction'], 2)
    """
    with source.open() as stream:
        text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline="")
        reader = csv.reader(text)
        try:
            header = next(reader, None)
            if not header:
                raise InputError("an empty file: no CSV header", file=source.name,
                                 location="line 1")
            rows = [row for row in reader if row]
        except csv.Error as exc:   # a field past the csv module's limit, a NUL...
            raise InputError(f"not CSV as rocprof writes it: {exc}", file=source.name,
                             location=f"line {reader.line_num}") from None
    header = [_V3_SPELLING.get(name, name) for name in header]
    name = next((header.index(c) for c in NAME_COLUMNS if c in header), None)
    rejoined = 0
    if name is not None:
        for at, row in enumerate(rows):
            if len(row) > len(header):
                rows[at] = rejoin(row, name, len(header))
                rejoined += 1
    return Table(source.name, header, rows, rejoined)


def rejoin(row: list[str], name: int, columns: int) -> list[str]:
    """``row`` with the cells that an unquoted name was split into (from position
    ``name`` on) joined back with the commas between them, so that it has ``columns``
    cells.

    >>> rejoin(["void f<int", " 2u>(int*", " int)", "1", "5336"], 0, 3)
    ['void f<int, 2u>(int*, int)', '1', '5336']
    """
    extra = len(row) - columns
    return [*row[:name], ",".join(row[name:name + extra + 1]), *row[name + extra + 1:]]
