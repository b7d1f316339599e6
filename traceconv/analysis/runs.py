"""Several runs in one file (two MIGraphX perf runs, two Paddle profiling windows): list them
and take one out, so a file can be diffed run against run."""

from __future__ import annotations

import re
from dataclasses import replace

from ..model import Trace

# where readers label the run of a statistics row: MIGraphX "run", Paddle's "window"
_RUN_KEYS = ("run", "window")


def run_label(extra: dict) -> str | None:
    """The run a statistics row's ``extra`` names, or None.

    >>> run_label({"window": 0}), run_label({"run": "v4"}), run_label({})
    ('0', 'v4', None)
    """
    for key in _RUN_KEYS:
        if extra.get(key) is not None:
            return str(extra[key])
    return None


def runs(trace: Trace) -> list[str]:
    """The run labels of the trace's statistics, in file order (empty: one run).

    >>> from traceconv.model import OpStat
    >>> t = Trace(); _ = t.add_stat(OpStat("a", extra={"window": 0}))
    >>> _ = t.add_stat(OpStat("a", extra={"window": 1})); runs(t)
    ['0', '1']
    """
    labels = dict.fromkeys(label for s in trace.stats if (label := run_label(s.extra)) is not None)
    return list(labels) if len(labels) > 1 else []


def select_run(trace: Trace, number: int) -> Trace:
    """A new trace with only run ``number`` (1-based): its statistics, and its processes when
    the reader named them after the run (``MIGraphX program 2``)."""
    labels = runs(trace)
    if not 1 <= number <= len(labels):
        raise ValueError(f"run {number} of {len(labels) or 1}")
    wanted = labels[number - 1]
    from .trim import trim  # (only here: a conversion asks runs() of every statistics input)

    # readers that keep runs apart on the timeline name each run's processes after it
    if any(p.name.endswith(f" {wanted}") for p in trace.processes):
        kept = trim(trace, tracks=rf"\b{re.escape(wanted)} / ").derived()
    else:
        kept = trace.derived()
    rows = [i for i, s in enumerate(trace.stats) if run_label(s.extra) == wanted]
    renumber = {old: new for new, old in enumerate(rows)}
    stats = [trace.stats[old] for old in rows]
    kept.stats = [replace(s, parent=None if s.parent is None else renumber.get(s.parent))
                  for s in stats]
    kept.metadata = replace(kept.metadata, attributes={**kept.metadata.attributes,
                                                        "run": wanted})
    return kept.freeze()
