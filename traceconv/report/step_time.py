"""The report's Step time section: each instant of the steps charged to device work, else
host work, else idle (:mod:`traceconv.analysis.attribution`), summed by kind.

A trace read alone gets one breakdown. A merged trace (several ranks) gets one row per rank,
each over its own step windows (:meth:`~traceconv.analysis.activity.Timeline.input_steps`),
and a job-level line: the slowest rank, and who arrived last at the collectives.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from ..markup import escape
from ..model import Trace
from ..units import column_figures, format_duration
from .page import table
from .svg import rank_bars, stacked_bar

# the step-time breakdown's names for the attribution kinds
BREAKDOWN = (("kernel", "compute"), ("memcpy", "memcpy"), ("communication", "communication"),
             ("cpu", "host"), ("other", "other work"), ("idle", "idle"))


@dataclass(frozen=True)
class RankStepTime:
    """One input's (rank's) steps summed by part: ``parts`` is (label, ns) in
    :data:`BREAKDOWN` order (other work only where some rank has it), adding up to
    ``window_ns``, its step windows."""

    label: str
    steps: int
    window_ns: int
    parts: tuple[tuple[str, int], ...]

    @property
    def per_step_ns(self) -> float:
        return self.window_ns / self.steps if self.steps else 0.0


def rank_step_times(trace: Trace) -> list[RankStepTime]:
    """The step time of each input of ``trace`` (one for a trace read alone), in input order.

    >>> import traceconv
    >>> from traceconv.analysis.merge import merge
    >>> ranks = sorted(__import__("glob").glob("samples/torch/ddp_gloo_rank*.pt.trace.json.gz"))
    >>> times = rank_step_times(merge([traceconv.load(p) for p in ranks[:2]]))
    >>> [(t.label, t.steps, t.window_ns == sum(ns for _, ns in t.parts)) for t in times]
    [('rank 0', 1, True), ('rank 1', 1, True)]
    """
    from ..analysis.attribution import attribute_ranks

    labels = [str(part["label"]) for part in trace.metadata.attributes.get("inputs") or ()]
    sums = []
    for times in attribute_ranks(trace):
        by_kind = dict.fromkeys((kind for kind, _ in BREAKDOWN), 0)
        for (_, kind), ns in zip(times.keys, times.ns.sum(axis=1).tolist(), strict=True):
            by_kind[kind] += ns
        sums.append((times, by_kind))
    # (other work, bookkeeping a device names but that is no kernel, is shown where a rank has
    # some: a column of zeros on every other trace would say nothing)
    shown = [(kind, name) for kind, name in BREAKDOWN
             if kind != "other" or any(by_kind["other"] for _, by_kind in sums)]
    return [RankStepTime(labels[index] if index < len(labels) else f"input {index}",
                         len(times.steps), int(times.ns.sum()),
                         tuple((name, by_kind[kind]) for kind, name in shown))
            for index, (times, by_kind) in enumerate(sums)]


def step_time_section(trace: Trace) -> str:
    """The section's HTML: one breakdown, or a row per rank and the job-level line.

    >>> import traceconv
    >>> html = step_time_section(traceconv.load("samples/torch/resnet18_train_cuda.pt.trace.json.gz"))
    >>> "2 steps" in html, "<svg" in html
    (True, True)
    """
    times = rank_step_times(trace)
    if len(times) == 1:
        return _one_breakdown(times[0])
    return _job_line(trace, times) + _rank_table(times)


def _one_breakdown(time: RankStepTime) -> str:
    steps, window, parts = time.steps, time.window_ns, time.parts
    total_unit, totals = column_figures([ns for _, ns in parts])
    step_unit, per_step = column_figures([ns / steps for _, ns in parts] if steps else [])
    rows = [(label, totals[i], f"{100 * ns / window:.1f}%" if window else "-",
             per_step[i] if steps else "-") for i, (label, ns) in enumerate(parts)]
    note = ("<p class=\"muted\">Each instant of the steps is charged to the device work "
            "running, else the host op running, else idle (so the parts add up to the steps: "
            f"{steps} step{'s' if steps != 1 else ''}, {format_duration(window)}).</p>")
    return (stacked_bar(list(parts)) + note
            + table(["part", f"total {total_unit}", "share",
                     f"per step {step_unit}" if steps else "per step"], rows,
                    [False, True, True, True]))


def _slowest(times: list[RankStepTime]) -> RankStepTime:
    """The rank whose steps took longest on average (the first such, on a tie)."""
    return max(times, key=lambda t: t.per_step_ns)


def _job_line(trace: Trace, times: list[RankStepTime]) -> str:
    """The slowest rank against the median rank, and who arrived last at collectives."""
    from ..analysis.stragglers import last_counts, stragglers

    slowest = _slowest(times)
    typical = median(t.per_step_ns for t in times)
    over = slowest.per_step_ns - typical
    share = f" ({100 * over / typical:.1f}%)" if typical else ""
    text = (f"<p>{len(times)} ranks, each over its own steps (its step markers widened by the "
            "device work they launched; without markers, its first to its last work). "
            f"Longest steps: <b>{escape(slowest.label)}</b>, {format_duration(slowest.per_step_ns)} "
            f"a step, {format_duration(over)}{share} over the median rank "
            f"({format_duration(typical)}).")
    rows = stragglers(trace)
    if rows:
        counts = ", ".join(f"{escape(label)} at {n:,}" for label, n in
                           last_counts(rows).most_common())
        text += (" A rank that waits in collectives has long steps; the one that arrives "
                 "last holds the others up. Last to arrive at the "
                 f"{len(rows):,} collectives matched across ranks: {counts}.")
    return text + "</p>"


def _rank_table(times: list[RankStepTime]) -> str:
    """Per rank: steps, time a step and each part a step (share of its steps), with bars on
    one scale."""
    slowest = _slowest(times)
    names = [name for name, _ in times[0].parts]
    unit, figures = column_figures([t.per_step_ns for t in times]
                                   + [ns / t.steps if t.steps else 0
                                      for t in times for _, ns in t.parts])
    per_step, cells = figures[:len(times)], figures[len(times):]
    rows = []
    for i, t in enumerate(times):
        mine = cells[i * len(names):(i + 1) * len(names)]
        shares = [f"{100 * ns / t.window_ns:.1f}%" if t.window_ns else "-" for _, ns in t.parts]
        label = f"{t.label} (slowest)" if t is slowest else t.label
        rows.append((label, t.steps, per_step[i],
                     *(f"{figure} ({share})" for figure, share in zip(mine, shares,
                                                                     strict=True))))
    note = ("<p class=\"muted\">Per rank, a step's time charged to the device work running, "
            "else the host op running, else idle; the parts add up to the rank's steps. Bars "
            "on one scale: the slowest rank's step is the full width.</p>")
    return (rank_bars([(t.label, [(name, ns / t.steps if t.steps else 0)
                                  for name, ns in t.parts]) for t in times]) + note
            + table(["rank", "steps", f"per step {unit}",
                     *(f"{name} {unit} (share)" for name in names)], rows,
                    [False, True, True, *([True] * len(names))]))
