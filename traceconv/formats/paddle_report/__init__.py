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
from .._paddle import FRAMEWORK
from ..pasted_text import PastedLines
from ..text_lines import text_lines
from ..text_sniffing import paddle_report as sniff  # noqa: F401  (this format's sniff, kept light)
from .parser import ReportParser
from .schema import ReportLog
from .stated import compare_stated, missing_ends
from .to_trace import build_trace

SCHEMAS = {"paddle_report": ReportLog}


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
