"""Paddle's old text "Profiling Report" (fluid profiler, 2018 → 3.3), several per log.

``read`` gives a stats-only trace: one :class:`~traceconv.model.OpStat` per Event Summary
row (nested by ``parent``/``depth``), the Overhead and GpuMemCpy summaries and the Memory
Profiling Report (``section`` = events / overhead / memcpy / memory), plus a synthetic
aggregate-breakdown process per report so the writers have something to draw.
"""

from __future__ import annotations

import re

from ...errors import InputError
from ...io import Source
from ...model import Metadata, Trace
from ...model.builder import TraceBuilder
from .._paddle import FRAMEWORK, any_line, text_contains
from ..pasted_text import PastedLines
from ..text_lines import text_lines
from .parser import SIGNATURE, ReportParser
from .rows import headerless_columns
from .schema import ReportLog
from .stated import compare_stated, missing_ends
from .to_trace import build_trace

SCHEMAS = {"paddle_report": ReportLog}
_SIGNATURE_BYTES = any_line(SIGNATURE)
_ROW_SCAN_LINES = 200


def sniff(head: bytes, source: Source) -> float:
    """Certain when the text holds a line only the report prints (the banner, a section
    title, the Event Summary or Memory header, an overhead or memcpy line; a training log
    may print it after megabytes of other output); likely when its first lines hold Event
    Summary rows whose shape and numbers say so, with no header at all.

    >>> sniff(b"relu 4 2.0 0.4 0.6 0.5 0.16\\nsoftmax 4 1.0 0.2 0.3 0.25 0.08\\n", None)
    0.6
    """
    if text_contains(head, source, _SIGNATURE_BYTES):
        return 0.95
    lines = list(PastedLines(head.decode("utf-8", "replace")))[:_ROW_SCAN_LINES]
    rows = sum(headerless_columns(line) is not None for line in lines)
    return 0.6 if rows and rows * 2 >= sum(bool(line.strip()) for line in lines) else 0.0


def parse(text: str | PastedLines, trace: Trace | None = None) -> tuple[ReportLog, Trace]:
    """Parse ``text`` (a report, a fragment of one, or a whole log; a string or its lines)
    into its typed form and a trace.

    >>> log, trace = parse("------------------------->     Profiling Report     <-------"
    ...                    "------------------\\nPlace: CPU\\n")
    >>> log.reports[0].place, trace.counts()["stat_rows"]
    ('CPU', 0)
    """
    trace = trace or TraceBuilder(Metadata(framework=FRAMEWORK))
    log = ReportParser(trace.diagnostics).parse_lines(
        PastedLines(text) if isinstance(text, str) else text)
    compare_stated(log, trace.diagnostics)
    missing_ends(log, trace.diagnostics)
    return log, build_trace(log, trace)


def read(source: Source) -> Trace:
    """Read every report (or fragment of one) of a Paddle log into one stats-only trace."""
    log, trace = parse(PastedLines(text_lines(source)))
    if not any(r.events or r.overhead or r.memcpy for r in log.reports) and \
            not any(m.rows for m in log.memory):
        foreign = trace.diagnostics["paddle_report.foreign_lines"].example \
            if "paddle_report.foreign_lines" in trace.diagnostics else None
        raise InputError("no Profiling Report table, summary or memory row found",
                         file=source.name, location=_line_of(foreign))
    trace.metadata.source_format = "paddle-report"
    return trace


def _line_of(example: str | None) -> int:
    """The line number a diagnostics example starts with ("line 12: ..."), else 1."""
    match = re.match(r"line (\d+):", example or "")
    return int(match.group(1)) if match else 1
