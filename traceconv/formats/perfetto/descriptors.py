"""TrackDescriptors: one per process and track of the model, with stable uuids and pids.

* host processes keep their pid; device and synthetic processes ("GPU 0") and host
  processes without a usable pid get a made-up one above Linux's pid_max (1.5 * 2^30 + id), and
  their streams and other top-level tracks become ThreadDescriptors (made-up tids in the
  same range): the Perfetto UI draws a collapsed process as the busy share of its
  threads' slices, and nothing for a group of named tracks, so a GPU would open as a blank
  row (Kineto's own JSON shows its streams the same way: a device "process" with stream
  "threads"). A process of counters only ("Memory") stays a top-level named track, named
  with its labels, as a made-up pid would show beside a row that has nothing to summarise;
* threads of real processes become ThreadDescriptors (synthetic tid when the model has none
  or a clash);
* lanes, async tracks of host processes and counters become named tracks in their process
  (a lane's parent is its home track); counter tracks get a CounterDescriptor unit;
* ``sort_index`` becomes ``sibling_order_rank`` with ``child_ordering = EXPLICIT`` on the
  parent (for processes: ``process_ordering = EXPLICIT`` on the root descriptor, uuid 0),
  and named siblings never merge by name (``SIBLING_MERGE_BEHAVIOR_NONE``).
"""

from __future__ import annotations

import zlib
from collections.abc import Container
from dataclasses import dataclass

from ...model import Process, ProcessKind, Trace, Track, TrackKind
from .wire import bytes_field, string_field, uint_field

SYNTHETIC_ID_BASE = 1 << 30   # above pid_max on Linux (at most 2^22)
# made-up pids apart from made-up tids: a thread whose tid is its pid is the process's
# main thread for trace_processor
SYNTHETIC_PID_BASE = SYNTHETIC_ID_BASE + (1 << 29)
INT32_MAX = (1 << 31) - 1

# TrackDescriptor fields.
UUID, NAME, PROCESS, THREAD, PARENT_UUID, COUNTER, DESCRIPTION = 1, 2, 3, 4, 5, 8, 14
CHILD_ORDERING, SIBLING_ORDER_RANK, SIBLING_MERGE_BEHAVIOR = 11, 12, 15
PROCESS_ORDERING = 19   # on the root descriptor (uuid 0)
CHILD_ORDERING_EXPLICIT, SIBLING_MERGE_NONE, PROCESS_ORDERING_EXPLICIT = 3, 2, 1
# ProcessDescriptor / ThreadDescriptor / CounterDescriptor fields.
PID, PROCESS_NAME, PROCESS_LABELS = 1, 6, 8
TID, THREAD_NAME = 2, 5
UNIT, UNIT_NAME = 3, 6
COUNTER_UNITS = {"ns": 1, "count": 2, "bytes": 3}  # UNIT_TIME_NS, UNIT_COUNT, UNIT_SIZE_BYTES


@dataclass(slots=True)
class TrackIds:
    """The uuids and pids chosen for a trace's processes and tracks."""

    process_uuid: list[int]
    track_uuid: list[int]
    pid: list[int | None]   # None: the process is drawn as a named track group
    tid: list[int | None]   # None for tracks that are not threads
    base: int = 0           # uuids are base + 2 * id + 1 (processes), + 2 (tracks)


def assign_ids(trace: Trace) -> TrackIds:
    """Choose uuids, pids and tids. Uuids are salted with the source file and rank, so the
    files of several ranks opened together in Perfetto do not share track uuids.

    >>> trace = Trace(); gpu = trace.add_process("GPU 0", kind=ProcessKind.DEVICE, pid=0)
    >>> host = trace.add_process("python", pid=7)
    >>> memory = trace.add_process("Memory", kind=ProcessKind.SYNTHETIC)
    >>> stream = trace.add_track("stream 7", process=gpu, kind=TrackKind.STREAM, tid=7)
    >>> used = trace.add_track("bytes", process=memory, kind=TrackKind.COUNTER)
    >>> ids = assign_ids(trace); ids.pid, ids.tid
    ([1610612736, 7, None], [1073741824, None])
    """
    meta = trace.metadata
    # 16 bits of salt above 2^24 ids: 6-byte varints on every event (uuids < 2^41)
    salt = zlib.crc32(repr((meta.source_file, meta.rank)).encode()) & 0xFFFF
    base = (salt + 1) << 25
    with_threads = {t.process for t in trace.tracks if is_thread(trace, t)}
    used_pids: set[int] = set()
    pids: list[int | None] = []
    for process in trace.processes:
        pid = process.pid
        if process.kind is ProcessKind.HOST and pid is not None:
            if 0 < pid <= INT32_MAX and pid not in used_pids:
                used_pids.add(pid)
                pids.append(pid)
                continue
            trace.diagnostics.add("perfetto.pid_replaced", example=f"{process.name!r} pid {pid}")
        pids.append(SYNTHETIC_PID_BASE + process.id if process.id in with_threads else None)
    used_tids: set[tuple[int, int]] = set()
    tids: list[int | None] = []
    for track in trace.tracks:
        pid = pids[track.process]
        if pid is None or not is_thread(trace, track):
            tids.append(None)
            continue
        tid = track.tid if trace.processes[track.process].kind is ProcessKind.HOST else None
        if tid is None or not 0 < tid <= INT32_MAX or (pid, tid) in used_tids:
            if tid is not None:   # (the model attribute keeps it: traceconv reads it back)
                trace.diagnostics.add("perfetto.tid_replaced",
                                      example=f"{track.name!r} tid {tid}")
            tid = SYNTHETIC_ID_BASE + track.id
        used_tids.add((pid, tid))
        tids.append(tid)
    return TrackIds(
        process_uuid=[base + 2 * p.id + 1 for p in trace.processes],
        track_uuid=[base + 2 * t.id + 2 for t in trace.tracks],
        pid=pids, tid=tids, base=base)


