"""``nsys stats`` reports, in ``--format csv``, the default column layout (as ``nsys
profile --stats=true`` prints them) or the boxed ``--format table``
(:class:`..nsys_stats_header.ColumnRows`), wherever in the input's head the output starts:
the trace of NVTX ranges (``nsys stats -r
nvtx_pushpop_trace``, also as written by nsys-jax, often ``.csv.xz``) and the summary reports
(:mod:`.summaries`: kernels, CUDA API, memory operations, NVTX ranges), with or without the
lines of prose nsys writes before a table (:mod:`..nsys_stats_header`).

NVTX trace: one slice per range on a track per (PID, TID), named as the report names it; the
report's range id, parent id and level are args. Columns are found by their header names. An
xz-compressed report is decompressed as it is read by the input layer (:mod:`traceconv.io`),
within the input size limit, as any compressed input is.

>>> sniff(b"Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,"
...       b"Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree\\n", None)
0.95
>>> sniff(b"Kernel_Name,Start_Timestamp\\n", None)
0.0
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...errors import InputError
from ...io import HEAD_BYTES, Source
from ...model import Metadata, Trace
from ...model.args import Args
from ...model.builder import TraceBuilder
from ...model.clock import STATISTICS_CLOCK
from .. import database_sniffing
from .._bulk import add_intervals_by_batch, map_keys
from ..csv_rows import CsvRows, source_rows
from ..nsys_stats_header import (
    TRACE,
    ColumnRows,
    is_column_layout,
    is_prose,
    kind_of,
    report_named,
    run_named,
    step_of,
)
from ..pasted_text import PastedLines, pasted_lines
from ..stray_lines import ForeignLines, count_input_end
from . import summaries

_NEEDED = ("Start (ns)", "End (ns)", "Name", "PID", "TID")
_ARGS = {"RangeId": "range id", "ParentId": "parent id", "Lvl": "level"}


def sniff(head: bytes, source: Source | None) -> float:
    """An nsys stats report's header (see :func:`.database_sniffing.nsys_stats`)."""
    return database_sniffing.nsys_stats(head, source)


def read(source: Source) -> Trace:
    """Read an nsys stats CSV report (plain or xz, gz as any input).

    >>> trace = read(Source("tests/data/nsys_stats/cuda_api_sum.csv"))
    >>> len(trace.stats), trace.stats[0].name, trace.metadata.source_version
    (11, 'cuMemcpyHtoD_v2', 'cuda_api_sum')
    """
    if is_column_layout(list(PastedLines(_head_text(source))), known=False):
        # (a drawn table is pasted text: read as every text reader reads it)
        return _read_report(source, ColumnRows(pasted_lines(source),
                                                    ForeignLines("nsys_stats")))
    # (a CSV's cells are data, quoted by CSV's rules: bounded lines, nothing undone in them)
    return _read_report(source, source_rows(source, written_by="nsys stats",
                                            fit=_prose_or_header))


def _head_text(source: Source) -> str:
    """The input's head as text, its format told by it (a report pasted after a page of
    other text starts anywhere in it); a last line the head's end cut is left out."""
    head = source.head.decode("utf-8", "replace")
    return head if len(source.head) < HEAD_BYTES else head[:max(head.rfind("\n"), 0)]


def _read_report(source: Source, rows: ColumnRows | CsvRows) -> Trace:
    """The trace of the report tables ``rows`` hold."""
    opening = _first_header(rows, source.name)
    header, kind, skipped = opening.header, opening.kind, opening.skipped
    rows.width = len(header)
    first = None if kind == TRACE else summaries.table_of(header, kind, opening.report)
    if kind != TRACE and first is None:
        raise InputError("an nsys stats summary whose header names no row (Name, "
                         "Range or Operation)", file=source.name,
                         location=f"line {rows.line_num}")
    trace = TraceBuilder(Metadata(
        source_format="nsys-stats", source_version="nvtx_pushpop_trace",
        clock="nsys session time (ns since the session started)") if first is None else
        Metadata(source_format="nsys-stats", clock=STATISTICS_CLOCK))
    trace.diagnostics.add("nsys_stats.report_skipped", count=len(skipped),
                          example=skipped[0][:120] if skipped else None)
    if first is None:
        _read_rows(trace, header, rows)
    else:
        first.run = opening.run
        reports = summaries.read_tables(trace, first, rows,
                                        column_layout=isinstance(rows, ColumnRows),
                                        step=opening.step)
        trace.metadata.source_version = ", ".join(dict.fromkeys(
            report.split(" #")[0] for report in reports))
    if isinstance(rows, CsvRows):
        rows.left_out.count(trace.diagnostics)
    else:
        _count_unread(trace, rows)
    return trace


def _count_unread(trace: TraceBuilder, rows: ColumnRows) -> None:
    """Count what a drawn layout's reading left out: the rows of tables whose header names
    no report read here, the lines outside every table (a README's text, a source
    file's code, a shell prompt: foreign to the report by the rule of every text reader,
    :mod:`..stray_lines`), and a table the input stopped inside (its rule of the input's
    end: a row cut short of its drawn end, a rule with no row under it)."""
    for table in rows.unread:
        report = f"{table.report}, " if table.report else ""
        trace.diagnostics.add("nsys_stats.table_not_read", count=table.rows, example=(
            f"line {table.line}: {report}{table.rows} rows under {table.header[:100]}"))
    rows.foreign.count_in(trace.diagnostics)
    reader = rows.foreign.reader   # (the ruled tables' rule: any drawn-table reader's code)
    trace.diagnostics.add(f"{reader}.row_remark", count=rows.remarks, example=rows.first_remark)
    if isinstance(rows.lines, PastedLines):
        # a table the input stopped inside: the one cut rule of every text reader
        count_input_end(trace.diagnostics, "nsys_stats", rows.lines, table=rows.table,
                        expects_rows=rows.in_rows, awaiting_rows=rows.awaiting_rows,
                        whole=rows.ended_whole)


