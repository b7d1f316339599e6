"""What the timeline critical path did between two of its links: waited, ran untraced, or idled.

The walk (:mod:`.critical_walk`) follows links the trace records. Between two links there
may be time the trace explains with no link: the main thread blocked in ``backward()`` while
its autograd thread and the gloo thread work, a launch queued while the host sat in a sync.
Each moment of such a gap is one of three things:

- **wait**: some other thread of the same program, or one of its devices, is busy at that
  moment. The moment is named after that work: ``waiting on thread T: op``. Of all the
  slices running then (any thread but the waiting one, any device), *op* is the one that
  goes on longest — of those ending together, the outermost — so that one name covers as
  much of the gap as it can; from its end, the next;
  When nothing else is busy but the waiting thread itself is blocked in a call (``futex``,
  ``poll``: :attr:`~traceconv.model.activity.Activity.WAIT`, no work, so never a link), the
  moment is that wait: ``blocked in poll``;
- **untraced host time** (``host (untraced)``): nothing else is busy and the path goes on on
  the same host thread it left: that thread ran code the profiler did not record (Python
  between ops);
- **idle**: nothing of the program is busy (no thread, no device) and the path changes
  thread or device across the gap.

"The same program" is the trace, or, in a trace merged from several ranks, the processes of
the rank the path is on: another rank's threads are never waited on this way (waits across
ranks go through collectives, :mod:`.job_path`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import ProcessKind
from ..model.groups import grouped
from .activity import Timeline
from .host_segments import HOST_WORK

UNTRACED = "host (untraced)"


@dataclass(frozen=True)
class Gap:
    """One piece of a gap: ``kind`` wait / untraced / idle over [start_ns, end_ns);
    ``row`` is the slice waited on (waits only)."""

    kind: str
    start_ns: int
    end_ns: int
    name: str = ""
    row: int | None = None


class _Busy:
    """The work of one program: host slices of every thread and device work, sorted by
    start, with a running maximum of ends to find what covers a moment (of slices reaching
    equally far, the one that started first: the outermost)."""

    def __init__(self, tl: Timeline, rows: np.ndarray) -> None:
        rows = rows[np.lexsort((-tl.dur[rows], tl.start[rows]))]
        self.rows = rows
        self.start = tl.start[rows]
        self.end = tl.end[rows]
        self.track = tl.track[rows]
        # position of the row that ends last among the first i+1 (by start)
        reach = np.maximum.accumulate(self.end) if len(rows) else self.end
        self.reach = reach
        firsts = np.flatnonzero(np.r_[True, reach[1:] != reach[:-1]]) if len(rows) else rows
        self.reacher = np.repeat(firsts, np.diff(np.r_[firsts, len(rows)]))

    def covering(self, ts: int) -> int | None:
        """Position of the work running at ``ts`` that ends last."""
        i = int(np.searchsorted(self.start, ts, "right")) - 1
        if i < 0 or self.reach[i] <= ts:
            return None
        return int(self.reacher[i])

    def next_start(self, ts: int) -> int | None:
        i = int(np.searchsorted(self.start, ts, "right"))
        return int(self.start[i]) if i < len(self.start) else None


class GapFiller:
    """Classify the gaps of timeline paths of one trace (built once, used per gap)."""

    def __init__(self, tl: Timeline) -> None:
        self.tl = tl
        trace = tl.trace
        host = ~tl.on_device & np.isin(tl.activity, HOST_WORK)
        work = tl.device_work()
        # one program per input of a merged trace (its process range), else the whole trace
        self.program = tl.process_input
        self.rows = np.r_[np.flatnonzero(host), work].astype(np.int64)
        self.programs = self.program[tl.process[self.rows]] if len(self.rows) else self.rows
        self._busy: dict[tuple[int, int | None], _Busy] = {}
        waits = tl.waits()   # each host thread's own waits
        self.waits = {track: _Busy(tl, waits[positions])
                      for track, positions in grouped(tl.track[waits])}
        self.names = trace.strings.strings
        self._labels: dict[int, str] = {}

    def busy(self, program: int, waiting: int | None) -> _Busy:
        """The work of ``program`` but the ``waiting`` thread's (one per pair, kept)."""
        key = (program, waiting)
        if key not in self._busy:
            mine = self.programs == program
            if waiting is not None:
                mine &= self.tl.track[self.rows] != waiting
            self._busy[key] = _Busy(self.tl, self.rows[mine])
        return self._busy[key]

    def _label(self, track: int) -> str:
        if track not in self._labels:
            trace = self.tl.trace
            t = trace.tracks[track]
            process = trace.processes[t.process]
            device = process.kind is ProcessKind.DEVICE
            self._labels[track] = f"{process.name} {t.name}" if device else t.name
        return self._labels[track]

    def classify(self, lo: int, hi: int, before: int | None, after: int | None) -> list[Gap]:
        """The gap [lo, hi) between path links on slice rows ``before`` and ``after``.

        >>> from traceconv.model import Trace
        >>> t = Trace(); p = t.add_process("python")
        >>> main, helper = t.add_track("main", process=p), t.add_track("helper", process=p)
        >>> a = t.add_slice(main, 0, 10, "forward", "cpu_op")
        >>> _ = t.add_slice(helper, 12, 30, "backward", "cpu_op")
        >>> b = t.add_slice(main, 50, 10, "step", "cpu_op")
        >>> [(g.kind, g.start_ns, g.end_ns, g.name) for g in GapFiller(Timeline(t)).classify(10, 50, a, b)]
        [('untraced', 10, 12, 'host (untraced)'), ('wait', 12, 42, 'waiting on helper: backward'), ('untraced', 42, 50, 'host (untraced)')]
        """
        tl = self.tl
        anchor = after if after is not None else before
        if anchor is None:
            return [Gap("idle", lo, hi)]
        waiting = None if after is None or tl.on_device[after] else int(tl.track[after])
        busy = self.busy(int(self.program[tl.process[anchor]]), waiting)
        same_thread = (before is not None and after is not None and waiting is not None
                       and int(tl.track[before]) == waiting)
        free = ("untraced", UNTRACED) if same_thread else ("idle", "")
        pieces: list[Gap] = []
        cursor = lo
        while cursor < hi:
            found = busy.covering(cursor)
            if found is None:
                following = busy.next_start(cursor)
                stop = hi if following is None else min(hi, following)
                blocked, stop = self._own_wait(waiting, cursor, stop)
                pieces.append(blocked or Gap(free[0], cursor, stop, free[1]))
                cursor = stop
                continue
            row = int(busy.rows[found])
            stop = min(hi, int(busy.end[found]))
            name = f"waiting on {self._label(int(busy.track[found]))}: {self.names[tl.name[row]]}"
            pieces.append(Gap("wait", cursor, stop, name, row))
            cursor = stop
        return _merged(pieces)


    def _own_wait(self, track: int | None, lo: int, hi: int) -> tuple[Gap | None, int]:
        """The wait of host thread ``track`` that covers ``lo`` as a gap piece up to ``hi``
        at most, and its end; else None and when the thread's next wait starts (``hi`` at
        the latest)."""
        own = self.waits.get(track) if track is not None else None
        if own is None:
            return None, hi
        found = own.covering(lo)
        if found is None:
            following = own.next_start(lo)
            return None, hi if following is None else min(hi, following)
        row, end = int(own.rows[found]), min(hi, int(own.end[found]))
        return Gap("wait", lo, end, f"blocked in {self.names[self.tl.name[row]]}", row), end


def _merged(pieces: list[Gap]) -> list[Gap]:
    """Back-to-back pieces of one kind, name and slice as one."""
    out: list[Gap] = []
    for piece in pieces:
        last = out[-1] if out else None
        if last is not None and (last.kind, last.name, last.row) == (
                piece.kind, piece.name, piece.row) and last.end_ns == piece.start_ns:
            out[-1] = Gap(last.kind, last.start_ns, piece.end_ns, last.name, piece.row)
        else:
            out.append(piece)
    return out
