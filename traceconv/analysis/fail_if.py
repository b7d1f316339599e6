"""``diff --fail-if``: regression gates for CI over a timeline diff.

A gate is ``SUBJECT:+LIMIT`` where LIMIT is a share (``+5%``, of A's median) or a time
(``+2ms``, ``+300us``, ``+1500ns``, ``+0.5s``). SUBJECT is ``total`` (the step time), a
kind (``cpu``, ``kernel``, ``memcpy``, ``communication``, ``idle``: the rows of that kind
summed per step), an activity (``memset``, ``collective``, ``runtime``, ``host_op``: the
rows doing that, whichever profiler recorded them), or an op / kernel name or op class
(``aten::conv2d``, ``convolution``: the rows whose name, normalised name or class is that). The subject's time in each step is a sample; the
change is the change of the medians with its 95 % interval (:mod:`.bootstrap`).

A gate (``--fail-if``) fires when the change is past LIMIT with confidence: the interval's
lower bound is past it, so step-to-step noise does not fire it. A point gate
(``--fail-if-any``) fires when the median change alone is past LIMIT. With one sample a side
the interval is the point and the two agree.

A gate whose subject matches no row of either trace could never fire (``kernal:+1%``
would pass while B is twice as slow), so it is a usage error naming the closest real
subjects, before any verdict.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from ..model.activity import RUNTIME_CALLS
from .activity import Activity
from .names import normalised
from .op_class import op_class
from .timeline_diff import DeltaRow, TimelineDiff, changes_of

KINDS = ("cpu", "kernel", "memcpy", "communication", "idle")


def _stated(*activities: Activity) -> Callable[[DeltaRow], bool]:
    """Whether a row's slices are one of ``activities``, as their readers stated from their
    producer's words (the activity vocabulary), however their names are spelt."""
    return lambda row: not row.activities.isdisjoint(activities)


# activities across profilers: which rows do that, as the vocabulary classified their slices
ACTIVITIES: dict[str, Callable[[DeltaRow], bool]] = {
    "memset": _stated(Activity.MEMSET),
    "collective": lambda row: row.kind == "communication",
    "runtime": _stated(*RUNTIME_CALLS),
    "host_op": _stated(Activity.HOST_OP),
}
# (the blanks around an optional "+" in one run each: "\s*\+?\s*" tried each split of one)
_LIMIT = re.compile(r"^\s*(?:\+\s*)?(?P<value>\d+(?:\.\d*)?|\.\d+)\s*(?P<unit>%|ns|us|µs|ms|s)\s*$")
_UNIT_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


@dataclass(frozen=True)
class Gate:
    subject: str
    limit: float
    relative: bool   # limit is a share of A's median (0.05 = 5 %), else ns
    text: str
    confident: bool = True   # fire on the interval's lower bound (else on the median change)

    def describe(self) -> str:
        return self.text


def parse_gate(text: str, confident: bool = True) -> Gate:
    """One ``SUBJECT:+LIMIT`` gate (the last ``:`` splits: op names hold ``::``).

    >>> parse_gate("total:+5%"), parse_gate("aten::conv2d:+2ms").limit
    (Gate(subject='total', limit=0.05, relative=True, text='total:+5%', confident=True), 2000000.0)
    """
    subject, sep, limit = text.rpartition(":")
    found = _LIMIT.match(limit) if sep else None
    if not subject.strip() or found is None:
        raise ValueError(f"--fail-if {text!r}: expected SUBJECT:+LIMIT, e.g. total:+5%, "
                         "kernel:+2ms, aten::conv2d:+10%")
    value, unit = float(found["value"]), found["unit"]
    if not math.isfinite(value * _UNIT_NS.get(unit, 1)):   # ("+" and 400 digits)
        raise ValueError(f"--fail-if {text[:60]!r}: the limit is too large to be a number")
    if unit == "%":
        return Gate(subject.strip(), value / 100, True, text, confident)
    return Gate(subject.strip(), value * _UNIT_NS[unit], False, text, confident)


def _matched(result: TimelineDiff, subject: str) -> np.ndarray:
    """Which rows (in ``result.rows`` order) a subject sums."""
    if subject == "total":
        return np.ones(len(result.rows), bool)
    if subject in KINDS:
        return np.array([r.kind == subject for r in result.rows], bool)
    activity = ACTIVITIES.get(subject.replace(" ", "_"))
    if activity is not None:
        return np.array([activity(r) for r in result.rows], bool)
    return np.array([r.kind != "idle" and (r.name in (subject, normalised(subject, r.kind))
                                           or op_class(r.name) == subject)
                     for r in result.rows], bool)


