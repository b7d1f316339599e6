"""The first pass of ``split``: what the trace holds, and the windows it is cut into.

The pass streams the event array (the chunked Chrome reader, one piece of events alive at a
time) and keeps only what is small: the envelope, the metadata (``M``) events, the time
span, the step markers and which process belongs to which rank. From these come the
windows, contiguous in time (``--by step``, ``--by time=DUR``) or one per rank
(``--by rank``).

Times stay in the file's own unit (Kineto writes microseconds, with fractions): events are
copied, never converted, so comparing raw numbers is exact.
"""

from __future__ import annotations

import bisect
import math
import re
from array import array
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..errors import InputError
from ..numbers import NumberError, int_text
from ..units import format_duration
from ..vocabularies.kineto import KINETO_VOCABULARY
from ..vocabularies.paddle import PADDLE_VOCABULARY
from .events import Head, Pair, as_pairs, end_of, hashable, time_columns, time_of, whole
from .memory_ends import MemoryEvents

if TYPE_CHECKING:
    from .ready import ChunkFloors

# Host step markers: PyTorch's ProfilerStep#N and Paddle's ProfileStep#N, which Paddle's
# Chrome export follows with the duration ("ProfileStep#3[12.170 ms]"); the device copy of
# a marker (category gpu_user_annotation) is not a step start. (A parse of the raw name for
# its number, suffix and all, before any reader has stripped it: the vocabularies' step
# names are the read names'.)
STEP_MARKER = re.compile(r"^(?:ProfilerStep|ProfileStep)#(\d+)(?:\[[^\]]*\])?$")
_CATEGORIES_KEPT = 4096   # distinct raw categories remembered (a hostile file may write more)


class CategoryWords(dict[Any, bool]):
    """Whether a raw category (as the file writes it: any case, or no text at all) is one
    of ``words``, a vocabulary's category words, as :meth:`Vocabulary.category_bits
    <traceconv.model.activity.Vocabulary.category_bits>` reads them; each category is judged
    once, so a lookup costs what a set's does.

    >>> work = CategoryWords(frozenset({"kernel"}))
    >>> work["kernel"], work["Kernel"], work["cpu_op"], work[None]
    (True, True, False, False)
    """

    def __init__(self, words: AbstractSet[str]) -> None:
        super().__init__()
        self.words = words

    def __missing__(self, category: Any) -> bool:
        found = isinstance(category, str) and category.lower() in self.words
        if len(self) < _CATEGORIES_KEPT:
            self[category] = found
        return found


# Device work that carries its launch's correlation id: Kineto's (CUDA and ROCm) and Paddle's
# kernels, copies and memsets, by their vocabularies' categories ("kernel", "gpu_memcpy",
# Paddle's and 2021 Kineto's "Kernel", "Memcpy"...)
_WORK_WORDS = frozenset().union(*(v.kernel | v.memcpy | v.memset
                                  for v in (KINETO_VOCABULARY, PADDLE_VOCABULARY)))
DEVICE_WORK = CategoryWords(_WORK_WORDS)
# and what else is drawn on a device: the device copy of a step marker
_DEVICE_CATEGORIES = CategoryWords(_WORK_WORDS | KINETO_VOCABULARY.device_annotation)
# "rank 3: python3 (pid 1183)": the process names of a merged multi-rank trace
RANK_PROCESS = re.compile(r"^rank (\d+):")
MAX_WINDOWS = 100_000
# Launches remembered for placing device work (20 bytes each, 44 while sorted: 528 MB at
# most); those past it leave their device work placed by its own start, and are counted.
MAX_LAUNCHES = 12_000_000
_PH = attrgetter("ph")


@dataclass(frozen=True, slots=True)
class Window:
    """One piece: events whose start is in ``[start, end)`` (file units; ``-inf``/``inf`` at
    the open ends), or, for ``--by rank``, the processes of one rank."""

    index: int
    label: str
    start: float = -math.inf
    end: float = math.inf
    rank: int | None = None


