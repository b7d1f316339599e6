"""``traceconv check`` of an input that is not a viewer's file: what its reader found.

A Perfetto or Chrome file is checked against what the viewer does with it
(:mod:`~traceconv.formats.chrome.checker`, the Perfetto validator). Any other input (a
MIGraphX report, a Paddle summary, a memory_flow.svg...) is read, and the report holds
its reader's findings: those of severity ``error`` (the input itself is incomplete: cut
in the middle, so everything after the cut is missing from every output) are errors and
make ``check`` fail; those of severity ``warning`` (data the reader had to leave out) are
warnings. Repairs and guesses (severity ``info``) stay in ``traceconv info``.
"""

from __future__ import annotations

from ..model import Trace
from ..model.check_report import CheckReport


def read_check(trace: Trace) -> CheckReport:
    """The check report of a trace that a reader made.

    >>> trace = Trace()
    >>> trace.diagnostics.add("migraphx.report_truncated", count=1, example="line 40")
    >>> report = read_check(trace)
    >>> report.ok, [e["code"] for e in report.errors], report.counts["slices"]
    (False, ['migraphx.report_truncated'], 0)
    """
    report = CheckReport(trace.metadata.source_format or "unknown", dict(trace.counts()))
    for finding in trace.diagnostics:
        if finding.severity == "error":
            report.error(finding.code, finding.message, count=finding.count,
                         example=finding.example)
        elif finding.severity == "warning":
            report.warning(finding.code, finding.message, count=finding.count,
                           example=finding.example)
    return report
