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
from .._paddle import FRAMEWORK, text_contains
from .parser import BANNER, ReportParser
from .schema import ReportLog
from .to_trace import build_trace

SCHEMAS = {"paddle_report": ReportLog}
_BANNER_BYTES = re.compile(rb"^\s*-{5,}>\s*Profiling Report\s*<-{5,}\s*$", re.MULTILINE)


def sniff(head: bytes, source: Source) -> float:
    """Certain when the text holds the ``----> Profiling Report <----`` banner (a training
    log may print it after megabytes of other output)."""
    return 0.95 if text_contains(head, source, _BANNER_BYTES) else 0.0


def parse(text: str, trace: Trace | None = None) -> tuple[ReportLog, Trace]:
    """Parse ``text`` (a report or a whole log) into its typed form and a trace.

    >>> log, trace = parse("------------------------->     Profiling Report     <-------"
    ...                    "------------------\\nPlace: CPU\\n")
    >>> log.reports[0].place, trace.counts()["stat_rows"]
    ('CPU', 0)
    """
    trace = trace or Trace(Metadata(framework=FRAMEWORK))
    log = ReportParser(trace.diagnostics).parse_text(text)
    return log, build_trace(log, trace)


def read(source: Source) -> Trace:
    """Read every report group of a Paddle log into one stats-only trace."""
    text = source.read_text()
    if not any(BANNER.match(line) for line in text.splitlines()):
        raise InputError("no '----> Profiling Report <----' banner found", file=source.name)
    _, trace = parse(text)
    trace.metadata.source_format = "paddle-report"
    return trace
