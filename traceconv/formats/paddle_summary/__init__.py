"""The new Paddle profiler's text: ``Profiler.summary()`` tables and the ``Perf Summary``.

``read`` gives a stats-only trace: one :class:`~traceconv.model.OpStat` per table row
(``section`` = operator, kernel, model, overview, userdefined, memory manipulation,
distribution, device, memory, perf; nested by ``parent``/``depth``; ``extra["thread"]``
for ``thread_sep`` output), the Device Summary utilisation and Perf Summary in metadata,
and an aggregate breakdown per timed table.
"""

from __future__ import annotations

import re

from ...errors import InputError
from ...io import Source
from ...model import Metadata, Trace
from ...model.builder import TraceBuilder
from .._paddle import FRAMEWORK, text_contains
from ..pasted_text import PastedLines
from ..text_lines import text_lines
from .parser import UNTITLED_ROW, SummaryParser
from .schema import SummaryDocument
from .stated import compare_stated
from .to_trace import build_trace

SCHEMAS = {"paddle_summary": SummaryDocument}
_SIGNATURE = re.compile(
    rb"^[ \t]*(?:-+(?:Device|Overview|Model|Distribution|Operator|Kernel|Memory Manipulation|"
    rb"UserDefined) Summary-+|-+Memory Summary - Place\(.+\)-+|=+Perf Summary=+)\s*$",
    re.MULTILINE)


def sniff(head: bytes, source: Source) -> float:
    """Certain when a summary title (``---Operator Summary---``, ``===Perf Summary===``)
    shows, also after megabytes of training-log output; likely when the first lines are
    summary rows pasted alone (``name calls t / a / m / m / r  t / a / m / m / r``).

    >>> sniff(b"conv2d dygraph 10 1.2 / 0.1 / 0.2 / 0.1 / 0.5 3.0 / 0.3 / 0.4 / 0.2 / 0.6\\n", None)
    0.6
    """
    if text_contains(head, source, _SIGNATURE):
        return 0.95
    lines = list(PastedLines(head.decode("utf-8", "replace")))[:200]
    rows = sum(UNTITLED_ROW.match(line) is not None for line in lines)
    return 0.6 if rows and rows * 2 >= sum(bool(line.strip()) for line in lines) else 0.0


def parse(text: str | PastedLines, trace: Trace | None = None
          ) -> tuple[SummaryDocument, Trace]:
    """Parse summary text (a string or its lines) into its typed form and a stats-only
    trace.

    >>> doc, trace = parse("=====Perf Summary=====\\nReader Ratio: 64.715%\\n"
    ...                    "|   reader_cost   |     0.00136     |     0.00914     |     0.00003     |")
    >>> doc.perf[0].reader_ratio_pct, trace.stats[0].avg_ns
    (64.715, 1360000)
    """
    trace = trace or TraceBuilder(Metadata(framework=FRAMEWORK))
    parser = SummaryParser(trace.diagnostics)
    doc = parser.parse_lines(PastedLines(text) if isinstance(text, str) else text)
    compare_stated(doc, trace.diagnostics, unnested=parser.unnested)
    return doc, build_trace(doc, trace)


def read(source: Source) -> Trace:
    """Read ``summary()`` / ``Perf Summary`` text into a stats-only trace."""
    doc, trace = parse(PastedLines(text_lines(source)))
    if not doc.tables and not doc.perf and not doc.steps:
        raise InputError("no Paddle summary table or Perf Summary found", file=source.name)
    trace.metadata.source_format = "paddle-summary"
    return trace
