"""What traceconv's Chrome writer says of its processes and tracks, read back.

Chrome JSON has no words for a process's kind, a track's kind or unit, a missing pid or
tid (the writer makes one up), the names a flavour gives processes of its own accord, nor
for the lane threads the writer draws overlapping slices on (nor for an async track, whose
spans it writes as ``X`` slices of a thread of their own: a flow event binds to thread
slices only, and an Android frame timeline's flows link its async spans). The writer lists
them in its
``traceconv`` envelope key, by the pids and tids it wrote (:func:`described`); reading the
file back, :func:`lane_homes` folds each lane into its home thread as the events arrive and
:func:`restore` gives the processes and tracks back as they were.

>>> from traceconv.model import Trace, TrackKind
>>> t = Trace(); gpu = t.add_process("GPU 0", kind=ProcessKind.DEVICE)
>>> _ = t.add_track("7", process=gpu, kind=TrackKind.STREAM, tid=7)
>>> _ = t.add_track("live bytes", process=gpu, kind=TrackKind.COUNTER, unit="bytes")
>>> d = described(t, t, pids={0: 16777216}, tids={0: 7, 1: 16777216}, counters=["7", "live bytes"])
>>> d["processes"], d["threads"], d["counters"], d["lanes"]
([[16777216, 'GPU 0', 'device', None, []]], [[16777216, 7, '7', 'stream', None, 7]], [[16777216, 'live bytes', 'live bytes', 'bytes', None]], [])
"""

from __future__ import annotations

from typing import Any

from ...model import ProcessKind, Trace, TrackKind
from ...numbers import int64

_PROCESS_KINDS = {k.value: k for k in ProcessKind}
_TRACK_KINDS = {k.value: k for k in TrackKind if k is not TrackKind.COUNTER}


def described(trace: Trace, view: Trace, *, pids: dict[int, int], tids: dict[int, int],
              counters: list[str]) -> dict[str, list[list[Any]]]:
    """The record of ``view`` (``trace`` with the lanes the writer drew after its own
    tracks) written with output ``pids`` and ``tids`` (by process and track id) and each
    track's ``C`` event name (``counters``): ``processes`` [pid, name, kind, source pid,
    labels],
    ``threads`` [pid, tid, name, kind, unit, source tid], ``counters`` [pid, C name, name,
    unit, source tid], ``lanes`` [pid, tid, home tid]."""
    record: dict[str, list[list[Any]]] = {
        "processes": [[pids[p.id], p.name, p.kind.value, p.pid, list(p.labels)]
                      for p in view.processes],
        "threads": [], "counters": [], "lanes": []}
    for t in view.tracks:
        pid = pids[t.process]
        if t.kind is TrackKind.COUNTER:
            record["counters"].append([pid, counters[t.id], t.name, t.unit, t.tid])
        elif t.id >= len(trace.tracks) and t.parent is not None:   # (a lane drawn here)
            record["lanes"].append([pid, tids[t.id], tids[t.parent]])
        else:
            record["threads"].append([pid, tids[t.id], t.name, t.kind.value, t.unit, t.tid])
    return record


def _rows(written: Any, key: str, size: int) -> tuple[list[list[Any]], int]:
    """The rows of ``written[key]`` that are lists of ``size``, and how many others."""
    listed = written.get(key) if isinstance(written, dict) else None
    if not isinstance(listed, list):
        return [], 0
    rows = [row for row in listed if isinstance(row, list) and len(row) == size]
    return rows, len(listed) - len(rows)


def lane_homes(written: Any) -> dict[tuple[Any, Any], Any]:
    """(pid, tid) of each lane thread the writer drew -> its home thread's tid (a lane
    whose home is itself listed as a lane is left a thread of its own).

    >>> lane_homes({"lanes": [[1, 9, 2], [1, 8, 9], "x"]})
    {(1, 9): 2}
    """
    rows, _ = _rows(written, "lanes", 3)
    homes = {(pid, tid): home for pid, tid, home in rows}
    return {key: home for key, home in homes.items() if (key[0], home) not in homes}