@dataclass
class Survey:
    """What the first pass found."""

    envelope: dict[str, Any] = field(default_factory=dict)
    metadata: list[dict[str, Any]] = field(default_factory=list)   # the M events, in order
    first_ts: float = math.inf
    last_ts: float = -math.inf
    steps: list[tuple[float, int]] = field(default_factory=list)   # (start, step number)
    step_processes: list[Any] = field(default_factory=list)   # the process of each marker
    # MegEngine's step ends: its StopStep instants, per host thread ((pid, tid) → times)
    stops: dict[tuple[Any, ...], list[float]] = field(default_factory=dict)
    rank_of_pid: dict[Any, int] = field(default_factory=dict)
    events: int = 0
    unit_ns: int = 1000
    # host launches (runtime calls with a correlation id): id, start and process (an index
    # into ``processes``), 20 bytes each
    launch_ids: array = field(default_factory=lambda: array("q"))
    launch_ts: array = field(default_factory=lambda: array("d"))
    launch_processes: array = field(default_factory=lambda: array("i"))
    processes: dict[Any, int] = field(default_factory=dict)
    launches_over_limit: int = 0
    # step markers and rank names whose number does not fit int64 (5,000 digits): not read
    markers_out_of_range: int = 0
    # the [memory] events, so that each block's end is known before it is routed
    memory: MemoryEvents = field(default_factory=MemoryEvents)

    @property
    def timed(self) -> bool:
        """Whether any event has a usable time (metadata events have none).

        >>> Survey().timed, Survey(first_ts=5.0, last_ts=5.0).timed
        (False, True)
        """
        return self.first_ts <= self.last_ts

    def take(self, chunk: list[Any], floors: ChunkFloors | None = None) -> None:
        """Note one chunk of events: the times a column at a time when a double holds them
        all exactly (:func:`~.events.time_columns`), else event by event (and, given
        ``floors``, where its events can be placed: :mod:`.ready`)."""
        self.events += len(chunk)
        pairs = as_pairs(chunk)
        heads = [h for h, _ in pairs]
        phases = list(map(_PH, heads))
        columns = time_columns(heads)
        if columns is None:
            self._take_each(pairs)
            if floors is not None:
                floors.note(heads, phases, None)
            return
        ts, dur = columns
        if "M" in phases:
            for i in [i for i, ph in enumerate(phases) if ph == "M"]:
                self._metadata(whole(pairs[i][1]))
                ts[i] = math.nan
        if floors is not None:
            floors.note(heads, phases, ts)
        timed = np.flatnonzero(~np.isnan(ts))
        if not len(timed):
            return
        # the first of equal values wins, as in min() and max() event by event
        first = timed[np.argmin(ts[timed])]
        self.first_ts = min(self.first_ts, heads[first].ts)
        at = timed[np.argmax(ts[timed] + np.nan_to_num(dur[timed]))]
        h = heads[at]
        self.last_ts = max(self.last_ts, h.ts + h.dur if phases[at] == "X" and h.dur is not None
                           else h.ts)
        self._marks([heads[i] for i in timed.tolist() if phases[i] == "X" or phases[i] == "i"])

    def _metadata(self, e: Any) -> None:
        self.metadata.append(e)
        if e.get("name") == "process_name":
            self._note_rank(e)

    def _marks(self, heads: list[Head]) -> None:
        """What timed ``X`` and ``i`` events tell of steps, step ends and launches (each
        kind picked out a column at a time: most events are none of them)."""
        instants = [h for h in heads if h.ph == "i"]
        if instants:
            self.memory.note(instants)
            for h in instants:
                if h.name == "StopStep":
                    self.stops.setdefault(hashable(h.pid, h.tid), []).append(h.ts)
        hosts = [h for h in heads if h.ph == "X" and not _DEVICE_CATEGORIES[h.cat]]
        for h in [h for h in hosts if isinstance(h.name, str) and h.name.startswith("Profile")]:
            match = STEP_MARKER.match(h.name)
            number = self._number(match.group(1)) if match else None
            if number is not None:
                self.steps.append((h.ts, number))
                self.step_processes.append(hashable(h.pid)[0])
        self._launches([h for h in hosts if h.args is not None and (
            h.args.correlation is not None or h.args.correlation_id is not None)])

    def _launches(self, hosts: list[Head]) -> None:
        """Note the host events that launch device work (a correlation id; not a step
        marker's name)."""
        launch_ids, launch_ts = self.launch_ids, self.launch_ts
        launch_processes, processes = self.launch_processes, self.processes
        for h in hosts:
            name = h.name
            correlation = h.correlation
            if correlation is None or isinstance(name, str) and name.startswith("Profile"):
                continue   # (ts: finite, as every time taken here)
            if len(launch_ids) < MAX_LAUNCHES:
                launch_ids.append(correlation)
                launch_ts.append(h.ts)
                process = hashable(h.pid)[0]
                launch_processes.append(processes.setdefault(process, len(processes)))
            else:
                self.launches_over_limit += 1

    def _take_each(self, pairs: list[Pair]) -> None:
        """:meth:`take` event by event (times a double cannot hold exactly, or not numbers)."""
        first, last = self.first_ts, self.last_ts
        marked = []
        for h, text in pairs:
            ph = h.ph
            if ph == "M":
                self._metadata(whole(text))
                continue
            ts = time_of(h.ts)
            if ts is None:
                continue
            first = min(first, ts)
            end = end_of(ts, h.dur) if ph == "X" else None
            last = max(last, ts if end is None else end)
            if ph == "X" or ph == "i":
                marked.append(h)
        self.first_ts, self.last_ts = first, last
        self._marks(marked)

    def _note_rank(self, e: dict[str, Any]) -> None:
        args = e.get("args")
        name = args.get("name") if isinstance(args, dict) else None
        match = RANK_PROCESS.match(name) if isinstance(name, str) else None
        number = self._number(match.group(1)) if match else None
        if number is not None:
            self.rank_of_pid[hashable(e.get("pid"))[0]] = number

    def _number(self, digits: str) -> int | None:
        """A marker's step or rank number; None (counted) past int64.

        >>> survey = Survey(); survey._number("12"), survey._number("9" * 5000)
        (12, None)
        >>> survey.markers_out_of_range
        1
        """
        try:
            return int_text(digits)
        except NumberError:
            self.markers_out_of_range += 1
            return None


