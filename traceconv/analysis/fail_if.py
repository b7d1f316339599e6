"""``diff --fail-if``: regression gates for CI over a timeline diff.

A gate is ``SUBJECT:+LIMIT`` where LIMIT is a share (``+5%``, of A's value) or a time
(``+2ms``, ``+300us``, ``+1500ns``, ``+0.5s``). SUBJECT is ``total`` (the step window), a
kind (``cpu``, ``kernel``, ``memcpy``, ``communication``, ``idle``: the rows of that kind
summed), or an op / kernel name or op class (``aten::conv2d``, ``convolution``: the rows
whose name or class is that). B regresses when its value exceeds A's by more than LIMIT.

A gate whose subject matches no row of either trace could never fire (``kernal:+1%``
would pass while B is twice as slow), so it is a usage error naming the closest real
subjects, before any verdict.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass

from ..errors import UsageError
from .op_class import op_class
from .timeline_diff import TimelineDiff

KINDS = ("cpu", "kernel", "memcpy", "communication", "idle")
_LIMIT = re.compile(r"^\s*\+?\s*(?P<value>\d+(?:\.\d*)?|\.\d+)\s*(?P<unit>%|ns|us|µs|ms|s)\s*$")
_UNIT_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


@dataclass(frozen=True)
class Gate:
    subject: str
    limit: float
    relative: bool   # limit is a share of A's value (0.05 = 5 %), else ns
    text: str

    def describe(self) -> str:
        return self.text


def parse_gate(text: str) -> Gate:
    """One ``SUBJECT:+LIMIT`` gate (the last ``:`` splits: op names hold ``::``).

    >>> parse_gate("total:+5%"), parse_gate("aten::conv2d:+2ms").limit
    (Gate(subject='total', limit=0.05, relative=True, text='total:+5%'), 2000000.0)
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
        return Gate(subject.strip(), value / 100, True, text)
    return Gate(subject.strip(), value * _UNIT_NS[unit], False, text)


def _values(result: TimelineDiff, subject: str) -> tuple[int, int, int]:
    """(A ns, B ns, rows matched) of a subject."""
    if subject == "total":
        return result.window_a_ns, result.window_b_ns, len(result.rows)
    if subject in KINDS:
        rows = [r for r in result.rows if r.kind == subject]
    else:
        rows = [r for r in result.rows if r.kind != "idle" and (
            r.name == subject or op_class(r.name) == subject)]
    return sum(r.a_ns for r in rows), sum(r.b_ns for r in rows), len(rows)


def subjects(result: TimelineDiff) -> list[str]:
    """Every subject a gate can name in ``result``: ``total``, the kinds with rows, and the
    rows' names and op classes (sorted, each once).

    >>> from traceconv.analysis.timeline_diff import DeltaRow
    >>> subjects(TimelineDiff(9, 9, 1, 1, False, [DeltaRow("aten::mm", "cpu", 5, 6)]))
    ['aten::mm', 'cpu', 'matmul', 'total']
    """
    found = {"total"}
    for row in result.rows:
        found.add(row.kind)
        if row.kind != "idle":
            found.add(row.name)
            found.add(op_class(row.name))
    return sorted(found)


def refuse_unmatched(result: TimelineDiff, gates: list[Gate]) -> None:
    """Raise :class:`UsageError` (exit 2) for the first gate whose subject matches no row
    of either trace, with the closest real subjects as suggestions.

    >>> from traceconv.analysis.timeline_diff import DeltaRow
    >>> d = TimelineDiff(9, 9, 1, 1, False, [DeltaRow("gemm", "kernel", 5, 6)])
    >>> refuse_unmatched(d, [parse_gate("kernal:+1%")])
    Traceback (most recent call last):
    traceconv.errors.UsageError: --fail-if 'kernal:+1%': no row of either trace is 'kernal' (did you mean 'kernel'?); subjects are total, a kind, an op or kernel name, or an op class
    """
    known = None
    for gate in gates:
        if _values(result, gate.subject)[2]:
            continue
        known = known or subjects(result)
        close = difflib.get_close_matches(gate.subject, known, n=3, cutoff=0.6)
        hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
        what = (f"neither trace has {gate.subject} rows" if gate.subject in KINDS
                else f"no row of either trace is {gate.subject[:80]!r}")
        raise UsageError(f"--fail-if {gate.text[:100]!r}: {what}{hint}; subjects are total, "
                         "a kind, an op or kernel name, or an op class")


def evaluate(result: TimelineDiff, gates: list[Gate]) -> dict:
    """The verdict: each gate's numbers and whether B regressed; ``regressed`` when any did.

    >>> from traceconv.analysis.timeline_diff import DeltaRow
    >>> d = TimelineDiff(1000, 1080, 1, 1, False, [DeltaRow("gemm", "kernel", 500, 580)])
    >>> v = evaluate(d, [parse_gate("total:+5%"), parse_gate("gemm:+100ns")])
    >>> v["regressed"], [(c["subject"], c["regressed"]) for c in v["checks"]]
    (True, [('total', True), ('gemm', False)])
    """
    refuse_unmatched(result, gates)
    checks = []
    for gate in gates:
        a, b, matched = _values(result, gate.subject)
        delta = b - a
        allowed = gate.limit * a if gate.relative else gate.limit
        regressed = delta > allowed if (a or not gate.relative) else delta > 0
        checks.append({"gate": gate.text, "subject": gate.subject, "a_ns": a, "b_ns": b,
                       "delta_ns": delta,
                       "delta_pct": round(100 * delta / a, 4) if a else None,
                       # (a limit of 10**300 %: what is allowed is shown as 2**62 ns)
                       "allowed_ns": round(max(min(allowed, 2**62), -2**62)), "rows": matched,
                       "regressed": regressed})
    return {"regressed": any(c["regressed"] for c in checks), "checks": checks}
