"""Model → Chrome Trace Event JSON (object form), streamed in batches.

Timestamps are µs relative to ``baseTimeNanoseconds`` (written at the top level, as Kineto
does) with at most three decimals, so every value is exact; flows are ``s``/``f`` pairs
with ``bp:"e"``; counters are ``C`` events; names and order come as ``M`` events.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import chain, repeat
from typing import BinaryIO, TypeGuard

import numpy as np
import orjson

from ...gcpause import paused_gc
from ...model import Diagnostics, ProcessKind, Trace, TrackKind
from ...model.block_record import record_text
from ...model.columns import InstantTable, SliceTable
from ...model.graph_record import graph_record
from ...model.metadata_record import metadata_record
from ...model.nesting import clamped_durations, nested_view
from ...model.stats_record import stats_record
from ...numbers import INT64_MIN
from ...version import __version__
from .event_json import ArgsText, dumps, microseconds, value_texts
from .written_tracks import described

BATCH = 1 << 14   # events encoded (and held) at a time
SYNTHETIC_PID = 1 << 24  # above the usual pid range; Kineto's GPU sort indices start here
_RESERVED = {"traceEvents", "displayTimeUnit", "baseTimeNanoseconds", "traceconv", "flavour"}
_WRITTEN_OVER = ("displayTimeUnit", "baseTimeNanoseconds")   # the source's: kept apart


def _fits(value: object) -> TypeGuard[int]:
    """An id viewers read as it is: JSON readers take pids and tids as 32-bit numbers
    (trace_processor folds XLA's 64-bit thread ids onto one thread).

    >>> _fits(4242), _fits(-5363550883688733980), _fits(1 << 31), _fits("7")
    (True, False, False, False)
    """
    return isinstance(value, int) and 0 <= value < 1 << 31


class _Ids:
    """Output pids and tids: the source's when unique and 32-bit, else synthetic ones (the
    thread's name keeps saying which it is)."""

    def __init__(self, trace: Trace) -> None:
        self.pid: dict[int, int] = {}
        used: set[int] = set()
        for p in trace.processes:
            if _fits(p.pid) and p.pid not in used:
                self.pid[p.id] = p.pid
                used.add(p.pid)
        spare = max(used | {SYNTHETIC_PID - 1}) + 1
        replaced = []
        for p in trace.processes:
            if p.id not in self.pid:
                if p.pid is not None:
                    replaced.append(f"{p.name!r} pid {p.pid}")
                self.pid[p.id], spare = spare, spare + 1
        self.tid: dict[int, int] = {}
        taken: set[tuple[int, int]] = set()
        for t in trace.tracks:
            # (trace_processor reads a tid of 0 in a process other than 0 as tid = pid: it
            # takes that number too, and joins the thread that has it)
            tid = t.tid
            if not _fits(tid):
                continue
            read_as = self.pid[t.process] if tid == 0 else tid
            if (t.process, tid) not in taken and (t.process, read_as) not in taken:
                self.tid[t.id] = tid
                taken.update({(t.process, tid), (t.process, read_as)})
        spare = SYNTHETIC_PID
        for t in trace.tracks:
            if t.id not in self.tid:
                if t.tid is not None:
                    replaced.append(f"{t.name!r} tid {t.tid}")
                while (t.process, spare) in taken:
                    spare += 1
                self.tid[t.id] = spare
                taken.add((t.process, spare))
        trace.diagnostics.add("chrome.id_replaced", count=len(replaced),
                              example=replaced[0] if replaced else None)


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


def _events(trace: Trace, ids: _Ids, base: int) -> Iterator[bytes]:
    """The events as JSON text, in batches (events separated by commas)."""
    metadata = list(_metadata_events(trace, ids))
    if metadata:
        yield dumps(metadata)[1:-1]
    place = [b',"pid":%d,"tid":%d' % (ids.pid[t.process], ids.tid[t.id]) for t in trace.tracks]
    yield from _named_events(trace, trace.slices, place, base)
    # an instant's scope: its thread's, or the whole trace's on a global track
    scoped = [p + (b',"s":"g"' if t.kind is TrackKind.GLOBAL else b',"s":"t"')
              for p, t in zip(place, trace.tracks, strict=True)]
    yield from _named_events(trace, trace.instants, scoped, base)
    yield from _counter_events(trace, ids, base)
    yield from _flow_events(trace, place, base)


class _StringTexts:
    """``prefix`` and the JSON of each of the trace's strings, made when first asked for
    (id 0, the empty string, as ``empty`` when given)."""

    def __init__(self, trace: Trace, prefix: bytes, empty: bytes | None = None) -> None:
        self.strings, self.prefix = trace.strings.strings, prefix
        self.texts: list[bytes | None] = [None] * len(self.strings)
        if empty is not None and self.texts:
            self.texts[0] = empty

    def of(self, ids: list[int]) -> list[bytes]:
        texts = self.texts
        found = list(map(texts.__getitem__, ids))
        if None in found:
            for k, text in enumerate(found):
                if text is None:
                    found[k] = texts[ids[k]] = self.prefix + orjson.dumps(self.strings[ids[k]])
        return found  # type: ignore[return-value]  # every None was filled


def _named_events(trace: Trace, table: SliceTable | InstantTable, place: list[bytes],
                  base: int) -> Iterator[bytes]:
    """Slices (``X``) or instants (``i``), BATCH rows at a time, in row order."""
    is_slice = isinstance(table, SliceTable)
    times = table.numpy("start" if is_slice else "ts") - base
    durations = table.numpy("dur") if is_slice else None
    tracks, names, categories = (table.numpy(c) for c in ("track", "name", "category"))
    name_texts = _StringTexts(trace, b',"name":')
    category_texts = _StringTexts(trace, b',"cat":', empty=b"")   # no category: no key
    args = ArgsText(table.args)
    head = b'{"ph":"X","ts":' if is_slice else b'{"ph":"i","ts":'
    for lo in range(0, len(table), BATCH):
        rows = np.arange(lo, min(lo + BATCH, len(table)))
        events: list[bytes] = []
        positions: list[np.ndarray] = []
        for group, arg_pieces in args.groups(rows):
            picked = rows[group]
            pieces: list[Iterable[bytes]] = [microseconds(times[picked], head)]
            if durations is not None:
                pieces.append(microseconds(durations[picked], b',"dur":'))
            pieces += (name_texts.of(names[picked].tolist()),
                       map(place.__getitem__, tracks[picked].tolist()),
                       category_texts.of(categories[picked].tolist()), *arg_pieces)
            events += map(b"".join, zip(*pieces, strict=False))   # with repeat()s
            positions.append(group)
        yield b",".join(_in_row_order(events, positions))


def _in_row_order(events: list[bytes], positions: list[np.ndarray]) -> list[bytes]:
    """``events``, made group by group (``positions``: each group's rows), in row order."""
    order = np.concatenate(positions)
    if not (order[1:] < order[:-1]).any():
        return events
    place_of = np.empty(len(order), dtype=np.int64)
    place_of[order] = np.arange(len(order))
    return list(map(events.__getitem__, place_of.tolist()))


_INT64_EDGE = -float(INT64_MIN)


def counter_names(trace: Trace) -> tuple[list[str], list[str]]:
    """Per track, the name its ``C`` events carry, and the names made. A viewer keys a
    counter by process and name (``C`` events have no thread), so counter tracks that share
    a name in a process (Chrome's ``thread_time`` of each thread) are told apart by their
    thread (the writer counts them as ``chrome.counter_renamed``).

    >>> t = Trace(); p = t.add_process("renderer", pid=1)
    >>> _ = t.add_track("Main", process=p, tid=5)
    >>> for tid in (5, 6):
    ...     _ = t.add_track("thread_time", process=p, kind=TrackKind.COUNTER, tid=tid)
    >>> counter_names(t)[1]
    ['thread_time (Main)', 'thread_time (tid 6)']
    """
    names = [t.name for t in trace.tracks]
    counters = [t for t in trace.tracks if t.kind is TrackKind.COUNTER]
    shared = Counter((t.process, t.name) for t in counters)
    threads = {(t.process, t.tid): t.name for t in trace.tracks
               if t.kind is not TrackKind.COUNTER and t.tid is not None}
    renamed = [t for t in counters if shared[(t.process, t.name)] > 1]
    for t in renamed:
        names[t.id] = f"{t.name} ({threads.get((t.process, t.tid)) or f'tid {t.tid}'})" \
            if t.tid is not None else f"{t.name} (track {t.id})"
    again = Counter((trace.tracks[i].process, names[i]) for i in (t.id for t in renamed))
    for t in renamed:   # (two counters of one thread under one name: the track says which)
        if again[(t.process, names[t.id])] > 1:
            names[t.id] = f"{names[t.id]} #{t.id}"
    return names, [names[t.id] for t in renamed]


def _counter_events(trace: Trace, ids: _Ids, base: int) -> Iterator[bytes]:
    """``C`` events named after their track (:func:`counter_names`), an integral value
    within int64 as an int (one past it stays a number: a float)."""
    c = trace.counters
    names, renamed = counter_names(trace)
    trace.diagnostics.add("chrome.counter_renamed", count=len(renamed),
                          example=renamed[0] if renamed else None)
    heads = [b'{"ph":"C","name":%s,"pid":%d,"ts":' % (orjson.dumps(name), ids.pid[t.process])
             for name, t in zip(names, trace.tracks, strict=True)]
    times = c.numpy("ts") - base
    for lo in range(0, len(c), BATCH):
        hi = min(lo + BATCH, len(c))
        values = [int(v) if v.is_integer() and -_INT64_EDGE <= v < _INT64_EDGE else v
                  for v in c.value[lo:hi]]
        yield b",".join(map(b"".join, zip(
            map(heads.__getitem__, c.track[lo:hi]), microseconds(times[lo:hi]),
            repeat(b',"args":{"value":'), value_texts(values), repeat(b"}}"))))


def _flow_events(trace: Trace, place: list[bytes], base: int) -> Iterator[bytes]:
    """An ``s``/``f`` pair per flow, ids from 1."""
    f, s = trace.flows, trace.slices
    strings = trace.strings.strings
    track, start, dur = s.numpy("track"), s.numpy("start"), s.numpy("dur")
    sources, targets = f.numpy("source"), f.numpy("target")
    labelled = np.stack([f.numpy("category"), f.numpy("name")], axis=1)
    labels: dict[tuple[int, int], bytes] = {}
    for lo in range(0, len(f), BATCH):
        hi = min(lo + BATCH, len(f))
        source, target = sources[lo:hi], targets[lo:hi]
        distinct, which = np.unique(labelled[lo:hi], axis=0, return_inverse=True)
        label_texts = []
        for cat, name in distinct.tolist():
            text = labels.get((cat, name))
            if text is None:
                category, label = strings[cat] or "flow", strings[name] or strings[cat] or "flow"
                text = labels[(cat, name)] = b',"cat":%s,"name":%s' % (
                    orjson.dumps(category), orjson.dumps(label))
            label_texts.append(text)
        texts = list(map(label_texts.__getitem__, which.reshape(-1).tolist()))
        starts = start[source]
        # A flow must not end before it starts (Perfetto drops it): end at the later of the
        # two starts, still inside the target slice so that bp:"e" binds to it.
        ends = np.minimum(np.maximum(start[target], starts),
                          start[target] + clamped_durations(start[target], dur[target]))
        flow_ids = value_texts(list(range(lo + 1, hi + 1)))
        pairs = []
        for phase, rows, stamps, tail in ((b"s", source, starts, b"}"),
                                          (b"f", target, ends, b',"bp":"e"}')):
            pairs.append(list(map(b"".join, zip(
                repeat(b'{"ph":"%s","id":' % phase), flow_ids, texts,
                map(place.__getitem__, track[rows].tolist()), repeat(b',"ts":'),
                microseconds(stamps - base), repeat(tail)))))
        yield b",".join(chain.from_iterable(zip(*pairs, strict=True)))


def _header(trace: Trace, view: Trace, ids: _Ids, base: int) -> dict:
    """The top-level keys: the source's, and traceconv's record of the trace's metadata
    (:mod:`~traceconv.model.metadata_record`, as a ``.pftrace`` keeps it), of the source's
    values of the keys this writer sets (``envelope``), of the processes and tracks
    (:mod:`.written_tracks`), of the trace's diagnostics, op statistics and op graph and, apart, the
    writer's (``view`` is what was written); its memory blocks follow as text
    (:func:`_header_text`)."""
    meta = trace.metadata
    header = {k: v for k, v in meta.attributes.items() if k not in _RESERVED}
    header.update({
        "displayTimeUnit": "ms",
        "baseTimeNanoseconds": base,
        "traceconv": {"version": __version__, **metadata_record(meta),
                      "source_file": meta.source_file,
                      "envelope": {k: meta.attributes[k] for k in _WRITTEN_OVER
                                   if k in meta.attributes},
                      "device_categories": _device_categories(view),
                      **described(trace, view, pids=ids.pid, tids=ids.tid,
                                  counters=counter_names(view)[0]),
                      "diagnostics": meta.diagnostics.as_list(),
                      "stats": stats_record(trace.stats),
                      "graph": graph_record(trace),
                      "writer_diagnostics": view.diagnostics.as_list()},
    })
    return header


def _header_text(header: dict, trace: Trace) -> Iterator[bytes]:
    """``header`` as JSON text without its closing brace, its ``traceconv`` record holding
    the trace's memory blocks (but those its events make: :func:`_paired_again`) and
    reservations too (:mod:`~traceconv.model.block_record`, as a ``.pftrace`` keeps them),
    made a piece at a time as they are written.

    >>> text = b"".join(_header_text({"a": 1, "traceconv": {"version": "x"}}, Trace()))
    >>> orjson.loads(text + b"}")["traceconv"]["memory"]["size"]
    []
    """
    record = header.pop("traceconv")
    yield dumps(header)[:-1] + b',"traceconv":' + dumps(record)[:-1]
    for key in ("reservations",) if _paired_again(trace) else ("memory", "reservations"):
        yield b',"%s":' % key.encode()
        yield from record_text(getattr(trace, key))
    yield b"}"


def _paired_again(trace: Trace) -> bool:
    """Whether the memory blocks of ``trace`` are those its Kineto ``[memory]`` instants
    make (a trace the Kineto flavour read): written as the instants they are, the flavour
    pairs them into the same blocks on reading, and the record would say each twice (a
    500-step CPU trace's blocks: 9.8 MB of text).

    >>> _paired_again(Trace())
    False
    """
    return (trace.metadata.attributes.get("flavour") == "kineto"
            and trace.strings.find("[memory]") is not None)


def _device_categories(trace: Trace) -> list[str]:
    """Categories of the slices on device processes. Reading the file back, they say which
    events are device work whatever the producer's own names (Paddle's ``Memcpy``, ...), so
    a second conversion puts them on the same streams. No category at all is listed only
    when no host slice lacks one too (a trace whose device streams were guessed has
    uncategorised threads on both sides: listed, it would put them all on devices).

    >>> t = Trace(); gpu = t.add_process("GPU", kind=ProcessKind.DEVICE)
    >>> stream = t.add_track("7", process=gpu, kind=TrackKind.STREAM)
    >>> _ = t.add_slice(stream, 0, 1, "gemm", "kernel"); _ = t.add_slice(stream, 1, 1, "copy")
    >>> _device_categories(t)
    ['', 'kernel']
    >>> _ = t.add_slice(t.add_track("main", process=t.add_process("python")), 0, 1, "step")
    >>> _device_categories(t)
    ['kernel']
    """
    kinds = [trace.processes[t.process].kind for t in trace.tracks]
    device, host = (np.array([k is kind for k in kinds], bool)
                    for kind in (ProcessKind.DEVICE, ProcessKind.HOST))
    s, strings = trace.slices, trace.strings.strings
    track, category = s.numpy("track"), s.numpy("category")
    listed = {strings[c] for c in np.unique(category[device[track]]).tolist()}
    none = trace.strings.find("")
    if "" in listed and (category[host[track]] == none).any():
        listed.discard("")
    return sorted(listed)


def _count_backwards(view: Trace) -> None:
    """Count the flows whose target starts before their source: their ``f`` is placed at
    the source's start inside the target, where a viewer binds it to the innermost slice
    open then (one nested in the target, or the arrow runs from the earlier slice)."""
    starts = view.slices.numpy_view("start")
    source, target = view.flows.numpy_view("source"), view.flows.numpy_view("target")
    if not len(source):
        return
    view.diagnostics.add("chrome.flow_backwards",
                         count=int((starts[target] < starts[source]).sum()))
    ends = starts[target] + clamped_durations(starts[target],
                                              view.slices.numpy_view("dur")[target])
    view.diagnostics.add("chrome.flow_not_shown", count=int((ends < starts[source]).sum()))


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
    ids = _Ids(view)
    _count_backwards(view)
    for piece in _header_text(_header(trace, view, ids, base), trace):
        out.write(piece)
    out.write(b',"traceEvents":[\n')
    first = True
    with paused_gc():   # millions of short-lived objects, no cycles (args may decode here)
        for text in _events(view, ids, base):
            if text:
                if not first:
                    out.write(b",\n")   # (apart: joining would copy the batch)
                out.write(text)
                first = False
    out.write(b"\n]}\n")
    return view.diagnostics
