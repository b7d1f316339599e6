"""A rocprof CSV file as its header and rows, with the columns a reader needs checked."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from ...errors import InputError
from ...io import Source


@dataclass(frozen=True)
class Table:
    """The rows of one CSV, each a list of cells in the header's order."""

    file: str
    header: list[str]
    rows: list[list[str]]

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

    def records(self) -> list[dict[str, object]]:
        """Each row as ``{column: cell}`` (a short row lacks its last columns).

        >>> Table("a.csv", ["x", "y"], [["1", "2"], ["3"]]).records()
        [{'x': '1', 'y': '2'}, {'x': '3'}]
        """
        return [dict(zip(self.header, row, strict=False)) for row in self.rows]


def read_table(source: Source) -> Table:
    """The whole CSV of ``source``; text that the ``csv`` module refuses is an error with
    its line.

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
    return Table(source.name, header, rows)
