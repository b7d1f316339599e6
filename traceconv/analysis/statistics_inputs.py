"""Inputs that hold only statistics, given with others: statistics of the same run.

``rocprof --stats --hip-trace`` writes a timeline (``results.csv``) and tables without a clock
(``results.stats.csv``, ``.hip_stats.csv``, ``.hsa_stats.csv``); ``nsys stats`` exports sit
beside a run's timeline the same way. Such a table is not a rank: it has no clock to align
and no timeline to walk. Every command that takes several inputs joins them here, once: the
statistics join the timeline given with them (of several, the one named most like them), or
each other when no input has a timeline; each row keeps the name of its file (``extra["input"]``)
and the joined files are listed in ``metadata.attributes["statistics_inputs"]``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from ..model import Metadata, OpStat, Trace
from ..model.breakdown import only_breakdown
from .merge import unique_labels

STATISTICS_INPUTS = "statistics_inputs"   # metadata attribute: the labels of joined files


def timed_events(trace: Trace) -> int:
    """What ``trace`` holds on a clock: slices, instants, counter samples, memory blocks.

    >>> t = Trace(); _ = t.add_slice(t.add_track("main", process=t.add_process("p")), 0, 5, "x")
    >>> timed_events(t), timed_events(Trace())
    (1, 0)
    """
    counts = trace.counts()
    return counts["slices"] + counts["instants"] + counts["counter_samples"] + len(trace.memory)


def holds_only_statistics(trace: Trace) -> bool:
    """True when ``trace`` has statistics rows and nothing on a clock, op graph included.

    >>> t = Trace(); _ = t.add_stat(OpStat("hipMemcpy", calls=2, total_ns=9))
    >>> holds_only_statistics(t), holds_only_statistics(Trace())
    (True, False)
    """
    return bool(trace.stats) and not timed_events(trace) and not trace.op_count \
        and not trace.has_graph


# what a command that needs a timeline says of an input of statistics (the one phrase)
NOT_A_TIMELINE = "the input holds statistics, not a timeline"


def statistics_not_timeline(trace: Trace) -> bool:
    """True when ``trace`` holds statistics and no timeline: no slices, or only those drawn
    of its statistics (a breakdown).

    >>> t = Trace(); _ = t.add_stat(OpStat("hipMemcpy", calls=2, total_ns=9))
    >>> statistics_not_timeline(t), statistics_not_timeline(Trace())
    (True, False)
    """
    return bool(trace.stats) and (not len(trace.slices) or only_breakdown(trace))


def join_statistics(traces: Sequence[Trace]) -> list[Trace]:
    """``traces`` with the inputs that hold only statistics joined to a timeline (in its
    place): of several, the one whose file name shares the longest start with theirs
    (``rank1_results.csv`` takes ``rank1_results.stats.csv``; the first on a tie); with
    none, to each other (in the place of the first). The inputs are not changed.

    >>> run = Trace(Metadata(source_file="results.csv"))
    >>> _ = run.add_slice(run.add_track("q", process=run.add_process("gpu")), 0, 5, "k")
    >>> api = Trace(Metadata(source_file="results.hip_stats.csv"))
    >>> _ = api.add_stat(OpStat("hipMemcpy", calls=2, total_ns=9, section="hip_api"))
    >>> [joined] = join_statistics([run.freeze(), api.freeze()])
    >>> len(joined.slices), [s.extra["input"] for s in joined.stats], joined.metadata.source_file
    (1, ['results.hip_stats.csv'], 'results.csv + results.hip_stats.csv')
    """
    statistics = [t for t in traces if holds_only_statistics(t)]
    timelines = [t for t in traces if not holds_only_statistics(t)]
    if not timelines:
        return list(traces) if len(statistics) < 2 else [_joined(statistics[0], statistics[1:])]
    joining: dict[int, list[Trace]] = {id(t): [] for t in timelines}
    for table in statistics:
        joining[id(_closest_timeline(table, timelines))].append(table)
    return [_joined(t, joining[id(t)]) if joining[id(t)] else t for t in timelines]


def _closest_timeline(table: Trace, timelines: list[Trace]) -> Trace:
    """The timeline whose file name starts most like ``table``'s (the first on a tie)."""
    name = _file_label(table, 0)
    return max(timelines, key=lambda t: len(os.path.commonprefix([name, _file_label(t, 0)])))


