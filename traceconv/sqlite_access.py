"""The one way traceconv opens an SQLite database (nsys exports, rpd traces, sniffing):
read-only, safe for a hostile file, and bounded by the input's size.

- **Read-only and immutable** (``file:...?mode=ro&immutable=1``): nothing is written beside
  the input, and a database another program holds open is still read.
- **A write-ahead log or a rollback journal beside it** (``x.sqlite-wal``,
  ``x.sqlite-journal``) holds rows the main file lacks (a profiler killed before its
  checkpoint: 2,046 of 2,048 kernels only in the ``-wal``). An immutable open ignores it,
  so the database and its log are copied into a private folder and opened there, where
  SQLite replays the log; when they cannot be copied the file is read without the log and
  ``sqlite.log_ignored`` says so.
- **Bounded work**: a file states its own schema, and a view, a generated column or a
  recursive expression can make a 100 KB file compute for hours or build gigabytes. Each
  connection gets a step budget proportional to the input's bytes (the progress handler;
  past it the read stops with one line), a longest string or blob no larger than the input
  (``SQLITE_LIMIT_LENGTH``), and SQLite's heap a hard limit while it is open. Virtual
  generated columns are not read at all (:func:`computed_columns`; they read as missing,
  counted as ``sqlite.generated_column_ignored``).
- **A file cut short** (a copy or download that stopped early) is refused before it is
  opened (:func:`refuse_cut`): SQLite reads the pages it finds, and a query of a missing one
  says "malformed", or nothing at all where the cut took pages no query reads first (a
  smaller trace). The header states the page size and, where its version numbers agree,
  the pages the database holds.
- **Text that is not UTF-8** (one damaged name in a string table) is read with the bytes
  it cannot decode shown as U+FFFD, each such text counted once (``sqlite.invalid_utf8``),
  instead of one undecodable value refusing the whole file.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from urllib.parse import quote

from .errors import InputError

# VM steps a database may take per byte of input (database and log together), and at
# least: the bundled nsys and rpd samples take under 1 per byte, all readers' queries
# included, so real files have a wide margin and a computing schema stops in seconds.
STEPS_PER_BYTE = 200
STEPS_AT_LEAST = 50_000_000
_STEPS_PER_CALL = 10_000   # how often SQLite calls the progress handler
# SQLite's own heap while a database is open (its page cache, sorts, computed values)
HEAP_AT_LEAST = 256 << 20
HEAP_PER_BYTE = 4
LENGTH_AT_LEAST = 1 << 20   # the longest string or blob, at least (the input's size else)
LOGS = ("-wal", "-journal")
SQLITE_MAGIC = b"SQLite format 3\x00"
HEADER_BYTES = 100   # the database header, at the start of its first page
_LIMIT_LENGTH = 0   # sqlite3.SQLITE_LIMIT_LENGTH (named in Python 3.11 on)
_COPY_CHUNK = 1 << 20


def readonly_uri(path: str, immutable: bool = True) -> str:
    """The read-only URI of ``path`` (``?``, ``#`` and ``%`` in names quoted).

    >>> readonly_uri("/tmp/a b?.sqlite")
    'file:/tmp/a%20b%3F.sqlite?mode=ro&immutable=1'
    """
    return f"file:{quote(os.path.abspath(path))}?mode=ro" + ("&immutable=1" if immutable else "")


class StepBudget:
    """VM steps left to one connection (the progress handler stops SQLite past them).

    >>> budget = StepBudget(input_bytes=0); budget.limit == STEPS_AT_LEAST
    True
    """

    def __init__(self, input_bytes: int) -> None:
        self.limit = max(STEPS_AT_LEAST, STEPS_PER_BYTE * input_bytes)
        self.calls_left = self.limit // _STEPS_PER_CALL
        self.spent = False

    def __call__(self) -> int:
        self.calls_left -= 1
        if self.calls_left < 0:
            self.spent = True
            return 1   # SQLite stops the statement: OperationalError "interrupted"
        return 0


class Guarded:
    """An open connection with its step budget and its tables; :meth:`error` words a
    failure of it. ``tables`` maps each table to the columns that are read; ``computed``
    lists the ``table.column`` that are not (virtual generated columns: they read as NULL,
    whatever query names them), and a query that reads through a view is refused.

    >>> with open_sqlite(":memory:", "m.sqlite", input_bytes=0) as db:
    ...     db.connection.execute("select 1").fetchone()
    (1,)
    """

    def __init__(self, connection: sqlite3.Connection, name: str, budget: StepBudget) -> None:
        self.connection, self.name, self.budget = connection, name, budget
        self.tables: dict[str, list[str]] = {}
        self.computed: list[str] = []
        self._skipped: set[tuple[str, str]] = set()
        self.view: str | None = None   # the view a refused query read through
        self.invalid_texts: set[bytes] = set()   # texts that were not UTF-8, each once
        self.first_invalid: str | None = None

    def decode(self, data: bytes) -> str:
        """A text value of the database (SQLite's ``text_factory``), its bytes that are
        not UTF-8 replaced by U+FFFD; each such text counted once, however many rows a
        query reads it in (a name joined to every call of it).

        >>> with open_sqlite(":memory:", "m.sqlite", input_bytes=0) as db:
        ...     db.connection.execute("select 'ok', cast(x'61ff' as text)").fetchone()
        ...     db.connection.execute("select cast(x'61ff' as text)").fetchone()
        ...     len(db.invalid_texts), db.first_invalid
        ('ok', 'a\ufffd')
        ('a\ufffd',)
        (1, 'a\ufffd')
        """
        try:
            return data.decode()
        except UnicodeDecodeError:
            text = data.decode("utf-8", "replace")
            self.invalid_texts.add(data)
            self.first_invalid = self.first_invalid or text[:80]
            return text

    def scan(self) -> None:
        """List the tables and columns, then let no query compute a column or a view."""
        names = [row[0] for row in self.connection.execute(
            "select name from sqlite_master where type = 'table' order by name")]
        for table in names:
            self.tables[table], skipped = computed_columns(self.connection, table)
            self.computed += [f"{table}.{column}" for column in skipped]
            self._skipped.update((table, column) for column in skipped)
        self.connection.set_authorizer(self._authorize)

    def _authorize(self, action: int, table: str | None, column: str | None,
                   database: str | None, inner: str | None) -> int:
        if action != sqlite3.SQLITE_READ:
            return sqlite3.SQLITE_OK
        if inner is not None:   # read on behalf of a view (or a trigger): a query the file wrote
            self.view = inner
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_IGNORE if (table, column) in self._skipped else sqlite3.SQLITE_OK

    def error(self, exc: Exception, where: str | None = None) -> InputError:
        """The one line for ``exc`` (an ``sqlite3.Error``) met reading ``where``."""
        if self.view is not None:
            return InputError(f"refused: {self.view!r} is a view, a query the file itself "
                              "defines, where a table was expected", file=self.name,
                              location=where)
        if self.budget.spent:
            return InputError(f"the database asks for more than {self.budget.limit:,} steps of "
                              f"work ({STEPS_PER_BYTE:,} per input byte): refused (a view, a "
                              "generated column or a recursive expression in its schema?)",
                              file=self.name, location=where)
        if isinstance(exc, sqlite3.DataError) or "too big" in str(exc):
            return InputError(f"cannot read: {exc} (a value longer than the whole input: "
                              "computed by its schema)", file=self.name, location=where)
        return InputError(f"cannot read: {exc}", file=self.name, location=where)


@contextlib.contextmanager
def open_sqlite(path: str, name: str, *, input_bytes: int,
                immutable: bool = True) -> Iterator[Guarded]:
    """``path`` opened read-only with every bound of this module (``name``: the input as
    the user named it, for errors). A file that is not an SQLite database raises
    :class:`InputError` naming it, and so does one cut short (:func:`refuse_cut`)."""
    if path != ":memory:":
        refuse_cut(path, name)
    try:
        connection = sqlite3.connect(readonly_uri(path, immutable) if path != ":memory:"
                                     else path, uri=True, check_same_thread=False)
    except sqlite3.Error as exc:
        raise InputError(f"cannot open as SQLite: {exc}", file=name) from None
    budget = StepBudget(input_bytes)
    heap = _set_heap_limit(max(HEAP_AT_LEAST, HEAP_PER_BYTE * input_bytes))
    try:
        connection.set_progress_handler(budget, _STEPS_PER_CALL)
        setlimit = getattr(connection, "setlimit", None)   # (Python 3.11 on; the heap
        if setlimit is not None:                            # limit bounds 3.10's values)
            setlimit(_LIMIT_LENGTH, max(LENGTH_AT_LEAST, input_bytes))
        guarded = Guarded(connection, name, budget)
        try:
            guarded.scan()
        except UnicodeDecodeError:   # a damaged schema text
            raise InputError("not an SQLite database: its schema is not UTF-8 text",
                             file=name) from None
        except sqlite3.DatabaseError as exc:
            if budget.spent:
                raise guarded.error(exc) from None
            raise InputError(f"not an SQLite database: {exc}", file=name) from None
        connection.text_factory = guarded.decode   # (the schema's names stay strict: above)
        yield guarded
    finally:
        connection.close()
        _set_heap_limit(heap)


def refuse_cut(path: str, name: str) -> None:
    """Refuse the database file at ``path`` (``name``: the input as the user named it) when
    it holds fewer bytes than its header states: fewer than the 100 of the header itself,
    or fewer than its page size (bytes 16-17, 1 standing for 65,536) times its pages
    (bytes 28-31; valid where the version-valid-for number at 92-95 equals the change
    counter at 24-27, as every SQLite since 3.7.0 writes it; else a partial last page is
    the cut). A file whose first bytes are no SQLite header's is left to SQLite to refuse,
    and so is an empty one (SQLite's empty database: nothing is read from it). A
    write-ahead log or journal beside it may hold the pages the file lacks, or a size it
    no longer has: such a file is not judged.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.sqlite")
    >>> with contextlib.closing(sqlite3.connect(path)) as db:
    ...     db.executescript("pragma page_size = 4096; create table t (a)")  # doctest: +ELLIPSIS
    <sqlite3.Cursor ...>
    >>> os.truncate(path, os.path.getsize(path) - 1)
    >>> refuse_cut(path, "t.sqlite")
    Traceback (most recent call last):
    traceconv.errors.InputError: t.sqlite: the SQLite database is cut short: it holds 8,191 bytes where its header states 2 pages of 4,096 bytes (8,192 bytes) (a partial copy or download?)
    """
    if path == ":memory:" or any(os.path.exists(path + suffix) for suffix in LOGS):
        return
    size = os.path.getsize(path)
    with open(path, "rb") as file:
        header = file.read(HEADER_BYTES)
    if not _begins_sqlite(header):
        return   # (no database, or an empty one: SQLite says which)
    if len(header) < HEADER_BYTES:
        raise _cut(name, f"it holds {size:,} bytes, fewer than the {HEADER_BYTES} of an "
                   "SQLite header")
    page_size = _page_size(header)
    if page_size is None:
        raise InputError("not an SQLite database: its header states a page size of "
                         f"{int.from_bytes(header[16:18], 'big'):,} bytes", file=name)
    pages = int.from_bytes(header[28:32], "big")
    if pages and header[24:28] == header[92:96]:
        if size < pages * page_size:
            raise _cut(name, f"it holds {size:,} bytes where its header states {pages:,} "
                       f"pages of {page_size:,} bytes ({pages * page_size:,} bytes)")
    elif size % page_size:
        raise _cut(name, f"it holds {size:,} bytes, not a whole number of its "
                   f"{page_size:,}-byte pages")


def _begins_sqlite(header: bytes) -> bool:
    """Whether ``header`` begins as an SQLite file does: its 16 bytes ``SQLite format 3``
    and a NUL, or as many of them as the file holds (not none).

    >>> _begins_sqlite(b"SQLite f"), _begins_sqlite(b"Time,Name"), _begins_sqlite(b"")
    (True, False, False)
    """
    start = header[:len(SQLITE_MAGIC)]
    return bool(start) and SQLITE_MAGIC.startswith(start)


def _page_size(header: bytes) -> int | None:
    """The page size an SQLite header states (a power of two from 512 to 65,536, the
    last written 1), or None where it states no such size.

    >>> _page_size(bytes(16) + b"\\x10\\x00"), _page_size(bytes(16) + b"\\x00\\x01")
    (4096, 65536)
    >>> _page_size(bytes(16) + b"\\x03\\x00") is None
    True
    """
    stated = int.from_bytes(header[16:18], "big")
    size = 65536 if stated == 1 else stated
    return size if 512 <= size <= 65536 and size & (size - 1) == 0 else None


def _cut(name: str, what: str) -> InputError:
    """The one line for a database file cut short, ``what`` saying by how much."""
    return InputError(f"the SQLite database is cut short: {what} (a partial copy or "
                      "download?)", file=name)


def _set_heap_limit(limit: int) -> int:
    """Set SQLite's hard heap limit (for the process; 0: none), returning the one before."""
    with contextlib.closing(sqlite3.connect(":memory:")) as probe:
        before = int(probe.execute("pragma hard_heap_limit").fetchone()[0])
        probe.execute(f"pragma hard_heap_limit = {int(limit)}")
    return before


def log_beside(path: str) -> str | None:
    """The non-empty write-ahead log or rollback journal beside ``path``, if any.

    >>> log_beside("no/such.sqlite") is None
    True
    """
    for suffix in LOGS:
        try:
            if os.path.getsize(path + suffix) > 0:
                return path + suffix
        except OSError:
            continue
    return None


@contextlib.contextmanager
def with_log_replayed(path: str, log: str, limit: int, name: str) -> Iterator[str]:
    """``path`` and its ``log`` copied into a private folder (at most ``limit`` bytes
    together), for SQLite to replay the log there; the folder is removed after."""
    if os.path.getsize(path) + os.path.getsize(log) > limit:
        from .io import too_large

        raise too_large(name, limit)
    from .output_files import scratch_folder

    with scratch_folder() as scratch:
        copy = scratch.copy(path, "db.sqlite", _COPY_CHUNK)
        scratch.copy(log, "db.sqlite" + log[len(path):], _COPY_CHUNK)
        yield copy


def computed_columns(connection: sqlite3.Connection, table: str) -> tuple[list[str], list[str]]:
    """(the columns of ``table`` that are read, the virtual generated ones that are not):
    ``table_xinfo``'s ``hidden`` is 2 for a column computed at every read, 1 for a hidden
    column of a virtual table; 3 (stored generated) holds bytes of the file like any other.

    >>> c = sqlite3.connect(":memory:")
    >>> _ = c.execute("create table t (a, b as (a * 2), c as (a + 1) stored)")
    >>> computed_columns(c, "t")
    (['a', 'c'], ['b'])
    """
    quoted = "'" + table.replace("'", "''") + "'"
    read: list[str] = []
    skipped: list[str] = []
    for row in connection.execute(f"select name, hidden from pragma_table_xinfo({quoted})"):
        (skipped if row[1] in (1, 2) else read).append(row[0])
    return read, skipped


def table_names(path: str) -> set[str]:
    """The tables of the database file at ``path`` (empty when it cannot be opened), for
    sniffing: opened as every database is, with a small budget. A file cut short raises
    :class:`InputError` (:func:`refuse_cut`): its schema may be what the cut took, and
    detection would then name no format, or a reader its tables "none"."""
    refuse_cut(path, path)
    try:
        with open_sqlite(path, path, input_bytes=0) as db:
            return {row[0] for row in db.connection.execute(
                "select name from sqlite_master where type = 'table'")}
    except (InputError, sqlite3.Error, UnicodeDecodeError):
        return set()
