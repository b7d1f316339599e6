"""Nsight Systems SQLite exports (``nsys export --type sqlite``, schema 2.9 to 3.25).

Each OS process is a process with its threads as tracks (CUDA API calls, NVTX ranges and
marks, OS runtime calls, profiler overhead); each GPU is a device process with a track per
CUDA stream (kernels, copies, memsets, synchronisations). API calls link to the GPU work
they enqueued by CUPTI correlation id (flows). Tables are read by column name, so a column
that a schema version lacks reads as a default; every table that is not read is counted in
the diagnostics with its rows. See ``docs/nsys.md``.

An export is recognised by its content (SQLite with nsys's tables), whatever its name:

>>> sniff(b"SQLite format 3\\x00...CREATE TABLE StringIds ... TARGET_INFO_GPU", None)
0.95
>>> sniff(b"SQLite format 3\\x00...CREATE TABLE rocpd_op", None)
0.0
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, get_args

import numpy as np

from ...io import Source
from ...model import DeviceInfo, Metadata, Trace
from ...model.builder import TraceBuilder
from .. import database_sniffing
from .._sqlite import Database, open_database
from . import cuda, host, nvtx
from .context import Context
from .flows import link_by_correlation
from .memory import read_memory
from .places import Places

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .schema import NsysExport

_NAMING_TABLES = {"StringIds", "ThreadNames", "PROCESSES", "TARGET_INFO_GPU",
                  "TARGET_INFO_CUDA_STREAM", "META_DATA_EXPORT", "EXPORT_META_DATA",
                  "TARGET_INFO_SESSION_START_TIME", "sqlite_sequence"}

_DESCRIBING_PREFIXES = ("TARGET_INFO_", "META_DATA_", "ANALYSIS_")
_DESCRIBING_TABLES = {"ProcessStreams", "UnwindMethodType", "NVTX_PAYLOAD_SCHEMAS",
                      "NVTX_PAYLOAD_SCHEMA_ENTRIES", "NVTX_PAYLOAD_ENUMS",
                      "NVTX_PAYLOAD_ENUM_ENTRIES"}


def __getattr__(name: str) -> Any:
    """``SCHEMAS`` on first use (pydantic is imported to read, not to sniff)."""
    if name == "SCHEMAS":
        from .schema import NsysExport

        return {"nsys_export": NsysExport}
    raise AttributeError(name)


def sniff(head: bytes, source: Source | None) -> float:
    """An SQLite database with nsys's tables (see :func:`.database_sniffing.nsys`)."""
    return database_sniffing.nsys(head, source)


def read(source: Source) -> Trace:
    """Read an nsys SQLite export (plain, gzipped or from standard input)."""
    with open_database(source) as db:
        return _read(db)


def _read(db: Database) -> Trace:
    export = _export(db)
    trace = TraceBuilder(Metadata(source_format="nsys", source_version=_version(export),
                           clock="nsys session time (ns since the session started)"))
    _describe(trace, export)
    strings = db.texts("select id, value from StringIds", "StringIds") if db.has(
        "StringIds", "id", "value") else {}
    places = Places(trace, db, strings, {g.id: g for g in export.gpus}, nvtx.thread_names(db))
    ctx = Context(trace, db, strings, places)
    api = cuda.read_runtime(ctx)
    work = [cuda.read_kernels(ctx), cuda.read_memcpy(ctx), cuda.read_memset(ctx)]
    cuda.read_sync(ctx)
    cuda.read_overhead(ctx)
    nvtx.read_nvtx(ctx)
    host.read_os_runtime(ctx)
    host.read_profiler_overhead(ctx)
    read_memory(ctx)
    _link(ctx, api, work)
    _account_tables(ctx)
    trace.diagnostics.add("nsys.missing_string", count=ctx.missing_strings)
    return trace


def _export(db: Database) -> NsysExport:
    from .schema import GpuInfo, NsysExport, SessionStart

    table = next((t for t in ("META_DATA_EXPORT", "EXPORT_META_DATA")
                  if db.has(t, "name", "value")), None)
    export = {str(k): str(v) for k, v in db.query(f"select name, value from {table}", table)
              } if table else {}
    gpus = []
    if db.has("TARGET_INFO_GPU", "id"):
        columns = [c for c in GpuInfo.model_fields if db.has("TARGET_INFO_GPU", c)]
        for row in db.query(f"select {', '.join(columns)} from TARGET_INFO_GPU",
                            "TARGET_INFO_GPU"):
            values = {k: v for k, v in zip(columns, row, strict=True) if v is not None}
            if isinstance(values.get("id"), int):
                gpus.append(GpuInfo.model_validate(_as_declared(GpuInfo, values)))
    start = None
    if db.has("TARGET_INFO_SESSION_START_TIME", "utcEpochNs"):
        rows = db.query("select * from TARGET_INFO_SESSION_START_TIME limit 1",
                        "TARGET_INFO_SESSION_START_TIME")
        names = db.columns["TARGET_INFO_SESSION_START_TIME"]
        if rows:
            start = SessionStart.model_validate(_as_declared(
                SessionStart, {k: v for k, v in zip(names, rows[0], strict=True)
                               if v is not None}))
    return NsysExport(export=export, gpus=gpus, session_start=start)


