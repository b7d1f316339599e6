"""The new Paddle profiler's text: ``Profiler.summary()`` tables and the ``Perf Summary``.

``read`` gives a stats-only trace: one :class:`~traceconv.model.OpStat` per table row
(``section`` = operator, kernel, model, overview, userdefined, memory manipulation,
distribution, device, memory, perf; nested by ``parent``/``depth``; ``extra["thread"]``
for ``thread_sep`` output), the Device Summary utilisation and Perf Summary in metadata,
and an aggregate breakdown per timed table.
"""

from __future__ import annotations

from ...errors import InputError
from ...io import Source
from ...model import Metadata, Trace
from ...model.builder import TraceBuilder
from .._paddle import FRAMEWORK
from ..pasted_text import PastedLines
from ..text_lines import text_lines
from ..text_sniffing import paddle_summary as sniff  # noqa: F401  (this format's sniff, kept light)
from .parser import SummaryParser
from .schema import SummaryDocument
from .stated import compare_stated
from .to_trace import build_trace

SCHEMAS = {"paddle_summary": SummaryDocument}


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
