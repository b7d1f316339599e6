"""Lay a unit's instructions out on tracks: the report has no timestamps, only mean times.

Perf lines are placed back to back in program order with their ``common_average`` times
(one track per stream; ``gpu::set_stream`` switches streams); trace-eval records are laid
out pass after pass with ``t2`` (until ``ctx.finish()``). A program with no timing gets one
microsecond per instruction so its order, graph and memory are still visible.

Times are handed to the builder as the report states them: a time no trace holds (a mean of
``1e308ms``, or the instructions after it) is the builder's to move into range and count
(``model.time_beyond_range``; a statistic ``model.statistic_beyond_range``), as for every
reader.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...model import Diagnostics, ProcessKind, TrackKind
from ...model.activity import Activity
from ...model.breakdown import BREAKDOWN_CATEGORY
from ...model.builder import TraceBuilder
from ...model.columns import Args
from ...numbers import printed_ns
from ..never_timed import count_never_timed
from .document import EvalRecord
from .instruction import Instruction
from .program import VIEW_OPS
from .units import Unit

UNTIMED_NS = 1_000
PERF_TRACK = "instructions (program order, mean times; no timestamps in the report)"
UNTIMED_TRACK = "instructions (program order; no timing in the listing, 1 µs each)"
EVAL_TRACK = "trace eval (t2 until ctx.finish; passes back to back, no timestamps)"


@dataclass
class Layout:
    """Where each node of the unit was placed on the primary timeline."""

    start: list[int]
    end: list[int]
    rows: list[list[int]]   # slice rows per node (primary and eval)
    process: int
    device: str
    timed: bool = False     # False: 1 µs per instruction stands in for missing times


def ms_to_ns(ms: float | None) -> int | None:
    """Milliseconds as printed → integer nanoseconds by the text readers' one rule (None
    for nan or absent; past int64, infinity included, past every range): range is the
    builder's (module docstring).

    >>> ms_to_ns(0.00057782), ms_to_ns(float("nan")), ms_to_ns(float("inf")) > 2**63
    (578, None, True)
    """
    return printed_ns(ms, 1e6)


def _add_timed(trace: TraceBuilder, track: int, start: int, dur: int, name: str,
                category: str, args: Args, activity: int = 0) -> tuple[int, int, int]:
    """Add a slice of ``dur`` ns at ``start`` (ints of any size, as the report gives them;
    the builder brings them into range) and return its row, and its start and end as
    placed (what the memory blocks and the graph of the instruction use).

    >>> b = TraceBuilder(); t = b.add_track("t", process=b.add_process("p"))
    >>> _add_timed(b, t, 5, 10, "a", "", None), _add_timed(b, t, 15, 10**30, "b", "", None)[2]
    ((0, 5, 15), 3500000000000000000)
    """
    begin, end = trace.time(start), trace.time(start + dur)
    return trace.add_interval(track, begin, end, name, category, args, activity), begin, end


def slice_name(ins: Instruction) -> str:
    """The kernel symbol for code objects, the op name otherwise."""
    return ins.attributes.get("symbol_name") or ins.op


def category(ins: Instruction) -> str:
    if ins.op.startswith("@") or ins.op in ("load", "hip::hip_allocate_memory",
                                             "hip::hip_copy_literal") \
            or ins.op.startswith("check_context"):
        return "migraphx.builtin"
    return "migraphx.view" if ins.op in VIEW_OPS else "migraphx.kernel"


def slice_args(ins: Instruction, module: str) -> dict:
    args: dict = {"instruction": ins.name, "module": module, "line": ins.line}
    if ins.inputs:
        args["inputs"] = ", ".join(ins.inputs)
    if ins.shape is not None:
        args["shape"] = ins.shape.text
    args.update({f"attr.{k}": v for k, v in ins.attributes.items()})
    return args


def lay_out(trace: TraceBuilder, unit: Unit, diagnostics: Diagnostics) -> Layout:
    """Add the unit's process, tracks and slices; return the primary placement."""
    name = "MIGraphX" + (f" {unit.label}" if unit.label else "")
    timed = unit.report is not None or any(r.device_ms is not None or r.host_ms is not None
                                           for records in unit.eval_passes for r in records)
    # 1 µs per instruction stands in for missing times: never device time
    process = trace.add_process(name, kind=ProcessKind.DEVICE if timed
                                else ProcessKind.SYNTHETIC)
    nodes = unit.program.nodes
    layout = Layout([0] * len(nodes), [0] * len(nodes), [[] for _ in nodes], process, name,
                    timed=timed)
    if unit.report is not None:
        _perf(trace, unit, layout, diagnostics)
    elif unit.eval_passes:
        pass  # the eval passes below are the primary timing
    else:
        # (drawn, not timed: the aggregate category keeps them out of every time count)
        track = trace.add_track(UNTIMED_TRACK, process=process, kind=TrackKind.SYNTHETIC)
        for node in nodes:
            start = node.index * UNTIMED_NS
            layout.start[node.index], layout.end[node.index] = start, start + UNTIMED_NS
            layout.rows[node.index].append(trace.add_slice(
                track, start, UNTIMED_NS, slice_name(node.instruction), BREAKDOWN_CATEGORY,
                slice_args(node.instruction, node.module)
                | {"kind": category(node.instruction), "timed": False}, Activity.AGGREGATE))
    if unit.eval_passes:
        _eval(trace, unit, layout, primary=unit.report is None, diagnostics=diagnostics)
    return layout