def step_windows(survey: Survey, source: str) -> list[Window]:
    """One window per step marker, from its start to the next one's (the last one open);
    a ``before`` window first when events start before the first step.

    >>> s = Survey(first_ts=0.0, steps=[(30.0, 2), (10.0, 1)], step_processes=[1, 1])
    >>> [(w.label, w.start, w.end) for w in step_windows(s, "t.json")]
    [('before', -inf, 10.0), ('step1', 10.0, 30.0), ('step2', 30.0, inf)]
    """
    if not survey.steps:
        if survey.stops:
            return stop_windows(survey)
        raise InputError("no step markers (ProfilerStep#N or ProfileStep#N slices on the "
                         "host, MegEngine's StopStep) in this trace; split it with "
                         "--by time=DUR instead", file=source)
    numbers = job_steps(survey)
    if numbers is None:
        numbers = {}
        for ts, number in sorted(set(survey.steps)):   # two at one time: the first names it
            numbers.setdefault(ts, number)
    times = sorted(numbers)
    windows = []
    if survey.first_ts < times[0]:
        windows.append(("before", -math.inf, times[0]))
    bounds = [*times[1:], math.inf]
    windows += [(f"step{numbers[t]}", t, end) for t, end in zip(times, bounds, strict=True)]
    return [Window(i, label, start, end) for i, (label, start, end) in enumerate(windows)]


