"""Where rocprof's records go: a device process per GPU (agent) with a track per queue,
a host process per pid with a track per thread; each made once, on first use."""

from __future__ import annotations

from ...model import ProcessKind, Trace, TrackKind
from .values import integer

_DEVICE_SORT = 1 << 30   # devices below the host processes


class Places:
    """Processes and tracks of one trace, by the ids rocprof gives them; ``labels`` are
    what a device is, by its number (``["AMD Instinct MI300X", "gfx942"]``), where the
    file says.

    >>> t = Trace(); places = Places(t, {2: ["AMD Instinct MI300X", "gfx942"]})
    >>> q = places.queue("GPU 2", 2, "0"); q == places.queue("GPU 2", 2, "0")
    True
    >>> t.processes[0].name, t.processes[0].labels, t.tracks[q].name
    ('GPU 2', ['AMD Instinct MI300X', 'gfx942'], 'queue 0')
    >>> t.tracks[places.thread(7, 8)].name
    'thread 8'
    """

    def __init__(self, trace: Trace, labels: dict[int, list[str]] | None = None) -> None:
        self.trace = trace
        self._labels = labels or {}
        self._devices: dict[str, int] = {}
        self._queues: dict[tuple[str, str], int] = {}
        self._hosts: dict[int | None, int] = {}
        self._threads: dict[tuple[int | None, int | None], int] = {}
        self._ranges: dict[tuple[int | None, None, str], int] = {}

    def device(self, name: str, number: int | None) -> int:
        """The process of the device called ``name`` (``number`` orders them)."""
        if name not in self._devices:
            self._devices[name] = self.trace.add_process(
                name, kind=ProcessKind.DEVICE,
                sort_index=_DEVICE_SORT + (number if number is not None and 0 <= number < 2**20
                                           else len(self._devices)),
                labels=self._labels.get(number, []) if number is not None else [])
        return self._devices[name]

    def queue(self, device: str, number: int | None, queue: object) -> int:
        """The track of queue ``queue`` of the device called ``device``."""
        key = (device, str(queue))
        if key not in self._queues:
            tid = integer(queue)
            known = tid if tid is not None and 0 <= tid < 2**31 else None
            self._queues[key] = self.trace.add_track(
                f"queue {queue}", process=self.device(device, number), kind=TrackKind.STREAM,
                tid=known, sort_index=known)
        return self._queues[key]

    def device_track(self, device: str, number: int | None, name: str) -> int:
        """A track of the device called ``device`` that is no queue (copies by direction)."""
        key = (device, "\0" + name)
        if key not in self._queues:
            self._queues[key] = self.trace.add_track(
                name, process=self.device(device, number), kind=TrackKind.STREAM)
        return self._queues[key]

    def thread(self, pid: int | None, tid: int | None) -> int:
        """The track of host thread ``tid`` of process ``pid`` (either may be unknown)."""
        key = (pid, tid)
        if key not in self._threads:
            known = tid if tid is not None and 0 <= tid < 2**32 else None
            self._threads[key] = self.trace.add_track(
                f"thread {tid}" if tid is not None else "thread", process=self._host(pid),
                tid=known, sort_index=known)
        return self._threads[key]

    def ranges(self, pid: int | None) -> int:
        """The track of process ``pid``'s roctx start/stop ranges: rocprofv3 writes them on
        thread 0, no thread of the process, since a range may start on one thread and stop
        on another; they may overlap (an async track, as nsys's NVTX start/end ranges).

        >>> t = Trace(); places = Places(t)
        >>> track = t.tracks[places.ranges(717)]; track.name, track.kind.value
        ('roctx start/stop ranges', 'async')
        """
        key = (pid, None, "ranges")
        if key not in self._ranges:
            self._ranges[key] = self.trace.add_track(
                "roctx start/stop ranges", process=self._host(pid), kind=TrackKind.ASYNC,
                sort_index=-1)
        return self._ranges[key]

    def _host(self, pid: int | None) -> int:
        if pid not in self._hosts:
            known = pid if pid is not None and -2**31 <= pid < 2**31 else None
            self._hosts[pid] = self.trace.add_process(
                f"process {pid}" if pid is not None else "host", pid=known, sort_index=known)
        return self._hosts[pid]
