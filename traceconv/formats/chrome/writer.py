"""Model → Chrome Trace Event JSON (object form), streamed in batches.

Timestamps are µs relative to ``baseTimeNanoseconds`` (written at the top level, as Kineto
does) with at most three decimals, so every value is exact; flows are ``s``/``f`` pairs
with ``bp:"e"``; counters are ``C`` events; names and order come as ``M`` events.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any, BinaryIO

import orjson

from ... import __version__
from ...analysis.nesting import nested_view
from ...model import Diagnostics, ProcessKind, Trace, TrackKind

BATCH = 50_000
SYNTHETIC_PID = 1 << 24  # above the usual pid range; Kineto's GPU sort indices start here
_RESERVED = {"traceEvents", "displayTimeUnit", "baseTimeNanoseconds", "traceconv", "flavour"}


def _fallback(value: Any) -> Any:
    """orjson cannot serialise it (an int over 64 bits, a set, an object): use its text."""
    return str(value)


def _dumps(value: Any) -> bytes:
    try:
        return orjson.dumps(value, default=_fallback,
                            option=orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS)
    except TypeError:   # an int over 64 bits in some args (valid JSON): the slow encoder
        return json.dumps(value, default=_fallback, separators=(",", ":"),
                          ensure_ascii=False).encode()


class _Ids:
    """Output pids and tids: the source's when unique, else synthetic ones."""

    def __init__(self, trace: Trace) -> None:
        self.pid: dict[int, int] = {}
        used: set[int] = set()
        for p in trace.processes:
            if isinstance(p.pid, int) and p.pid not in used:
                self.pid[p.id] = p.pid
                used.add(p.pid)
        spare = max(used | {SYNTHETIC_PID - 1}) + 1
        for p in trace.processes:
            if p.id not in self.pid:
                self.pid[p.id], spare = spare, spare + 1
        self.tid: dict[int, int] = {}
        taken: set[tuple[int, int]] = set()
        for t in trace.tracks:
            if isinstance(t.tid, int) and (t.process, t.tid) not in taken:
                self.tid[t.id] = t.tid
                taken.add((t.process, t.tid))
        spare = SYNTHETIC_PID
        for t in trace.tracks:
            if t.id not in self.tid:
                while (t.process, spare) in taken:
                    spare += 1
                self.tid[t.id] = spare
                taken.add((t.process, spare))


def _base(trace: Trace) -> int:
    """The base of relative timestamps: the first timestamp, rounded down to a millisecond.

    Not the source's base (Kineto's is months back): µs values near 4.5e12 have only ~1 ns
    of double precision, so a reader that computes ``ts*1000 + dur*1000`` can see a child end
    1 ns after its parent and drop it. Small relative values are exact to the ns.
    """
    bounds = trace.time_range
    return 0 if bounds is None else bounds[0] - bounds[0] % 1_000_000


