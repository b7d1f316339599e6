"""What a perf report states of its own rows (``program::perf_report``), for the shared
comparison with the rows read (:mod:`..stated_totals`):

* ``Total instructions time: T`` is the sum of the instruction times (the per-instruction
  lines; an instruction never run, ``-nan``, adds nothing), and of the ``Summary:`` totals;
* the Summary's counts (``total / count = avg``, ROCm 5.3+) add up to the instructions timed.

A report without its trailer (cut, or a fragment pasted) states no total and is compared
with nothing (``migraphx.report_truncated`` counts the cut); a Summary pasted without the
per-instruction lines is compared with ``T`` alone.

Ends stated (:func:`missing_ends`): ``Running performance report ...`` and ``Summary:``
state that rows follow, a trailer ends with ``Overhead: a%, b%`` (every version), and a
driver run that printed ``Running [ MIGraphX Version: V ]`` (ROCm 6.1+) ends with
``... ] Complete``; an input that stops before them lost what followed. (A program listing
states no length: one cut at a line end reads as a shorter program.)
"""

from __future__ import annotations

import math

from ...model import Diagnostics
from ..stated_totals import compare_count, compare_total, missing_end
from .document import Document, PerfReport

READER = "migraphx"


def compare_stated(report: PerfReport, diagnostics: Diagnostics, label: str = "") -> None:
    """Compare what ``report``'s trailer and Summary state with its lines (module docstring).

    >>> from .document import parse_document
    >>> doc = parse_document("@0 = @literal{1} -> float_type, {1}, {0}: 0.5ms, 50%\\n"
    ...                      "Summary:\\n@literal: 0.5ms / 2 = 0.25ms, 100%\\n"
    ...                      "Total instructions time: 1.5ms\\n")
    >>> found = Diagnostics()
    >>> compare_stated(doc.runs[0].report, found)
    >>> [(d.code, d.count) for d in found]
    [('migraphx.rows_missing', 3)]
    """
    stated = report.trailer.instructions_ms_text
    if stated is None:
        return
    where = f"line {report.line}: perf report" + (f" of {label}" if label else "")
    if report.lines:
        compare_total(diagnostics, READER, f"{where}, instruction lines", stated,
                      [line.ms_text for line in report.lines if line.ms_text is not None],
                      what="ms of instruction time (Total instructions time)")
    if report.summary:
        compare_total(diagnostics, READER, f"{where}, Summary", stated,
                      [row.total_ms_text for row in report.summary],
                      what="ms of instruction time (Total instructions time)")
    counts = [row.count for row in report.summary]
    timed = [line for line in report.lines if line.ms is not None and math.isfinite(line.ms)]
    if report.lines and counts and None not in counts and len(timed) == len(report.lines):
        compare_count(diagnostics, READER, f"{where}, instruction lines",
                      sum(c for c in counts if c is not None), len(timed),
                      what="instructions (Summary counts)")


def missing_ends(document: Document, diagnostics: Diagnostics) -> None:
    """Count the reports and runs of ``document`` whose stated last line the input lacks
    (module docstring).

    >>> from .document import parse_document
    >>> found = Diagnostics()
    >>> missing_ends(parse_document("Total time: 0.5ms\\nTotal instructions time: 0.4ms\\n"), found)
    >>> found["migraphx.rows_missing"].example
    'line 1: perf report: the input ends before its last line (Overhead: a%, b%)'
    """
    for run in document.runs:
        report = run.report
        if report is not None and report.trailer.total_ms is not None and \
                report.trailer.overhead_percent is None:
            missing_end(diagnostics, READER, f"line {report.line}: perf report",
                        "its last line (Overhead: a%, b%)")
        elif report is not None and not (report.lines or report.summary or
                                         report.trailer.model_dump(exclude_defaults=True)):
            missing_end(diagnostics, READER, f"line {report.line}: perf report",
                        "its first line")
        if run.version is not None and not run.closed:
            missing_end(diagnostics, READER, f"line {run.line}: driver run",
                        "its last line ([ MIGraphX Version: V ] Complete)")
