"""The second pass of ``split``: route every event to its window and spill it to that
window's temporary file, counting what crosses a cut.

Per event, only what a cut needs is remembered, and only while it is open: the window of
each unfinished ``B`` slice (a stack per thread), of each flow start not yet finished, and
of each ``[memory]`` block not yet freed. Events are written out a chunk at a time, so the
memory held is one chunk of events, those open items and the write buffers (bounded by
:data:`BUFFERED`), whatever the size of the input.

Rules (the manifest and docs/big-traces.md say the same):

* a slice (``X``, or a ``B``/``E`` pair) belongs to the window where it starts; one that
  ends past its window's end is kept whole there (or, with ``clip``, shortened to end at
  the cut, an ``X`` slice continued in each later window it overlaps by a copy marked
  ``"Continued from"``: its start) and counted in ``slices_cut`` by name;
* by step, device work (a kernel, copy or memset with a launch correlation id) belongs to
  the step whose host thread launched it, even when it runs after that step's end, and
  the end of its launch flow (Kineto's ``ac2g``, Paddle's ``launch``) goes with it; such events placed in another window
  than their own start's are counted in ``device_work_by_launch``, and never as cut;
* a flow (``s``/``t``/``f`` sharing category, name and id) whose ends are routed to
  different windows is counted in ``flows_cut``; each end stays in its own piece;
* a ``[memory]`` block allocated in one window and freed in a later one (or never) is
  *carried*: every later window up to the one that frees it gets a copy of the allocation
  event at its start time, marked ``"Pre-existing": true`` with the original time in
  ``"Allocated at"`` (and without ``Total Allocated``/``Total Reserved``, which were the
  allocator's totals at that other time), so each piece knows the blocks that were already
  alive when it began. Allocations and frees pair by address in time order.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from .events import (
    Head,
    as_pairs,
    dump_events,
    end_of,
    hashable,
    is_number,
    time_columns,
    whole,
)
from .memory_ends import KeyedMemory, MemoryEnds
from .ready import launch_ids
from .windows import Boundaries, Launches, Survey, Window

if TYPE_CHECKING:
    from ..output_files import Scratch
    from ..outputs import ChosenPath

CARRIED_MARK = "Pre-existing"   # the arg that marks an allocation carried into a window
CONTINUED_MARK = "Continued from"   # ... a clipped slice's rest in a later window
# ... a copy, in a later window, of a slice open at its start, kept whole in its own
# (context for a piece read alone: owners, enclosing slices; never written again)
CONTEXT_MARK = "traceconv context from"
BUFFERED = 32 << 20      # bytes of event text held before every buffer is written out
_PER_WINDOW = 1 << 20    # ... or one window's buffer reaches this
_FLOW_PHASES = frozenset({"s", "t", "f"})
_ROUTED_ALONE = frozenset({"M", "B", "E", *_FLOW_PHASES})   # (and carried allocations)
_TOTALS = frozenset({"Total Allocated", "Total Reserved"})


class Spill:
    """Each window's piece in the making, a file in a scratch folder: its head (the
    envelope and metadata events, from ``head(window)``), then its events as they are
    routed, written through bounded buffers; :meth:`publish` ends it and moves it into
    place. Carried copies of memory blocks go into the same file as the window's own
    events (a piece's events are in no particular order: readers sort them by time)."""

    def __init__(self, scratch: Scratch, count: int,
                 head: Callable[[int], tuple[bytes, bool]]) -> None:
        self.scratch, self.head = scratch, head
        self.buffers: dict[int, bytearray] = {}
        self.held = 0
        self.events = [0] * count    # each window's own events
        self.carried = [0] * count   # the copies carried into it
        self.begun = [False] * count   # its file has its head
        self.closed = [False] * count   # published, or let go empty: nothing more comes
        self.bare = [True] * count     # ... and no event after the head yet

    def add(self, window: int, texts: list[Any], *, carried: bool = False) -> None:
        """Queue events (their JSON texts) for ``window`` (``carried``: copies of blocks
        allocated before it)."""
        if self.closed[window]:   # (ready.py's bound broken: a bug, never data lost)
            raise RuntimeError(f"split: window {window} was written before all its events")
        buffer = self.buffers.get(window)
        if buffer is None:
            buffer = self.buffers[window] = bytearray()
            if not self.begun[window]:
                head, holds_events = self.head(window)
                buffer += head
                self.begun[window], self.bare[window] = True, not holds_events
        held = len(buffer)
        if not self.bare[window]:
            buffer += b",\n"
        self.bare[window] = False
        buffer += b",".join(texts)
        self.held += len(buffer) - held
        if carried:
            self.carried[window] += len(texts)
        else:
            self.events[window] += len(texts)
        if len(buffer) >= _PER_WINDOW:
            self._write(window)
        if self.held >= BUFFERED:
            self.flush()

    def _write(self, window: int) -> None:
        buffer = self.buffers.pop(window)
        self.scratch.append(f"{window}.json", buffer)
        self.held -= len(buffer)

    def flush(self) -> None:
        for window in list(self.buffers):
            self._write(window)

    def close(self, window: int) -> None:
        """Take no more events for ``window`` (published, or let go without events of its
        own): one more is refused, not lost."""
        self.closed[window] = True

    def publish(self, window: int, target: ChosenPath, inputs: Sequence[str]) -> None:
        """End ``window``'s piece and move it to ``target`` (it appears whole or not at
        all).

        >>> import os, tempfile
        >>> from traceconv.output_files import scratch_folder
        >>> from traceconv.outputs import ChosenPath
        >>> folder = tempfile.mkdtemp(); target = ChosenPath(os.path.join(folder, "p.json"))
        >>> with scratch_folder(folder) as scratch:
        ...     spill = Spill(scratch, 2, lambda w: (b'{"traceEvents":[\\n', False))
        ...     spill.add(1, [b'{"a":1}']); spill.add(1, [b'{"b":2}'], carried=True)
        ...     spill.publish(1, target, inputs=[])
        >>> open(target, "rb").read(), spill.events, spill.carried
        (b'{"traceEvents":[\\n{"a":1},\\n{"b":2}\\n]}\\n', [0, 1], [0, 1])
        """
        self.buffers.setdefault(window, bytearray()).extend(b"\n]}\n")
        self._write(window)
        self.close(window)
        self.scratch.publish(f"{window}.json", target, inputs=inputs)


class Router:
    """Decides the window of each event and counts the cuts (one instance per split)."""

    def __init__(self, windows: list[Window], survey: Survey, spill: Spill,
                 clip: bool = False, launches: Launches | None = None,
                 boundaries: Boundaries | None = None,
                 memory_ends: MemoryEnds | None = None, context: bool = False) -> None:
        self.windows, self.spill, self.clip = windows, spill, clip
        self.context = context
        # steps that each thread (MegEngine's StopStep) or each process (a job's ranks)
        # marks at its own times: see windows.Boundaries
        self.boundaries = boundaries
        self.launches = launches if launches is not None and len(launches) else None
        self.by_rank = windows[0].rank is not None
        self.starts = [w.start for w in windows]
        self._start_column = np.array(self.starts, dtype=np.float64)
        self._end_column = np.array([w.end for w in windows], dtype=np.float64)
        self.rank_window = {w.rank: w.index for w in windows if w.rank is not None}
        # (by step or time, processes named "rank N: ..." have no window of their own)
        self.window_of_pid = {pid: self.rank_window[rank] for pid, rank in
                              survey.rank_of_pid.items()} if self.by_rank else {}
        self.other = len(windows) - 1 if windows[-1].label == "other" else None
        self.open_slices: dict[tuple[Any, ...], list[tuple[int, Any]]] = {}
        self.open_flows: dict[tuple[Any, ...], int] = {}
        self.early_finishes: dict[tuple[Any, ...], int] = {}   # finishes before their start
        # per keyed [memory] event (file order), the window after the last one its block
        # is alive in; None: no block is carried (by rank, or no pairing made)
        self.memory_stops = None if memory_ends is None or self.by_rank \
            else memory_ends.stops(self._place_times, len(windows))
        self.memory_seen = 0   # [memory] events routed (their number in memory_ends)
        self.slices_cut: Counter[str] = Counter()
        self.cut_out = [0] * len(windows)    # slices crossing each window's end
        self.flows_cut = 0
        self.flows_out = [0] * len(windows)
        self.flows_in = [0] * len(windows)
        self.carried_in = [0] * len(windows)
        self.blocks_carried = 0
        self.untimed = 0
        self.by_launch = 0   # device work placed in its launch's window, not its own
        self.continued = 0   # copies continuing clipped slices in later windows

    def place(self, h: Head) -> int:
        """The window of one event by its start (or its process, by rank)."""
        if self.by_rank:
            found = self.window_of_pid.get(hashable(h.pid)[0])
            if found is None:
                self.untimed += 1
                return self.other if self.other is not None else 0
            return found
        ts = h.ts
        if not is_number(ts):
            self.untimed += 1   # no time: the first piece keeps it
            return 0
        if self.boundaries is not None:
            return min(self.boundaries.place(hashable(h.pid, h.tid), ts), len(self.windows) - 1)
        # before the first start only when that start is a step's: the first piece keeps it
        return max(0, bisect.bisect_right(self.starts, ts) - 1)

    def route(self, chunk: list[Any]) -> None:
        """Route one chunk of events to their windows' spill files: the events the rules
        below leave as they are (a slice within its window, an instant, a counter) by
        their window column at once, the others one by one in file order."""
        pairs = as_pairs(chunk)
        if not pairs:
            return
        heads = [h for h, _ in pairs]
        texts = [text for _, text in pairs]
        placed, crossing, column = self._placed(heads)
        launched = self._launch_windows(heads) if self.launches is not None else {}
        memory = self._allocations(heads, column)
        if column is None:
            targets = np.zeros(len(heads), dtype=np.int64)
            one_by_one: list[int] = list(range(len(heads)))
        else:
            targets = column.copy()
            alone = {i for i, ph in enumerate([h.ph for h in heads]) if ph in _ROUTED_ALONE}
            alone.update(launched)
            alone.update(memory)
            if crossing is not None:
                alone.update(np.flatnonzero(crossing).tolist())
            one_by_one = sorted(alone)
            rest = np.ones(len(heads), dtype=bool)
            rest[one_by_one] = False
            untimed = rest & (targets < 0)
            if untimed.any():   # no time: the first piece keeps it
                self.untimed += int(np.count_nonzero(untimed))
                targets[untimed] = 0
        for i in one_by_one:
            targets[i], texts[i] = self._route_one(i, heads[i], texts[i], placed, crossing,
                                                   launched, memory)
        order = np.argsort(targets, kind="stable")   # (file order within a window)
        ranked = targets[order]
        starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]]).tolist()
        for lo, hi in zip(starts, [*starts[1:], len(order)], strict=True):
            window = int(ranked[lo])
            if window >= 0:   # (-1: an M event, written at the head of every piece)
                self.spill.add(window, [texts[k] for k in order[lo:hi].tolist()])

    def _route_one(self, i: int, h: Head, text: Any, placed: Callable[[int, Head], int],
                   crossing: np.ndarray | None, launched: dict[int, int],
                   memory: dict[int, int]) -> tuple[int, Any]:
        """The window of an event the rules look at (and its text, shortened when it is
        clipped); -1 for an ``M`` event."""
        ph = h.ph
        if ph == "M":
            return -1, text
        window = launched.get(i, -1) if launched else -1
        if window >= 0:
            if ph in _FLOW_PHASES:
                self._flow(h, window)
            elif window != placed(i, h):
                self.by_launch += 1
        elif ph == "X":
            window = placed(i, h)
            if crossing is None or crossing[i]:
                text = self._slice_end(h, text, window)
        elif ph == "B" or ph == "E":
            window, text = self._duration_event(h, text)
        elif ph in _FLOW_PHASES:
            window = placed(i, h)
            self._flow(h, window)
        else:
            window = placed(i, h)
            stop = memory.get(i)
            if stop is not None:
                self._carry(text, window + 1, stop)
        return window, text

    def _placed(self, heads: list[Head]) -> tuple[Callable[[int, Head], int],
                                                  np.ndarray | None, np.ndarray | None]:
        """:meth:`place` for the events of a chunk, as ``placed(i, head)``, which ``X``
        slices may cross their window's end (None: any may), and the window column (-1:
        no time; None: decided event by event). All three come from numpy columns when
        windows are times and a double holds every time exactly; else :meth:`place`
        decides event by event and every slice is checked."""
        columns = None if self.by_rank or self.boundaries is not None \
            else time_columns(heads)
        if columns is None:
            place = self.place
            return lambda _, h: place(h), None, None
        ts, dur = columns
        windows = np.searchsorted(self._start_column, ts, "right") - 1
        np.maximum(windows, 0, out=windows)
        crossing = ts + dur > self._end_column[windows]   # (NaN: False, not a number)
        windows[np.isnan(ts)] = -1
        column = windows.tolist()

        def placed(i: int, _: Head) -> int:
            window = column[i]
            if window < 0:   # no time: the first piece keeps it
                self.untimed += 1
                return 0
            return window   # type: ignore[no-any-return]

        return placed, crossing, windows

    def _launch_windows(self, heads: list[Head]) -> dict[int, int]:
        """Position in ``heads`` → the window of its launch, for device work and the ends
        of launch flows whose launch is known."""
        assert self.launches is not None
        positions, ids = launch_ids(heads)
        if not ids:
            return {}
        windows = self.launches.windows_of(np.array(ids, dtype=np.int64)).tolist()
        return {i: w for i, w in zip(positions, windows, strict=True) if w >= 0}

    def _end(self, window: int, h: Head) -> float:
        """Where ``window`` ends for the thread of ``h``."""
        if self.boundaries is None:
            return self.windows[window].end
        return self.boundaries.end(window, hashable(h.pid, h.tid))

    def _crosses(self, window: int, h: Head, end: Any) -> bool:
        return not self.by_rank and isinstance(end, int | float) \
            and end > self._end(window, h)

    def _cut(self, name: Any, window: int) -> None:
        self.slices_cut[str(name)] += 1
        self.cut_out[window] += 1

    def _slice_end(self, h: Head, text: Any, window: int) -> Any:
        end = end_of(h.ts, h.dur)
        if end is not None and self._crosses(window, h, end):
            self._cut(h.name, window)
            if self.clip:
                e = whole(text)
                self._continue(e, window, h, end, CONTINUED_MARK)
                return dump_events([dict(e, dur=self._end(window, h) - h.ts)])
            if self.context:
                self._continue(whole(text), window, h, end, CONTEXT_MARK)
        return text

    def _continue(self, e: dict[str, Any], window: int, h: Head, end: float,
                  mark: str) -> None:
        """The rest of a slice crossing its window's end, one copy per later window it
        overlaps, marked ``mark``: its start (so that each piece shows what was running
        through it)."""
        args = e.get("args")
        args = dict(args if isinstance(args, dict) else {}, **{mark: e["ts"]})
        while window + 1 < len(self.windows):
            start, window = self._end(window, h), window + 1
            if end <= start:
                break
            stop = min(end, self._end(window, h))
            self.spill.add(window, [dump_events([dict(e, ts=start, dur=stop - start,
                                                      args=args)])])
            self.continued += 1

    def _duration_event(self, h: Head, text: Any) -> tuple[int, Any]:
        """``B`` opens a slice in its window; ``E`` goes where its ``B`` went."""
        stack = self.open_slices.setdefault(hashable(h.pid, h.tid), [])
        if h.ph == "B":
            window = self.place(h)
            stack.append((window, h.name))
            return window, text
        if not stack:
            return self.place(h), text
        window, name = stack.pop()
        if self._crosses(window, h, h.ts):
            self._cut(name, window)
            if self.clip:
                text = dump_events([dict(whole(text), ts=self._end(window, h))])
        return window, text

    def _flow(self, h: Head, window: int) -> None:
        ph = h.ph
        key = hashable(h.cat, h.name, h.id if h.id is not None else h.id2)
        if ph == "s":
            finished = self.early_finishes.pop(key, None)
            if finished is None:
                self.open_flows[key] = window
            elif finished != window:   # (its finish came first in the file: a kernel's)
                self._flow_cut(window, finished)
            return
        started = self.open_flows.pop(key, None) if ph == "f" else self.open_flows.get(key)
        if started is None and ph == "f":
            self.early_finishes[key] = window
            return
        if started is not None and started != window:
            self._flow_cut(started, window)
            if ph == "t":   # the next step's cut is counted from here
                self.open_flows[key] = window

    def _flow_cut(self, started: int, finished: int) -> None:
        self.flows_cut += 1
        self.flows_out[started] += 1
        self.flows_in[finished] += 1

    def _allocations(self, heads: list[Head], column: np.ndarray | None) -> dict[int, int]:
        """Position → the window after the last one its block is alive in, of the
        allocations among ``heads`` whose block outlives their window (given the window
        ``column``; without it, of every allocation: their windows are decided one by
        one), as the first pass's pairing in time order found it (:mod:`.memory_ends`)."""
        keyed = KeyedMemory.of(heads)
        seen = self.memory_seen
        self.memory_seen += len(keyed.positions)
        if self.memory_stops is None or not keyed.positions:
            return {}
        positions = np.array(keyed.positions, dtype=np.int64)
        stops = self.memory_stops[seen:seen + len(positions)]
        outliving = np.array(keyed.allocates, dtype=bool)
        if column is not None:
            outliving &= stops > column[positions] + 1
        return dict(zip(positions[outliving].tolist(), stops[outliving].tolist(),
                        strict=True))

    def _place_times(self, ts: np.ndarray, thread: tuple[Any, ...]) -> np.ndarray:
        """:meth:`place` of times on one thread (``hashable(pid, tid)``), a column at once."""
        if self.boundaries is None:
            return np.maximum(np.searchsorted(self._start_column, ts, "right") - 1, 0)
        ends = np.array(self.boundaries.ends_of(thread), dtype=np.float64)
        side: Literal["left", "right"] = "left" if self.boundaries.closing else "right"
        return np.minimum(np.searchsorted(ends, ts, side), len(self.windows) - 1)

    def _carry(self, allocation: Any, first: int, stop: int) -> None:
        """Repeat the allocation event (its text) at the start of windows ``first ..
        stop-1``, marked as pre-existing; the allocator totals of another time are left
        out."""
        if first >= stop:
            return
        self.blocks_carried += 1
        e = whole(allocation)
        args = {k: v for k, v in e["args"].items() if k not in _TOTALS}
        args[CARRIED_MARK] = True
        args["Allocated at"] = e.get("ts")
        for window in range(first, stop):
            copy = dict(e, ts=self.windows[window].start, args=args)
            self.carried_in[window] += 1
            self.spill.add(window, [dump_events([copy])], carried=True)

    def finish(self) -> None:
        """Write out what is buffered."""
        self.spill.flush()
