"""Per-op comparison of two traces: calls, total, CPU/device time, ratio, memcpy counts.

Works on any two traces of the model. Stats-only traces (Paddle reports, summary tables)
are compared row by row through :attr:`Trace.stats`; timelines through their slices,
grouped by name. The classic use: a Paddle report before and after an optimisation
(``GpuMemcpy`` calls 1200 → 600 after moving control flow to the CPU).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from ..model import ProcessKind, Trace

MEMCPY_NAME = re.compile(r"memcpy|memset|MemoryCopy|TensorCopy", re.IGNORECASE)
_THREAD_PREFIX = re.compile(r"(^|/)thread\d+::")


@dataclass
class OpTotals:
    """What one trace says about one op (times in ns; ``ratio`` in % of its section)."""

    calls: int = 0
    total_ns: int = 0
    cpu_ns: int | None = None
    device_ns: int | None = None
    ratio: float | None = None

    def add(self, calls: int, total: int, cpu: int | None, device: int | None) -> None:
        self.calls += calls
        self.total_ns += total
        if cpu is not None:
            self.cpu_ns = (self.cpu_ns or 0) + cpu
        if device is not None:
            self.device_ns = (self.device_ns or 0) + device


@dataclass
class OpDelta:
    """One op in both traces (``a`` or ``b`` is None when the op is only in the other)."""

    section: str
    name: str
    a: OpTotals | None
    b: OpTotals | None
    delta: dict[str, float | int | None] = field(default_factory=dict)

    def as_dict(self) -> dict:
        def side(totals: OpTotals | None) -> dict | None:
            return None if totals is None else dict(totals.__dict__)

        return {"section": self.section, "name": self.name, "a": side(self.a),
                "b": side(self.b), "delta": self.delta}


def _sub(a: float | int | None, b: float | int | None) -> float | int | None:
    if a is None and b is None:
        return None
    return (b or 0) - (a or 0)


def op_totals(trace: Trace) -> dict[tuple[str, str], OpTotals]:
    """(section, op name or path) → totals, from stats when present else from slices.

    Paddle's per-thread rows are folded into their ``threadN::``-free path.

    >>> from traceconv.model import OpStat
    >>> t = Trace(); _ = t.add_stat(OpStat("thread0::conv2d", calls=3, total_ns=30))
    >>> op_totals(t)[("events", "conv2d")].calls
    3
    """
    totals: dict[tuple[str, str], OpTotals] = defaultdict(OpTotals)
    if trace.stats:
        for stat in trace.stats:
            name = _THREAD_PREFIX.sub(r"\1", stat.extra.get("path") or stat.name)
            totals[(stat.section, name)].add(stat.calls, stat.total_ns, stat.cpu_ns,
                                             stat.device_ns)
        top = {(s.section, _THREAD_PREFIX.sub(r"\1", s.extra.get("path") or s.name))
               for s in trace.stats if s.parent is None}
    else:
        device_tracks = {t.id for t in trace.tracks
                         if trace.processes[t.process].kind is ProcessKind.DEVICE}
        for s in trace.iter_slices():
            section = "memcpy" if MEMCPY_NAME.search(s.name) else "events"
            on_device = s.track in device_tracks
            totals[(section, s.name)].add(1, s.dur, None if on_device else s.dur,
                                          s.dur if on_device else None)
        top = set(totals)
    section_sum: dict[str, int] = defaultdict(int)
    for key in top:
        if key in totals:
            section_sum[key[0]] += totals[key].total_ns
    for (section, _), value in totals.items():
        if section_sum[section]:
            value.ratio = round(100 * value.total_ns / section_sum[section], 6)
    return dict(totals)


def diff(a: Trace, b: Trace, sort: str = "total") -> list[OpDelta]:
    """Every op of ``a`` and ``b`` with its change, largest absolute change first.

    ``sort`` is ``total`` (ns), ``calls``, ``cpu``, ``device`` or ``ratio``.

    >>> from traceconv.model import OpStat
    >>> before, after = Trace(), Trace()
    >>> _ = before.add_stat(OpStat("GpuMemcpy", calls=1200, total_ns=9_000, section="memcpy"))
    >>> _ = after.add_stat(OpStat("GpuMemcpy", calls=600, total_ns=4_000, section="memcpy"))
    >>> d = diff(before, after)[0]
    >>> d.name, d.delta["calls"], d.delta["total_ns"]
    ('GpuMemcpy', -600, -5000)
    """
    key_of = {"total": "total_ns", "calls": "calls", "cpu": "cpu_ns", "device": "device_ns",
              "ratio": "ratio"}
    if sort not in key_of:
        raise ValueError(f"unknown sort key {sort!r} (one of {', '.join(key_of)})")
    left, right = op_totals(a), op_totals(b)
    rows = []
    for key in dict.fromkeys([*left, *right]):
        x, y = left.get(key), right.get(key)
        delta = {field_: _sub(getattr(x, field_, None), getattr(y, field_, None))
                 for field_ in ("calls", "total_ns", "cpu_ns", "device_ns", "ratio")}
        if isinstance(delta["ratio"], float):
            delta["ratio"] = round(delta["ratio"], 6)
        rows.append(OpDelta(key[0], key[1], x, y, delta))
    primary = key_of[sort]
    rows.sort(key=lambda r: (-abs(r.delta[primary] or 0), -abs(r.delta["total_ns"] or 0),
                             -abs(r.delta["calls"] or 0), r.section, r.name))
    return rows
