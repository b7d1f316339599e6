"""Where the time went between two timelines: deltas per op and kernel that add up.

Each run's step window is cut into pieces charged to one thing each (see
:mod:`.attribution`); the per-name differences therefore add up to the change of the window
exactly, idle time (nothing running) being a row of its own. When the two runs come from
different frameworks, names are compared by op class (:mod:`.op_class`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import TraceconvError
from ..model import Trace
from ..outputs import inputs_named
from ..units import format_duration
from .activity import Activity, Timeline
from .attribution import IDLE, StepTimes, attribute_steps
from .bootstrap import CONFIDENCE, RESAMPLES, SEED, median_change
from .names import normalised, platform
from .op_class import op_class
from .step_samples import renamed


@dataclass
class DeltaRow:
    """One (name, kind): its time summed over the steps of each side, and the change of its
    median step time with the interval (``change``; None before :func:`compare` fills it).
    ``activities``: what its slices are, either side
    (:attr:`~traceconv.analysis.attribution.StepTimes.activities`)."""

    name: str
    kind: str
    a_ns: int
    b_ns: int
    change: Change | None = None
    activities: frozenset[Activity] = frozenset()

    @property
    def delta_ns(self) -> int:
        return self.b_ns - self.a_ns

    def as_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "a_ns": self.a_ns, "b_ns": self.b_ns,
                "delta_ns": self.delta_ns,
                **(self.change.as_dict() if self.change is not None else {})}


@dataclass(frozen=True)
class Change:
    """The median step time of each side, its change and the change's 95 % interval (ns)."""

    median_a_ns: float
    median_b_ns: float
    low_ns: float
    high_ns: float

    @property
    def change_ns(self) -> float:
        return self.median_b_ns - self.median_a_ns

    @property
    def beyond_noise(self) -> bool:
        """True when no change (0) is outside the interval."""
        return self.low_ns > 0 or self.high_ns < 0

    def pct(self, ns: float) -> float | None:
        """``ns`` as a share of A's median (%), None when A's median is 0."""
        return round(100 * ns / self.median_a_ns, 4) if self.median_a_ns else None

    def as_dict(self) -> dict:
        low, high = self.pct(self.low_ns), self.pct(self.high_ns)
        return {"median_a_ns": round(self.median_a_ns), "median_b_ns": round(self.median_b_ns),
                "median_change_ns": round(self.change_ns),
                "median_change_pct": self.pct(self.change_ns),
                "ci_ns": [round(self.low_ns), round(self.high_ns)],
                "ci_pct": None if low is None else [low, high]}


def changes_of(a: np.ndarray, b: np.ndarray) -> list[Change]:
    """One :class:`Change` per row of ``a`` and ``b`` (rows × samples).

    >>> changes_of(np.array([[4, 6]]), np.array([[5]]))
    [Change(median_a_ns=5.0, median_b_ns=5.0, low_ns=-1.0, high_ns=1.0)]
    """
    found = median_change(a, b)
    return [Change(*values) for values in zip(
        found.median_a.tolist(), found.median_b.tolist(), found.low.tolist(),
        found.high.tolist(), strict=True)]


