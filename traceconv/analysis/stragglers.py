"""The straggler table of a merged multi-rank trace: per collective, who arrived last.

Every rank enters a collective when it is ready and leaves when the last one arrives, so
the rank with the latest start held the others up. For each collective instance matched
across ranks (see :mod:`traceconv.analysis.align`), the table gives the last rank, how much
later than the next-latest rank it arrived (what it alone cost), and the spread between the
first and the last arrival (how long the first rank waited). Times are those of the merged
trace, after clock alignment.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass

import numpy as np

from ..model import Trace
from .activity import input_of_process, slice_activity
from .align import match
from .collectives import find_calls


@dataclass(frozen=True, slots=True)
class Straggler:
    """One collective instance: who arrived last and by how much (ns)."""

    collective: str     # the slice name as the last rank recorded it
    side: str           # host / device
    group: str          # process group ("" when the source names none)
    index: int          # sequence number, or order among calls of this collective
    start_ns: int       # the first arrival
    last_rank: str      # label of the input that arrived last
    late_by_ns: int     # last arrival - the next-latest arrival
    spread_ns: int      # last arrival - first arrival
    ranks: int          # how many inputs recorded this instance

    def as_dict(self) -> dict:
        return asdict(self)


def stragglers(trace: Trace) -> list[Straggler]:
    """The straggler rows of a trace merged from several ranks (empty for one input).

    >>> from traceconv.analysis.merge import merge
    >>> from traceconv.model import Trace
    >>> def rank(late):
    ...     t = Trace(); p = t.add_process("python", pid=1); th = t.add_track("t", process=p)
    ...     t.add_slice(th, 1_000 + late, 5_000 - late, "gloo:all_reduce")
    ...     return t
    >>> [(s.last_rank, s.late_by_ns) for s in stragglers(merge([rank(0), rank(700), rank(300)]))]
    [('input 1', 400)]
    """
    inputs = trace.metadata.attributes.get("inputs") or []
    if len(inputs) < 2:
        return []
    activity = slice_activity(trace)   # (once: each input's calls are found in it)
    part = input_of_process(trace)[:-1]
    per_input = [find_calls(trace, frozenset(np.flatnonzero(part == k).tolist()), activity)
                 for k in range(len(inputs))]
    rows = []
    for ((side, group, _op), index), calls in match(per_input).items():
        if len(calls) < 2:
            continue
        arrivals = sorted((call.start, rank) for rank, call in calls.items())
        (first, _), (runner_up, _), (last, last_rank) = arrivals[0], arrivals[-2], arrivals[-1]
        rows.append(Straggler(calls[last_rank].name, side, group, index, first,
                              inputs[last_rank]["label"], last - runner_up, last - first,
                              len(calls)))
    return sorted(rows, key=lambda r: (r.start_ns, r.side, r.collective))


def last_counts(rows: list[Straggler]) -> Counter[str]:
    """How often each rank arrived last: the usual suspect first.

    >>> last_counts([Straggler("x", "host", "", 0, 0, "rank 1", 5, 9, 2)]).most_common()
    [('rank 1', 1)]
    """
    return Counter(r.last_rank for r in rows)