def _prose_or_header(row: list[str], line: str) -> list[str] | None:
    """A row of another width than its table's that is read on purpose: nsys's prose
    after a table, or the header of the next report's table."""
    kind = kind_of(row)
    if is_prose(line) or (kind not in (None, TRACE) and summaries.table_of(row, kind)):
        return row
    return None


class _Opening(NamedTuple):
    """What an output says up to its first header."""

    header: list[str]
    kind: str                  # the header's report kind
    report: str | None         # the report's name where a line or the file name states it
    skipped: list[str]         # the lines of the reports nsys skipped before it
    run: str | None            # the report file (the run) a line names
    step: int | None           # the last progress step of the run (step_of)


def _first_header(rows: ColumnRows | CsvRows, name: str) -> _Opening:
    """The first header (after nsys's lines of prose) and what the prose before it says;
    InputError when there is none."""
    report, skipped, run, step = report_named(Path(name).name), [], None, None
    for row in rows:
        line = ",".join(row)
        if is_prose(line):
            report = report_named(line) or report
            run = run_named(line) or run
            step = step_of(line) or step
            if line.startswith("SKIPPED:"):
                skipped.append(line)
            continue
        kind = kind_of(row)
        if kind is None:
            raise InputError("not an nsys stats report: this line is neither nsys's prose nor "
                             f"a header naming the NVTX trace's columns ({', '.join(_NEEDED)}) "
                             "or a summary's (Total Time ...)", file=name,
                             location=f"line {rows.line_num}")
        return _Opening(row, kind, report, skipped, run, step)
    if skipped:
        raise InputError(f"the nsys stats report holds no table: {skipped[0][:160]}",
                         file=name, location=f"line {rows.line_num}")
    unread = rows.unread[0] if isinstance(rows, ColumnRows) and rows.unread else None
    if unread is not None:
        raise InputError("no table of a report traceconv reads: this table's header names "
                         f"none ({unread.header[:100]})", file=name,
                         location=f"line {unread.line}")
    raise InputError("not an nsys stats report: no header names the NVTX trace's columns "
                     f"({', '.join(_NEEDED)}) or a summary's (Total Time ...)", file=name,
                     location=f"line {rows.line_num}")


def _read_rows(trace: TraceBuilder, header: list[str], rows: Iterator[list[str]]) -> None:
    """One slice per row of the NVTX trace; numbers kept in int64 columns as they are read,
    names interned, args dicts made a batch at a time (a large report costs about its own
    size)."""
    at = {column: header.index(column) for column in header}
    start, end, pid, tid = (at[c] for c in ("Start (ns)", "End (ns)", "PID", "TID"))
    text, extras = at["Name"], [(at[c], key) for c, key in _ARGS.items() if c in at]
    starts, ends, keys = array("q"), array("q"), array("q")
    names = array("i")
    extra_values = [array("q") for _ in extras]   # -1: the cell is no such number
    category = trace.strings.intern("nvtx")   # (first: the string ids stay as they were)
    intern = trace.strings.intern
    bad = 0
    for row in rows:
        try:
            s, e, p, t = int(row[start]), int(row[end]), int(row[pid]), int(row[tid])
        except (ValueError, IndexError):
            bad += 1
            continue
        if not (-2**31 <= p < 2**31 and 0 <= t < 2**32):
            bad += 1   # (a pid and tid share one int64 key)
            continue
        starts.append(trace.time(s))   # (times of any size, and an end before its start:
        ends.append(trace.time(e))     # the builder's rules)
        keys.append(p << 32 | t & 0xFFFFFFFF)
        names.append(intern(row[text]))
        for (i, _), values in zip(extras, extra_values, strict=True):
            cell = row[i]
            values.append(int(cell) if cell.isdecimal() and len(cell) <= 18 else -1)
    trace.diagnostics.add("nsys_stats.malformed_row", count=bad)
    processes: dict[int, int] = {}

    def track(key: int) -> int:
        p, t = key >> 32, key & 0xFFFFFFFF
        if p not in processes:
            processes[p] = trace.add_process(f"process {p}", pid=p, sort_index=p)
        return trace.add_track(f"thread {t}", process=processes[p], tid=t, sort_index=t)

    tracks = map_keys(np.frombuffer(keys, dtype=np.int64), track)
    numbers = [(key, np.frombuffer(values, dtype=np.int64))
               for (_, key), values in zip(extras, extra_values, strict=True)]

    def args(part: slice) -> list[Args]:
        cells = [(key, column[part].tolist()) for key, column in numbers]
        return [{key: values[i] for key, values in cells if values[i] >= 0} or None
                for i in range(part.stop - part.start)]

    add_intervals_by_batch(trace, tracks, np.frombuffer(starts, dtype=np.int64),
                           np.frombuffer(ends, dtype=np.int64),
                           np.frombuffer(names, dtype=np.int32),
                           np.full(len(starts), category, np.int32), args)