def subjects(result: TimelineDiff) -> list[str]:
    """Every subject a gate can name in ``result``: ``total``, the kinds and activities
    with rows, and the rows' names and op classes (sorted, each once).

    >>> mm = DeltaRow("aten::mm", "cpu", 5, 6, activities=frozenset({Activity.HOST_OP}))
    >>> subjects(TimelineDiff(9, 9, 1, 1, False, [mm]))
    ['aten::mm', 'cpu', 'host_op', 'matmul', 'total']
    """
    found = {"total"}
    for row in result.rows:
        found.add(row.kind)
        found.update(name for name, does in ACTIVITIES.items() if does(row))
        if row.kind != "idle":
            found.add(row.name)
            found.add(op_class(row.name))
    return sorted(found)


def refuse_unmatched(result: TimelineDiff, gates: list[Gate]) -> None:
    """Raise :class:`UsageError` (exit 2) for the first gate whose subject matches no row
    of either trace, with the closest real subjects as suggestions.

    >>> d = TimelineDiff(9, 9, 1, 1, False, [DeltaRow("gemm", "kernel", 5, 6)])
    >>> refuse_unmatched(d, [parse_gate("kernal:+1%")])
    Traceback (most recent call last):
    traceconv.errors.UsageError: --fail-if 'kernal:+1%': no row of either trace is 'kernal' (did you mean 'kernel'?); subjects are total, a kind, an activity, an op or kernel name, or an op class
    """
    known = None
    for gate in gates:
        if _matched(result, gate.subject).any():
            continue
        known = known or subjects(result)
        close = difflib.get_close_matches(gate.subject, known, n=3, cutoff=0.6)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        what = (f"neither trace has {gate.subject} rows"
                if gate.subject in KINDS or gate.subject.replace(" ", "_") in ACTIVITIES
                else f"no row of either trace is {gate.subject[:80]!r}")
        raise UsageError(f"--fail-if {gate.text[:100]!r}: {what}{hint}; subjects are total, "
                         "a kind, an activity, an op or kernel name, or an op class")


def evaluate(result: TimelineDiff, gates: list[Gate]) -> dict:
    """The verdict: each gate's numbers and whether B regressed; ``regressed`` when any did.

    >>> from traceconv.analysis.attribution import StepTimes
    >>> from traceconv.analysis.timeline_diff import compare
    >>> a = StepTimes([("gemm", "kernel")], np.array([[500, 520, 480, 510]]), [1, 2, 3, 4])
    >>> b = StepTimes([("gemm", "kernel")], np.array([[600, 640, 560, 610]]), [1, 2, 3, 4])
    >>> v = evaluate(compare(a, b), [parse_gate("total:+5%"), parse_gate("gemm:+90ns"),
    ...                              parse_gate("gemm:+90ns", confident=False)])
    >>> v["regressed"], [(c["gate"], c["regressed"]) for c in v["checks"]]
    (True, [('total:+5%', True), ('gemm:+90ns', False), ('gemm:+90ns', True)])
    """
    refuse_unmatched(result, gates)
    return {"regressed": False, "checks": []} if not gates else _verdict(result, gates)


def _verdict(result: TimelineDiff, gates: list[Gate]) -> dict:
    masks = [_matched(result, gate.subject) for gate in gates]
    sides = [np.stack([m[mask].sum(axis=0) for mask in masks])
             for m in (result.samples_a, result.samples_b)]
    checks = []
    for gate, mask, change in zip(gates, masks, changes_of(*sides), strict=True):
        a = change.median_a_ns
        allowed = gate.limit * a if gate.relative else gate.limit
        # a confident gate needs the whole interval past the limit; the lower bound sits
        # (median − low) below the median, so that is the smallest change it can see
        margin = change.change_ns - change.low_ns if gate.confident else 0.0
        if gate.relative and not a:     # nothing in A: any growth regresses
            allowed = 0.0
        tested = change.low_ns if gate.confident else change.change_ns
        matched = [r for r, hit in zip(result.rows, mask.tolist(), strict=True) if hit]
        checks.append({
            "gate": gate.text, "subject": gate.subject,
            "mode": "interval" if gate.confident else "median",
            "rows": len(matched), "rows_a": sum(1 for r in matched if r.a_ns),
            "rows_b": sum(1 for r in matched if r.b_ns),
            "samples_a": result.steps_a, "samples_b": result.steps_b,
            "a_ns": round(a), "b_ns": round(change.median_b_ns),
            "delta_ns": round(change.change_ns), **change.as_dict(),
            "delta_pct": change.pct(change.change_ns),
            # (a limit of 10**300 %: what is allowed is shown as 2**62 ns)
            "allowed_ns": _clamped(allowed),
            "detectable_ns": _clamped(allowed + margin),
            "detectable_pct": change.pct(min(allowed + margin, 2.0**62)),
            "regressed": bool(tested > allowed)})
    return {"regressed": any(c["regressed"] for c in checks), "checks": checks}


def _clamped(ns: float) -> int:
    return round(max(min(ns, 2**62), -2**62))
