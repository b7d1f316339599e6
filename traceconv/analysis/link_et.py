"""Linking a PyTorch execution trace (op graph, no times) to the Kineto trace of the same run.

Both record the same ``record_function`` calls: the execution trace as ``rf_id``, Kineto as
the ``Record function id`` argument of ``cpu_op`` / ``user_annotation`` slices. An op node
whose id and name both match gets that slice (host time), and the kernels its CUDA runtime
calls launched (the ``ac2g`` correlation flows) as device time: ``self_device_ns`` for
kernels launched directly inside it, ``device_ns`` for those of its whole subtree (the
execution trace's own parent links). Nothing is merged as a second rank: the result is the
timeline with the execution trace's graph.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..model import Diagnostics, ProcessKind, Trace
from ..model.activity import RUNTIME_CALLS, Activity, kind_of
from ..model.copying import copy_into
from ..model.graph import OP, OpSpan
from ..model.slice_index import SliceIndex, enclosing_slices
from .activity import slice_activity

EXECUTION_TRACE = "torch-et"
RF_ARG = "Record function id"


def is_execution_trace(trace: Trace) -> bool:
    return trace.metadata.source_format == EXECUTION_TRACE


def pair_execution_traces(traces: Sequence[Trace]) -> list[tuple[Trace, list[Trace]]]:
    """Each timeline with the execution traces recorded beside it (same pid, or the only
    timeline); an execution trace with no timeline stays alone.

    >>> from traceconv.model import Metadata
    >>> et, tl = Trace(Metadata(source_format="torch-et")), Trace(Metadata("chrome"))
    >>> [(t.metadata.source_format, len(e)) for t, e in pair_execution_traces([et, tl])]
    [('chrome', 1)]
    """
    timelines = [t for t in traces if not is_execution_trace(t)]
    pairs: list[tuple[Trace, list[Trace]]] = [(t, []) for t in timelines]
    for et in (t for t in traces if is_execution_trace(t)):
        pid = et.metadata.attributes.get("pid")
        same_pid = [pair for pair in pairs
                    if any(p.pid == pid for p in pair[0].processes if pid is not None)]
        if len(same_pid) == 1 or (not same_pid and len(timelines) == 1):
            (same_pid or pairs)[0][1].append(et)
        else:
            pairs.append((et, []))
    return pairs


def link_execution_trace(timeline: Trace, et: Trace) -> Trace:
    """The timeline with ``et``'s op graph, op nodes linked to their slices and kernels.

    Neither input changes: the result shares the timeline's event tables (read-only) and has
    its own graph, flows, strings and diagnostics. Linked op nodes get ``slices`` (the host
    slice, then the device slices of its subtree), ``host_spans`` / ``device_spans`` (the
    graph contract's per-place spans; a device span covers the subtree's slices on that
    stream), ``start_ns``, ``host_ns``, ``self_device_ns``, ``device_ns`` and ``kernels``
    (of the subtree); how many linked is in diagnostics.
    """
    out = Trace(replace(timeline.metadata.copy(), diagnostics=Diagnostics(),
                        source_format=f"{timeline.metadata.source_format}+{EXECUTION_TRACE}"))
    copy_into(out, timeline)
    copy_into(out, et)   # (its graph: an execution trace has no events)
    out.metadata.attributes["execution_trace"] = {
        "file": et.metadata.source_file, "schema": et.metadata.source_version}
    _link(out)
    return out.freeze()


def _link(trace: Trace) -> None:
    graph = trace.graph
    by_rf: dict[Any, str] = {data["rf_id"]: node for node, data in graph.nodes(data=True)
                             if data.get("kind") == OP and data.get("rf_id") is not None}
    op_of_slice: dict[int, str] = {}
    clashes: list[str] = []
    unmatched_rf = zero_rf = 0
    for s in trace.iter_slices():
        rf = s.args.get(RF_ARG) if s.args else None
        if rf is None:
            continue
        zero_rf += rf == 0
        node = by_rf.get(rf)
        if node is None:
            unmatched_rf += 1
        elif graph.nodes[node]["name"] != s.name:
            clashes.append(f"rf_id {rf}: {graph.nodes[node]['name']} vs {s.name}")
        elif "host_ns" not in graph.nodes[node]:
            op_of_slice[s.index] = node
            graph.nodes[node].update(
                slices=[s.index], start_ns=s.start, host_ns=s.dur, self_device_ns=0,
                device_ns=0, kernels=0,
                host_spans={trace.tracks[s.track].name: OpSpan(s.start, s.start + s.dur)})
    durations = trace.slices.numpy("dur")
    for node, rows in _kernels_by_op(trace, op_of_slice).items():
        data = graph.nodes[node]
        device = int(durations[rows].sum())
        data["self_device_ns"] = device
        seen: set[str] = set()
        ancestor: str | None = node
        while ancestor is not None and ancestor in graph and ancestor not in seen:
            seen.add(ancestor)   # the subtree's kernels count for every op above them
            up = graph.nodes[ancestor]
            if "device_ns" in up:
                up["device_ns"] += device
                up["kernels"] += len(rows)
                up["slices"] = up["slices"] + rows
            ancestor = up.get("parent")
    _device_spans(trace)
    _report(trace, len(by_rf), len(op_of_slice), clashes, unmatched_rf)
    if not op_of_slice and zero_rf and zero_rf == unmatched_rf + len(clashes):
        # (every id 0: the profiler ran without the observer, nothing to link by)
        trace.diagnostics.add("link_et.record_function_ids_zero", count=zero_rf)


def _device_spans(trace: Trace) -> None:
    """``device_spans`` of each timed op: per stream, from its subtree's first device slice
    start to its last one's end (the graph contract's place -> span)."""
    starts, durs, tracks = (trace.slices.numpy(c) for c in ("start", "dur", "track"))
    for _, data in trace.graph.nodes(data=True):
        rows = (data.get("slices") or [])[1:]
        if data.get("kind") != OP or not rows:
            continue
        spans: dict[str, OpSpan] = {}
        for track in np.unique(tracks[rows]).tolist():
            mine = [r for r in rows if tracks[r] == track]
            spans[trace.tracks[track].name] = OpSpan(int(starts[mine].min()),
                                                     int((starts[mine] + durs[mine]).max()))
        data["device_spans"] = spans


def _kernels_by_op(trace: Trace, op_of_slice: dict[int, str]) -> dict[str, list[int]]:
    """Device slices per op node: each launch's flow target goes to the innermost linked op
    around the launch on the host (or around the launching op if that is not linked)."""
    device_procs = {p.id for p in trace.processes if p.kind == ProcessKind.DEVICE}
    device_tracks = {t.id for t in trace.tracks if t.process in device_procs}
    s = trace.slices
    source, target = trace.flows.numpy("source"), trace.flows.numpy("target")
    track, kind = s.numpy("track"), kind_of(slice_activity(trace))
    keep = np.isin(kind[source], RUNTIME_CALLS) & np.isin(track[target], list(device_tracks))
    launches: dict[int, list[int]] = defaultdict(list)
    for launch, device_slice in zip(source[keep].tolist(), target[keep].tolist(), strict=True):
        launches[launch].append(device_slice)
    if not launches:
        return {}
    rows = np.fromiter(launches, dtype=np.int64, count=len(launches))
    index = SliceIndex(trace, rows=np.flatnonzero(kind == Activity.HOST_OP))
    owners = enclosing_slices(index, track[rows], s.numpy("start")[rows])
    found: dict[str, list[int]] = defaultdict(list)
    unowned = 0
    for launch, owner in zip(rows.tolist(), owners, strict=True):
        node = op_of_slice.get(owner) if owner is not None else None
        if node is None:
            unowned += len(launches[launch])
            continue
        found[node].extend(launches[launch])
    if unowned:
        trace.diagnostics.add("link_et.kernels_without_op", count=unowned)
    return found


def _report(trace: Trace, ops: int, linked: int, clashes: list[str], unmatched: int) -> None:
    diags = trace.diagnostics
    diags.add("link_et.linked_ops", count=linked)
    if ops - linked:
        unlinked = [d["name"] for _, d in trace.graph.nodes(data=True)
                    if d.get("kind") == OP and "host_ns" not in d]
        diags.add("link_et.unlinked_ops", count=ops - linked,
                  example=", ".join(f"{n} ({c})" for n, c in Counter(unlinked).most_common(3)))
    if clashes:
        diags.add("link_et.name_mismatch", count=len(clashes), example=clashes[0])
    if unmatched:
        diags.add("link_et.slices_not_in_et", count=unmatched)
