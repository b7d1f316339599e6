"""rocprof's statistics CSVs (v1 ``results.stats.csv``, ``results.hip_stats.csv``,
``results.copy_stats.csv``; rocprofv3 ``kernel_stats.csv``, ``hip_api_stats.csv``,
``memory_copy_stats.csv`` ...): one :class:`OpStat` a row, in a section named after the
file (``kernel``, ``hip_api``...; a name that tells none is read as v1's kernel statistics,
a guess counted as ``rocprof.section_guessed``), its time the host's for API calls and the device's for
kernels and copies. A row is typed by the rule that types the timeline's slices of its
name (:meth:`~traceconv.model.activity.Vocabulary.statistic`): RCCL's kernels are
``communication``, and a row of no work (``<barrier packet>``: the device waiting for the
packets it depends on) says so (``extra[TIME_IS]``), so no total counts it. Written to a timeline format, they are drawn as any statistics are
(an aggregate breakdown, one lane per section: :func:`traceconv.api.save`).

The ``Percentage`` column states each row's share of the file's total, so the rows of a whole
file share 100 %: a file cut after its first rows (``head``, a paste of the top of it) reads
as a table that looks whole, and the shares tell (:mod:`..stated_totals`)."""

from __future__ import annotations

import re

from ...io import Source
from ...model import OpStat
from ...model.builder import TraceBuilder
from ...model.entities import TIME_IS, TOTALS_OF
from ...vocabularies.rocprof import ROCPROF_VOCABULARY
from ..stated_totals import compare_total
from .csv_table import read_table

_OPTIONAL_NS = {"AverageNs": "avg_ns", "MinNs": "min_ns", "MaxNs": "max_ns"}
_SECTION = re.compile(r"(kernel|domain|(?:hip|hsa|marker|rccl|rocdecode|rocjpeg)_api|"
                      r"memory_copy|memory_allocation|scratch_memory|hip|hsa|copy)_stats\.csv$")
_V1_SECTIONS = {"hip": "hip_api", "hsa": "hsa_api", "copy": "memory_copy"}
# where a section's time was spent: the device's for kernels and copies, the host's for
# API calls (the others, such as allocations, are not said); rocprofv3's per-domain totals
# say it row by row (HIP_API, KERNEL_DISPATCH, MEMORY_COPY...)
_PLACES = {"kernel": "device_ns", "memory_copy": "device_ns"}
_DOMAIN_PLACES = {"KERNEL_DISPATCH": "device_ns", "MEMORY_COPY": "device_ns"}
# a section's category in the timelines (traceconv.vocabularies.rocprof), for what its rows are
_CATEGORIES = {"kernel": "kernel", "memory_copy": "gpu_memcpy", "hip_api": "hip_runtime",
               "hsa_api": "hsa_api", "marker_api": "user_annotation", "rccl_api": "rccl"}


def place_of(section: str, name: str) -> str | None:
    """Where a row's time was spent (an OpStat field), or None when the file does not say.

    >>> place_of("hip_api", "hipMemcpy"), place_of("kernel", "k"), place_of("memory_allocation", "x")
    ('cpu_ns', 'device_ns', None)
    >>> place_of("domain", "HIP_API"), place_of("domain", "KERNEL_DISPATCH")
    ('cpu_ns', 'device_ns')
    """
    if section == "domain":
        return _DOMAIN_PLACES.get(name, "cpu_ns" if name.endswith("_API") else None)
    return _PLACES.get(section, "cpu_ns" if section.endswith("_api") else None)


def section_of(file: str) -> str | None:
    """The statistics' section from the file's name (``kernel`` for v1's ``results``), or
    None when the name tells none.

    >>> section_of("run/1234_hip_api_stats.csv"), section_of("results.stats.csv")
    ('hip_api', 'kernel')
    >>> section_of("results.hip_stats.csv"), section_of("results.copy_stats.csv")
    ('hip_api', 'memory_copy')
    >>> section_of("issue_paste.csv") is None
    True
    """
    match = _SECTION.search(file.lower())
    if match:
        return _V1_SECTIONS.get(match.group(1), match.group(1))
    return "kernel" if file.lower().endswith(".stats.csv") else None


def read_stats(trace: TraceBuilder, source: Source) -> None:
    """Each row as a statistic (times rounded to the ns); a row whose calls or total is not
    a number is counted.

    >>> trace = TraceBuilder()
    >>> read_stats(trace, Source("samples/rocprof/llamacpp_results.stats.csv"))
    >>> len(trace.stats), trace.stats[0].calls, trace.stats[0].avg_ns, trace.stats[0].device_ns
    (20, 442, 1353098, 598069423)
    """
    table = read_table(source)
    table.count_repairs(trace.diagnostics)
    at = table.require("Name", "Calls", "TotalDurationNs")
    optional = {field: table.header.index(c) for c, field in _OPTIONAL_NS.items()
                if c in table.header}
    share = table.header.index("Percentage") if "Percentage" in table.header else None
    section, bad = section_of(source.name), 0
    if section is None:   # (v1's kernel statistics, rocprof's first and commonest)
        section = "kernel"
        trace.diagnostics.add("rocprof.section_guessed", example=(
            f"{source.name}: its rows taken for kernels (device time)"))
    shares: list[str] = []   # (the Percentage cells as printed: their digits are their precision)
    for row in table.rows:
        try:
            calls, total = int(row[at["Calls"]]), _ns(row[at["TotalDurationNs"]])
            times = {field: _ns(row[i]) for field, i in optional.items()}
            ratio = float(row[share]) if share is not None else None
        except (ValueError, OverflowError):
            bad += 1
            continue
        if share is not None:
            shares.append(row[share])
        extra = {c: row[i] for i, c in enumerate(table.header)
                 if c not in _OPTIONAL_NS and c not in at and c != "Percentage"}
        if section == "domain":   # (the sum of the run's other statistics files)
            extra[TOTALS_OF] = row[at["Name"]]
        place = place_of(section, row[at["Name"]])
        kind, what = section, None
        if section in _CATEGORIES:   # (a section drawn on the timeline too: typed alike)
            kind, what = ROCPROF_VOCABULARY.statistic(_CATEGORIES[section], row[at["Name"]],
                                                      place == "device_ns", section)
        if what:
            extra[TIME_IS] = what
        trace.add_stat(OpStat(row[at["Name"]], calls=calls, total_ns=total, ratio=ratio,
                              section=section, type=kind, extra=extra,
                              **({place: total} if place else {}), **times))
    trace.diagnostics.add("rocprof.malformed_row", count=bad, example=source.name)
    # a malformed row is counted above, its share with it; a file of no time states nothing
    if not bad and any(float(share) for share in shares):
        compare_total(trace.diagnostics, "rocprof", f"{source.name} ({len(shares)} rows)", 100,
                      shares, what="% of the time (Percentage)")


def _ns(text: str) -> int:
    """A time in ns as rocprof prints it (``1353098``, ``65624351.500000``), rounded.

    >>> _ns("65624351.500000"), _ns("7")
    (65624352, 7)
    """
    return int(text) if text.strip().lstrip("-").isdecimal() else round(float(text))
