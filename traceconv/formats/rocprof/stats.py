"""rocprof's statistics CSVs (v1 ``results.stats.csv``; rocprofv3 ``kernel_stats.csv``,
``hip_api_stats.csv``, ``memory_copy_stats.csv`` ...): one :class:`OpStat` a row, in a
section named after the file (``kernel``, ``hip_api``...)."""

from __future__ import annotations

import re

from ...io import Source
from ...model import OpStat
from ...model.builder import TraceBuilder
from .csv_table import read_table

_OPTIONAL_NS = {"AverageNs": "avg_ns", "MinNs": "min_ns", "MaxNs": "max_ns"}
_SECTION = re.compile(r"(kernel|domain|(?:hip|hsa|marker|rccl|rocdecode|rocjpeg)_api|"
                      r"memory_copy|memory_allocation|scratch_memory)_stats\.csv$")


def section_of(file: str) -> str:
    """The statistics' section from the file's name (``kernel`` for v1's ``results``).

    >>> section_of("run/1234_hip_api_stats.csv"), section_of("results.stats.csv")
    ('hip_api', 'kernel')
    """
    match = _SECTION.search(file.lower())
    return match.group(1) if match else "kernel"


def read_stats(trace: TraceBuilder, source: Source) -> None:
    """Each row as a statistic (times rounded to the ns); a row whose name, calls or total
    is not read is counted.

    >>> trace = TraceBuilder()
    >>> read_stats(trace, Source("samples/rocprof/llamacpp_results.stats.csv"))
    >>> len(trace.stats), trace.stats[0].calls, trace.stats[0].avg_ns
    (20, 442, 1353098)
    """
    table = read_table(source)
    at = table.require("Name", "Calls", "TotalDurationNs")
    optional = {field: table.header.index(c) for c, field in _OPTIONAL_NS.items()
                if c in table.header}
    share = table.header.index("Percentage") if "Percentage" in table.header else None
    section, bad = section_of(source.name), 0
    for row in table.rows:
        try:
            calls, total = int(row[at["Calls"]]), _ns(row[at["TotalDurationNs"]])
            times = {field: _ns(row[i]) for field, i in optional.items() if i < len(row)}
            ratio = float(row[share]) if share is not None and share < len(row) else None
        except (ValueError, IndexError, OverflowError):
            bad += 1
            continue
        extra = {c: row[i] for i, c in enumerate(table.header)
                 if c not in _OPTIONAL_NS and c not in at and c != "Percentage" and i < len(row)}
        trace.add_stat(OpStat(row[at["Name"]], calls=calls, total_ns=total, ratio=ratio,
                              section=section, type=section, extra=extra, **times))
    trace.diagnostics.add("rocprof.malformed_row", count=bad, example=source.name)


def _ns(text: str) -> int:
    """A time in ns as rocprof prints it (``1353098``, ``65624351.500000``), rounded.

    >>> _ns("65624351.500000"), _ns("7")
    (65624352, 7)
    """
    return int(text) if text.strip().lstrip("-").isdigit() else round(float(text))
