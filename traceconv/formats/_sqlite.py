"""Reading profiler databases (Nsight Systems exports, rocmProfileData) in columns.

The database is opened by :mod:`traceconv.sqlite_access` (read-only, a log beside it
replayed, a step budget, computed columns not read). A gzipped input, standard input or a
special file is first decompressed into a private temporary file, bounded by the input size
limit (``--max-bytes``) as every other input is.

Rows go from the cursor into numpy columns (:func:`numeric_columns`) a batch at a time, into
columns made once for the table's count of rows: never a list of every row, nor a second
copy of the columns.
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
from ..sqlite_access import Guarded, log_beside, open_sqlite, with_log_replayed

_COPY_CHUNK = 1 << 20
# a numeric_columns kind: int64 when every cell fits, else the cells as the file states them
AS_STATED = "O"


@contextlib.contextmanager
def open_database(source: Source) -> Iterator[Database]:
    """The database of ``source``, read-only (decompressed to a temporary file first when
    it is gzipped, standard input or not a regular file; a write-ahead log or journal
    beside a plain file is replayed on a private copy); temporary files are removed after.

    A file that is not an SQLite database raises :class:`InputError` naming it; text
    values that are not UTF-8 are read replaced, counted as ``sqlite.invalid_utf8``, and
    rows with a number of the wrong type left out, counted as ``sqlite.malformed_row``
    (:meth:`Database.numeric_columns`).
    """
    with contextlib.ExitStack() as stack:
        # (a FIFO, a pipe or a device: SQLite would open it again and block or read part)
        if source.is_stdin or source.compressed or not os.path.isfile(source.path):
            path, log = stack.enter_context(_decompressed_copy(source)), None
        else:
            path, log = _with_log(source, stack)
        size = os.path.getsize(path) + (os.path.getsize(log) if log else 0)
        guarded = stack.enter_context(open_sqlite(path, source.name, input_bytes=size,
                                                  immutable=log is None))
        database = Database(guarded, source)
        yield database
        source.note("sqlite.invalid_utf8", count=len(guarded.invalid_texts),
                    example=guarded.first_invalid)
        source.note("sqlite.malformed_row", count=database.malformed_rows,
                    example=database.first_malformed)


def _with_log(source: Source, stack: contextlib.ExitStack) -> tuple[str, str | None]:
    """(the path to open for a plain file, the log SQLite replays there): a private copy
    with its log when one lies beside it (``sqlite.log_read``), else the file itself
    (``sqlite.log_ignored`` when the copy failed)."""
    log = log_beside(source.path)
    if log is None:
        return source.path, None
    try:
        copy = stack.enter_context(with_log_replayed(source.path, log, source.max_bytes,
                                                     source.name))
    except OSError as exc:
        source.note("sqlite.log_ignored", example=f"{os.path.basename(log)}: {exc.strerror}")
        return source.path, None
    source.note("sqlite.log_read", example=os.path.basename(log))
    return copy, copy + log[len(source.path):]


@contextlib.contextmanager
def _decompressed_copy(source: Source) -> Iterator[str]:
    """The decompressed content of ``source`` in a temporary file (removed afterwards); the
    source's own reader stops at its byte limit."""
    from ..output_files import scratch_file

    with scratch_file(".sqlite") as (path, out):
        with out, source.open() as stream:
            try:
                shutil.copyfileobj(stream, out, _COPY_CHUNK)
            except (OSError, EOFError) as exc:   # a damaged gzip (one cut short: cut_short)
                raise InputError(f"cannot read: {exc}", file=source.name) from None
        yield path


