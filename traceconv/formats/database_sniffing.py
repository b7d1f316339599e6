"""How the profiler databases and nsys reports are recognised from their first bytes,
without importing their readers (numpy, pydantic): the registry's ``sniffer`` column names
these functions. Each takes ``(head, source)`` and returns how sure it is, 0 to 1.

An nsys export or an rpd trace is an SQLite file whose first pages hold the schema, so its
table names are in the head; when they are not (a very large schema), a plain file is
opened read-only to list its tables.

>>> nsys(b"SQLite format 3\\x00...CREATE TABLE StringIds ... TARGET_INFO_GPU", None)
0.95
>>> rpd(b"SQLite format 3\\x00...CREATE TABLE rocpd_op ... rocpd_api", None)
0.95
>>> nsys(b"SQLite format 3\\x00...CREATE TABLE rocpd_op", None), rpd(b'{"a": 1}', None)
(0.0, 0.0)
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..io import Source

SQLITE_MAGIC = b"SQLite format 3\x00"
XZ_MAGIC = b"\xfd7zXZ\x00"
_NSYS_MARKERS = (b"CUPTI_ACTIVITY_KIND_", b"NVTX_EVENTS", b"TARGET_INFO_SESSION_START_TIME")


def is_sqlite(head: bytes) -> bool:
    """Whether ``head`` begins like an SQLite 3 database.

    >>> is_sqlite(b"SQLite format 3\\x00\\x10\\x00"), is_sqlite(b'{"traceEvents": []}')
    (True, False)
    """
    return head.startswith(SQLITE_MAGIC)


def table_names(source: Source) -> set[str]:
    """The tables of a database file (empty when it cannot be opened; one cut short is
    refused, whatever reader or sniffer asked). Only plain files are opened (a gzipped one
    would need a copy: its head decides alone)."""
    if source.is_stdin or source.compressed or not os.path.isfile(source.path):
        return set()
    from ..sqlite_access import table_names as tables_of_file

    return tables_of_file(source.path)


def nsys(head: bytes, source: Source | None) -> float:
    """An SQLite database with Nsight Systems' tables."""
    if not is_sqlite(head):
        return 0.0
    if any(m in head for m in _NSYS_MARKERS) or (b"StringIds" in head and b"TARGET_INFO_" in head):
        return 0.95
    if source is not None:
        tables = table_names(source)
        if "StringIds" in tables and any(t.startswith(("CUPTI_", "TARGET_INFO_", "NVTX_"))
                                         for t in tables):
            return 0.9
    return 0.0


def rpd(head: bytes, source: Source | None) -> float:
    """An SQLite database with the ``rocpd_op`` and ``rocpd_api`` tables."""
    if not is_sqlite(head):
        return 0.0
    if b"rocpd_op" in head and b"rocpd_api" in head:
        return 0.95
    if source is not None and {"rocpd_op", "rocpd_api"} <= table_names(source):
        return 0.9
    return 0.0


# What the schema of an SQLite head names (module patterns: the regex census tries them)
_KERN_TABLE = re.compile(rb'CREATE TABLE "?KERN"? \(')
_ROCPD_TABLES = re.compile(rb"rocpd_(kernel_dispatch|region|memory_copy|info_agent)")


def rocprof_v1_database(head: bytes, source: Source | None) -> float:
    """An SQLite database with rocprof v1's ``KERN`` table (``results.db``).

    >>> rocprof_v1_database(b'SQLite format 3\\x00...CREATE TABLE KERN ("Index" INTEGER', None)
    0.95
    """
    return _tables_say(head, source, _KERN_TABLE, lambda t: t == "KERN")


def rocpd(head: bytes, source: Source | None) -> float:
    """An SQLite database with rocprofv3's ``rocpd_kernel_dispatch``/``rocpd_region`` tables
    (their names end with a uuid); not rocmProfileData's ``rocpd_op``/``rocpd_api``.

    >>> rocpd(b'SQLite format 3\\x00...CREATE TABLE `rocpd_region_0a1b2c3d` (', None)
    0.95
    """
    return _tables_say(head, source, _ROCPD_TABLES,
                       lambda t: t.startswith(("rocpd_kernel_dispatch", "rocpd_region")))


def _tables_say(head: bytes, source: Source | None, in_head: re.Pattern[bytes],
                table: Callable[[str], bool]) -> float:
    """0.95 when ``in_head`` (a pattern) is in an SQLite head, 0.9 when the file has a table
    that ``table`` accepts, else 0."""
    if not is_sqlite(head):
        return 0.0
    if in_head.search(head):
        return 0.95
    if source is not None and any(table(t) for t in table_names(source)):
        return 0.9
    return 0.0


def nsys_stats(head: bytes, source: Source | None) -> float:
    """A CSV (plain or xz) of ``nsys stats``: the ``nvtx_pushpop_trace`` report or a summary
    report (:mod:`.nsys_stats_header`).

    >>> nsys_stats(b"Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,"
    ...            b"PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree\\n", None)
    0.95
    >>> nsys_stats(b"Kernel_Name,Start_Timestamp\\n", None)
    0.0
    """
    if head.startswith(XZ_MAGIC):
        import lzma

        try:
            head = lzma.LZMADecompressor().decompress(head, max_length=4096)
        except lzma.LZMAError:
            return 0.0
    # (imported only when a .csv is told apart)
    from .nsys_stats_header import sniff_text

    return sniff_text(head)
