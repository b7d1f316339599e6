"""The timeline critical path: a walk back in time from the end of the run.

The walk holds a place (a host piece or a device slice) and a time cursor, and at each step
asks what released the work running at the cursor:

- a host piece: the piece before it on its thread (program order); when it is a call that
  really blocks — ``cudaDeviceSynchronize``, ``cudaStreamSynchronize``,
  ``cudaEventSynchronize``, a copy call that returns only when its copy is done — the device
  work it waited for (the stream or event of Kineto's ``cuda_sync`` record when the trace has
  one, else the device work that ended last while it waited); the source of a flow from
  another thread (a hand-off); on a thread's first piece, the main thread at that moment
  (else another host thread running then); for the own time of a frame (a Python frame, a
  range, a step) on a thread linked by flows to another (the main thread and its autograd
  thread), the work of the linked thread that ended last in it — the frame was waiting in
  ``backward()`` — and after a gap on such a thread, the linked thread running then;
- a device slice: the previous work on its stream, its launch call, and for work queued
  behind ``cudaStreamWaitEvent`` the work it waited for on the other stream (from Kineto's
  ``cuda_sync`` records; without them, work on another stream of the device that ended at
  most 50 µs before it started, when nothing else explains a longer wait); the one that
  released it last wins. Device work nobody launched hands back to the main thread.

Polls (``cudaEventQuery``, ``cudaStreamQuery``) are not synchronisations: a watchdog thread
polling them is never on the path, and the walk starts from the end of the last device work
or the main thread's last work (the thread with the steps, else the busiest that runs ops),
whichever ends later. The cursor only moves back, so a launch that returns after its kernel finished is no
dead end: the path takes the launch up to the kernel's start and goes on before it. Every
piece is cut to end at the cursor, so the path is contiguous in time (gaps are idle).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..numbers import MAX_DIGITS
from .activity import Activity, Timeline
from .host_segments import HostSegments

_DEVICE_WORK = np.array([Activity.KERNEL, Activity.MEMCPY, Activity.MEMSET,
                         Activity.COMMUNICATION], np.int8)
_STREAM_NUMBER = re.compile(r"stream\s*(\d+)", re.IGNORECASE)
_ANY_STREAM = re.compile(r"Device|Ctx|Context", re.IGNORECASE)
# device work that starts this soon after work on another stream ended, with nothing else to
# explain its wait, waited for that work (an event wait the trace does not record)
IMPLIED_WAIT_NS = 50_000
# a frame's own time (no op running in it) may be a wait for another thread
_FRAMES = frozenset(int(a) for a in (Activity.PYTHON, Activity.ANNOTATION, Activity.STEP,
                                     Activity.OTHER))
_SYNC = int(Activity.SYNC)


@dataclass
class Link:
    """One piece of the path: ``row`` (a slice) from ``start_ns`` to ``end_ns``."""

    row: int
    start_ns: int
    end_ns: int


class _Device:
    """Device work per stream (track), sorted by end."""

    def __init__(self, tl: Timeline) -> None:
        rows = np.flatnonzero(np.isin(tl.activity, _DEVICE_WORK) & tl.on_device)
        self.rows = rows[np.lexsort((tl.end[rows], tl.track[rows]))]
        self.track = tl.track[self.rows]
        self.end = tl.end[self.rows]
        self.by_end = self.rows[np.argsort(tl.end[self.rows], kind="stable")]
        self.all_ends = tl.end[self.by_end]
        self.all_tracks = tl.track[self.by_end]
        self.position = {row: i for i, row in enumerate(self.rows.tolist())}

    def before(self, track: int, ts: int, work: int | None = None) -> int | None:
        """The work on stream ``track`` that ends last at or before ``ts`` (and, given
        ``work`` on that stream, comes before it in stream order: zero-length copies at one
        timestamp are ordered, not each other's predecessor)."""
        lo = int(np.searchsorted(self.track, track, "left"))
        hi = int(np.searchsorted(self.track, track, "right"))
        i = lo + int(np.searchsorted(self.end[lo:hi], ts, "right")) - 1
        if work is not None and work in self.position:
            i = min(i, self.position[work] - 1)
        return int(self.rows[i]) if i >= lo else None

    def ending_within(self, lo: int, hi: int, tracks: set[int] | None) -> int | None:
        """The work (on ``tracks``, or any) that ends last in (lo, hi]."""
        i = int(np.searchsorted(self.all_ends, hi, "right")) - 1
        while i >= 0 and self.all_ends[i] > lo:
            if tracks is None or int(self.all_tracks[i]) in tracks:
                return int(self.by_end[i])
            i -= 1
        return None


class Walk:
    """The data the walk needs, built once from a :class:`Timeline`."""

    def __init__(self, tl: Timeline) -> None:
        self.tl = tl
        self.host = HostSegments(tl)
        self.activity: list[int] = tl.activity.tolist()   # plain ints: looked up per link
        self.device = _Device(tl)
        trace = tl.trace
        names = trace.strings.strings
        # stream number → track, per device process
        self.stream_track: dict[tuple[int, int], int] = {}
        self.process_tracks: dict[int, set[int]] = defaultdict(set)
        for index, track in enumerate(trace.tracks):
            self.process_tracks[track.process].add(index)
            found = _STREAM_NUMBER.search(track.name)
            if found and len(found[1]) <= MAX_DIGITS:   # (a 5,000-digit name: no stream)
                self.stream_track[(track.process, int(found[1]))] = index
        # Kineto's cuda_sync records, by the runtime call they belong to / by stream
        self.sync_record: dict[int, int] = {}
        self.stream_waits: dict[int, list[int]] = defaultdict(list)
        marks = tl.rows(Activity.DEVICE_SYNC)
        for row in marks[tl.on_device[marks]].tolist():
            args = trace.slices.args[row]
            if not isinstance(args, dict) or "cuda_sync_kind" not in args:
                continue
            if tl.launch_of[row] >= 0:
                self.sync_record[int(tl.launch_of[row])] = row
            if args.get("cuda_sync_kind") == "Stream Wait Event":
                self.stream_waits[int(tl.track[row])].append(row)
        for rows in self.stream_waits.values():
            rows.sort(key=lambda r: tl.start[r])
        self.launched: dict[int, list[int]] = defaultdict(list)
        for work in np.flatnonzero(tl.launch_of >= 0).tolist():
            if tl.activity[work] in (Activity.MEMCPY, Activity.MEMSET):
                self.launched[int(tl.launch_of[work])].append(work)
        self.hand_offs: dict[int, list[int]] = defaultdict(list)
        flows = trace.flows
        if len(flows):
            src, dst = flows.numpy("source"), flows.numpy("target")
            n = len(tl.start)
            ok = (src >= 0) & (src < n) & (dst >= 0) & (dst < n)
            src, dst = src[ok], dst[ok]
            cross = ~tl.on_device[src] & ~tl.on_device[dst] & (tl.track[src] != tl.track[dst])
            for s, d in zip(src[cross].tolist(), dst[cross].tolist(), strict=True):
                self.hand_offs[d].append(s)
        # threads the trace links (forward → backward flows): the main thread waits in
        # backward() while its autograd thread works, and starts it
        self.partners: dict[int, set[int]] = defaultdict(set)
        for d, sources in self.hand_offs.items():
            for s in sources:
                a, b = int(tl.track[s]), int(tl.track[d])
                self.partners[a].add(b)
                self.partners[b].add(a)
        self.sync_names = {row: names[tl.name[row]]
                           for row in tl.rows(Activity.SYNC).tolist()}
        self.main = self._main_thread()

    def _main_thread(self) -> int | None:
        """The host track holding the steps, else the one busy the longest of those that
        run ops (a pool thread idle in its Python ``_worker`` frame for the whole run is
        not the main thread), else of all (a track with some host work either way: steps
        of no length leave a track none)."""
        tl = self.tl
        steps = tl.rows(Activity.STEP)
        steps = steps[~tl.on_device[steps]]
        weight = np.bincount(tl.track[steps], weights=tl.dur[steps])
        holding = [t for t in np.flatnonzero(weight).tolist() if t in self.host.bounds]
        if holding:
            return max(holding, key=lambda t: (weight[t], -t))
        busy = self.host.busy_ns()
        working = self.host.busy_ns(tl.activity, _FRAMES)
        busy = {t: ns for t, ns in busy.items() if working[t]} or busy   # (threads with ops)
        return max(busy, key=lambda t: (busy[t], -t)) if busy else None

    # -- what released what -------------------------------------------------------------

    def _waited_streams(self, row: int) -> set[int] | None:
        """The streams a blocking call waits for (None: any stream)."""
        tl = self.tl
        record = self.sync_record.get(row)
        if record is None:
            return None
        args = tl.trace.slices.args[record] or {}
        kind = str(args.get("cuda_sync_kind", ""))
        number = args.get("stream") if kind == "Stream Sync" else args.get("wait_on_stream")
        if _ANY_STREAM.search(kind) or not isinstance(number, int) or number < 0:
            return None
        track = self.stream_track.get((tl.trace.tracks[int(tl.track[record])].process, number))
        return None if track is None else {track}

    def waited_device_work(self, row: int, start: int, cursor: int) -> int | None:
        """The device work a blocking host call ``row`` waited for, ending in (start, cursor]."""
        tl = self.tl
        if self.activity[row] == _SYNC:
            return self.device.ending_within(start, cursor, self._waited_streams(row))
        copies = [w for w in self.launched.get(row, ()) if tl.end[w] <= tl.end[row]
                  and start < tl.end[w] <= cursor]
        return max(copies, key=lambda w: tl.end[w]) if copies else None

    def partner_release(self, segment: int, cursor: int) -> int | None:
        """The piece of a linked thread that ends last in (start, cursor] of a frame's own
        time (Python frame, range, step): the frame was waiting for that thread."""
        host = self.host
        track, row = int(host.track[segment]), int(host.row[segment])
        if track not in self.partners or self.activity[row] not in _FRAMES:
            return None
        start = int(host.start[segment])
        best = None
        for other in self.partners[track]:
            piece = host.before(other, cursor)
            if piece is not None and host.end[piece] > start and (
                    best is None or host.end[piece] > host.end[best]):
                best = piece
        return best

    def device_release(self, work: int) -> tuple[str, int, int] | None:
        """(place, index, cursor) of what released device ``work`` last."""
        tl = self.tl
        start, track = int(tl.start[work]), int(tl.track[work])
        options: list[tuple[int, int, str, int]] = []   # (release, preference, place, index)
        previous = self.device.before(track, start, work)
        if previous is not None:
            options.append((int(tl.end[previous]), 0, "device", previous))
        launch = int(tl.launch_of[work])
        # a work item that started while its runtime call still ran (a blocking copy, a
        # launch that returns late) was submitted at some point of the call: when its stream
        # was still busy after the call began, the stream held it back, not the call
        held_back = (launch >= 0 and previous is not None and tl.end[launch] > start
                     and tl.end[previous] > tl.start[launch])
        if launch >= 0 and not tl.on_device[launch] and not held_back:
            release = min(int(tl.end[launch]), start)
            segment = self.host.at(int(tl.track[launch]), release)
            if segment is not None:
                options.append((min(release, int(self.host.end[segment])), 1, "host", segment))
        for mark in self.stream_waits.get(track, ()):
            if tl.start[mark] > start:
                break
            if previous is not None and tl.start[mark] < tl.start[previous]:
                continue
            other = self._waited_streams_of_mark(mark)
            if other is not None:
                waited = self.device.before(other, start)
                if waited is not None:
                    options.append((int(tl.end[waited]), 0, "device", waited))
        latest = max(options)[0] if options else None
        if latest is not None and start - latest > IMPLIED_WAIT_NS:
            # it waited for something the trace does not record (an event wait without a
            # cuda_sync record): work on another stream of its device that ended just before
            process = tl.trace.tracks[track].process
            others = self.process_tracks[process] - {track}
            waited = self.device.ending_within(latest, start, others)
            if waited is not None and start - tl.end[waited] <= IMPLIED_WAIT_NS:
                options.append((int(tl.end[waited]), 0, "device", waited))
        if not options and self.main is not None:
            segment = self.host.at(self.main, start)
            if segment is not None:
                options.append((min(start, int(self.host.end[segment])), 1, "host", segment))
        if not options:
            return None
        release, _, place, index = max(options)
        return place, index, release

    def _waited_streams_of_mark(self, mark: int) -> int | None:
        tl = self.tl
        number = (tl.trace.slices.args[mark] or {}).get("wait_on_stream")
        if not isinstance(number, int) or number < 0:
            return None
        process = tl.trace.tracks[int(tl.track[mark])].process
        return self.stream_track.get((process, number))

    def host_release(self, segment: int) -> tuple[str, int, int] | None:
        """(place, index, cursor) of what came before host ``segment`` (its start)."""
        host, tl = self.host, self.tl
        start, track, row = int(host.start[segment]), int(host.track[segment]), int(host.row[segment])
        options: list[tuple[int, int, str, int]] = []
        previous = host.before(track, start)
        if previous is not None:
            options.append((int(host.end[previous]), 1, "host", previous))
        if previous is None or host.end[previous] < start:
            # after a gap: a linked thread running at that moment started this one
            for other in self.partners.get(track, ()):
                piece = host.at(other, start)
                if piece is not None and host.end[piece] >= start:
                    options.append((start, 0, "host", piece))
        if host.first_of_row.get(row) == segment:
            for source in self.hand_offs.get(row, ()):
                handed = min(int(tl.end[source]), start)
                giver = host.at(int(tl.track[source]), handed)
                if giver is not None:
                    options.append((min(handed, int(host.end[giver])), 0, "host", giver))
        if previous is None and not options:
            options = self._thread_start(track, start)
        if not options:
            return None
        release, _, place, index = max(options)
        return place, index, release

    def _thread_start(self, track: int, start: int) -> list[tuple[int, int, str, int]]:
        """What started a thread's first piece: the main thread running then, else another
        host thread (an implied hand-off: the trace shows no link)."""
        host, tl = self.host, self.tl
        process = tl.trace.tracks[track].process
        # the main thread, then threads of the same process, then any other host thread
        # (Kineto files some Python frames under pid 0)
        others = sorted(host.bounds, key=lambda t: (tl.trace.tracks[t].process != process, t))
        candidates = ([self.main] if self.main is not None and self.main != track else []) + [
            other for other in others if other not in (track, self.main)]
        for other in candidates:
            segment = host.at(other, start)
            if segment is not None:
                return [(min(start, int(host.end[segment])), 0, "host", segment)]
        return []

    # -- the walk ----------------------------------------------------------------------

    def start(self) -> tuple[str, int, int] | None:
        """Where the walk starts: the last device work's end or the main thread's last
        piece, whichever ends later (never a background thread)."""
        host, device = self.host, self.device
        last_device = int(device.by_end[-1]) if len(device.by_end) else None
        last_host = None
        if self.main is not None:
            lo, hi = host.bounds[self.main]
            last_host = lo + int(np.argmax(host.end[lo:hi]))
        if last_device is None and last_host is None:
            return None
        if last_device is not None and (
                last_host is None or self.tl.end[last_device] >= host.end[last_host]):
            return "device", last_device, int(self.tl.end[last_device])
        assert last_host is not None
        return "host", last_host, int(host.end[last_host])

    def run(self, state: tuple[str, int, int] | None = None) -> list[Link]:
        """The path, latest link first: from ``state`` (place, index, cursor) when given,
        else from :meth:`start`."""
        return list(self.links(state))

    def links(self, state: tuple[str, int, int] | None = None) -> Iterator[Link]:
        """The links of :meth:`run` one by one, latest first (a caller may stop early)."""
        tl, host = self.tl, self.host
        state = state or self.start()
        seen: set[tuple[str, int, int]] = set()
        while state is not None and state not in seen:
            seen.add(state)
            place, index, cursor = state
            if place == "device":
                yield Link(index, int(tl.start[index]), cursor)
                state = self.device_release(index)
                continue
            row, start = int(host.row[index]), int(host.start[index])
            waited = self.waited_device_work(row, start, cursor)
            if waited is not None:
                yield Link(row, int(tl.end[waited]), cursor)
                state = ("device", waited, int(tl.end[waited]))
                continue
            partner = self.partner_release(index, cursor)
            if partner is not None:
                yield Link(row, int(host.end[partner]), cursor)
                state = ("host", partner, int(host.end[partner]))
                continue
            yield Link(row, start, cursor)
            state = self.host_release(index)