def _metadata_events(trace: Trace, ids: _Ids) -> Iterator[dict]:
    for p in trace.processes:
        pid = ids.pid[p.id]
        yield {"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
               "args": {"name": p.name}}
        if p.labels:
            yield {"ph": "M", "name": "process_labels", "pid": pid, "tid": 0,
                   "args": {"labels": ",".join(p.labels)}}
        if p.sort_index is not None:
            yield {"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                   "args": {"sort_index": p.sort_index}}
    for t in trace.tracks:
        if t.kind is TrackKind.COUNTER:
            continue
        pid, tid = ids.pid[t.process], ids.tid[t.id]
        yield {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": t.name}}
        sort = t.sort_index if t.sort_index is not None else (
            None if t.parent is None else trace.tracks[t.parent].sort_index)
        if sort is not None:
            yield {"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": tid,
                   "args": {"sort_index": sort}}


def _events(trace: Trace, base: int) -> Iterator[dict]:
    ids = _Ids(trace)
    yield from _metadata_events(trace, ids)
    names = trace.strings.strings
    place = [(ids.pid[t.process], ids.tid[t.id]) for t in trace.tracks]
    s, i = trace.slices, trace.instants
    slices = ((track, {"ph": "X", "ts": (start - base) / 1000, "dur": dur / 1000}, name, cat, args)
              for track, start, dur, name, cat, args
              in zip(s.track, s.start, s.dur, s.name, s.category, s.args, strict=True))
    instants = ((track, {"ph": "i", "s": "t", "ts": (ts - base) / 1000}, name, cat, args)
                for track, ts, name, cat, args
                in zip(i.track, i.ts, i.name, i.category, i.args, strict=True))
    for track, event, name, cat, args in itertools.chain(slices, instants):
        event["name"] = names[name]
        event["pid"], event["tid"] = place[track]
        if cat:
            event["cat"] = names[cat]
        if args:
            event["args"] = args
        yield event
    c = trace.counters
    for track, ts, value in zip(c.track, c.ts, c.value, strict=True):
        counter = trace.tracks[track]
        yield {"ph": "C", "name": counter.name, "pid": place[track][0], "ts": (ts - base) / 1000,
               "args": {"value": int(value) if value.is_integer() else value}}
    f = trace.flows
    for flow_id, (src, dst, cat, name) in enumerate(
            zip(f.source, f.target, f.category, f.name, strict=True), start=1):
        category, label = names[cat] or "flow", names[name] or names[cat] or "flow"
        # A flow must not end before it starts (Perfetto drops it): end at the later of the
        # two starts, still inside the target slice so that bp:"e" binds to it.
        source_ts = s.start[src]
        target_ts = min(max(s.start[dst], source_ts), s.start[dst] + s.dur[dst])
        for phase, row, ts in (("s", src, source_ts), ("f", dst, target_ts)):
            pid, tid = place[s.track[row]]
            event = {"ph": phase, "id": flow_id, "cat": category, "name": label, "pid": pid,
                     "tid": tid, "ts": (ts - base) / 1000}
            if phase == "f":
                event["bp"] = "e"
            yield event


def _header(trace: Trace, view: Trace, base: int) -> dict:
    """The top-level keys: the source's, and traceconv's record of the trace's diagnostics
    and, apart, the writer's (``view`` is what was written)."""
    meta = trace.metadata
    header = {k: v for k, v in meta.attributes.items() if k not in _RESERVED}
    header.update({
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": base,
        "traceconv": {"version": __version__, "source_format": meta.source_format,
                      "source_file": meta.source_file, "framework": meta.framework,
                      "rank": meta.rank, "clock": meta.clock,
                      "device_categories": _device_categories(view),
                      "diagnostics": meta.diagnostics.as_list(),
                      "writer_diagnostics": view.diagnostics.as_list()},
    })
    return header


def _device_categories(trace: Trace) -> list[str]:
    """Categories of the slices on device processes. Reading the file back, they say which
    events are device work whatever the producer's own names (Paddle's ``Memcpy``, ...), so
    a second conversion puts them on the same streams."""
    device = {i for i, t in enumerate(trace.tracks)
              if trace.processes[t.process].kind == ProcessKind.DEVICE}
    s, strings = trace.slices, trace.strings.strings
    return sorted({strings[c] for track, c in zip(s.track, s.category, strict=True)
                   if track in device})


def write_chrome(trace: Trace, out: BinaryIO) -> Diagnostics:
    """Write ``trace`` to ``out`` as Chrome JSON (object form), batch by batch; returns what
    the writer repaired (slices moved to lane tracks; ``trace`` itself is not changed).

    >>> import io; buf = io.BytesIO(); len(write_chrome(Trace(), buf))
    0
    >>> orjson.loads(buf.getvalue())["traceEvents"]
    []
    """
    view = nested_view(trace)
    base = _base(view)
    header = _dumps(_header(trace, view, base))
    out.write(header[:-1] + b',"traceEvents":[\n')
    batch: list[dict] = []
    first = True
    for event in _events(view, base):
        batch.append(event)
        if len(batch) == BATCH:
            first = _write_batch(out, batch, first)
            batch = []
    _write_batch(out, batch, first)
    out.write(b"\n]}\n")
    return view.diagnostics


def _write_batch(out: BinaryIO, batch: list[dict], first: bool) -> bool:
    if not batch:
        return first
    if not first:
        out.write(b",\n")
    out.write(_dumps(batch)[1:-1])
    return False
