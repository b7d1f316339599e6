"""An example reader: "spans CSV", one line per span: ``thread,name,start_us,end_us``.

A format is this module (``sniff`` and ``read``) plus one registry row. The reader parses;
the builder owns every range check and repair (an end before its start, a time past
int64, an unknown track, a name too long), each counted under its own diagnostic code.
"""

from __future__ import annotations

import csv
import io

from traceconv.errors import InputError
from traceconv.io import Source
from traceconv.model import Metadata, ProcessKind
from traceconv.model.builder import TraceBuilder

HEADER = b"thread,name,start_us,end_us"


def sniff(head: bytes, source: Source) -> float:
    """How sure this format is that ``source`` is its own, from its first bytes."""
    return 1.0 if head.startswith(HEADER) else 0.0


def read(source: Source) -> TraceBuilder:
    """The spans of ``source``, one track per thread (``build()`` is the API's to call)."""
    trace = TraceBuilder(Metadata(source_format="spans-csv", clock="process-relative"))
    process = trace.add_process("spans", kind=ProcessKind.HOST)
    tracks: dict[str, int] = {}
    with source.open() as stream:
        rows = csv.reader(io.TextIOWrapper(stream, encoding="utf-8", errors="replace"))
        next(rows, None)   # the header
        for line, row in enumerate(rows, start=2):
            if len(row) != 4:
                raise InputError(f"expected 4 fields, found {len(row)}", file=source.name,
                                 location=f"line {line}")
            thread, name, start, end = row
            try:
                start_ns, end_ns = int(start) * 1000, int(end) * 1000   # any size: checked
            except ValueError:
                raise InputError(f"not a whole number of µs: {start!r}, {end!r}",
                                 file=source.name, location=f"line {line}") from None
            if thread not in tracks:
                tracks[thread] = trace.add_track(thread, process=process)
            trace.add_interval(tracks[thread], start_ns, end_ns, name, "span")
    return trace
