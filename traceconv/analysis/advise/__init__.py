"""``advise``: a rule engine over the model that says what to try next.

Each rule (one module per family under ``rules/``, listed once in :mod:`.registry`) reads
concepts of the model (device work, launch links, steps, copies, memory blocks, op
statistics, ...) through :class:`~.context.Context`, never a vendor format; a rule whose
concepts a trace lacks is reported as skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ...model import Trace
from ..rank_parts import split_inputs
from ..runs import split_runs
from ..statistics_inputs import NOT_A_TIMELINE, statistics_not_timeline
from .context import Context
from .finding import SEVERITIES, Advice, Finding, Skipped
from .frameworks import advice_for, framework_of, not_applicable
from .registry import RULES, rule
from .rule import Rule

__all__ = ["Advice", "Finding", "RULES", "Rule", "Skipped", "advise", "rule"]


# a rule's missing concepts, when the input is a statistics table: the table has kernels and
# calls, but no timeline for a rule to find them in
STATISTICS_ONLY = f" ({NOT_A_TIMELINE})"


def advise(traces: Trace | Sequence[Trace], *, rules: Iterable[str] | None = None,
           **options: Any) -> Advice:
    """Run the rules (all, or those named in ``rules``) over one or more traces.

    Options reach the rules through the context (``device_memory=BYTES`` sets the device
    capacity for ``memory-peak`` when the trace does not record it). Each rank of a merged
    trace is judged on its own, as each run of a file is (a finding names its ``trace``:
    the rank, the run): a rank's time is its own steps', never the job's union or average.

    >>> result = advise(Trace())
    >>> result.findings, sorted(s.reason for s in result.skipped)[0]
    ([], 'not applicable: missing allocator totals')
    """
    many = not isinstance(traces, Trace)
    inputs: Sequence[Trace] = [traces] if isinstance(traces, Trace) else traces
    chosen = RULES if rules is None else tuple(rule(r) for r in rules)
    advice = Advice()
    for whole in inputs:
        name = (whole.metadata.source_file or "?") if many else None
        ranks: list[tuple[str | None, Trace]] = [*split_inputs(whole)] or [(None, whole)]
        for rank, part in ranks:
            for run, trace in _runs_of(part):
                _advise_one(trace, ", ".join(x for x in (name, rank, run) if x) or None,
                            chosen, options, advice)
    advice.findings.sort(key=lambda f: SEVERITIES.index(f.severity))
    return advice


def _runs_of(trace: Trace) -> list[tuple[str | None, Trace]]:
    """Each run of ``trace`` with its place (``run 1 of 2 (program 1)``), so that a
    finding's evidence is one run's (:func:`~traceconv.analysis.runs.split_runs`), never a
    sum over runs; the trace itself when it holds one run.

    >>> _runs_of(Trace())[0][0] is None
    True
    """
    several = split_runs(trace)
    return [(f"run {number} of {len(several)} ({label})", run)
            for number, (label, run) in enumerate(several, 1)] or [(None, trace)]


def _advise_one(trace: Trace, label: str | None, chosen: Sequence[Rule],
                options: dict[str, Any], advice: Advice) -> None:
    """Run ``chosen`` over one run of one input, adding to ``advice`` (labelled ``label``
    where several inputs or runs are advised)."""
    ctx = Context(trace, options)
    framework = framework_of(trace)
    for candidate in chosen:
        reason = not_applicable(candidate.id, framework)
        if reason is not None:
            advice.skipped.append(Skipped(candidate.id, reason, label))
            continue
        absent = candidate.missing(ctx)
        if absent:
            # (a statistics table has kernels and calls, but no timeline to find them in)
            kind = STATISTICS_ONLY if statistics_not_timeline(trace) else ""
            advice.skipped.append(Skipped(candidate.id, "not applicable: missing "
                                          + ", ".join(absent) + kind, label))
            continue
        found = candidate.check(ctx)
        for finding in found:
            finding.trace = label
            # the words of the advice follow the framework the trace came from
            key = finding.rule if finding.cause is None else f"{finding.rule}:{finding.cause}"
            finding.advice = advice_for(key, framework, finding.advice)
        advice.findings.extend(found)
        if not found:
            advice.passed.append(candidate.id if label is None
                                 else f"{candidate.id} ({label})")