def _perf(trace: TraceBuilder, unit: Unit, layout: Layout, diagnostics: Diagnostics) -> None:
    assert unit.report is not None
    tracks: dict[str, int] = {}
    stream, cursor, placed = "0", 0, 0   # (placed: the cursor where the builder put it)
    for node, line in zip(unit.program.nodes, unit.report.lines, strict=True):
        ins = node.instruction
        if ins.op == "gpu::set_stream":
            stream = ins.attributes.get("stream", stream)
        dur = ms_to_ns(line.ms)
        if line.ms is None:  # @return: printed without a time
            layout.start[node.index] = layout.end[node.index] = placed
            continue
        if dur is None:
            count_never_timed(diagnostics, "migraphx", f"line {ins.line}: {ins.name}")
            dur = 0
        if stream not in tracks:
            label = PERF_TRACK if stream == "0" else f"stream {stream}: {PERF_TRACK}"
            tracks[stream] = trace.add_track(label, process=layout.process,
                                             kind=TrackKind.STREAM, tid=int(stream)
                                             if stream.isdecimal() else None)
        args = slice_args(ins, node.module) | {"ms": line.ms, "percent": line.percent}
        row, layout.start[node.index], placed = _add_timed(
            trace, tracks[stream], cursor, dur, slice_name(ins), category(ins), args)
        layout.end[node.index] = placed
        layout.rows[node.index].append(row)
        cursor += dur


def _eval(trace: TraceBuilder, unit: Unit, layout: Layout, *, primary: bool,
          diagnostics: Diagnostics) -> None:
    track = trace.add_track(EVAL_TRACK, process=layout.process, kind=TrackKind.SYNTHETIC)
    by_name = {n.instruction.name: n for n in reversed(unit.program.nodes)}
    cursor = 0
    for number, records in enumerate(unit.eval_passes, 1):
        begin = cursor
        for record in records:
            cursor = _eval_record(trace, track, record, by_name, layout, cursor,
                                  primary and number == 1, diagnostics)
        _add_timed(trace, track, begin, cursor - begin, f"eval pass {number}", "migraphx.eval",
                   {"records": len(records)})


def _eval_record(trace: TraceBuilder, track: int, record: EvalRecord, by_name: dict,
                 layout: Layout, cursor: int, primary: bool, diagnostics: Diagnostics) -> int:
    ins = record.instruction
    dur = ms_to_ns(record.device_ms if record.device_ms is not None else record.host_ms)
    if dur is None:
        diagnostics.add("migraphx.eval_without_time", example=f"line {record.line}")
        dur = UNTIMED_NS
    args: dict = {"line": record.line, "t1_ms": record.host_ms, "t2_ms": record.device_ms}
    if record.output:
        args["output"] = "\n".join(record.output)
    if ins is None:
        diagnostics.add("migraphx.eval_unknown_instruction", example=record.text)
        _add_timed(trace, track, cursor, dur, record.text or "unknown instruction",
                   "migraphx.eval", args)
        return cursor + dur
    node = by_name.get(ins.name)
    if node is not None and (node.instruction.op != ins.op
                             or slice_name(node.instruction) != slice_name(ins)):
        node = None   # the same name for another operator or kernel: not that one's run
    row, begin, end = _add_timed(trace, track, cursor, dur, slice_name(ins), category(ins),
                                 slice_args(ins, node.module if node else "") | args)
    if node is None:
        diagnostics.add("migraphx.eval_unmatched", example=ins.name)
    else:
        layout.rows[node.index].append(row)
        if primary:
            layout.start[node.index], layout.end[node.index] = begin, end
    return cursor + dur


def add_host_totals(trace: TraceBuilder, unit: Unit) -> None:
    """End-to-end time and measured host overhead of a perf report as their own slices."""
    report = unit.report or unit.untimed_report   # (a listing's trailer: its only times)
    if report is None or (report.summary and not report.lines):
        return  # a pasted Summary alone stays stats-only (what `traceconv summary` shows)
    trailer = report.trailer
    if trailer.total_ms is None and trailer.overhead_ms is None:
        return
    name = "migraphx-driver" + (f" {unit.label}" if unit.label else "")
    process = trace.add_process(name, kind=ProcessKind.HOST)
    track = trace.add_track("perf totals (means; no timestamps)", process=process)
    # Beside timed instructions the means are a summary of the same run, drawn and not
    # timed (no analysis takes the GPU eval for host work); alone they are its only times.
    activity = Activity.AGGREGATE if report.lines else Activity.UNKNOWN
    total = ms_to_ns(trailer.total_ms)
    if total is not None:
        _add_timed(trace, track, 0, total, "Total time (mean eval + finish)", "migraphx.host",
                   trailer.model_dump(exclude_none=True, exclude={"percentiles_ms"})
                   | {f"percentile {k}": v for k, v in trailer.percentiles_ms.items()},
                   activity)
    overhead = ms_to_ns(trailer.overhead_ms)
    if overhead is not None:
        _add_timed(trace, track, 0, overhead, "host overhead (dry run)", "migraphx.host",
                   {"overhead_ms": trailer.overhead_ms,
                    "calculated_overhead_ms": trailer.overhead_calculated_ms}, activity)
