"""Files of one set given together (a trtexec engine's exports, a rocprofv3 run's CSVs)
replaced by one trace built from all of them, in the place of the first."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from ..model import Trace

Part = TypeVar("Part")


def combine_sets(traces: Sequence[Trace], part_of: Callable[[Trace], Part | None],
                 groups: Callable[[list[Part]], list[list[Part]]],
                 combine: Callable[[list[Part]], Trace]) -> list[Trace]:
    """``traces`` with the members of each group of several replaced by ``combine`` of them
    (in the place of the first); a trace with no part, or alone in its group, passes
    through. ``part_of`` gives what a reader kept of a trace's file, ``groups`` splits the
    parts found into sets.

    >>> combine_sets([], lambda t: None, lambda ps: [ps], lambda ps: Trace())
    []
    """
    parts = {id(t): part_of(t) for t in traces}
    found = [p for p in parts.values() if p is not None]
    if len(found) < 2:
        return list(traces)
    sets = groups(found)
    out: list[Trace] = []
    done: set[int] = set()
    for trace in traces:
        part = parts[id(trace)]
        if part is None:
            out.append(trace)
            continue
        at = next(i for i, members in enumerate(sets) if any(m is part for m in members))
        if at in done:
            continue
        done.add(at)
        out.append(trace if len(sets[at]) == 1 else combine(sets[at]))
    return out


def by_name_unless_one_of_each(parts: list[Part], name: Callable[[Part], str],
                               kind: Callable[[Part], str]) -> list[list[Part]]:
    """``parts`` grouped by ``name``; when that leaves several names but no ``kind`` twice,
    one group (the user gave one set's files, whatever their names).

    >>> files = ["a.graph", "b.profile", "a.profile"]
    >>> by_name_unless_one_of_each(files, lambda f: f[0], lambda f: f[2:])
    [['a.graph', 'a.profile'], ['b.profile']]
    >>> by_name_unless_one_of_each(files[:2], lambda f: f[0], lambda f: f[2:])
    [['a.graph', 'b.profile']]
    """
    groups: dict[str, list[Part]] = {}
    for part in parts:
        groups.setdefault(name(part), []).append(part)
    kinds = [kind(p) for p in parts]
    if len(groups) > 1 and len(set(kinds)) == len(kinds):
        return [list(parts)]
    return list(groups.values())
