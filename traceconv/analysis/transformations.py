"""The table of transformations: every function that makes a new trace from loaded ones.

Each entry takes the loaded input traces and returns a new trace; none changes its inputs.
The test suite runs every entry on the bundled samples and holds each result to the model's
invariants (:func:`traceconv.validate`) and each input to what it was: a new
transformation is one line here to be covered by those checks.

>>> [t.name for t in TRANSFORMATIONS]
['merge', 'align', 'trim', 'combine', 'nesting', 'highlight', 'dataflow', 'copy', 'graph_replay']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..implementations import implementation
from ..model import Trace


@dataclass(frozen=True)
class Transformation:
    """One row: a name, how many inputs it needs at least, and the function."""

    name: str
    inputs: int
    apply: Callable[[Sequence[Trace]], Trace]


def _merge(traces: Sequence[Trace]) -> Trace:
    from .merge import merge

    return merge(traces, align="none")


def _align(traces: Sequence[Trace]) -> Trace:
    from .merge import merge

    return merge(traces, align="collectives")


def _trim(traces: Sequence[Trace]) -> Trace:
    from .trim import TrimOptions, trim_with

    bounds = traces[0].time_range
    half = (bounds[1] - bounds[0]) // 2 if bounds else 0
    return trim_with(traces[0], TrimOptions(window=(half // 2, half + half // 2)))


def _combine(traces: Sequence[Trace]) -> Trace:
    # (the API's combine knows formats, above the analyses: reached by registration)
    return implementation("combine")(traces)


def _nesting(traces: Sequence[Trace]) -> Trace:
    from ..model.nesting import nested_view

    return nested_view(traces[0], max_depth=4).freeze()


def _highlight(traces: Sequence[Trace]) -> Trace:
    from .critical_path import critical_path
    from .highlight import highlight

    return highlight(traces[0], critical_path(traces[0]))


def _dataflow(traces: Sequence[Trace]) -> Trace:
    from .dataflow import with_dataflow_flows

    return with_dataflow_flows(traces[0])


def _copy(traces: Sequence[Trace]) -> Trace:
    return traces[0].copy().freeze()


def _graph_replay(traces: Sequence[Trace]) -> Trace:
    from .graph_replay import annotate_replay

    return annotate_replay(traces[0], traces[1])


TRANSFORMATIONS: tuple[Transformation, ...] = (
    Transformation("merge", 2, _merge),
    Transformation("align", 2, _align),
    Transformation("trim", 1, _trim),
    Transformation("combine", 2, _combine),
    Transformation("nesting", 1, _nesting),
    Transformation("highlight", 1, _highlight),
    Transformation("dataflow", 1, _dataflow),
    Transformation("copy", 1, _copy),
    Transformation("graph_replay", 2, _graph_replay),
)