def _joined(base: Trace, statistics: list[Trace]) -> Trace:
    """``base`` (shared, not copied) with the rows of ``statistics`` after its own."""
    labels = unique_labels([_file_label(t, i) for i, t in enumerate([base, *statistics])])
    out = base.derived()
    out.metadata = base.metadata.copy()
    meta = out.metadata
    meta.source_file = " + ".join(labels)
    meta.source_format = "+".join(dict.fromkeys(
        f for f in (t.metadata.source_format for t in (base, *statistics)) if f))
    alone = holds_only_statistics(base)   # (no timeline given: its rows join too)
    joining = labels if alone else labels[1:]
    meta.attributes[STATISTICS_INPUTS] = [*meta.attributes.get(STATISTICS_INPUTS, ()), *joining]
    stats = [_labelled(s, 0, labels[0]) for s in base.stats] if alone else list(base.stats)
    for trace, label in zip(statistics, labels[1:], strict=True):
        first = len(stats)   # (parents count from the table's first row)
        stats.extend(_labelled(s, first, label) for s in trace.stats)
        meta.diagnostics.extend(trace.diagnostics)
    own = 0 if alone else len(base.stats)
    meta.diagnostics.add("merge.statistics_joined", count=len(stats) - own,
                         example=", ".join(joining))
    out.stats = stats
    return out.freeze()


def _labelled(stat: OpStat, first: int, label: str) -> OpStat:
    """``stat`` as a row of the joined trace: its parent renumbered, its file named."""
    return replace(stat, parent=None if stat.parent is None else stat.parent + first,
                   extra={**stat.extra, "input": label})


def _file_label(trace: Trace, index: int) -> str:
    file = trace.metadata.source_file
    return os.path.basename(file) if file else f"input {index}"


def joined_rows(trace: Trace) -> list[int]:
    """The statistics rows of ``trace`` that came from inputs holding only statistics.

    >>> t = Trace(Metadata(attributes={STATISTICS_INPUTS: ["a.csv"]}))
    >>> _ = t.add_stat(OpStat("own")); _ = t.add_stat(OpStat("k", extra={"input": "a.csv"}))
    >>> joined_rows(t)
    [1]
    """
    joined = set(trace.metadata.attributes.get(STATISTICS_INPUTS, ()))
    return [i for i, s in enumerate(trace.stats) if s.extra.get("input") in joined]


def joined_statistics(trace: Trace) -> Trace | None:
    """A new trace holding only the statistics rows that joined ``trace``'s timeline (what
    ``summary`` shows beside the timeline's table); None when none did.

    >>> t = Trace(Metadata(attributes={STATISTICS_INPUTS: ["a.csv"]}))
    >>> _ = t.add_slice(t.add_track("q", process=t.add_process("gpu")), 0, 5, "k")
    >>> _ = t.add_stat(OpStat("k", total_ns=4, extra={"input": "a.csv"}))
    >>> [s.name for s in joined_statistics(t).stats], joined_statistics(Trace())
    (['k'], None)
    """
    rows = joined_rows(trace)
    if not rows or not timed_events(trace):
        return None
    renumber = {old: new for new, old in enumerate(rows)}
    out = Trace(Metadata(source_format=trace.metadata.source_format,
                         source_file=", ".join(trace.metadata.attributes[STATISTICS_INPUTS]),
                         framework=trace.metadata.framework))
    out.stats = [replace(stat, parent=None if stat.parent is None else renumber.get(stat.parent))
                 for stat in (trace.stats[i] for i in rows)]
    return out.freeze()
