"""``nsys stats`` CSV reports of NVTX ranges (``nsys stats -r nvtx_pushpop_trace --format
csv``, also as written by nsys-jax, often ``.csv.xz``).

One slice per range on a track per (PID, TID), named as the report names it; the report's
range id, parent id and level are args. Columns are found by their header names. An
xz-compressed report is decompressed as it is read by the input layer (:mod:`traceconv.io`),
within the input size limit, as any compressed input is.

>>> sniff(b"Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,"
...       b"Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree\\n", None)
0.95
>>> sniff(b"Kernel_Name,Start_Timestamp\\n", None)
0.0
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

import numpy as np

from ...errors import InputError
from ...io import Source
from ...model import Metadata, Trace
from ...model.args import Args
from ...model.builder import TraceBuilder
from .. import database_sniffing
from .._bulk import intern_texts, map_keys

_NEEDED = ("Start (ns)", "End (ns)", "Name", "PID", "TID")
_ARGS = {"RangeId": "range id", "ParentId": "parent id", "Lvl": "level"}


def sniff(head: bytes, source: Source | None) -> float:
    """The NVTX trace report's header (see :func:`.database_sniffing.nsys_stats`)."""
    return database_sniffing.nsys_stats(head, source)


def read(source: Source) -> Trace:
    """Read an ``nvtx_pushpop_trace`` report (plain or xz, gz as any input)."""
    trace = TraceBuilder(Metadata(source_format="nsys-stats", source_version="nvtx_pushpop_trace",
                           clock="nsys session time (ns since the session started)"))
    with source.open() as stream:   # (xz, as any compressed input, is the input layer's)
        text = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="")
        rows = csv.reader(text)
        try:
            header = next(rows, None)
            if header is None or not all(n in header for n in _NEEDED):
                raise InputError("not an nsys stats NVTX trace: the header lacks "
                                 f"{', '.join(_NEEDED)}", file=source.name, location="line 1")
            _read_rows(trace, header, rows, source.name)
        except csv.Error as exc:   # a field past the csv module's limit (128 KiB), a NUL...
            raise InputError(f"not CSV as nsys stats writes it: {exc}", file=source.name,
                             location=f"line {rows.line_num}") from None
    return trace


def _read_rows(trace: TraceBuilder, header: list[str], rows: Iterator[list[str]], name: str) -> None:
    at = {column: header.index(column) for column in header}
    start, end, pid, tid = (at[c] for c in ("Start (ns)", "End (ns)", "PID", "TID"))
    text, extras = at["Name"], [(at[c], key) for c, key in _ARGS.items() if c in at]
    starts: list[int] = []
    ends: list[int] = []
    keys: list[int] = []
    names: list[str] = []
    args: list[Args] = []
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
        names.append(row[text])
        args.append({key: int(row[i]) for i, key in extras
                     if i < len(row) and row[i].isdigit() and len(row[i]) <= 18}
                    or None)
    trace.diagnostics.add("nsys_stats.malformed_row", count=bad)
    processes: dict[int, int] = {}

    def track(key: int) -> int:
        p, t = key >> 32, key & 0xFFFFFFFF
        if p not in processes:
            processes[p] = trace.add_process(f"process {p}", pid=p, sort_index=p)
        return trace.add_track(f"thread {t}", process=processes[p], tid=t, sort_index=t)

    category = trace.strings.intern("nvtx")
    trace.add_intervals(map_keys(np.array(keys, dtype=np.int64), track),
                        np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64),
                        intern_texts(trace, names), np.full(len(starts), category, np.int32),
                        args)