def is_thread(trace: Trace, track: Track) -> bool:
    """Whether ``track`` becomes a ThreadDescriptor: a host thread, or a top-level track of
    slices in a device or synthetic process (a stream); else it is a named track."""
    if trace.processes[track.process].kind is ProcessKind.HOST:
        return track.kind is TrackKind.THREAD
    return track.parent is None and track.kind is not TrackKind.COUNTER


def descriptor_payloads(trace: Trace, ids: TrackIds, *, processes_from: int = 0,
                        described: Container[int] = ()) -> list[bytes]:
    """Encoded ``TrackDescriptor`` messages: the root (when processes are ordered), the
    processes, then the tracks, parents first; the processes from ``processes_from`` on and
    the tracks not in ``described`` (a trace written piece by piece describes what each
    piece adds; the root comes with the first processes)."""
    sorted_tracks = [t for t in trace.tracks if t.sort_index is not None]
    processes_with_order = {t.process for t in sorted_tracks}
    tracks_with_order = {t.parent for t in sorted_tracks if t.parent is not None}
    out = []
    if not processes_from and any(p.sort_index is not None for p in trace.processes):
        out.append(uint_field(UUID, 0) + uint_field(PROCESS_ORDERING, PROCESS_ORDERING_EXPLICIT))
    out += [_process(p, ids, p.id in processes_with_order)
            for p in trace.processes[processes_from:]]
    out += [_track(trace, t, ids, t.id in tracks_with_order)
            for t in _parents_first(trace.tracks) if ids.track_uuid[t.id] not in described]
    return out


def _process(process: Process, ids: TrackIds, ordered: bool) -> bytes:
    fields = [uint_field(UUID, ids.process_uuid[process.id])]
    pid = ids.pid[process.id]
    if pid is None:
        # a track group shows no labels: they go in its name, as a process row shows them
        labels = [x for x in process.labels if x not in process.name]
        name = f"{process.name} ({', '.join(labels)})" if labels else process.name
        fields += [string_field(NAME, name),
                   uint_field(SIBLING_MERGE_BEHAVIOR, SIBLING_MERGE_NONE)]
    else:
        desc = [uint_field(PID, pid), string_field(PROCESS_NAME, process.name)]
        desc += [string_field(PROCESS_LABELS, label) for label in process.labels]
        fields.append(bytes_field(PROCESS, b"".join(desc)))
    if process.sort_index is not None:
        fields.append(uint_field(SIBLING_ORDER_RANK, process.sort_index))
    if ordered:
        fields.append(uint_field(CHILD_ORDERING, CHILD_ORDERING_EXPLICIT))
    return b"".join(fields)


def _track(trace: Trace, track: Track, ids: TrackIds, ordered: bool) -> bytes:
    parent = (ids.track_uuid[track.parent] if track.parent is not None
              else ids.process_uuid[track.process])
    fields = [uint_field(UUID, ids.track_uuid[track.id]), uint_field(PARENT_UUID, parent)]
    tid, pid = ids.tid[track.id], ids.pid[track.process]
    if tid is not None and pid is not None:
        fields.append(bytes_field(THREAD, uint_field(PID, pid)
                                  + uint_field(TID, tid) + string_field(THREAD_NAME, track.name)))
    else:
        fields.append(string_field(NAME, track.name))
        fields.append(uint_field(SIBLING_MERGE_BEHAVIOR, SIBLING_MERGE_NONE))
    if track.kind is TrackKind.COUNTER:
        fields.append(bytes_field(COUNTER, counter_unit(track.unit)))
    if track.description:
        fields.append(string_field(DESCRIPTION, track.description))
    if track.sort_index is not None:
        fields.append(uint_field(SIBLING_ORDER_RANK, track.sort_index))
    if ordered:
        fields.append(uint_field(CHILD_ORDERING, CHILD_ORDERING_EXPLICIT))
    return b"".join(fields)


def counter_unit(unit: str | None) -> bytes:
    """CounterDescriptor body: a builtin unit when there is one, else ``unit_name``.

    >>> counter_unit("bytes"), counter_unit("%"), counter_unit(None)
    (b'\\x18\\x03', b'2\\x01%', b'')
    """
    if not unit:
        return b""
    builtin = COUNTER_UNITS.get(unit)
    return uint_field(UNIT, builtin) if builtin else string_field(UNIT_NAME, unit)


def _parents_first(tracks: list[Track]) -> list[Track]:
    """Tracks ordered so that a lane's home track comes before it."""
    done: set[int] = set()
    out: list[Track] = []

    def visit(track: Track, trail: frozenset[int]) -> None:
        if track.id in done:
            return
        if track.parent is not None and track.parent not in trail:
            visit(tracks[track.parent], trail | {track.id})
        done.add(track.id)
        out.append(track)

    for track in tracks:
        visit(track, frozenset())
    return out

