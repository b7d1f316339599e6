"""Merge several traces (one per rank, or before/after runs) into one."""

from __future__ import annotations

import os
from array import array
from collections.abc import Sequence
from dataclasses import replace

import networkx as nx
import numpy as np

from ..model import Metadata, Process, Trace
from .align import Alignment, Mode
from .align import align as align_ranks


def _label(trace: Trace, index: int) -> str:
    meta = trace.metadata
    if meta.rank is not None:
        return f"rank {meta.rank}"
    return os.path.basename(meta.source_file) if meta.source_file else f"input {index}"


def _extend(column: array, values: np.ndarray) -> None:
    column.frombytes(values.astype(column.typecode, copy=False).tobytes())


def rank_labels(trace: Trace) -> list[str]:
    """``rank N``, ``world size W``, ``host H``: what the source says about its rank.

    >>> rank_labels(Trace(Metadata(rank=1, world_size=4)))
    ['rank 1', 'world size 4']
    """
    meta = trace.metadata
    host = meta.attributes.get("hostname") or meta.attributes.get("host")
    known = (("rank", meta.rank), ("world size", meta.world_size), ("host", host))
    return [f"{what} {value}" for what, value in known if value is not None]


def _process_order(process: Process) -> tuple[bool, int, int]:
    """A trace's own process order: by sort index, unsorted ones last, then by id."""
    return (process.sort_index is None, process.sort_index or 0, process.id)


