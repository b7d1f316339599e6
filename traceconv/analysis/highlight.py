"""Draw a critical path into a trace: a new trace with a "Critical path" track and flows.

Analyses never change the trace they are given, so the path goes into a copy
(:meth:`Trace.copy <traceconv.model.Trace.copy>`), frozen when done.
"""

from __future__ import annotations

from ..model import ProcessKind, Trace, TrackKind
from ..units import format_duration
from .critical_path import CriticalPath

PATH_CATEGORY = "critical_path"


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
    new = trace.copy()
    process = new.add_process("Critical path", kind=ProcessKind.SYNTHETIC, sort_index=-1)
    track = new.add_track(f"critical path ({len(path.path)} links, {format_duration(path.length_ns)})",
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
    return new.freeze()
