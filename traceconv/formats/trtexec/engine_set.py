"""The exports of one engine, given together, read as one trace.

``trtexec --exportLayerInfo=e.graph.json --exportProfile=e.profile.json
--exportTimes=e.timing.json`` writes three files about one engine. Given together they are
grouped by engine name (the file name without ``.graph.json`` / ``.profile.json`` /
``.timing.json`` ...; when that leaves several names but at most one file of each kind, the
files are taken as one set) and built into one new trace; the traces read from each file
are not changed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from ...model import Trace
from . import PARTS
from .build import build_engine
from .parts import Part


def combine_engine_sets(traces: Sequence[Trace]) -> list[Trace]:
    """``traces`` with the trtexec exports of each engine replaced by one trace (in the
    place of the first of them); other traces pass through.

    >>> combine_engine_sets([])
    []
    """
    parts = {id(t): PARTS.get(t) for t in traces}
    found = [p for p in parts.values() if p is not None]
    if len(found) < 2:
        return list(traces)
    groups = _groups(found)
    out: list[Trace] = []
    done: set[str] = set()
    for trace in traces:
        part = parts[id(trace)]
        if part is None:
            out.append(trace)
            continue
        key = next(k for k, members in groups.items() if part in members)
        if key in done:
            continue
        done.add(key)
        members = groups[key]
        out.append(trace if len(members) == 1 else _combine(key, members))
    return out


def _groups(parts: list[Part]) -> dict[str, list[Part]]:
    by_engine: dict[str, list[Part]] = defaultdict(list)
    for part in parts:
        by_engine[part.engine].append(part)
    kinds = [p.kind for p in parts]
    if len(by_engine) > 1 and len(set(kinds)) == len(kinds):
        # unrelated names but one file of each kind: the user gave one engine's exports
        return {" + ".join(sorted(by_engine)): list(parts)}
    return dict(by_engine)


def _combine(engine: str, members: list[Part]) -> Trace:
    kinds = [p.kind for p in members]
    repeated = sorted({k for k in kinds if kinds.count(k) > 1})
    trace = build_engine(engine, _first_of_each_kind(members))
    trace.metadata.source_format = "trtexec"
    trace.metadata.source_file = " + ".join(p.file for p in members)
    trace.diagnostics.add("trtexec.repeated_export", count=len(members) - len(set(kinds)),
                          example=", ".join(repeated) or None)
    return trace


def _first_of_each_kind(members: list[Part]) -> list[Part]:
    seen: dict[str, Part] = {}
    for part in members:
        seen.setdefault(part.kind, part)
    return list(seen.values())
