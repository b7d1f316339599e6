"""Where the time went between two timelines: deltas per op and kernel that add up.

Each run's step window is cut into pieces charged to one thing each (see
:mod:`.attribution`); the per-name differences therefore add up to the change of the window
exactly, idle time (nothing running) being a row of its own. When the two runs come from
different frameworks, names are compared by op class (:mod:`.op_class`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import TraceconvError
from ..model import Trace
from .activity import Activity, Timeline
from .attribution import IDLE, attribute_time, by_class
from .op_class import op_class


@dataclass
class DeltaRow:
    name: str
    kind: str
    a_ns: int
    b_ns: int

    @property
    def delta_ns(self) -> int:
        return self.b_ns - self.a_ns

    def as_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "a_ns": self.a_ns, "b_ns": self.b_ns,
                "delta_ns": self.delta_ns}


@dataclass
class TimelineDiff:
    """Window totals, steps and the rows (largest change first; they sum to the total)."""

    window_a_ns: int
    window_b_ns: int
    steps_a: int
    steps_b: int
    by_op_class: bool
    rows: list[DeltaRow] = field(default_factory=list)

    @property
    def total_delta_ns(self) -> int:
        return self.window_b_ns - self.window_a_ns

    def __repr__(self) -> str:
        """The change of the window and the largest row, not every row (``rows`` has them).

        >>> TimelineDiff(3_000_000, 2_000_000, 1, 1, False)
        <TimelineDiff: window 3.000 → 2.000 ms (Δ -1.000 ms), 0 rows>
        """
        top = f", largest {self.rows[0].name!r} ({self.rows[0].delta_ns / 1e6:+,.3f} ms)" \
            if self.rows else ""
        return (f"<TimelineDiff: window {self.window_a_ns / 1e6:,.3f} → "
                f"{self.window_b_ns / 1e6:,.3f} ms (Δ {self.total_delta_ns / 1e6:+,.3f} ms), "
                f"{len(self.rows):,} rows{top}>")

    def as_dict(self) -> dict:
        return {"kind": "timeline", "total_delta_ns": self.total_delta_ns,
                "window_a_ns": self.window_a_ns, "window_b_ns": self.window_b_ns,
                "steps_a": self.steps_a, "steps_b": self.steps_b,
                "names": "op class" if self.by_op_class else "as recorded",
                "rows": [r.as_dict() for r in self.rows]}


def is_timeline(trace: Trace) -> bool:
    """True when the trace has measured slices (not only statistics drawn as slices)."""
    if not len(trace.slices):
        return False
    return bool((Timeline(trace).activity != Activity.AGGREGATE).any())


def diff_mode(a: Trace, b: Trace, prefer_timeline: bool = False) -> str:
    """``"statistics"`` when both carry op statistics (reports, summaries; the source's own
    numbers come first), ``"timeline"`` when both have timelines; raises with the reason
    when the two cannot be compared."""
    timelines = is_timeline(a) and is_timeline(b)
    if a.stats and b.stats and not (prefer_timeline and timelines):
        return "statistics"
    if timelines:
        return "timeline"
    kinds = [("timeline" if is_timeline(t) else "statistics report" if t.stats else "empty", t)
             for t in (a, b)]
    if any(k == "empty" for k, _ in kinds):
        raise TraceconvError("one input has neither a timeline nor statistics")
    described = [f"{k} ({t.metadata.framework or t.metadata.source_format or '?'})"
                 for k, t in kinds]
    raise TraceconvError(
        f"cannot diff a {described[0]} against a {described[1]}: a timeline's measured time "
        "and a report's aggregated statistics do not count the same thing; diff two "
        "timelines or two reports")


def timeline_diff(a: Trace, b: Trace, by_op_class: bool | None = None) -> TimelineDiff:
    """The attributing diff of two timelines (``by_op_class``: default when frameworks differ).

    >>> from traceconv.model import ProcessKind
    >>> def run(conv_ns):
    ...     t = Trace(); h = t.add_process("host"); main = t.add_track("main", process=h)
    ...     _ = t.add_slice(main, 0, conv_ns + 10, "step", "cpu_op")
    ...     _ = t.add_slice(main, 0, conv_ns, "aten::conv2d", "cpu_op"); return t
    >>> d = timeline_diff(run(50), run(30))
    >>> d.total_delta_ns, [(r.name, r.delta_ns) for r in d.rows]
    (-20, [('aten::conv2d', -20), ('step', 0), ('(idle: nothing running)', 0)])
    """
    if not (is_timeline(a) and is_timeline(b)):
        diff_mode(a, b)   # raises with the reason
        raise TraceconvError("both inputs must be timelines")
    if by_op_class is None:
        by_op_class = (a.metadata.framework or "") != (b.metadata.framework or "")
    times_a, window_a, steps_a = attribute_time(a)
    times_b, window_b, steps_b = attribute_time(b)
    if by_op_class:
        times_a, times_b = by_class(times_a, op_class), by_class(times_b, op_class)
    keys = dict.fromkeys([*times_a, *times_b, IDLE])
    rows = [DeltaRow(name, kind, times_a.get((name, kind), 0), times_b.get((name, kind), 0))
            for name, kind in keys]
    rows.sort(key=lambda r: (-abs(r.delta_ns), -(r.a_ns + r.b_ns), r.name))
    return TimelineDiff(window_a, window_b, steps_a, steps_b, by_op_class, rows)
