"""Dataflow flows: link the slice of each op to the slices of the ops that read its outputs."""

from __future__ import annotations

from ..model import ProcessKind, Trace
from ..model.graph import OP, TENSOR


def representative_slice(trace: Trace, rows: list[int], device_tracks: set[int]) -> int | None:
    """The slice standing for an op: its first device slice, else its first slice."""
    for row in rows:
        if trace.slices.track[row] in device_tracks:
            return row
    return rows[0] if rows else None


def with_dataflow_flows(trace: Trace, category: str = "dataflow") -> Trace:
    """A new trace with one flow per (producer op, consumer op) pair of ``trace.graph``
    added; how many is its diagnostic ``dataflow.flows``.

    A flow goes from the producer's slice to the consumer's slice (device slices preferred,
    see :func:`representative_slice`) and is named after the first tensor between them.

    >>> from traceconv.model import Trace
    >>> from traceconv.model.graph import add_op, add_tensor
    >>> t = Trace(); th = t.add_track("main", process=t.add_process("p"))
    >>> a, b = t.add_slice(th, 0, 5, "conv"), t.add_slice(th, 5, 5, "relu")
    >>> g = t.graph
    >>> g.add_edge(add_op(g, 1, "conv", slices=[a]), add_tensor(g, 2, "y"))
    >>> g.add_edge("tensor/2", add_op(g, 3, "relu", slices=[b]))
    >>> new = with_dataflow_flows(t)
    >>> new.diagnostics.count("dataflow.flows"), [(f.source, f.target, f.name) for f in new.iter_flows()]
    (1, [(0, 1, 'y')])
    """
    new = trace.copy()
    graph = new.graph
    device_procs = {p.id for p in new.processes if p.kind == ProcessKind.DEVICE}
    device_tracks = {t.id for t in new.tracks if t.process in device_procs}
    slice_of = {node: representative_slice(new, data.get("slices") or [], device_tracks)
                for node, data in graph.nodes(data=True) if data.get("kind") == OP}
    seen: set[tuple[int, int]] = set()
    for producer, source in slice_of.items():
        if source is None:
            continue
        for tensor in graph.successors(producer):
            if graph.nodes[tensor].get("kind") != TENSOR:
                continue
            for consumer in graph.successors(tensor):
                target = slice_of.get(consumer)
                if target is None or target == source or (source, target) in seen:
                    continue
                seen.add((source, target))
                new.add_flow(source, target, category, graph.nodes[tensor].get("name", ""))
    new.diagnostics.add("dataflow.flows", count=len(seen))
    return new.freeze()
