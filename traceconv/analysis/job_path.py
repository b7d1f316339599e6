"""The critical path of a job of several ranks: one path that crosses ranks at collectives.

Every rank enters a collective when it is ready and leaves when the last one has arrived,
so the rank whose call started last held up all the others. The job's path is walked back
in time from the end of the rank that ends last (each rank's own walk,
:mod:`.critical_walk`, with its gaps named, :mod:`.path_gaps`). When the walk meets a
collective call on rank *r* — as a link, or as the work a wait was waiting on — and another
rank *s* started its part of that collective later, inside the link, then *r* spent the time
before *s*'s arrival waiting for *s*: the path keeps *r* from *s*'s arrival on, and goes on on
*s*, back from the start of *s*'s call. Times are those of the aligned clocks
(:mod:`.align`: rank 0's clock; ``offset_ns`` of each rank added).

Per rank, over the path's window, the job's length is split exactly into: time waiting at
collectives (from its arrival to the last rank's arrival, with who it waited for), time
busy (any thread or device of the rank running) and idle time. Who arrived last is known
only up to the alignment's error: a wait whose last rank led the runner-up by no more than
the two ranks' residual skew is counted as ``uncertain_ns`` too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from ..model import Trace
from .activity import Intervals, Timeline, clip, merge_intervals, overlap_ns
from .align import Alignment, Mode, align, match
from .collectives import find_calls
from .critical_path import (
    CriticalPath,
    PathEntry,
    breakdown,
    walked_entries,
    with_gaps_named,
    work_bounds,
)
from .critical_walk import Link, Walk
from .path_gaps import GapFiller

State = tuple[str, int, int]
# per collective instance: its calls as (aligned start, rank, row), first arrival first
Arrivals = dict[tuple, list[tuple[int, int, int]]]
# a crossing found in a rank's entries: (entry index, arrival in its clock, last rank, row)
Hop = tuple[int, int, int, int]


@dataclass
class RankShare:
    """One rank over the job's path: waiting at collectives + busy + idle + unrecorded =
    the length."""

    rank: int
    label: str
    collective_wait_ns: int = 0
    busy_ns: int = 0
    idle_ns: int = 0
    unrecorded_ns: int = 0      # before its trace begins or after it ends
    waited_for: dict[int, int] = field(default_factory=dict)   # last rank -> ns waited
    uncertain_ns: int = 0       # waits whose last rank is within the alignment's error
    error_bound_ns: int = 0     # the alignment's largest residual skew of this rank
    lower_bound_ns: int = 0     # its busiest host thread's busy time
    own_path_ns: int = 0        # its own critical path's length


@dataclass(repr=False)
class JobPath(CriticalPath):
    """The path across ranks (each entry's ``rank`` set), and each rank's share."""

    ranks: list[RankShare] = field(default_factory=list)
    crossings: list[Crossing] = field(default_factory=list)
    alignment: Alignment | None = None

    def as_dict(self) -> dict:
        data = super().as_dict()
        data["origin_ns"] = self.origin_ns   # what start_ns counts from, on rank 0's clock
        data["crossings"] = [asdict(c) | {"at_ns": c.at_ns - self.origin_ns}
                             for c in self.crossings]
        data["ranks"] = [asdict(r) | {"waited_for": [
            {"rank": k, "ns": v} for k, v in sorted(r.waited_for.items())]} for r in self.ranks]
        if self.alignment is not None:
            data["alignment"] = self.alignment.as_dict()
        return data


@dataclass(frozen=True)
class Crossing:
    """Where the path goes from ``from_rank`` to ``to_rank`` (in time order) at ``at_ns``
    (aligned): through a collective (``via``: its name, as ``to_rank`` recorded it), where
    ``from_rank`` arrived last, or because ``to_rank``'s trace begins there."""

    at_ns: int
    from_rank: int
    to_rank: int
    via: str


class _Rank:
    """One rank's trace, ready to walk: its walk, gap names and collective calls."""

    def __init__(self, trace: Trace, offset: int) -> None:
        self.tl = Timeline(trace)
        self.walk = Walk(self.tl)
        self.gaps = GapFiller(self.tl)
        self.offset = offset
        self.calls = find_calls(trace, activity=self.tl.stated)
        self.instance_of: dict[int, tuple] = {}
        self.own = self.entries(None)   # the rank's own path, from its own end
        bounds = work_bounds(trace)
        self.bounds = None if bounds is None else (bounds[0] + offset, bounds[1] + offset)

    def entries(self, state: State | None, links: list[Link] | None = None
                ) -> list[PathEntry]:
        """The path from ``state`` back (``links``: its walk so far, else all of it), in the
        rank's clock and time order, its gaps named up to the state's cursor."""
        walked = self.walk.run(state) if links is None else links
        entries = walked_entries(self.tl, walked)
        if state is None or not entries:
            return with_gaps_named(self.gaps, entries)
        place, index, cursor = state
        row = index if place == "device" else int(self.walk.host.row[index])
        until = PathEntry("", "cpu", cursor, 0, row)
        return with_gaps_named(self.gaps, [*entries, until])[:-1]

    def segment(self, state: State | None, me: int, arrivals: Arrivals
                ) -> tuple[list[PathEntry], Hop | None]:
        """The path from ``state`` back to its latest crossing to another rank (and that
        crossing), else to the rank's start. The walk goes back in batches that double, so
        a crossing near the state costs a short walk, not the rank's whole path: only the
        earliest entries of a batch can still change (the next link may cut them or fill
        the gap before them), so they are looked at with the next batch."""
        links: list[Link] = []
        batch = 256
        for link in self.walk.links(state):
            links.append(link)
            if len(links) == batch:
                entries = self.entries(state, links)
                hop = _crossing(self, me, entries, arrivals, first=2)
                if hop is not None:
                    return entries, hop
                batch *= 2
        entries = self.entries(state, links)
        return entries, _crossing(self, me, entries, arrivals)

    def state_at_call(self, row: int) -> State | None:
        """The walk's state at the start of collective call ``row``."""
        start = int(self.tl.start[row])
        if self.tl.on_device[row]:
            return "device", row, start
        segment = self.walk.host.first_of_row.get(row)
        return None if segment is None else ("host", segment, start)


def job_critical_path(traces: Sequence[Trace], mode: Mode = "auto",
                      labels: Sequence[str] | None = None) -> JobPath:
    """The critical path of a job given one trace per rank (see the module's docstring).

    ``mode`` is the clock alignment's (:func:`~traceconv.analysis.align.align`).

    >>> from traceconv.model import Trace
    >>> def rank(arrive, end):   # works until ``arrive``, all-reduces until 1,000, steps
    ...     t = Trace(); p = t.add_process("python", pid=1); th = t.add_track("main", process=p)
    ...     t.add_slice(th, 0, arrive, "forward", "cpu_op")
    ...     t.add_slice(th, arrive, 1_000 - arrive, "gloo:all_reduce", "user_annotation")
    ...     t.add_slice(th, 1_000, end - 1_000, "step", "cpu_op")
    ...     return t
    >>> job = job_critical_path([rank(200, 1_100), rank(700, 1_050)])
    >>> [(e.rank, e.name, e.start_ns, e.end_ns) for e in job.path]
    [(1, 'forward', 0, 700), (0, 'gloo:all_reduce', 700, 1000), (0, 'step', 1000, 1100)]
    >>> job.crossings
    [Crossing(at_ns=700, from_rank=1, to_rank=0, via='gloo:all_reduce')]
    >>> [(r.collective_wait_ns, r.waited_for, r.busy_ns, r.idle_ns) for r in job.ranks]
    [(500, {1: 500}, 600, 0), (0, {}, 1050, 0)]
    """
    ids = _rank_ids(traces)
    alignment = align(traces, mode, labels or [f"rank {i}" for i in ids])
    offsets = alignment.offsets
    ranks = [_Rank(t, offsets[i]) for i, t in enumerate(traces)]
    arrivals: Arrivals = {}
    for instance, calls in match([r.calls for r in ranks]).items():
        if len(calls) < 2:
            continue
        arrivals[instance] = sorted((call.start + offsets[i], i, call.row)
                                    for i, call in calls.items())
        for i, call in calls.items():
            ranks[i].instance_of[call.row] = instance
    pieces, crossings = _walk_job(ranks, arrivals)
    path = [PathEntry(e.name, e.kind, e.start_ns + ranks[i].offset, e.dur_ns, e.row,
                      waited=e.waited, rank=ids[i]) for i, entries in pieces for e in entries]
    crossings = [Crossing(c.at_ns, ids[c.from_rank], ids[c.to_rank], c.via) for c in crossings]
    origins = [(t.time_range or (0, 0))[0] + offsets[i] for i, t in enumerate(traces)]
    job = JobPath("timeline", path, _job_span(traces, offsets), min(origins, default=0),
                  breakdown(path), crossings=crossings, alignment=alignment)
    if path:
        window = (path[0].start_ns, path[-1].end_ns)
        job.ranks = [_share(i, r, alignment, arrivals, window) for i, r in enumerate(ranks)]
        for share in job.ranks:
            share.rank = ids[share.rank]
            share.waited_for = {ids[k]: v for k, v in share.waited_for.items()}
    return job


def _rank_ids(traces: Sequence[Trace]) -> list[int]:
    """Each input's rank as its trace states it, else its position (also when two inputs
    state the same rank)."""
    stated = [t.metadata.rank for t in traces]
    if None in stated or len(set(stated)) < len(stated):
        return list(range(len(traces)))
    return [int(r) for r in stated if r is not None]


def _walk_job(ranks: list[_Rank], arrivals: Arrivals
              ) -> tuple[list[tuple[int, list[PathEntry]]], list[Crossing]]:
    """The pieces of the job's path, (rank, entries in its own clock), in time order, and
    where it went from one rank to another."""
    ends = [(r.own[-1].end_ns + r.offset if r.own else 0, i) for i, r in enumerate(ranks)]
    current = min(ends, key=lambda e: (-e[0], e[1]))[1]
    entries = ranks[current].own
    hop = _crossing(ranks[current], current, entries, arrivals)
    pieces: list[tuple[int, list[PathEntry]]] = []
    crossings: list[Crossing] = []
    while entries:
        rank = ranks[current]
        if hop is None:
            pieces.append((current, entries))
            # the walk reached the start of this rank's trace: where another rank's began
            # earlier, the job was running there already (the path goes on on the rank
            # whose own path starts first; what this one did before is not recorded)
            at = entries[0].start_ns + rank.offset
            first = min(((r.own[0].start_ns + r.offset, i) for i, r in enumerate(ranks)
                         if r.own), default=(at, current))
            if first[0] >= at:
                break
            crossings.append(Crossing(at, first[1], current, "trace start"))
            current = first[1]
            entries = _until(ranks[current].own, at - ranks[current].offset)
            hop = _crossing(ranks[current], current, entries, arrivals)
            continue
        index, local, target, row = hop
        first_entry = entries[index]
        pieces.append((current, [_from(first_entry, local), *entries[index + 1:]]))
        crossings.append(Crossing(local + rank.offset, target, current,
                                  str(rank.tl.trace.strings.strings[rank.tl.name[
                                      first_entry.waited if first_entry.kind == "wait"
                                      else first_entry.row]])))
        current = target
        state = ranks[target].state_at_call(row)
        if state is None:   # a call the host pieces do not hold: its rank's own path then
            entries = _until(ranks[target].own, local + rank.offset - ranks[target].offset)
            hop = _crossing(ranks[target], target, entries, arrivals)
        else:
            entries, hop = ranks[target].segment(state, target, arrivals)
    pieces.reverse()
    crossings.reverse()
    return pieces, crossings


def _from(entry: PathEntry, start: int) -> PathEntry:
    """``entry`` from ``start`` on."""
    return PathEntry(entry.name, entry.kind, start, entry.end_ns - start, entry.row,
                     waited=entry.waited)


def _until(entries: list[PathEntry], end: int) -> list[PathEntry]:
    """``entries`` (time order) cut to end at ``end``."""
    kept = [e for e in entries if e.start_ns < end]
    if kept and kept[-1].end_ns > end:
        last = kept[-1]
        kept[-1] = PathEntry(last.name, last.kind, last.start_ns, end - last.start_ns,
                             last.row, waited=last.waited)
    return kept


def _crossing(rank: _Rank, me: int, entries: list[PathEntry], arrivals: Arrivals,
              first: int = 0) -> Hop | None:
    """The latest link of ``entries`` (from index ``first`` on) inside which another rank
    arrived last at a collective ``me`` was in: (entry index, arrival in my clock, that
    rank, its call's row)."""
    for index in range(len(entries) - 1, first - 1, -1):
        entry = entries[index]
        row = entry.waited if entry.kind == "wait" else entry.row
        instance = rank.instance_of.get(row) if row is not None else None
        if instance is None:
            continue
        last_start, last, row = arrivals[instance][-1]
        local = last_start - rank.offset
        if last != me and entry.start_ns < local < entry.end_ns:
            return index, local, last, row
    return None


def _job_span(traces: Sequence[Trace], offsets: list[int]) -> int:
    """From the first slice of work of any rank to the last (aligned clocks)."""
    bounds = [(b[0] + offset, b[1] + offset) for trace, offset in zip(traces, offsets, strict=True)
              if (b := work_bounds(trace)) is not None]
    return max(b[1] for b in bounds) - min(b[0] for b in bounds) if bounds else 0


def _share(index: int, rank: _Rank, alignment: Alignment,
           arrivals: Arrivals, window: tuple[int, int]) -> RankShare:
    """Rank ``index`` over ``window`` (aligned): waits at collectives, busy, idle."""
    error = {i: r.residual_max_ns for i, r in enumerate(alignment.ranks)}
    share = RankShare(index, alignment.ranks[index].label, error_bound_ns=error[index])
    lo, hi = window
    waits: list[tuple[int, int, int, bool]] = []   # (start, end, last rank, uncertain)
    for order in arrivals.values():
        mine = [start for start, i, _ in order if i == index]
        (last_start, last, _), runner_up = order[-1], order[-2]
        if not mine or last == index:
            continue
        uncertain = last_start - runner_up[0] <= error[last] + error[runner_up[1]]
        waits.append((max(mine[0], lo), min(last_start, hi), last, uncertain))
    reach = lo
    starts, ends = [], []
    for start, end, last, uncertain in sorted(waits):
        start = max(start, reach)
        if end <= start:
            continue
        share.waited_for[last] = share.waited_for.get(last, 0) + end - start
        share.uncertain_ns += (end - start) if uncertain else 0
        starts.append(start)
        ends.append(end)
        reach = end
    share.collective_wait_ns = sum(share.waited_for.values())
    waited = Intervals(np.asarray(starts, np.int64), np.asarray(ends, np.int64),
                       np.zeros(len(starts), np.int64))
    busy = _busy(rank, window)
    share.busy_ns = busy.total - overlap_ns(busy, waited)
    recorded = rank.bounds
    if recorded is not None:
        share.unrecorded_ns = hi - lo - max(0, min(hi, recorded[1]) - max(lo, recorded[0]))
    share.idle_ns = hi - lo - share.unrecorded_ns - share.collective_wait_ns - share.busy_ns
    own = rank.own
    share.own_path_ns = own[-1].end_ns - own[0].start_ns if own else 0
    share.lower_bound_ns = max(rank.walk.host.busy_ns().values(), default=0)
    return share


def _busy(rank: _Rank, window: tuple[int, int]) -> Intervals:
    """When any thread or device of ``rank`` ran something, in ``window`` (aligned)."""
    host, tl = rank.walk.host, rank.tl
    work = tl.device_work()
    union = merge_intervals(np.r_[host.start, tl.start[work]] + rank.offset,
                            np.r_[host.end, tl.end[work]] + rank.offset,
                            np.zeros(len(host.start) + len(work), np.int64))
    lo, hi = window
    return clip(union, Intervals(np.array([lo]), np.array([hi]), np.array([-1])))