class Database:
    """The tables and columns of an open database, and typed reads of them by column name
    (a column an older or newer schema lacks reads as its default: schema drift)."""

    def __init__(self, guarded: Guarded, source: Source | None = None) -> None:
        self.connection = guarded.connection
        self.name = guarded.name
        self._guarded = guarded
        self.columns: dict[str, list[str]] = dict(guarded.tables)
        self.malformed_rows = 0   # rows numeric_columns left out (a cell of the wrong type)
        self.first_malformed: str | None = None
        if guarded.computed and source is not None:
            source.note("sqlite.generated_column_ignored", count=len(guarded.computed),
                        example=guarded.computed[0])

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
            raise self._guarded.error(exc, where) from None

    def iterate(self, sql: str, where: str) -> Iterator[Any]:
        """The rows of a query one by one (for text columns, which numpy cannot stream);
        a damaged database raises :class:`InputError` located at ``where``."""
        try:
            yield from self.connection.execute(sql)
        except sqlite3.DatabaseError as exc:
            raise self._guarded.error(exc, where) from None

    def expression(self, table: str, column: str, default: object) -> str:
        """``column`` of ``table`` with NULL read as ``default``, or ``default`` alone when
        the table has no such column.

        >>> from traceconv.sqlite_access import open_sqlite
        >>> with open_sqlite(":memory:", "x", input_bytes=0) as guarded:
        ...     db = Database(guarded); db.columns = {"t": ["a"]}
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
        """Columns of ``table`` as numpy arrays, fetched a batch of rows at a time:
        ``{name: (dtype, default)}``, each read by its name with NULL (or a missing column)
        read as ``default``. ``where``/``order`` are SQL clauses.
        A row with a value that is no number of its column's type (text, a blob, a number
        beyond 64 bits) is left out and counted (``malformed_rows``), not fatal. A column
        of kind :data:`AS_STATED` is never a reason to leave a row out: it reads as int64
        when every cell fits, else as the cells the file states (an object column, for the
        trace builder's rule on that quantity, such as a memory block's size).

        >>> from traceconv.sqlite_access import open_sqlite
        >>> with open_sqlite(":memory:", "x", input_bytes=0) as guarded:
        ...     _ = guarded.connection.executescript(
        ...         "create table t (a, b); insert into t values (1, 2.5), ('x', 3), (4, 1e300)")
        ...     db = Database(guarded); db.columns = {"t": ["a", "b"]}
        ...     rows = db.numeric_columns("t", {"a": ("i8", 0), "b": ("f8", 0.0)})
        ...     stated = db.numeric_columns("t", {"a": (AS_STATED, 0)})
        >>> rows["a"].tolist(), rows["b"].tolist(), db.malformed_rows, db.first_malformed
        ([1, 4], [2.5, 1e+300], 1, "t rowid 2, column a: 'x'")
        >>> stated["a"].tolist(), db.malformed_rows   # ('x' is the caller's to judge)
        ([1, 'x', 4], 1)
        """
        fast = np.dtype([(name, "i8" if kind == AS_STATED else kind)
                         for name, (kind, _) in columns.items()])
        dtype = np.dtype([(name, kind) for name, (kind, _) in columns.items()])
        select = ", ".join(self.expression(table, name, default)
                           for name, (_, default) in columns.items())
        clauses = (f" where {where}" if where else "") + (f" order by {order}" if order else "")
        source = f"from {_ident(table)}{clauses}"
        try:
            expected = self.query(f"select count(*) from {_ident(table)}"
                                  + (f" where {where}" if where else ""), table)[0][0]
            read = _ColumnsRead(fast, expected)
            try:
                for batch in _batches(self.connection.execute(f"select {select} {source}")):
                    read.extend(np.fromiter(batch, dtype=fast, count=len(batch)))
            except (OverflowError, TypeError, ValueError):   # text in a number column
                read = _ColumnsRead(dtype, expected)
                for batch in _batches(self.connection.execute(f"select rowid, {select} {source}")):
                    read.extend(self._well_typed_rows(batch, table, dtype))
        except sqlite3.DatabaseError as exc:
            raise self._guarded.error(exc, table) from None
        return read.columns()

    def _well_typed_rows(self, rows: list[Any], table: str, dtype: np.dtype) -> np.ndarray:
        """The ``rows`` (rowid first) that convert to ``dtype``, one at a time (the slow path,
        taken only when a row does not), the others counted."""
        kept = []
        for rowid, *values in rows:
            try:
                kept.append(np.array(tuple(values), dtype=dtype))
            except (OverflowError, TypeError, ValueError):
                self.malformed_rows += 1
                if self.first_malformed is None:
                    self.first_malformed = _first_misfit(table, rowid, values, dtype)
        return np.array(kept, dtype=dtype)

    def texts(self, sql: str, where: str) -> dict[int, str]:
        """A small ``id -> text`` table (string tables, enums) as a dict; non-text values
        are rendered as text."""
        return {int(key): value if isinstance(value, str) else str(value)
                for key, value in self.query(sql, where) if isinstance(key, int)}

    def named_texts(self, table: str, id_column: str, text_column: str,
                    references: Sequence[tuple[str, str, int]]) -> dict[int, str]:
        """:meth:`texts` of the rows of a string table whose id some row names: in one of
        ``references`` (table, column, what NULL reads as there, as the reader reads it;
        a column the database lacks reads as that). Memory follows the strings the trace
        uses, not the table's size (SQLite picks the rows by id: none is read to be thrown
        away); a named id the table lacks is simply not there.

        >>> from traceconv.sqlite_access import open_sqlite
        >>> with open_sqlite(":memory:", "x", input_bytes=0) as guarded:
        ...     _ = guarded.connection.executescript(
        ...         "create table s (id integer primary key, string);"
        ...         "insert into s values (0, 'null'), (1, 'a'), (2, 'b'), (3, 4.5);"
        ...         "create table t (name_id); insert into t values (3), (null), (9)")
        ...     db = Database(guarded); db.columns = {"s": ["id", "string"], "t": ["name_id"]}
        ...     named = db.named_texts("s", "id", "string", [("t", "name_id", 0), ("t", "x", 2)])
        >>> named
        {0: 'null', 2: 'b', 3: '4.5'}
        """
        named = " union ".join(f"select {self.expression(t, c, default)} from {_ident(t)}"
                               for t, c, default in references if t in self.columns)
        if not named:
            return {}
        key = _ident(id_column)
        return self.texts(f"select {key}, {_ident(text_column)} from {_ident(table)} "
                          f"where {key} in ({named})", table)


# rows fetched from a cursor at once: bounds the Python rows held beside the columns
_FETCH = 16384


def _batches(cursor: sqlite3.Cursor) -> Iterator[list[Any]]:
    """The rows of ``cursor`` a batch at a time."""
    while batch := cursor.fetchmany(_FETCH):
        yield batch


class _ColumnsRead:
    """Numpy columns filled a batch of rows at a time: room for the ``expected`` rows (the
    table's count) made once, grown by doubling should more come, cut to the rows read.

    >>> read = _ColumnsRead(np.dtype([("a", "i8"), ("b", "f8")]), expected=1)
    >>> for batch in ([(1, 2.5)], [(3, 0.5), (4, 1.0)]):
    ...     read.extend(np.array(batch, dtype=read.dtype))
    >>> {name: column.tolist() for name, column in read.columns().items()}
    {'a': [1, 3, 4], 'b': [2.5, 0.5, 1.0]}
    """

    def __init__(self, dtype: np.dtype, expected: int) -> None:
        self.dtype = dtype
        self._columns = {name: np.empty(expected, dtype.fields[name][0])  # type: ignore[index]
                         for name in dtype.names or ()}
        self._count = 0

    def extend(self, rows: np.ndarray) -> None:
        """Add ``rows`` (a structured array of ``dtype``)."""
        end = self._count + len(rows)
        for name, column in self._columns.items():
            if end > len(column):
                column = self._columns[name] = np.resize(column, max(end, 2 * len(column)))
            column[self._count:end] = rows[name]
        self._count = end

    def columns(self) -> dict[str, np.ndarray]:
        """The columns of the rows added, each its own contiguous array."""
        return {name: column if len(column) == self._count else column[:self._count].copy()
                for name, column in self._columns.items()}


def _first_misfit(table: str, rowid: int, values: list[Any], dtype: np.dtype) -> str:
    """Where a row fails to convert: its table, rowid and first column that does not fit."""
    for name, value in zip(dtype.names or (), values, strict=True):
        try:
            np.array(value, dtype=dtype.fields[name][0])  # type: ignore[index]
        except (OverflowError, TypeError, ValueError):
            return f"{table} rowid {rowid}, column {name}: {value!r:.60}"
    return f"{table} rowid {rowid}"


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
