"""A run read twice, as a timeline and as a statistics table of the same work, where the
timeline holds only part of it (a paste that elided most of a per-instruction listing but
kept the report's whole summary table).

The table is then the better measure of the run: summaries, reports and totals use its
rows; conversions draw them beside the timeline; the timeline's slices stay in the trace,
drawn but in no total. A reader that finds such a run says so once, here, with why; what
follows from it is decided in the shared layers (:mod:`traceconv.analysis.summary`,
:func:`traceconv.api.convert`), never per reader.
"""

from __future__ import annotations

from .trace import Trace

PARTIAL_TIMELINE = "partial_timeline"   # metadata attribute: why the timeline is partial


def mark_partial_timeline(trace: Trace, why: str, slices: int) -> None:
    """Record that ``trace``'s statistics, not its ``slices`` timed slices, measure the
    run (``why``: what shows the timeline partial), counted as ``model.timeline_partial``.

    >>> from traceconv.model import OpStat
    >>> t = Trace(); _ = t.add_stat(OpStat("conv", calls=3, total_ns=5))
    >>> mark_partial_timeline(t, "the listing elides instructions", 2)
    >>> timeline_is_partial(t), [(d.code, d.count) for d in t.diagnostics]
    (True, [('model.timeline_partial', 2)])
    """
    trace.metadata.attributes[PARTIAL_TIMELINE] = why
    trace.diagnostics.add("model.timeline_partial", count=slices, example=why)


def timeline_is_partial(trace: Trace) -> bool:
    """Whether ``trace``'s statistics table measures its run instead of its timeline
    (:func:`mark_partial_timeline`), and holds rows to do it.

    >>> timeline_is_partial(Trace())
    False
    """
    return PARTIAL_TIMELINE in trace.metadata.attributes and bool(trace.stats)


def partial_timeline_note(trace: Trace) -> str | None:
    """The sentence that says which table the totals use; None when the timeline is whole.

    >>> from traceconv.model import OpStat
    >>> t = Trace(); _ = t.add_stat(OpStat("conv", total_ns=5))
    >>> mark_partial_timeline(t, "a '...' line elides the listing", 2)
    >>> print(partial_timeline_note(t))
    totals use the statistics table, not the timeline: a '...' line elides the listing
    """
    if not timeline_is_partial(trace):
        return None
    return ("totals use the statistics table, not the timeline: "
            f"{trace.metadata.attributes[PARTIAL_TIMELINE]}")