def written_ids(written: Any) -> set[tuple[Any, ...]]:
    """The pids (as 1-tuples) and (pid, tid) of the processes and threads ``written`` lists:
    each one process, one track, whether its events are device work or not.

    >>> sorted(written_ids({"processes": [[5, "p", "host", 5, []]], "threads": "x"}))
    [(5,)]
    """
    rows, _ = _rows(written, "processes", 5)
    threads, _ = _rows(written, "threads", 6)
    return {(row[0],) for row in rows} | {(row[0], row[1]) for row in threads}


def restore(trace: Trace, written: Any, *, processes: dict[tuple, int],
            threads: dict[tuple, int], counters: dict[tuple, int],
            global_track: int | None = None) -> int:
    """Give the processes and tracks of ``trace`` (being read) the names, kinds, labels,
    units, pids and tids that ``written`` lists, and add those that no event made (a
    process or track with nothing on it); ``processes`` maps (device, pid) to a process,
    ``threads`` (device, pid, tid) to a track, ``counters`` (process, name) to a counter
    track, as the reader made them (``global_track``: the track of global instants, which
    the listed global thread is). Returns how many listed rows were not understood.

    >>> from traceconv.model import Trace
    >>> t = Trace(); p = t.add_process("16777216", pid=16777216)
    >>> n = restore(t, {"processes": [[16777216, "Spans", "synthetic", None, []], [1]],
    ...                 "threads": [[16777216, 3, "idle", "thread", None, 3]]},
    ...             processes={(False, 16777216): p}, threads={}, counters={})
    >>> n, t.processes[0].name, t.processes[0].kind.value, t.processes[0].pid, t.tracks[0].name
    (1, 'Spans', 'synthetic', None, 'idle')
    """
    unread = 0
    if global_track is not None:
        for pid, tid, _, kind, *_ in _rows(written, "threads", 6)[0]:
            if kind == TrackKind.GLOBAL.value:
                processes.setdefault((False, pid), trace.tracks[global_track].process)
                threads.setdefault((False, pid, tid), global_track)
    rows, bad = _rows(written, "processes", 5)
    unread += bad
    for pid, name, kind, source_pid, labels in rows:
        if not isinstance(name, str) or kind not in _PROCESS_KINDS or not (
                isinstance(labels, list) and all(isinstance(x, str) for x in labels)):
            unread += 1
            continue
        if (False, pid) not in processes and (True, pid) not in processes:
            processes[(False, pid)] = trace.add_process(name)
        for index in {processes[key] for key in ((False, pid), (True, pid)) if key in processes}:
            process = trace.processes[index]
            process.name, process.kind, process.pid = name, _PROCESS_KINDS[kind], int64(
                source_pid)
            process.labels = list(labels)
    rows, bad = _rows(written, "threads", 6)
    unread += bad
    for pid, tid, name, kind, unit, source_tid in rows:
        owner = processes.get((False, pid), processes.get((True, pid)))
        if not isinstance(name, str) or kind not in _TRACK_KINDS or not _text(unit) \
                or owner is None:
            unread += 1
            continue
        found = {threads[key] for key in ((False, pid, tid), (True, pid, tid)) if key in threads}
        if not found:
            found = {threads.setdefault((False, pid, tid), trace.add_track(name, process=owner))}
        for index in found:
            _set(trace, index, name, _TRACK_KINDS[kind], unit, source_tid)
    rows, bad = _rows(written, "counters", 5)
    unread += bad
    for pid, series, name, unit, source_tid in rows:
        owner = processes.get((False, pid), processes.get((True, pid)))
        if not isinstance(name, str) or not _text(unit) or owner is None:
            unread += 1
            continue
        track = counters.get((owner, series))
        if track is None:
            track = counters[(owner, series)] = trace.add_track(name, process=owner)
        _set(trace, track, name, TrackKind.COUNTER, unit, source_tid)
    return unread


def _text(value: Any) -> bool:
    """Whether ``value`` is a text or none (a unit)."""
    return value is None or isinstance(value, str)


def _set(trace: Trace, index: int, name: str, kind: TrackKind, unit: str | None,
         tid: Any) -> None:
    track = trace.tracks[index]
    track.name, track.kind, track.unit, track.tid = name, kind, unit, int64(tid)