def job_steps(survey: Survey) -> dict[float, int] | None:
    """Start → number of each step of a job whose processes all mark the same steps (a
    merged multi-rank trace: each rank's ``ProfilerStep#N`` at its own time): one window
    per step number, from the earliest of its markers; None when the markers are not so
    (one process marks them, or a process marks a number twice or out of order, or the
    numbers' earliest starts are not in the numbers' order), each marker then starting a
    window of its own.

    >>> s = Survey(steps=[(0.0, 1), (4.0, 2), (1.0, 1), (5.0, 2)],
    ...            step_processes=[10, 10, 11, 11])
    >>> job_steps(s)
    {0.0: 1, 4.0: 2}
    >>> job_steps(Survey(steps=[(0.0, 1), (4.0, 2)], step_processes=[10, 10])) is None
    True
    """
    return _job_starts(_marks_by_process(survey))


def _job_starts(by_process: dict[Any, list[tuple[float, int]]] | None
                ) -> dict[float, int] | None:
    """:func:`job_steps` from each process's markers (:func:`_marks_by_process`)."""
    if by_process is None or len(by_process) < 2:
        return None
    earliest: dict[int, float] = {}
    for marks in by_process.values():
        for ts, number in marks:
            earliest[number] = min(ts, earliest.get(number, ts))
    numbers = sorted(earliest)
    starts = [earliest[n] for n in numbers]
    if any(a >= b for a, b in zip(starts, starts[1:], strict=False)):
        return None
    return {earliest[n]: n for n in numbers}


def _marks_by_process(survey: Survey) -> dict[Any, list[tuple[float, int]]] | None:
    """Each process's step markers in time order; None when one marks a number twice or
    its numbers do not rise with time."""
    by_process: dict[Any, list[tuple[float, int]]] = {}
    for mark, process in zip(survey.steps, survey.step_processes, strict=True):
        by_process.setdefault(process, []).append(mark)
    for marks in by_process.values():
        marks.sort()
        numbers = [n for _, n in marks]
        if any(a >= b for a, b in zip(numbers, numbers[1:], strict=False)):
            return None
    return by_process


@dataclass
class Boundaries:
    """Where each window ends for the events of one host process or thread that marks its
    own steps, the others' ends being the ``reference``: window ``k`` ends at ``ends[k]``
    (the last one open). ``closing``: a marker at a time ends the step it closes
    (MegEngine's ``StopStep``); else it starts the next one (``ProfilerStep#N``).

    >>> b = Boundaries([10.0, 20.0], {7: [12.0, 25.0]}, by_thread=False, closing=False)
    >>> b.place((7, 1), 11.0), b.place((8, 1), 11.0), b.end(1, (7, 1)), b.end(2, (7, 1))
    (0, 1, 25.0, inf)
    """

    reference: list[float]
    own: dict[Any, list[float]]
    by_thread: bool   # own ends keyed by (process, thread); else by process
    closing: bool

    def ends_of(self, thread: tuple[Any, ...]) -> list[float]:
        """The ends that hold for ``thread`` (its ``hashable(pid, tid)``)."""
        return self.own.get(thread if self.by_thread else thread[0], self.reference)

    def place(self, thread: tuple[Any, ...], ts: float) -> int:
        """The window of a time on ``thread`` (``len(ends)`` past its last end)."""
        ends = self.ends_of(thread)
        return bisect.bisect_left(ends, ts) if self.closing else bisect.bisect_right(ends, ts)

    def place_column(self, times: np.ndarray, processes: np.ndarray,
                     keys: dict[Any, int]) -> np.ndarray:
        """:meth:`place` for many times at once, of the processes numbered by ``keys``
        (process → number, as in ``processes``; ends kept by process only)."""
        side: Literal["left", "right"] = "left" if self.closing else "right"
        placed = np.searchsorted(np.array(self.reference, dtype=np.float64), times, side)
        for process, ends in self.own.items():
            number = keys.get(process)
            if number is not None:
                mine = processes == number
                placed[mine] = np.searchsorted(np.array(ends, dtype=np.float64),
                                               times[mine], side)
        return placed

    def end(self, window: int, thread: tuple[Any, ...]) -> float:
        ends = self.ends_of(thread)
        return ends[window] if window < len(ends) else math.inf

    def grouped(self, lasts: list[int]) -> Boundaries:
        """The ends of windows grouped so that group ``g`` ends where window ``lasts[g]``
        did."""
        def thin(ends: list[float]) -> list[float]:
            return [ends[i] for i in lasts if i < len(ends)]

        return Boundaries(thin(self.reference), {k: thin(v) for k, v in self.own.items()},
                          self.by_thread, self.closing)