@dataclass
class TimelineDiff:
    """Window totals, samples (steps) a side and the rows (largest change first; they sum
    to the total). ``samples_a``/``samples_b``: each row's time in each step (rows ×
    steps, in row order); ``total``: the change of the step time."""

    window_a_ns: int
    window_b_ns: int
    steps_a: int
    steps_b: int
    by_op_class: bool
    rows: list[DeltaRow] = field(default_factory=list)
    samples_a: np.ndarray = field(default_factory=lambda: np.zeros((0, 1), np.int64),
                                  repr=False)
    samples_b: np.ndarray = field(default_factory=lambda: np.zeros((0, 1), np.int64),
                                  repr=False)
    total: Change | None = None
    normalised_names: bool = False

    @property
    def total_delta_ns(self) -> int:
        return self.window_b_ns - self.window_a_ns

    def __repr__(self) -> str:
        """The change of the window and the largest row, not every row (``rows`` has them).

        >>> TimelineDiff(3_000_000, 2_000_000, 1, 1, False)
        <TimelineDiff: window 3 ms → 2 ms (Δ -1 ms), 0 rows>
        """
        top = (f", largest {self.rows[0].name!r} "
               f"({format_duration(self.rows[0].delta_ns, signed=True)})" if self.rows else "")
        return (f"<TimelineDiff: window {format_duration(self.window_a_ns)} → "
                f"{format_duration(self.window_b_ns)} "
                f"(Δ {format_duration(self.total_delta_ns, signed=True)}), "
                f"{len(self.rows):,} rows{top}>")

    def kinds(self) -> dict[str, Change]:
        """The change of each kind's step time (its rows summed per step), by kind."""
        names = sorted({r.kind for r in self.rows})
        if not names:
            return {}
        kind_of = np.array([names.index(r.kind) for r in self.rows])
        summed = [np.stack([m[kind_of == k].sum(axis=0) for k in range(len(names))])
                  for m in (self.samples_a, self.samples_b)]
        return dict(zip(names, changes_of(*summed), strict=True))

    def as_dict(self) -> dict:
        return {"kind": "timeline", "total_delta_ns": self.total_delta_ns,
                "window_a_ns": self.window_a_ns, "window_b_ns": self.window_b_ns,
                "steps_a": self.steps_a, "steps_b": self.steps_b,
                "samples_a": self.steps_a, "samples_b": self.steps_b,
                "confidence": CONFIDENCE, "resamples": RESAMPLES, "seed": SEED,
                "names": "op class" if self.by_op_class else
                "normalised" if self.normalised_names else "as recorded",
                "total": None if self.total is None else self.total.as_dict(),
                "kinds": {k: c.as_dict() for k, c in self.kinds().items()},
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
    for kind, trace in kinds:
        if kind == "empty":   # (named as the input layer names a file)
            raise TraceconvError("has neither a timeline nor statistics: nothing to diff",
                                 file=inputs_named(trace) or "one input")
    described = [f"{k} ({t.metadata.framework or t.metadata.source_format or '?'})"
                 for k, t in kinds]
    raise TraceconvError(
        f"cannot diff a {described[0]} against a {described[1]}: a timeline's measured time "
        "and a report's aggregated statistics do not count the same thing; diff two "
        "timelines or two reports")


def normalise_by_default(a: StepTimes, b: StepTimes, sources_a: set[str],
                         sources_b: set[str]) -> bool:
    """Names are normalised (:mod:`.names`) when the two sides were recorded differently:
    other profilers or frameworks (``sources``: their format and framework names), or a
    CUDA run against a ROCm one.

    >>> cuda = StepTimes([("cudaLaunchKernel", "cpu")], np.array([[1]]), [1])
    >>> rocm = StepTimes([("hipLaunchKernel", "cpu")], np.array([[1]]), [1])
    >>> normalise_by_default(cuda, rocm, {"chrome PyTorch"}, {"chrome PyTorch"})
    True
    >>> normalise_by_default(cuda, cuda, {"chrome PyTorch"}, {"nsys"})
    True
    """
    if sources_a != sources_b:
        return True
    return platform([n for n, _ in a.keys]) != platform([n for n, _ in b.keys])


def timeline_diff(a: Trace, b: Trace, by_op_class: bool | None = None,
                  normalise: bool | None = None) -> TimelineDiff:
    """The attributing diff of two timelines (``by_op_class``: default when frameworks
    differ; ``normalise``: names in one spelling, default when the runs were recorded
    differently, :func:`normalise_by_default`).

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
    steps_a, steps_b = attribute_steps(a), attribute_steps(b)
    if normalise is None:
        normalise = normalise_by_default(steps_a, steps_b, {source_of(a)}, {source_of(b)})
    return compare(steps_a, steps_b, by_op_class, normalise)


def source_of(trace: Trace) -> str:
    """The format and framework a trace came from, as one label."""
    return f"{trace.metadata.source_format or ''} {trace.metadata.framework or ''}".strip()


def compare(a: StepTimes, b: StepTimes, by_op_class: bool = False,
            normalise: bool = False) -> TimelineDiff:
    """The diff of two sides' steps: each row's summed time and median change with its
    interval, and the step total's.

    >>> a = StepTimes([("mm", "cpu")], np.array([[10, 12, 11]]), [1, 2, 3])
    >>> b = StepTimes([("mm", "cpu"), ("add", "cpu")], np.array([[20, 22, 21], [1, 1, 1]]), [1, 2, 3])
    >>> d = compare(a, b); [(r.name, r.delta_ns) for r in d.rows], d.total.change_ns
    ([('mm', 30), ('add', 3), ('(idle: nothing running)', 0)], 11.0)
    """
    if normalise:
        a, b = renamed(a, normalised), renamed(b, normalised)
    if by_op_class:
        a, b = (renamed(side, lambda name, _kind: op_class(name)) for side in (a, b))
    keys = list(dict.fromkeys([*a.keys, *b.keys, IDLE]))   # idle: always a row
    matrices = []
    for side in (a, b):
        place = {key: i for i, key in enumerate(side.keys)}
        matrix = np.zeros((len(keys), len(side.steps)), np.int64)
        found = [i for i, key in enumerate(keys) if key in place]
        matrix[found] = side.ns[[place[keys[i]] for i in found]]
        matrices.append(matrix)
    sums = [m.sum(axis=1).tolist() for m in matrices]
    changes = changes_of(*matrices) if keys else []
    rows = [DeltaRow(name, kind, sa, sb, change,
                     a.activities.get((name, kind), frozenset())
                     | b.activities.get((name, kind), frozenset()))
            for (name, kind), sa, sb, change in zip(keys, *sums, changes, strict=True)]
    order = sorted(range(len(rows)), key=lambda i: (-abs(rows[i].delta_ns),
                                                    -(rows[i].a_ns + rows[i].b_ns), rows[i].name))
    total = changes_of(matrices[0].sum(axis=0, keepdims=True),
                       matrices[1].sum(axis=0, keepdims=True))[0]
    return TimelineDiff(int(matrices[0].sum()), int(matrices[1].sum()), len(a.steps),
                        len(b.steps), by_op_class, [rows[i] for i in order],
                        matrices[0][order], matrices[1][order], total, normalise)