def _as_declared(model: type[BaseModel], values: dict[str, Any]) -> dict[str, Any]:
    """``values`` as the types ``model`` declares: a text field takes any cell as text (a
    number as its digits, a blob as UTF-8 with replacement); an integer field takes only
    an integer (another cell leaves the field unset). A column the model lacks is left out.

    >>> from traceconv.formats.nsys.schema import SessionStart
    >>> _as_declared(SessionStart, {"utcTime": b"\\xff", "utcEpochNs": 1.5, "x": 1})
    {'utcTime': '\\ufffd'}
    """
    out: dict[str, Any] = {}
    for key, value in values.items():
        field = model.model_fields.get(key)
        if field is None:
            continue
        if str in (field.annotation, *get_args(field.annotation)):
            out[key] = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(
                value)
        elif isinstance(value, int) and not isinstance(value, bool):
            out[key] = value
    return out


def _version(export: NsysExport) -> str:
    product = export.export.get("EXPORT_PRODUCT_VERSION", "?")
    schema = export.export.get("EXPORT_SCHEMA_VERSION", "?")
    return f"nsys {product}, export schema {schema}"


def _describe(trace: Trace, export: NsysExport) -> None:
    attributes = trace.metadata.attributes
    if export.session_start is not None and export.session_start.utcEpochNs is not None:
        attributes["session start (UTC epoch ns)"] = export.session_start.utcEpochNs
    if export.gpus:
        attributes["gpus"] = [g.model_dump(exclude_none=True) for g in export.gpus]
        trace.metadata.devices = [DeviceInfo(g.id, g.name, g.totalMemory, g.computeMajor,
                                             g.computeMinor) for g in export.gpus]
    for key in ("EXPORT_PRODUCT_VERSION", "EXPORT_SCHEMA_VERSION", "DERIVED_BY",
                "DERIVED_WINDOW_NS"):
        if key in export.export:
            attributes[key.lower()] = export.export[key]


def _link(ctx: Context, api: tuple[np.ndarray, dict[str, np.ndarray]],
          work: list[tuple[np.ndarray, dict[str, np.ndarray]]]) -> None:
    """Flows from API calls to the kernels, copies and memsets they enqueued."""
    rows = np.concatenate([r for r, _ in work])
    if not len(api[0]) or not len(rows):
        return
    unmatched = link_by_correlation(
        ctx.trace, api[0], api[1]["globalPid"], api[1]["correlationId"], rows,
        np.concatenate([k["globalPid"] for _, k in work]),
        np.concatenate([k["correlationId"] for _, k in work]))
    ctx.trace.diagnostics.add("nsys.work_without_launch", count=unmatched)


def _account_tables(ctx: Context) -> None:
    """Count the rows of every table that was not read, and the empty tables."""
    db = ctx.db
    unread: list[tuple[str, int]] = []
    described: list[tuple[str, int]] = []
    empty = 0
    for table in db.columns:
        if table in ctx.read_tables or table in _NAMING_TABLES or table.startswith("ENUM_"):
            continue
        rows = db.count(table)
        if not rows:
            empty += 1
        elif table.startswith(_DESCRIBING_PREFIXES) or table in _DESCRIBING_TABLES:
            described.append((table, rows))
        else:
            unread.append((table, rows))
    ctx.trace.diagnostics.add(
        "nsys.metadata_not_read", count=sum(n for _, n in described),
        example=", ".join(f"{t} ({n})" for t, n in sorted(described, key=lambda x: -x[1])[:8]))
    ctx.trace.diagnostics.add(
        "nsys.table_not_read", count=sum(n for _, n in unread),
        example=", ".join(f"{t} ({n})" for t, n in sorted(unread, key=lambda x: -x[1])[:8]))
    ctx.trace.diagnostics.add("nsys.empty_table", count=empty)
