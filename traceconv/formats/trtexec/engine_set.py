"""The exports of one engine, given together, read as one trace.

``trtexec --exportLayerInfo=e.graph.json --exportProfile=e.profile.json
--exportTimes=e.timing.json`` writes three files about one engine. Given together they are
grouped by engine name (the file name without ``.graph.json`` / ``.profile.json`` /
``.timing.json`` ...; when that leaves several names but at most one file of each kind, the
files are taken as one set) and built into one new trace; the traces read from each file
are not changed.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...model import Trace
from ..file_sets import by_name_unless_one_of_each, combine_sets
from . import PARTS
from .build import build_engine
from .parts import Part


def combine_engine_sets(traces: Sequence[Trace]) -> list[Trace]:
    """``traces`` with the trtexec exports of each engine replaced by one trace (in the
    place of the first of them); other traces pass through.

    >>> combine_engine_sets([])
    []
    """
    return combine_sets(traces, PARTS.get, _groups, _combine)


def _groups(parts: list[Part]) -> list[list[Part]]:
    return by_name_unless_one_of_each(parts, lambda p: p.engine, lambda p: p.kind)


def _combine(members: list[Part]) -> Trace:
    engine = " + ".join(sorted({p.engine for p in members}))
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
