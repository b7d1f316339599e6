"""Each input (rank) of a merged trace taken out on its own, so that an analysis that
judges one rank (``advise``) judges each rank, never the job's union or average.

:func:`~traceconv.analysis.merge.merge` records each input's label, file and rank; it
puts that label on the input's processes (``rank 1: python``), memory blocks' devices
(``rank 1: CUDA:0``), statistics rows (``extra["input"]``) and graph nodes
(``rank 1/conv1``). Taking input K
out keeps, in every table, what carries its label: its processes with their tracks,
slices, instants, counter samples and the flows between them; its memory blocks and
reservations, statistics rows and graph nodes. What belongs to the other inputs is counted
as ``merge.other_inputs``.
"""

from __future__ import annotations

import numpy as np

from ..model import Trace
from ..model.copying import Keep, copy_into
from ..model.diagnostics import Diagnostics
from .merge import carries_label


def split_inputs(trace: Trace) -> list[tuple[str, Trace]]:
    """Each input's label and :func:`select_input` trace, in input order (empty: the trace
    was read from one input).

    >>> from traceconv.analysis.merge import merge
    >>> def rank(n):
    ...     t = Trace(); t.metadata.rank = n
    ...     _ = t.add_slice(t.add_track("main", process=t.add_process("python")), 0, 10, "step")
    ...     return t
    >>> [(label, [p.name for p in part.processes], part.metadata.rank)
    ...  for label, part in split_inputs(merge([rank(0), rank(1)], align="none"))]
    [('rank 0', ['rank 0: python'], 0), ('rank 1', ['rank 1: python'], 1)]
    >>> split_inputs(rank(0))
    []
    """
    entries = trace.metadata.attributes.get("inputs") or []
    if len(entries) < 2:
        return []
    return [(str(entry.get("label")), select_input(trace, index))
            for index, entry in enumerate(entries)]


def select_input(trace: Trace, index: int) -> Trace:
    """A new trace with only input ``index`` (0-based) of merged ``trace`` in every table
    (the module's rule), its metadata naming that input's file, format and rank."""
    entry = trace.metadata.attributes["inputs"][index]
    label = str(entry.get("label"))

    def labelled(text: object, separator: str = ": ") -> bool:
        return carries_label(text, label, separator)

    mine = [labelled(p.name) for p in trace.processes]
    tracks = np.fromiter((mine[t.process] for t in trace.tracks), dtype=bool,
                         count=len(trace.tracks))

    def blocks(table) -> np.ndarray:
        return np.fromiter(map(labelled, table.column("device")), dtype=bool, count=len(table))

    keep = Keep(tracks=tracks, memory=blocks(trace.memory),
                reservations=blocks(trace.reservations),
                stats=np.fromiter((labelled(s.extra.get("input")) for s in trace.stats),
                                  dtype=bool, count=len(trace.stats)),
                nodes=frozenset(n for n in trace.graph.nodes if labelled(n, "/"))
                if trace.has_graph else None)
    metadata = trace.metadata.copy()
    metadata.diagnostics = Diagnostics()
    metadata.source_file = entry.get("file") or metadata.source_file
    metadata.source_format = entry.get("format") or metadata.source_format
    metadata.rank = entry.get("rank")
    for merged_only in ("inputs", "alignment"):
        metadata.attributes.pop(merged_only, None)
    out = Trace(metadata)
    moved = copy_into(out, trace, keep, diagnostics=False)
    others = sum(len(getattr(trace, table)) - len(getattr(out, table)) for table in (
        "tracks", "slices", "instants", "counters", "memory", "reservations", "stats"))
    nodes = out.graph.number_of_nodes() if out.has_graph else 0
    others += (trace.graph.number_of_nodes() - nodes if trace.has_graph else 0)
    out.diagnostics.add("merge.other_inputs", count=others + moved.flows_dropped)
    return out.freeze()