def step_boundaries(survey: Survey, windows: list[Window]) -> Boundaries | None:
    """Each process's own step starts, when the windows are a job's steps
    (:func:`job_steps`) and the process marks every one of them; None otherwise."""
    by_process = _marks_by_process(survey)
    if by_process is None or _job_starts(by_process) is None:
        return None
    labels = [w.label for w in windows[1:]]
    own = {}
    for process, marks in by_process.items():
        starts = {f"step{n}": ts for ts, n in marks}
        if len(starts) == len(labels) + (windows[0].label != "before") \
                and all(label in starts for label in labels):
            own[process] = [starts[label] for label in labels]
    return Boundaries([w.start for w in windows[1:]], own, by_thread=False, closing=False)


def stop_boundaries(survey: Survey) -> Boundaries:
    """MegEngine's step ends: each host thread's own ``StopStep`` times when it marks as
    many as the reference thread (:func:`reference_stops`)."""
    reference = reference_stops(survey)
    own = {thread: sorted(times) for thread, times in survey.stops.items()
           if len(times) == len(reference)}
    return Boundaries(reference, own, by_thread=True, closing=True)


def stop_windows(survey: Survey) -> list[Window]:
    """MegEngine marks where each step ends, on every host thread (``profiler.step()``):
    step k runs to its k-th ``StopStep``, and what follows the last one is ``after``. The
    windows are those of the thread whose marks come last (the worker that executes the
    ops); :func:`thread_stops` gives each thread its own.

    >>> s = Survey(last_ts=50.0, stops={(1, 0): [10.0, 30.0], (1, 1): [12.0, 31.0]})
    >>> [(w.label, w.start, w.end) for w in stop_windows(s)]
    [('step0', -inf, 12.0), ('step1', 12.0, 31.0), ('after', 31.0, inf)]
    """
    ends = reference_stops(survey)
    bounds = [-math.inf, *ends]
    windows = [Window(k, f"step{k}", bounds[k], bounds[k + 1]) for k in range(len(ends))]
    if survey.last_ts > ends[-1]:
        windows.append(Window(len(ends), "after", ends[-1]))
    return windows


def reference_stops(survey: Survey) -> list[float]:
    """The step ends of the thread that marks the most steps, the latest ones of those."""
    return max((sorted(times) for times in survey.stops.values()),
               key=lambda times: (len(times), times[-1]))


