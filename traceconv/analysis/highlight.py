"""Draw a critical path into a trace: a new trace with a "Critical path" track and flows.

Analyses never change the trace they are given, so the path goes into a copy: the copy's
event tables are copied (they are appended to), argument dicts and memory blocks are shared
(nothing here changes them).
"""

from __future__ import annotations

import copy
from array import array

from ..model import ProcessKind, Trace, TrackKind
from ..model.args import ArgsColumn
from .critical_path import CriticalPath

PATH_CATEGORY = "critical_path"


def appendable_copy(trace: Trace) -> Trace:
    """A copy of ``trace`` that can grow (new processes, tracks, events, strings) without
    touching the original; event argument dicts are shared, not copied.

    >>> t = Trace(); p = t.add_process("p"); _ = t.add_slice(t.add_track("a", process=p), 0, 1, "x")
    >>> c = appendable_copy(t); _ = c.add_slice(0, 5, 1, "y"); len(t.slices), len(c.slices)
    (1, 2)
    """
    new = copy.copy(trace)
    new.metadata = copy.deepcopy(trace.metadata)
    new.strings = copy.deepcopy(trace.strings)
    new.processes = [copy.copy(p) for p in trace.processes]
    new.tracks = [copy.copy(t) for t in trace.tracks]
    new.graph = trace.graph.copy()
    new.memory = list(trace.memory)
    new.stats = list(trace.stats)
    for name in ("slices", "instants", "counters", "flows"):
        table = copy.copy(getattr(trace, name))
        for attr, value in vars(table).items():
            if isinstance(value, array):
                setattr(table, attr, array(value.typecode, value))
            elif isinstance(value, ArgsColumn):
                setattr(table, attr, value.copy())
            elif isinstance(value, list):
                setattr(table, attr, list(value))
        setattr(new, name, table)
    return new


def highlight(trace: Trace, path: CriticalPath) -> Trace:
    """A copy of ``trace`` with the path drawn on its own track, and flows that follow it
    through the original slices (one arrow per link, across threads and streams).

    >>> from traceconv.analysis.critical_path import critical_path
    >>> t = Trace(); p = t.add_process("p"); a = t.add_track("a", process=p)
    >>> _ = t.add_slice(a, 0, 10, "x", "cpu_op"); _ = t.add_slice(a, 10, 5, "y", "cpu_op")
    >>> shown = highlight(t, critical_path(t))
    >>> [tr.name for tr in shown.tracks], len(shown.flows), len(t.tracks)
    (['a', 'critical path (2 links, 15 ns)'], 1, 1)
    """
    new = appendable_copy(trace)
    process = new.add_process("Critical path", kind=ProcessKind.SYNTHETIC, sort_index=-1)
    track = new.add_track(f"critical path ({len(path.path)} links, {path.length_ns:,} ns)",
                          process=process, kind=TrackKind.SYNTHETIC,
                          description=f"{path.mode} critical path; gaps are idle time")
    previous_row: int | None = None
    for entry in path.path:
        new.add_slice(track, entry.start_ns, entry.dur_ns, entry.name, PATH_CATEGORY,
                      {"kind": entry.kind, "on_path_ns": entry.dur_ns})
        if entry.row is not None:
            if previous_row is not None and previous_row != entry.row:
                new.add_flow(previous_row, entry.row, PATH_CATEGORY, "critical path")
            previous_row = entry.row
    return new
