"""Merge several traces (one per rank, or before/after runs) into one."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace

from ..model import Metadata, OpStat, Process, Trace
from ..model.breakdown import only_breakdown
from ..model.copying import copy_into
from ..units import format_duration
from .align import Alignment, Mode
from .align import align as align_ranks


def _label(trace: Trace, index: int) -> str:
    meta = trace.metadata
    if meta.rank is not None:
        return f"rank {meta.rank}"
    return os.path.basename(meta.source_file) if meta.source_file else f"input {index}"


def unique_labels(labels: Sequence[str]) -> list[str]:
    """``labels`` with repeats told apart (``a.json``, ``a.json #2``): a label names an
    input's processes and prefixes its op-graph node ids, so two inputs never share one.

    >>> unique_labels(["a.json", "b.json", "a.json"])
    ['a.json', 'b.json', 'a.json #2']
    """
    taken: set[str] = set()
    unique = []
    for label in labels:
        candidate, n = label, 1
        while candidate in taken:
            n += 1
            candidate = f"{label} #{n}"
        taken.add(candidate)
        unique.append(candidate)
    return unique


def rank_labels(trace: Trace) -> list[str]:
    """``rank N``, ``world size W``, ``host H``: what the source says about its rank.

    >>> rank_labels(Trace(Metadata(rank=1, world_size=4)))
    ['rank 1', 'world size 4']
    """
    meta = trace.metadata
    host = meta.attributes.get("hostname") or meta.attributes.get("host")
    known = (("rank", meta.rank), ("world size", meta.world_size), ("host", host))
    return [f"{what} {value}" for what, value in known if value is not None]


def carries_label(text: object, label: str, separator: str = ": ") -> bool:
    """Whether ``text`` (a process or device name, a graph node) is marked as coming from the
    input labelled ``label``: how :func:`merge` marks them (``rank 1: python``,
    ``rank 1/conv1``). The marks, not row numbers, tell the inputs apart: they stay true
    when a merged trace is written out and read back, which numbers its processes anew.

    >>> carries_label("rank 1: python", "rank 1"), carries_label("rank 10: python", "rank 1")
    (True, False)
    """
    return isinstance(text, str) and (text == label or text.startswith(label + separator))


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
    labels = unique_labels(list(labels) if labels else [_label(t, i)
                                                        for i, t in enumerate(traces)])
    alignment = align_ranks(traces, align, labels)
    shifts = _breakdowns_beside_timelines(traces, alignment.offsets)
    formats = dict.fromkeys(t.metadata.source_format for t in traces)
    clocks = {t.metadata.clock for t in traces}
    out = Trace(Metadata(source_format="+".join(f for f in formats if f), clock=" / ".join(clocks),
                         framework=", ".join(dict.fromkeys(
                             t.metadata.framework for t in traces if t.metadata.framework))))
    out.metadata.attributes["inputs"] = [
        {"label": label, "file": t.metadata.source_file, "format": t.metadata.source_format,
         "rank": t.metadata.rank, "devices": [d.name for d in t.metadata.devices if d.name]}
        for t, label in zip(traces, labels, strict=True)]
    if alignment.applied:
        out.metadata.clock = f"{out.metadata.clock}, shifted to rank 0 on collectives"
    out.metadata.attributes["alignment"] = alignment.as_dict()
    _report(out, alignment)
    if not alignment.applied and (len(clocks) > 1 or "unix epoch" not in clocks):
        out.diagnostics.add("merge.clocks")
    for index, (trace, label, shift) in enumerate(zip(traces, labels, shifts, strict=True)):
        group = rank_labels(trace)
        order = {p.id: n for n, p in enumerate(sorted(trace.processes, key=_process_order))}

        def labelled(p: Process, label: str = label, index: int = index, group: list[str] = group,
                     order: dict[int, int] = order, first: int = len(out.processes)) -> Process:
            return replace(p, name=f"{label}: {p.name}",
                           sort_index=index * len(order) + order[p.id - first],
                           labels=[*group, *(x for x in p.labels if x not in group)])

        def on_device(device: str, label: str = label) -> str:
            return f"{label}: {device}" if device else label

        def from_input(s: OpStat, label: str = label) -> OpStat:
            part = s.extra.get("input")   # (a report of an output holding several)
            return replace(s, extra={**s.extra,
                                     "input": label if part is None else f"{label}: {part}"})

        copy_into(out, trace, shift_ns=shift, node_prefix=f"{label}/", process=labelled,
                  device=on_device, stat=from_input)
    return out.freeze()


def _breakdowns_beside_timelines(traces: Sequence[Trace], offsets: Sequence[int]) -> list[int]:
    """Each input's shift: its alignment offset; for a statistics table drawn as an
    aggregate breakdown (from time 0) beside inputs with a timeline, the timelines' start,
    so that the merged trace spans the run, not the time since 0 (an HSA or Unix clock).

    >>> from traceconv.model import OpStat
    >>> from traceconv.model.breakdown import add_aggregate_breakdown
    >>> run = Trace(); _ = run.add_slice(run.add_track("t", process=run.add_process("p")), 700, 5, "k")
    >>> stats = Trace(); _ = add_aggregate_breakdown(stats, [stats.add_stat(OpStat("k", total_ns=5))], "s")
    >>> _breakdowns_beside_timelines([run, stats], [0, 0])
    [0, 700]
    """
    drawn = [only_breakdown(t) for t in traces]
    starts = [t.time_range[0] + offset for t, offset, breakdown
              in zip(traces, offsets, drawn, strict=True)
              if not breakdown and t.time_range is not None]
    if not starts:
        return list(offsets)
    return [offset + (min(starts) if breakdown else 0)
            for offset, breakdown in zip(offsets, drawn, strict=True)]


def _report(out: Trace, alignment: Alignment) -> None:
    """Diagnostics: the decision, then one line per input with its shift and residual skew."""
    shifted = [r for r in alignment.ranks if alignment.applied and r.offset_ns]
    if shifted:
        out.diagnostics.add("align.shifted", count=len(shifted), example=f"{alignment.reason}: "
                            + ", ".join(f"{r.label} {format_duration(r.offset_ns, signed=True)}"
                                       for r in shifted))
    else:
        out.diagnostics.add("align.kept", example=alignment.reason)
    if not alignment.collectives:
        return
    for index, r in enumerate(alignment.ranks):
        if index and not r.matched:
            out.diagnostics.add(f"align.unmatched.{index}", example=r.label)
            continue
        out.diagnostics.add(
            f"align.residual.{index}",
            example=f"{r.label}: {format_duration(r.residual_median_ns)} median, "
                    f"{format_duration(r.residual_max_ns)} max over {r.matched} collectives "
                    f"(shift {format_duration(r.offset_ns if alignment.applied else 0, signed=True)})")