def time_windows(survey: Survey, duration_ns: int, source: str) -> list[Window]:
    """Windows of ``duration_ns`` from the earliest event; the last one ends past the last.

    >>> s = Survey(first_ts=100.0, last_ts=350.0, unit_ns=1000)
    >>> [(w.label, w.start, w.end) for w in time_windows(s, 100_000, "t.json")]
    [('t0', 100.0, 200.0), ('t1', 200.0, 300.0), ('t2', 300.0, inf)]
    """
    if duration_ns <= 0:
        raise InputError("--by time=DUR needs a duration above zero", file=source)
    if survey.first_ts == math.inf:
        return [Window(0, "t0")]
    if not math.isfinite(survey.last_ts - survey.first_ts):
        raise InputError("--by time: the events' times are not finite numbers (from "
                         f"{survey.first_ts} to {survey.last_ts})", file=source)
    width = duration_ns / survey.unit_ns
    count = max(1, math.floor((survey.last_ts - survey.first_ts) / width) + 1)
    if count > MAX_WINDOWS:
        raise InputError(f"--by time: {count:,} windows of {format_duration(duration_ns)} (at most "
                         f"{MAX_WINDOWS:,}); choose a longer duration", file=source)
    starts = [survey.first_ts + k * width for k in range(count)]
    ends = [*starts[1:], math.inf]
    return [Window(k, f"t{k}", start, end)
            for k, (start, end) in enumerate(zip(starts, ends, strict=True))]


def rank_windows(survey: Survey, source: str) -> list[Window]:
    """One window per rank named by the process names of a merged trace (``rank N: ...``),
    and ``other`` for processes of no rank, when it has events.

    >>> s = Survey(rank_of_pid={7: 1, 5: 0, 9: 1})
    >>> [(w.label, w.rank) for w in rank_windows(s, "t.json")]
    [('rank0', 0), ('rank1', 1)]
    """
    ranks = sorted(set(survey.rank_of_pid.values()))
    if not ranks:
        raise InputError("no ranks in this trace: --by rank cuts a merged multi-rank trace "
                         "(process names 'rank N: ...', as `traceconv batch --merge "
                         "--to chrome` writes them)", file=source)
    return [Window(i, f"rank{rank}", rank=rank) for i, rank in enumerate(ranks)]


class Launches:
    """Which window each host launch is in, by correlation id, so that device work (a
    kernel, a copy, a memset) goes to the step that launched it rather than the one it
    happens to run in (the step of its process, given the processes' own ``boundaries``
    with each launch's process number). An id launched in two windows (two processes
    reusing ids) is ambiguous and placed by nothing.

    >>> w = [Window(0, "before", end=10.0), Window(1, "step1", 10.0, 20.0), Window(2, "step2", 20.0)]
    >>> launches = Launches(array("q", [7, 8, 9, 9]), array("d", [19.5, 21.0, 5.0, 25.0]), w)
    >>> launches.windows_of(np.array([8, 7, 9, 4])).tolist()
    [2, 1, -1, -1]
    """

    def __init__(self, ids: array, times: array, windows: list[Window],
                 boundaries: tuple[Boundaries, array, dict[Any, int]] | None = None) -> None:
        starts = np.array([w.start for w in windows[1:]], dtype=np.float64)
        keys = np.frombuffer(ids, dtype=np.int64)
        at = np.frombuffer(times, dtype=np.float64)
        if boundaries is None:
            placed = np.searchsorted(starts, at, side="right").astype(np.int32)
        else:   # each launch by its process's own step starts
            own, processes, numbers = boundaries
            placed = own.place_column(at, np.frombuffer(processes, dtype=np.int32),
                                      numbers).astype(np.int32)
        order = np.argsort(keys, kind="stable")
        keys, placed = keys[order], placed[order]
        self.ids, self.windows = keys, placed   # (empty)
        if len(keys):
            first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
            low = np.minimum.reduceat(placed, first)
            high = np.maximum.reduceat(placed, first)
            self.ids = keys[first]
            self.windows = np.where(low == high, low, -1).astype(np.int32)

    def __len__(self) -> int:
        return len(self.ids)

    def windows_of(self, ids: np.ndarray) -> np.ndarray:
        """The launch window of each id; -1 where it is unknown or ambiguous."""
        if not len(self.ids):
            return np.full(len(ids), -1, dtype=np.int32)
        at = np.minimum(np.searchsorted(self.ids, ids), len(self.ids) - 1)
        return np.where(self.ids[at] == ids, self.windows[at], -1)
