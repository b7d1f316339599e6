"""Reading profiler databases (Nsight Systems exports, rocmProfileData) safely and in columns.

A database is opened read-only and immutable (``file:...?mode=ro&immutable=1``): nothing
is written beside it (no journal, no WAL), and a database another program holds open is
still read. A gzipped input or standard input is first decompressed into a private
temporary file, bounded by the input size limit (``--max-bytes``) as every other input is.

Rows go from the cursor straight into numpy columns (:func:`numeric_columns`), never into
a list of Python rows first.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from ..io import Source
from .database_sniffing import readonly_uri

_COPY_CHUNK = 1 << 20


@contextlib.contextmanager
def open_database(source: Source) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the database of ``source`` (decompressed to a temporary
    file first when it is gzipped or standard input); the temporary file is removed after.

    A file that is not an SQLite database raises :class:`InputError` naming it.
    """
    with contextlib.ExitStack() as stack:
        path = source.path
        # (a FIFO, a pipe or a device: SQLite would open it again and block or read part)
        if source.is_stdin or source.compressed or not os.path.isfile(source.path):
            path = stack.enter_context(_decompressed_copy(source))
        try:
            connection = sqlite3.connect(readonly_uri(path), uri=True)
        except sqlite3.Error as exc:
            raise InputError(f"cannot open as SQLite: {exc}", file=source.name) from None
        stack.callback(connection.close)
        try:
            connection.execute("select count(*) from sqlite_master").fetchone()
        except UnicodeDecodeError:   # a damaged schema text
            raise InputError("not an SQLite database: its schema is not UTF-8 text",
                             file=source.name) from None
        except sqlite3.DatabaseError as exc:
            raise InputError(f"not an SQLite database: {exc}", file=source.name) from None
        yield connection


@contextlib.contextmanager
def _decompressed_copy(source: Source) -> Iterator[str]:
    """The decompressed content of ``source`` in a temporary file (removed afterwards); the
    source's own reader stops at its byte limit."""
    from ..output_files import scratch_file

    with scratch_file(".sqlite") as (path, out):
        with out, source.open() as stream:
            try:
                shutil.copyfileobj(stream, out, _COPY_CHUNK)
            except (OSError, EOFError) as exc:   # a gzip cut short
                raise InputError(f"cannot read: {exc}", file=source.name) from None
        yield path


class Database:
    """The tables and columns of an open database, and typed reads of them by column name
    (a column an older or newer schema lacks reads as its default: schema drift)."""

    def __init__(self, connection: sqlite3.Connection, name: str) -> None:
        self.connection = connection
        self.name = name
        try:
            tables = [row[0] for row in connection.execute(
                "select name from sqlite_master where type = 'table' order by name")]
            self.columns: dict[str, list[str]] = {
                table: [row[1] for row in connection.execute(
                    f"select * from pragma_table_info({_literal(table)})")]
                for table in tables}
        except sqlite3.DatabaseError as exc:
            raise InputError(f"cannot read the schema: {exc}", file=name) from None

    def has(self, table: str, *columns: str) -> bool:
        """Whether ``table`` exists with every one of ``columns``."""
        present = self.columns.get(table)
        return present is not None and all(c in present for c in columns)

    def count(self, table: str) -> int:
        """The number of rows of ``table`` (0 when it is missing)."""
        if table not in self.columns:
            return 0
        return int(self.query(f"select count(*) from {_ident(table)}", table)[0][0])

    def query(self, sql: str, where: str, parameters: Sequence[Any] = ()) -> list[Any]:
        """All rows of a (small) query; a damaged database raises :class:`InputError`
        located at ``where`` (the table)."""
        try:
            return self.connection.execute(sql, parameters).fetchall()
        except sqlite3.DatabaseError as exc:
            raise InputError(f"cannot read: {exc}", file=self.name, location=where) from None

    def iterate(self, sql: str, where: str) -> Iterator[Any]:
        """The rows of a query one by one (for text columns, which numpy cannot stream);
        a damaged database raises :class:`InputError` located at ``where``."""
        try:
            yield from self.connection.execute(sql)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"cannot read: {exc}", file=self.name, location=where) from None

    def expression(self, table: str, column: str, default: object) -> str:
        """``column`` of ``table`` with NULL read as ``default``, or ``default`` alone when
        the table has no such column.

        >>> db = Database(sqlite3.connect(":memory:"), "x"); db.columns = {"t": ["a"]}
        >>> db.expression("t", "a", 0), db.expression("t", "b", -1)
        ('coalesce("a", 0)', '-1')
        """
        value = _literal(default) if isinstance(default, str) else repr(default)
        if column == "rowid":   # (not a declared column; every nsys/rpd table has it)
            return "rowid"
        if column in self.columns.get(table, ()):
            return f"coalesce({_ident(column)}, {value})"
        return value

    def numeric_columns(self, table: str, columns: dict[str, tuple[str, object]],
                        where: str = "", order: str = "") -> dict[str, np.ndarray]:
        """Columns of ``table`` as numpy arrays, streamed from the cursor (no Python list of
        rows in between): ``{name: (dtype, default)}``, each read by its name with NULL
        (or a missing column) read as ``default``. ``where``/``order`` are SQL clauses.
        """
        dtype = np.dtype([(name, kind) for name, (kind, _) in columns.items()])
        select = ", ".join(self.expression(table, name, default)
                           for name, (_, default) in columns.items())
        sql = f"select {select} from {_ident(table)}"
        if where:
            sql += f" where {where}"
        if order:
            sql += f" order by {order}"
        try:
            rows = np.fromiter(self.connection.execute(sql), dtype=dtype)
        except sqlite3.DatabaseError as exc:
            raise InputError(f"cannot read: {exc}", file=self.name, location=table) from None
        except (OverflowError, TypeError, ValueError) as exc:   # text in a number column
            raise InputError(f"a value of the wrong type: {exc}", file=self.name,
                             location=table) from None
        return {name: np.ascontiguousarray(rows[name]) for name in columns}

    def texts(self, sql: str, where: str) -> dict[int, str]:
        """A small ``id -> text`` table (string tables, enums) as a dict; non-text values
        are rendered as text."""
        return {int(key): value if isinstance(value, str) else str(value)
                for key, value in self.query(sql, where) if isinstance(key, int)}


def _ident(name: str) -> str:
    """An SQL identifier, quoted.

    >>> _ident('end'), _ident('a"b')
    ('"end"', '"a""b"')
    """
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    """An SQL string literal.

    >>> _literal("it's")
    "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"
