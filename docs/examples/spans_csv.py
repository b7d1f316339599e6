"""An example reader: "spans CSV", one line per span: ``thread,name,start_us,end_us``.

A format is this module (``sniff`` and ``read``) plus one registry row. The reader parses;
the builder owns every range check and repair (an end before its start, a time past
int64, an unknown track, a name too long), each counted under its own diagnostic code.
"""

from __future__ import annotations

import io

from traceconv.errors import InputError
from traceconv.formats.csv_rows import CsvRows
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
    with source.open() as stream:   # (rows of another width, a cut last row: left out)
        rows = CsvRows(io.TextIOWrapper(stream, encoding="utf-8", errors="replace",
                                        newline=""), source.name)
        next(rows, None)   # the header
        rows.width = 4     # thread, name, start_us, end_us
        for thread, name, start, end in filter(None, rows):   # (a blank line: no row)
            try:
                start_ns, end_ns = int(start) * 1000, int(end) * 1000   # any size: checked
            except ValueError:
                raise InputError(f"not a whole number of µs: {start!r}, {end!r}",
                                 file=source.name, location=f"line {rows.line_num}") from None
            if thread not in tracks:
                tracks[thread] = trace.add_track(thread, process=process)
            trace.add_interval(tracks[thread], start_ns, end_ns, name, "span")
    rows.left_out.count(trace.diagnostics)
    return trace
