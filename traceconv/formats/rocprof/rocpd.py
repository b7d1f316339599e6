"""rocprofv3's ``rocpd`` SQLite database (``*_results.db``, the default output since ROCm 7),
schema version 3 as ROCm/rocprofiler-sdk publishes it: its dispatches, API regions, memory
copies, allocations and PMC values put into the same tables as the CSV files (:mod:`.v3`),
so they read the same way (flows by correlation id included).

Table names end with the run's uuid (``rocpd_region_<uuid>``); a database merged from
several processes holds one set per uuid, each read. Its plain-named views are not read
(the input layer never runs a view).

=============================  =======================================================
table                          becomes
=============================  =======================================================
``rocpd_kernel_dispatch``      a dispatch (agent by ``logical_index``, queue id, name
                               from ``rocpd_info_kernel_symbol``)
``rocpd_info_agent``           product and name as labels of the device's process
``rocpd_region``               a call on its thread (name and category from
                               ``rocpd_string`` through ``rocpd_event``)
``rocpd_memory_copy``          a copy (its name, e.g. ``MEMORY_COPY_HOST_TO_DEVICE``)
``rocpd_pmc_event``            counter values (named by ``rocpd_info_pmc``) as args of
                               the dispatch of the same event
``rocpd_memory_allocate``      memory blocks (``ALLOC`` paired with the next ``FREE`` of
                               its level and address, scratch memory: of its queue),
                               live-bytes counters (:mod:`.allocations`)
``rocpd_sample``, ``rocpd_arg``  counted (``rocprof.table_not_read``)
queues, streams ...
=============================  =======================================================
"""

from __future__ import annotations

import re

from ...errors import InputError
from ...io import Source
from .._sqlite import Database, open_database
from ..csv_rows import CellColumns
from .allocations import COLUMNS as ALLOCATION_COLUMNS
from .csv_table import Table
from .v3 import AGENT_COLUMNS, Part

SCHEMA_VERSION = 3
# a table kind, then the run's uuid (hex digits in groups joined by "_")
_NAME = re.compile(r"(rocpd_[a-z_]+?)(_[0-9a-fA-F][0-9a-fA-F_-]{7,})?$")
_READ = {"rocpd_kernel_dispatch", "rocpd_region", "rocpd_memory_copy", "rocpd_string",
         "rocpd_info_agent", "rocpd_info_kernel_symbol", "rocpd_info_thread",
         "rocpd_info_process", "rocpd_event", "rocpd_metadata", "rocpd_pmc_event",
         "rocpd_info_pmc", "rocpd_memory_allocate"}


class Query:
    """How one kind of record is read: the CSV layout's columns, the run's table, and the
    expressions (in that order) over it and the tables it joins ``(kind, alias, on)``."""

    def __init__(self, columns: tuple[str, ...], table: str, alias: str, select: str,
                 joins: tuple[tuple[str, str, str], ...], timed: bool = True) -> None:
        self.columns, self.table, self.alias, self.select, self.joins = (
            columns, table, alias, select, joins)
        self.timed = timed   # the table has its own start and end

    def sql(self, tables: dict[str, str]) -> str:
        """The query over the run's ``tables``.

        >>> query = Query(("Function",), "rocpd_region", "r", "n.string",
        ...               (("rocpd_string", "n", "n.id = r.name_id"),))
        >>> query.sql({"rocpd_region": "rocpd_region_ab12", "rocpd_string": "rocpd_string_ab12"})
        'select n.string from "rocpd_region_ab12" r left join "rocpd_string_ab12" n on n.id = r.name_id order by r.id'
        """
        sql = f"select {self.select} from {_quoted(tables[self.table])} {self.alias}"
        for kind, alias, on in self.joins:
            sql += f" left join {_quoted(tables[kind])} {alias} on {on}"
        return f"{sql} order by {self.alias}.id"


