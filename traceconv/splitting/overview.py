"""The overview of a trace of any size: one small trace that shows the whole run.

Made in one streaming pass over the events (the chunked Chrome reader; ``split`` feeds it
the chunks of its routing pass), after a survey pass has given the time span, the steps and
the process/thread names. Per thread or stream of the input it keeps, in memory bounded by
the number of tracks and never by the number of events:

* a **utilisation** counter: per time bucket (the span cut into about :data:`BUCKETS`), the
  share of the bucket covered by at least one slice of the track (nested slices count
  once), in percent;
* the ``top`` **longest slices** (name, category, start, duration), and every
  **collective** (NCCL, Gloo, RCCL, c10d) up to :data:`MAX_COLLECTIVES`;
* a **hidden slices** counter: per bucket, how many slices starting there are not shown;

and for the whole trace: the **steps** (ProfilerStep#N), the **memory high-water mark**
per device and bucket (Kineto's ``[memory]`` events' ``Total Allocated``), and, given the
pieces of a split, for each piece a slice whose ``piece`` argument names its file.

Utilisation is exact in any event order while a track's covered time holds fewer than
:data:`HELD` separate intervals; past that the earliest are added up for good, and a slice
that comes later in the file but starts before them (far out of order) is counted only
from there on, and counted as ``overview.slices_out_of_order``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import Metadata, ProcessKind, TrackKind
from ..model.builder import TraceBuilder
from ..model.trace import Trace
from ..numbers import int64
from ..vocabularies.common import COMMON
from .events import (
    EDGE_NS,
    Head,
    as_float,
    as_pairs,
    floats,
    hashable,
    is_number,
    ns_length,
    ns_time,
)
from .windows import Survey, Window

BUCKETS = 2000
TOP = 100
MAX_COLLECTIVES = 10_000   # per track
HELD = 1 << 16             # disjoint covered intervals held per track before the earliest go
NAMES_HELD = 1 << 16       # slice names remembered as collective or not


@dataclass(slots=True)
class _Track:
    """What the overview keeps of one input thread or stream."""

    busy: np.ndarray                    # covered time per bucket (file units)
    starts: np.ndarray                  # slices starting per bucket
    # the covered time not yet added to ``busy``: sorted disjoint intervals
    lows: np.ndarray = field(default_factory=lambda: np.empty(0))
    highs: np.ndarray = field(default_factory=lambda: np.empty(0))
    committed_to: float = -math.inf     # where the time added to ``busy`` ends
    top: list[tuple[float, float, str, str]] = field(default_factory=list)  # (dur, ts, name, cat)
    collectives: list[tuple[float, float, str, str]] = field(default_factory=list)


class Overview:
    """Accumulates the overview of the events given to :meth:`take`, a chunk at a time.

    >>> s = Survey(first_ts=0.0, last_ts=100.0, unit_ns=1000)
    >>> ov = Overview(s, top=1, buckets=4)
    >>> ov.take([{"ph": "X", "ts": 0, "dur": 50, "pid": 1, "tid": 1, "name": "a"},
    ...          {"ph": "X", "ts": 10, "dur": 5, "pid": 1, "tid": 1, "name": "b"}])
    >>> ov.utilisation((1, 1)).tolist(), ov.shown((1, 1))
    ([100.0, 100.0, 0.0, 0.0], [('a', 0.0, 50.0)])
    """

    def __init__(self, survey: Survey, *, top: int = TOP, buckets: int = BUCKETS) -> None:
        self.survey, self.top_n = survey, top
        first, last = as_float(survey.first_ts), as_float(survey.last_ts)
        if not math.isfinite(last - first):   # (no event, or a time past a float)
            first, last = 0.0, 1.0
        self.first, self.last = first, last
        self.buckets = max(1, buckets)
        self.width = max(last - first, 1e-9) / self.buckets
        self.tracks: dict[tuple[Any, ...], _Track] = {}
        self.memory: dict[tuple[Any, ...], np.ndarray] = {}   # device → high water per bucket
        self.out_of_order = 0
        self.slices = 0
        self._collective: dict[str, bool] = {}

    def _bucket(self, ts: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):   # (a finite time far past the span: the last bucket)
            at = np.floor((ts - self.first) / self.width)
        return np.clip(at, 0, self.buckets - 1).astype(np.int64)

    def take(self, chunk: list[Any]) -> None:
        """Note one chunk of events: its slices a thread at a time, in numpy columns."""
        heads = [h for h, _ in as_pairs(chunk)]
        self._memory([h for h in heads if h.name == "[memory]" and h.ph in ("i", "I")
                      and h.args is not None])
        slices = [h for h in heads if h.ph == "X"]
        ts, dur = floats([h.ts for h in slices]), floats([h.dur for h in slices])
        with np.errstate(invalid="ignore", over="ignore"):
            kept = np.flatnonzero((dur >= 0) & np.isfinite(ts + dur))   # (NaN fails both)
        pids, tids = [slices[i].pid for i in kept], [slices[i].tid for i in kept]
        plain = not {*map(type, pids), *map(type, tids)} & {dict, list}
        keys = list(zip(pids, tids, strict=True)) if plain else [
            hashable(pid, tid) for pid, tid in zip(pids, tids, strict=True)]
        tracks: dict[tuple[Any, ...], int] = {}   # in order of first slice, as tracks are made
        codes = np.array([tracks.setdefault(k, len(tracks)) for k in keys], dtype=np.int64)
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(tracks) + 1))
        for code, key in enumerate(tracks):
            rows = kept[order[bounds[code]:bounds[code + 1]]]
            self._slices(key, ts[rows], dur[rows], [slices[i].name for i in rows],
                         [slices[i].cat for i in rows])

    def _slices(self, key: tuple[Any, ...], ts: np.ndarray, dur: np.ndarray,
                names: list[Any], cats: list[Any]) -> None:
        track = self.tracks.get(key)
        if track is None:
            track = self.tracks[key] = _Track(np.zeros(self.buckets), np.zeros(self.buckets,
                                                                               np.int64))
        self.slices += len(ts)
        track.starts += np.bincount(self._bucket(ts), minlength=self.buckets)
        self._cover(track, ts, ts + dur)
        texts = [_text(n) for n in names]
        collective = np.array([self._is_collective(n) for n in texts], dtype=bool)
        room = MAX_COLLECTIVES - len(track.collectives)   # (past it: hidden, counted)
        for i in np.flatnonzero(collective)[:max(room, 0)].tolist():
            track.collectives.append((float(dur[i]), float(ts[i]), texts[i], _text(cats[i])))
        others = np.flatnonzero(~collective)
        if len(others) > self.top_n:   # only those as long as the top_n-th can be shown
            cut = len(others) - self.top_n
            others = others[dur[others] >= np.partition(dur[others], cut)[cut]] \
                if self.top_n else others[:0]
        rows = [(float(dur[i]), float(ts[i]), texts[i], _text(cats[i])) for i in others.tolist()]
        # the longest first; of equal ones, the earliest
        track.top = heapq.nsmallest(self.top_n, track.top + rows, key=lambda r: (-r[0], r[1]))

    def _cover(self, track: _Track, start: np.ndarray, end: np.ndarray) -> None:
        """Merge the intervals into the track's covered time (their union: nested and
        overlapping slices count once, in any order). Past :data:`HELD` disjoint
        intervals, the earliest are added to the buckets for good."""
        late = start < track.committed_to
        if late.any():
            self.out_of_order += int(np.count_nonzero(late))
            start = np.maximum(start, track.committed_to)
        keep = end > start
        lows = np.concatenate([track.lows, start[keep]])
        highs = np.concatenate([track.highs, end[keep]])
        order = np.argsort(lows, kind="stable")
        track.lows, track.highs = _union(lows[order], highs[order])
        if len(track.lows) > HELD:
            done = len(track.lows) - HELD // 4
            self._commit(track, track.lows[:done], track.highs[:done])
            track.committed_to = float(track.highs[done - 1])
            track.lows, track.highs = track.lows[done:], track.highs[done:]

    def _commit(self, track: _Track, lows: np.ndarray, highs: np.ndarray) -> None:
        """Add sorted disjoint intervals to the track's buckets."""
        if not len(lows):
            return
        lengths = highs - lows
        before = np.r_[0.0, np.cumsum(lengths)]
        edges = self.first + self.width * np.arange(self.buckets + 1)
        edges[-1] = math.inf   # the last bucket takes what reaches past the span
        at = np.searchsorted(lows, edges, side="right") - 1
        last = np.maximum(at, 0)
        covered = np.where(at >= 0, before[last] + np.clip(edges - lows[last], 0,
                                                            lengths[last]), 0.0)
        covered[-1] = before[-1]
        track.busy += np.diff(covered)

    def _finish(self) -> None:
        for track in self.tracks.values():
            self._commit(track, track.lows, track.highs)
            track.lows, track.highs = np.empty(0), np.empty(0)

    def _is_collective(self, name: str) -> bool:
        known = self._collective.get(name)
        if known is None:
            if len(self._collective) >= NAMES_HELD:   # (a trace of unique names)
                self._collective.clear()
            # (the readers' rule)
            known = self._collective[name] = COMMON.named(name, "communication")
        return known

    def _memory(self, events: list[Head]) -> None:
        """Per device and bucket, the largest allocator total of the ``[memory]`` events."""
        ts = floats([h.ts for h in events])
        total = floats([h.args.total_allocated for h in events])  # type: ignore[union-attr]
        kept = np.flatnonzero(np.isfinite(ts) & np.isfinite(total))
        devices: dict[tuple[Any, ...], int] = {}   # in order of first event, as tracks are made
        codes = np.array([devices.setdefault(hashable(a.device_type, a.device_id), len(devices))
                          for a in (events[i].args for i in kept.tolist())], dtype=np.int64)
        for code, device in enumerate(devices):
            rows = kept[codes == code]
            high = self.memory.get(device)
            if high is None:
                high = self.memory[device] = np.zeros(self.buckets)
            np.maximum.at(high, self._bucket(ts[rows]), total[rows])

    # -- what the overview shows ----------------------------------------------------------

    def utilisation(self, key: tuple[Any, ...]) -> np.ndarray:
        """Percent of each bucket covered by the track's slices."""
        self._finish()
        return 100.0 * np.minimum(self.tracks[key].busy / self.width, 1.0)

    def shown(self, key: tuple[Any, ...]) -> list[tuple[str, float, float]]:
        """The track's slices shown, as (name, start, duration) in file units."""
        track = self.tracks[key]
        return [(name, ts, dur) for dur, ts, name, _ in track.top + track.collectives]

    def hidden(self, key: tuple[Any, ...]) -> np.ndarray:
        """Slices per bucket not shown."""
        track = self.tracks[key]
        shown = [ts for _, ts, _, _ in track.top + track.collectives]
        counts = track.starts.copy()
        if shown:
            counts -= np.bincount(self._bucket(np.array(shown)), minlength=self.buckets)
        return counts

    def build(self, steps: Sequence[Window] = (),
              pieces: Sequence[dict[str, Any]] = ()) -> Trace:
        """The overview as a trace: a track per input thread with its slices shown and two
        counters, the ``steps``, the memory high-water marks, and the ``pieces`` of a split
        (their manifest entries)."""
        unit = self.survey.unit_ns
        trace = TraceBuilder(Metadata(source_format="traceconv-overview"))
        processes, threads = _names(self.survey.metadata)
        ids: dict[Any, int] = {}
        hidden_total = 0
        for key in sorted(self.tracks, key=repr):
            pid, tid = key
            if pid not in ids:
                ids[pid] = trace.add_process(processes.get(pid, f"process {pid}"),
                                             pid=int64(pid))
            name = threads.get(key, f"thread {tid}")
            thread = trace.add_track(name, process=ids[pid], tid=int64(tid))
            for dur, ts, slice_name, cat in sorted(self.tracks[key].top
                                                   + self.tracks[key].collectives,
                                                   key=lambda r: r[1]):
                start = ns_time(ts, unit)
                trace.add_interval(thread, start, start + ns_length(dur, unit), slice_name, cat)
            times = self._times()
            busy = trace.add_track(f"{name}: utilisation", process=ids[pid],
                                   kind=TrackKind.COUNTER, unit="%")
            trace.add_counter_series(busy, times, self.utilisation(key))
            hidden = self.hidden(key)
            hidden_total += int(hidden.sum())
            counter = trace.add_track(f"{name}: hidden slices", process=ids[pid],
                                      kind=TrackKind.COUNTER, unit="count",
                                      description="slices starting in each bucket that the "
                                                  "overview does not show")
            trace.add_counter_series(counter, times, hidden.astype(np.float64))
        run = trace.add_process("run", kind=ProcessKind.SYNTHETIC)
        self._steps(trace, run, steps, pieces)
        for device in sorted(self.memory, key=repr):
            track = trace.add_track(f"memory high-water: {' '.join(map(str, device))}",
                                    process=run, kind=TrackKind.COUNTER, unit="bytes")
            trace.add_counter_series(track, self._times(), self.memory[device])
        if hidden_total:
            trace.diagnostics.add("overview.hidden_slices", count=hidden_total,
                                  example=f"{self.slices:,} slices, the {self.top_n} longest "
                                          "of each track shown")
        if self.out_of_order:
            trace.diagnostics.add("overview.slices_out_of_order", count=self.out_of_order)
        return trace.build()

    def _times(self) -> np.ndarray:
        with np.errstate(over="ignore"):   # (past a double in ns: infinity, clipped below)
            starts = np.round((self.first + self.width * np.arange(self.buckets))
                              * self.survey.unit_ns)
        # past int64 the cast would be undefined: held at ±2^62, beyond the builder's time
        # range, so that its one rule moves them to the edge and counts them
        return np.clip(starts, -EDGE_NS, EDGE_NS).astype(np.int64)

    def _steps(self, trace: TraceBuilder, run: int, windows: Sequence[Window],
               pieces: Sequence[dict[str, Any]]) -> None:
        """The steps, and the piece holding each part of the run."""
        unit, end = self.survey.unit_ns, self.last
        if windows:
            steps = trace.add_track("steps", process=run)
            for w in windows:
                start, stop = max(w.start, self.first), min(w.end, end)
                if stop >= start:
                    trace.add_interval(steps, ns_time(start, unit), ns_time(stop, unit),
                                       w.label)
        if pieces:
            track = trace.add_track("pieces", process=run)
            for p in pieces:
                start = p["start"] if is_number(p.get("start")) else self.first
                stop = p["end"] if is_number(p.get("end")) else end
                args = {"piece": p["file"], "events": p["events"]}
                if "converted" in p:
                    args["converted"] = p["converted"]
                trace.add_interval(track, ns_time(start, unit), ns_time(stop, unit),
                                   p["label"], "piece", args=args)


def _union(lows: np.ndarray, highs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Intervals sorted by start → their union as sorted disjoint intervals.

    >>> _union(np.array([0.0, 1.0, 5.0]), np.array([4.0, 2.0, 6.0]))
    (array([0., 5.]), array([4., 6.]))
    """
    if not len(lows):
        return lows, highs
    reach = np.maximum.accumulate(highs)
    begins = np.flatnonzero(np.r_[True, lows[1:] > reach[:-1]])
    return lows[begins], reach[np.r_[begins[1:] - 1, len(lows) - 1]]


def _names(metadata: list[dict[str, Any]]) -> tuple[dict[Any, str], dict[tuple[Any, ...], str]]:
    """Process and thread names from the M events."""
    processes: dict[Any, str] = {}
    threads: dict[tuple[Any, ...], str] = {}
    for e in metadata:
        args = e.get("args")
        name = args.get("name") if isinstance(args, dict) else None
        if not isinstance(name, str):
            continue
        if e.get("name") == "process_name":
            processes[hashable(e.get("pid"))[0]] = name
        elif e.get("name") == "thread_name":
            threads[hashable(e.get("pid"), e.get("tid"))] = name
    return processes, threads


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)
