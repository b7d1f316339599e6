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

import numpy as np

from ..model import ProcessKind, Trace
from ..model.entities import summed_calls
from ..model.timeline_order import timeline_order
from .activity import Activity, kind_of, slice_activity, timed_durations
from .copy_time import copy_kinds

_THREAD_PREFIX = re.compile(r"(^|/)thread\d+::")


@dataclass
class OpTotals:
    """What one trace says about one op (times in ns; ``ratio`` in % of its section)."""

    calls: int | None = 0   # None: a row of the op states no calls (unknown)
    total_ns: int = 0
    cpu_ns: int | None = None
    device_ns: int | None = None
    ratio: float | None = None

    def add(self, calls: int | None, total: int, cpu: int | None, device: int | None) -> None:
        self.calls = summed_calls((self.calls, calls))
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
    if not trace.stats:
        return _slice_totals(trace)
    totals: dict[tuple[str, str], OpTotals] = defaultdict(OpTotals)
    top_total: dict[str, int] = defaultdict(int)
    for stat in trace.stats:
        key = (stat.section, _THREAD_PREFIX.sub(r"\1", stat.extra.get("path") or stat.name))
        totals[key].add(stat.calls, stat.total_ns, stat.cpu_ns, stat.device_ns)
        if stat.parent is None:
            top_total[stat.section] += stat.total_ns
    _set_ratios(totals, top_total)
    return dict(totals)


def _slice_totals(trace: Trace) -> dict[tuple[str, str], OpTotals]:
    """Per slice name (and host/device side): calls and summed durations, vectorised; the
    ratio is a share of the section's top-level time (slices not nested in another one on
    their track), so nested slices do not count twice. A slice never ended in the input is
    a call of no time (:func:`~traceconv.analysis.activity.timed_durations`). A name is in
    the ``memcpy`` section when its slices are copies or memsets (their activity) or the
    shared vocabulary names it one (:func:`~.copy_time.copy_kinds`: ``cudaMemcpyAsync``,
    ``Memcpy HtoD``), else in ``events``.

    >>> t = Trace(); main = t.add_track("main", process=t.add_process("p"))
    >>> _ = t.add_slice(main, 0, 10, "op"); _ = t.add_slice(main, 20, 80, "op", args={"unfinished": True})
    >>> totals = _slice_totals(t)[("events", "op")]; totals.calls, totals.total_ns
    (2, 10)
    """
    s = trace.slices
    totals: dict[tuple[str, str], OpTotals] = defaultdict(OpTotals)
    if not len(s):
        return {}
    device_process = np.array([p.kind is ProcessKind.DEVICE for p in trace.processes])
    on_device = device_process[np.array([t.process for t in trace.tracks])][s.numpy("track")]
    names, durs = s.numpy("name"), timed_durations(trace)
    keys, inverse = np.unique(names * 2 + on_device, return_inverse=True)
    copies = np.isin(kind_of(slice_activity(trace)), (Activity.MEMCPY, Activity.MEMSET))
    copy_key = np.bincount(inverse, weights=copies, minlength=len(keys)) > 0
    calls = np.bincount(inverse)
    summed = np.bincount(inverse, weights=durs)
    top = _top_level(s.numpy("track"), s.numpy("start"), durs)
    top_summed = np.bincount(inverse, weights=durs * top, minlength=len(keys))
    strings = trace.strings.strings
    copy_key |= np.array([kind is not None for kind in copy_kinds(
        [strings[key // 2] for key in keys.tolist()])], bool)
    copy_name = np.zeros(len(strings), bool)   # (one section a name, host and device rows alike)
    np.logical_or.at(copy_name, keys // 2, copy_key)
    copy_key = copy_name[keys // 2]
    top_total: dict[str, int] = defaultdict(int)
    for key, copy, n, total, top_ns in zip(keys.tolist(), copy_key.tolist(), calls.tolist(),
                                           summed.tolist(), top_summed.tolist(), strict=True):
        name, device = strings[key // 2], bool(key % 2)
        section = "memcpy" if copy else "events"
        total = int(total)
        totals[(section, name)].add(n, total, None if device else total,
                                    total if device else None)
        top_total[section] += int(top_ns)
    _set_ratios(totals, top_total)
    return dict(totals)


def _top_level(tracks: np.ndarray, starts: np.ndarray, durs: np.ndarray) -> np.ndarray:
    """1 for slices that no earlier slice of their track encloses, else 0.

    >>> _top_level(np.array([0, 0, 0, 1]), np.array([0, 5, 20, 5]), np.array([10, 2, 3, 1]))
    array([1, 0, 1, 1])
    """
    order = timeline_order(tracks, starts, -durs)
    span = int(starts.max() - starts.min() + durs.max()) + 2
    # each track's times shifted past the previous track's, so one running max serves all
    group = np.cumsum(np.r_[0, tracks[order][1:] != tracks[order][:-1]])
    begin = starts[order] - starts.min() + group * span
    end = begin + durs[order]
    reach = np.maximum.accumulate(end)
    top = np.ones(len(order), dtype=np.int64)
    top[1:] = begin[1:] >= reach[:-1]
    result = np.empty_like(top)
    result[order] = top
    return result


def _set_ratios(totals: dict[tuple[str, str], OpTotals], top_total: dict[str, int]) -> None:
    for (section, _), value in totals.items():
        if top_total[section]:
            value.ratio = round(100 * value.total_ns / top_total[section], 6)


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
        if (x is not None and x.calls is None) or (y is not None and y.calls is None):
            delta["calls"] = None   # (no change can be told against unknown calls)
        if isinstance(delta["ratio"], float):
            delta["ratio"] = round(delta["ratio"], 6)
        rows.append(OpDelta(key[0], key[1], x, y, delta))
    primary = key_of[sort]
    rows.sort(key=lambda r: (-abs(r.delta[primary] or 0), -abs(r.delta["total_ns"] or 0),
                             -abs(r.delta["calls"] or 0), r.section, r.name))
    return rows