QUERIES = {
    "v3-kernels": Query(
        ("Agent_Id", "Queue_Id", "Kernel_Name", "Start_Timestamp", "End_Timestamp",
         "Correlation_Id", "Dispatch_Id", "Kernel_Id", "Thread_Id", "Stream_Id",
         "Private_Segment_Size", "Group_Segment_Size", "Workgroup_Size_X", "Workgroup_Size_Y",
         "Workgroup_Size_Z", "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"),
        "rocpd_kernel_dispatch", "k",
        'a.logical_index, k.queue_id, coalesce(s.display_name, s.kernel_name), k.start, k."end", '
        "e.correlation_id, k.dispatch_id, k.kernel_id, th.tid, k.stream_id, "
        "k.private_segment_size, k.group_segment_size, k.workgroup_size_x, k.workgroup_size_y, "
        "k.workgroup_size_z, k.grid_size_x, k.grid_size_y, k.grid_size_z",
        (("rocpd_info_agent", "a", "a.id = k.agent_id"),
         ("rocpd_info_kernel_symbol", "s", "s.id = k.kernel_id"),
         ("rocpd_event", "e", "e.id = k.event_id"),
         ("rocpd_info_thread", "th", "th.id = k.tid"))),
    "v3-api": Query(
        ("Domain", "Function", "Thread_Id", "Start_Timestamp", "End_Timestamp", "Process_Id",
         "Correlation_Id"),
        "rocpd_region", "r", 'c.string, n.string, th.tid, r.start, r."end", p.pid, e.correlation_id',
        (("rocpd_string", "n", "n.id = r.name_id"),
         ("rocpd_event", "e", "e.id = r.event_id"),
         ("rocpd_string", "c", "c.id = e.category_id"),
         ("rocpd_info_thread", "th", "th.id = r.tid"),
         ("rocpd_info_process", "p", "p.id = r.pid"))),
    "v3-copies": Query(
        ("Direction", "Source_Agent_Id", "Destination_Agent_Id", "Start_Timestamp",
         "End_Timestamp", "Correlation_Id", "Size"),
        "rocpd_memory_copy", "m",
        'n.string, sa.logical_index, da.logical_index, m.start, m."end", e.correlation_id, m.size',
        (("rocpd_string", "n", "n.id = m.name_id"),
         ("rocpd_info_agent", "sa", "sa.id = m.src_agent_id"),
         ("rocpd_info_agent", "da", "da.id = m.dst_agent_id"),
         ("rocpd_event", "e", "e.id = m.event_id"))),
    "v3-allocations": Query(
        ALLOCATION_COLUMNS, "rocpd_memory_allocate", "ma",
        'ma.type, a.logical_index, ma.address, ma.size, ma.level, ma.queue_id, ma.start, '
        'ma."end"',
        (("rocpd_info_agent", "a", "a.id = ma.agent_id"),)),
    "v3-agents": Query(AGENT_COLUMNS, "rocpd_info_agent", "a",
                       "a.logical_index, a.name, a.product_name", (), timed=False),
    "v3-counters": Query(
        ("Dispatch_Id", "Agent_Id", "Kernel_Name", "Counter_Name", "Counter_Value"),
        "rocpd_pmc_event", "pe",
        "k.dispatch_id, a.logical_index, coalesce(s.display_name, s.kernel_name), c.name, "
        "pe.value",
        (("rocpd_kernel_dispatch", "k", "k.event_id = pe.event_id"),
         ("rocpd_info_agent", "a", "a.id = k.agent_id"),
         ("rocpd_info_kernel_symbol", "s", "s.id = k.kernel_id"),
         ("rocpd_info_pmc", "c", "c.id = pe.pmc_id")), timed=False),
}


def tables_by_run(names: list[str]) -> dict[str, dict[str, str]]:
    """``{uuid suffix: {table kind: table name}}`` of a rocpd database's tables.

    >>> tables_by_run(["rocpd_info_agent_0a1b2c3d_7e", "rocpd_region_0a1b2c3d_7e", "other"])
    {'_0a1b2c3d_7e': {'rocpd_info_agent': 'rocpd_info_agent_0a1b2c3d_7e', 'rocpd_region': 'rocpd_region_0a1b2c3d_7e'}}
    """
    runs: dict[str, dict[str, str]] = {}
    for name in names:
        match = _NAME.match(name)
        if match:
            runs.setdefault(match.group(2) or "", {})[match.group(1)] = name
    return runs


def load_parts(source: Source) -> tuple[list[Part], dict[str, int]]:
    """The dispatch, region and copy tables of every run, in the CSV layout; ``{table:
    rows}`` of the tables not read."""
    with open_database(source) as db:
        parts: list[Part] = []
        for tables in tables_by_run(list(db.columns)).values():
            _check_version(db, tables)
            parts += _parts(db, tables, source.name)
        skipped = {table: db.count(table) for table in db.columns
                   if not table.startswith("sqlite_")   # (SQLite's own bookkeeping)
                   and ((match := _NAME.match(table)) is None or match.group(1) not in _READ)}
    return parts, {table: rows for table, rows in skipped.items() if rows}


def _check_version(db: Database, tables: dict[str, str]) -> None:
    metadata = tables.get("rocpd_metadata")
    if metadata is None or not db.has(metadata, "tag", "value"):
        return
    rows = db.query(f'select "value" from "{metadata}" where "tag" = \'schema_version\'', metadata)
    version = str(rows[0][0]) if rows else ""
    if version.isdecimal() and int(version) > SCHEMA_VERSION:
        raise InputError(f"rocpd schema version {version}; this reader knows version "
                         f"{SCHEMA_VERSION}", file=db.name, location=metadata)


def _parts(db: Database, tables: dict[str, str], file: str) -> list[Part]:
    parts = []
    for kind, query in QUERIES.items():
        if query.table not in tables:
            continue
        name = tables[query.table]
        if query.timed and not db.has(name, "start", "end"):
            raise InputError("a rocpd layout with times in rocpd_timestamp (before ROCm 7), "
                             "not read", file=file, location=name)
        missing = [j for j, _, _ in query.joins if j not in tables]
        if missing:
            raise InputError(f"no {missing[0]} table beside it", file=file, location=name)
        rows = CellColumns(len(query.columns))   # (packed as a CSV's rows are)
        for row in db.iterate(query.sql(tables), name):
            rows.append([str(v) if v is not None else "" for v in row])
        if rows:
            parts.append(Part(kind, Table(file, list(query.columns), rows)))
    return parts


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'