def merge(traces: Sequence[Trace], labels: Sequence[str] | None = None, *,
          align: Mode = "auto") -> Trace:
    """One trace holding every input; each input's processes are prefixed with its label.

    Labels default to ``rank N`` (when the source states its rank) or the file name. Each
    input's processes are ordered together (input by input) and carry process labels
    ``rank N``, ``world size W`` and ``host H`` where the source states them, so that a
    viewer shows one group of processes per rank (Perfetto cannot nest processes; host and
    device processes stay apart so device time stays device time).
    ``align`` decides whether each input's clock is shifted so that the collectives the
    ranks share end together (see :mod:`traceconv.analysis.align`): ``auto`` shifts only
    ranks that disagree beyond a threshold, ``collectives`` always, ``none`` never. What
    was done, and the residual skew per input, is in diagnostics and in
    ``metadata.attributes["alignment"]``. The inputs are not changed.

    >>> merged = merge([traceconv.load("rank-0.json"), traceconv.load("rank-1.json")])  # doctest: +SKIP
    >>> [p.name for p in merged.processes][:2]                                          # doctest: +SKIP
    ['rank 0: python', 'rank 1: python']
    """
    labels = list(labels) if labels else [_label(t, i) for i, t in enumerate(traces)]
    alignment = align_ranks(traces, align, labels)
    formats = dict.fromkeys(t.metadata.source_format for t in traces)
    clocks = {t.metadata.clock for t in traces}
    out = Trace(Metadata(source_format="+".join(f for f in formats if f), clock=" / ".join(clocks),
                         framework=", ".join(dict.fromkeys(
                             t.metadata.framework for t in traces if t.metadata.framework))))
    starts = np.cumsum([0] + [len(t.processes) for t in traces]).tolist()
    out.metadata.attributes["inputs"] = [
        {"label": label, "file": t.metadata.source_file, "format": t.metadata.source_format,
         "rank": t.metadata.rank, "processes": [starts[i], starts[i + 1]]}
        for i, (t, label) in enumerate(zip(traces, labels, strict=True))]
    if alignment.applied:
        out.metadata.clock = f"{out.metadata.clock}, shifted to rank 0 on collectives"
    out.metadata.attributes["alignment"] = alignment.as_dict()
    _report(out, alignment)
    if not alignment.applied and (len(clocks) > 1 or "unix epoch" not in clocks):
        out.diagnostics.add("merge.clocks", "inputs do not share an epoch clock; their times "
                            "are kept as they are, not aligned", kind="note")
    graphs = []
    for index, (trace, label, shift) in enumerate(
            zip(traces, labels, alignment.offsets, strict=True)):
        p0, t0, s0 = len(out.processes), len(out.tracks), len(out.slices)
        group = rank_labels(trace)
        order = {p.id: n for n, p in enumerate(sorted(trace.processes, key=_process_order))}
        for p in trace.processes:
            out.processes.append(replace(p, id=p.id + p0, name=f"{label}: {p.name}",
                                         sort_index=index * len(order) + order[p.id],
                                         labels=[*group, *(x for x in p.labels if x not in group)]))
        for t in trace.tracks:
            out.tracks.append(replace(t, id=t.id + t0, process=t.process + p0,
                                      parent=None if t.parent is None else t.parent + t0))
        ids = np.fromiter((out.strings.intern(s) for s in trace.strings.strings), dtype=np.int64,
                          count=len(trace.strings))
        for table, target in ((trace.slices, out.slices), (trace.instants, out.instants)):
            _extend(target.track, table.numpy("track") + t0)
            for col, offset in (("start", shift), ("dur", 0), ("ts", shift)):
                if hasattr(table, col):
                    _extend(getattr(target, col), table.numpy(col) + offset)
            _extend(target.name, ids[table.numpy("name")])
            _extend(target.category, ids[table.numpy("category")])
            if table is trace.slices:
                _extend(out.slices.activity, trace.slices.numpy("activity"))
            target.args.extend(table.args)
        _extend(out.counters.track, trace.counters.numpy("track") + t0)
        _extend(out.counters.ts, trace.counters.numpy("ts") + shift)
        _extend(out.counters.value, trace.counters.numpy("value"))
        f = trace.flows
        _extend(out.flows.source, f.numpy("source") + s0)
        _extend(out.flows.target, f.numpy("target") + s0)
        _extend(out.flows.category, ids[f.numpy("category")])
        _extend(out.flows.name, ids[f.numpy("name")])
        out.memory.extend(replace(
            b, device=f"{label}: {b.device}" if b.device else label,
            alloc_ns=None if b.alloc_ns is None else b.alloc_ns + shift,
            free_ns=None if b.free_ns is None else b.free_ns + shift) for b in trace.memory)
        r0 = len(out.stats)
        out.stats.extend(replace(s, parent=None if s.parent is None else s.parent + r0,
                                 extra={**s.extra, "input": label}) for s in trace.stats)
        graphs.append(nx.relabel_nodes(trace.graph, lambda n, lb=label: f"{lb}/{n}"))
        out.diagnostics.extend(trace.diagnostics)
    if graphs:
        out.graph = nx.compose_all(graphs) if len(graphs) > 1 else graphs[0]
    return out


def _report(out: Trace, alignment: Alignment) -> None:
    """Diagnostics: the decision, then one line per input with its shift and residual skew."""
    shifted = [r for r in alignment.ranks if alignment.applied and r.offset_ns]
    if shifted:
        out.diagnostics.add("align.shifted", f"rank clocks {alignment.reason}", kind="repaired",
                            count=len(shifted), example=", ".join(
                                f"{r.label} {r.offset_ns / 1e9:+,.6f} s" for r in shifted))
    else:
        out.diagnostics.add("align.kept", f"clocks not shifted: {alignment.reason}",
                            kind="note")
    if not alignment.collectives:
        return
    for index, r in enumerate(alignment.ranks):
        if index and not r.matched:
            out.diagnostics.add(f"align.unmatched.{index}", f"{r.label}: no collective in "
                                "common with the first input; not shifted", kind="guessed")
            continue
        out.diagnostics.add(
            f"align.residual.{index}",
            f"{r.label}: residual skew {r.residual_median_ns / 1e3:,.1f} µs median, "
            f"{r.residual_max_ns / 1e3:,.1f} µs max over {r.matched} collectives "
            f"(shift {r.offset_ns / 1e9 if alignment.applied else 0:+,.6f} s)", kind="note")
