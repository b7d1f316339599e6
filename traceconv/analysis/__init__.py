"""The analyses over the model, in one place: summaries, advice, critical path, diffs,
stragglers, memory, and the transformations (merge, trim, align).

>>> import traceconv
>>> from traceconv import analysis
>>> trace = traceconv.load("samples/torch/cnn_step5.pt.trace.json")      # doctest: +SKIP
>>> analysis.op_summary(trace)[0], analysis.advise(trace).findings          # doctest: +SKIP

Every analysis reads a trace and never changes it; a transformation returns a new one. The
names below are imported on first use (``import traceconv.analysis`` loads none of the
analyses: the CLI starts fast), and seen by type checkers as usual. What each slice is
comes from the model's activity column (:func:`slice_activity`), never a vendor's words.

A public name is the function even where a module has the same name:
``traceconv.analysis.op_summary`` is the function, ``from traceconv.analysis.op_summary
import OpRow`` still reads the module.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

# public name -> the module that defines it (add a line when adding a public name)
_EXPORTS = {
    # per-operator tables
    "op_summary": ".op_summary", "OpRow": ".op_summary", "sort_rows": ".op_summary",
    "summarize": ".summary", "Summary": ".summary", "SummaryOptions": ".summary",
    "Row": ".summary",
    # advice, critical path, idle time
    "advise": ".advise", "Advice": ".advise", "Finding": ".advise", "Skipped": ".advise",
    "RULES": ".advise",
    "critical_path": ".critical_path", "CriticalPath": ".critical_path",
    "PathEntry": ".critical_path",
    "job_critical_path": ".job_path", "JobPath": ".job_path",
    "device_idle": ".idle", "DeviceIdle": ".idle",
    # comparing traces and ranks
    "diff": ".diff", "OpDelta": ".diff", "OpTotals": ".diff",
    "timeline_diff": ".timeline_diff", "TimelineDiff": ".timeline_diff",
    "DeltaRow": ".timeline_diff",
    "stragglers": ".stragglers", "Straggler": ".stragglers",
    "align": ".align", "Alignment": ".align", "RankAlignment": ".align",
    # memory
    "live_bytes": "..model.memory", "LiveBytes": "..model.memory",
    "memory_report": ".memory_moment", "memory_diff": ".memory_diff",
    "memory_ranks": ".memory_ranks",
    # transformations (each returns a new trace)
    "merge": ".merge", "trim": ".trim", "link_execution_trace": ".link_et",
    "annotate_replay": ".graph_replay", "map_replay": ".graph_replay",
    "ReplayMapping": ".graph_replay",
    # the shared vocabulary
    "Activity": ".activity", "Timeline": ".activity", "slice_activity": ".activity",
    # errors an analysis raises (besides ValueError for a bad argument)
    "TraceconvError": "..errors", "InputError": "..errors",
}

if TYPE_CHECKING:
    from ..errors import InputError, TraceconvError
    from ..model.memory import LiveBytes, live_bytes
    from .activity import Activity, Timeline, slice_activity
    from .advise import RULES, Advice, Finding, Skipped, advise
    from .align import Alignment, RankAlignment, align
    from .critical_path import CriticalPath, PathEntry, critical_path
    from .diff import OpDelta, OpTotals, diff
    from .graph_replay import ReplayMapping, annotate_replay, map_replay
    from .idle import DeviceIdle, device_idle
    from .job_path import JobPath, job_critical_path
    from .link_et import link_execution_trace
    from .memory_diff import memory_diff
    from .memory_moment import memory_report
    from .memory_ranks import memory_ranks
    from .merge import merge
    from .op_summary import OpRow, op_summary, sort_rows
    from .stragglers import Straggler, stragglers
    from .summary import Row, Summary, SummaryOptions, summarize
    from .timeline_diff import DeltaRow, TimelineDiff, timeline_diff
    from .trim import trim

__all__ = [
    "Activity", "Advice", "Alignment", "CriticalPath", "DeltaRow", "DeviceIdle", "Finding",
    "InputError", "JobPath", "LiveBytes", "OpDelta", "OpRow", "OpTotals", "PathEntry", "RULES",
    "RankAlignment", "ReplayMapping", "Row", "Skipped", "Straggler", "Summary", "SummaryOptions",
    "Timeline", "TimelineDiff", "TraceconvError", "advise", "align", "annotate_replay",
    "critical_path", "device_idle", "diff", "job_critical_path", "link_execution_trace",
    "live_bytes", "map_replay", "memory_diff", "memory_ranks", "memory_report",
    "merge",
    "op_summary", "slice_activity",
    "sort_rows", "stragglers", "summarize", "timeline_diff", "trim",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'traceconv.analysis' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


class _Facade(ModuleType):
    """This package, whose public names stay the public objects: importing the submodule
    ``op_summary`` must not rebind ``traceconv.analysis.op_summary`` to the module."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Facade
