"""Reads MegEngine's static-graph profile JSON (``{"graph_exec": ..., "profiler": ...}``).

What lands in the model:

* a **device** process with one track per comp node and a **host** process with one track
  per dispatch thread. Their clocks have different origins (device: first execution after
  compile, per comp node; host: construction of the profiler), so they stay separate
  processes; each comp node is shifted onto the host clock by the smallest offset that
  keeps launches causal (:mod:`.clock`), and the metadata says so;
* one slice per executed opr per place; on the device, when the opr waited for inputs of
  another comp node (``kern > start``), children ``wait`` (start→kern) and ``kernel``
  (kern→end); a ``launch`` flow from the host slice to each device slice of the opr;
* the op graph (:mod:`.graph`) and the memory blocks of the static plan (:mod:`.memory`).

``graph.json`` (written beside ``StaticMemoryInfo.json``) is the ``graph_exec`` object
alone: it gives the op graph and, on a synthetic program-order clock (opr *i* at *i* µs),
one slice per executed opr and the memory blocks.
"""

from __future__ import annotations

import math
from typing import Any, cast

from ...io import Source
from ...model import Metadata, ProcessKind, Trace, TrackKind
from ...model.activity import fill_activity
from ...model.builder import TraceBuilder
from ...model.memory import add_live_bytes_counters
from ...units import format_duration
from ...vocabularies.megengine import MEGENGINE_VOCABULARY
from .clock import PROGRAM_STEP_NS, device_offsets, seconds_to_ns
from .document import decode_records, validate
from .graph import add_graph, shapes_text
from .memory import add_memory_blocks
from .schema import (
    FootprintRecord,
    GraphExec,
    GraphExecRecords,
    Profiler,
    ProfilerRecords,
    StaticProfile,
    StaticProfileRecords,
    TimingRecord,
)

CLOCK_NOTE = ("device times: per comp node, from the first execution after compile; host "
              "times: from the profiler's construction; device tracks are shifted by "
              "megengine.device_offset_ns so that no opr starts on the device before the host "
              "dispatched it (op nodes' device_spans are shifted the same way)")


def op_args(opr_type: str, opr_id: str, footprint: FootprintRecord | None,
            seconds: float) -> dict[str, Any]:
    """Slice arguments of one opr: type, id, shapes, FLOPs, bytes, FLOPS, bandwidth, params."""
    args: dict[str, Any] = {"type": opr_type, "id": opr_id}
    if footprint is None:
        return args
    args["in_shapes"] = shapes_text(footprint.in_shapes)
    args["out_shapes"] = shapes_text(footprint.out_shapes)
    if footprint.computation:
        args["computation"] = footprint.computation
        if 0 < seconds < math.inf:
            args["flops"] = footprint.computation / seconds
    if footprint.memory is not None:
        args["memory"] = footprint.memory
        if 0 < seconds < math.inf:
            args["bandwidth"] = footprint.memory / seconds
    if footprint.param:
        args["param"] = footprint.param
    return args


def read_profile(source: Source) -> Trace:
    """Read a static profile (or a bare ``graph_exec``) into a :class:`Trace`."""
    doc, graph_only = load_profile(source)
    repeats = run_once(doc.graph_exec)
    trace = _read_graph_only(doc) if graph_only else _read_timed(doc)
    trace.diagnostics.add("megengine.repeated_opr", count=len(repeats),
                          example="; ".join(repeats[:3]) or None)
    return trace


def run_once(graph_exec: GraphExecRecords) -> list[str]:
    """Keep each opr once in ``graph_exec.comp_seq``, where it is first listed, and say
    where the repeats were (counted as ``megengine.repeated_opr``). A compiled sequence
    runs each opr once (``ComputingSequence``), and the profiler keys one timing by opr id
    per place: a repeat (a file edited or put together by hand) has no run of its own,
    only the first one's times again, which a second slice would count twice.

    >>> exe = GraphExecRecords(comp_seq=["1", "2", "1", "3", "2"], operator={})
    >>> run_once(exe), exe.comp_seq
    (['opr 1 at comp_seq[2]', 'opr 2 at comp_seq[4]'], ['1', '2', '3'])
    """
    seen: dict[str, None] = {}
    repeats = []
    for at, opr_id in enumerate(graph_exec.comp_seq):
        if opr_id in seen:
            repeats.append(f"opr {opr_id} at comp_seq[{at}]")
        seen[opr_id] = None
    if repeats:
        graph_exec.comp_seq = list(seen)
    return repeats


def _read_timed(doc: StaticProfileRecords) -> TraceBuilder:
    trace = TraceBuilder(Metadata(framework="MegEngine", clock="process-relative",
                           attributes={"megengine.clocks": CLOCK_NOTE}))
    offsets = device_offsets(doc)
    trace.metadata.attributes["megengine.device_offset_ns"] = offsets
    trace.diagnostics.add("megengine.device_clock_shifted", count=len(offsets),
                          example="; ".join(f"{cn} {format_duration(ns, signed=True)}"
                                            for cn, ns in offsets.items()) or None)
    rows = add_timeline(trace, doc, offsets)
    add_graph(trace, doc, rows, offsets)
    add_memory_blocks(trace, doc, offsets)
    add_live_bytes_counters(trace)
    fill_activity(trace, MEGENGINE_VOCABULARY)
    return trace


def load_profile(source: Source) -> tuple[StaticProfileRecords, bool]:
    """The document's records (a bare ``graph_exec`` with an empty profiler) and whether it
    was a bare ``graph_exec``: decoded as records, else read through the schema, whose
    error names the place (:mod:`.document`)."""
    data = source.read_bytes()
    profile = decode_records(data, StaticProfileRecords, StaticProfile)
    if profile is not None:
        return profile, False
    graph = decode_records(data, GraphExecRecords, GraphExec)
    if graph is not None:
        return StaticProfileRecords(graph_exec=graph, profiler=ProfilerRecords()), True
    del data
    value = source.read_json()
    # the schema's objects have the records' fields (tests/test_megengine_records.py)
    if isinstance(value, dict) and "comp_seq" in value and "graph_exec" not in value:
        doc = StaticProfile(graph_exec=validate(GraphExec, value, source), profiler=Profiler())
        return cast(StaticProfileRecords, doc), True
    return cast(StaticProfileRecords, validate(StaticProfile, value, source)), False


def _read_graph_only(doc: StaticProfileRecords) -> TraceBuilder:
    trace = TraceBuilder(Metadata(framework="MegEngine", source_version="graph_exec only",
                           clock="synthetic (program order)",
                           attributes={"megengine.time_unit": "1 µs = one opr step"}))
    process = trace.add_process("MegEngine graph", kind=ProcessKind.SYNTHETIC)
    track = trace.add_track("comp_seq", process=process, kind=TrackKind.SYNTHETIC)
    ops = doc.graph_exec.operator
    rows = {opr_id: [trace.add_slice(track, step * PROGRAM_STEP_NS, PROGRAM_STEP_NS,
                                     ops[opr_id].name, "opr",
                                     {"type": ops[opr_id].type, "id": opr_id})]
            for step, opr_id in enumerate(doc.graph_exec.comp_seq) if opr_id in ops}
    add_graph(trace, doc, rows)
    add_memory_blocks(trace, doc, {}, program_order=True)
    add_live_bytes_counters(trace)
    fill_activity(trace, MEGENGINE_VOCABULARY)
    return trace


def add_timeline(trace: Trace, doc: StaticProfileRecords,
                 offsets: dict[str, int]) -> dict[str, list[int]]:
    """Add host and device slices in execution order; returns opr id → its slice rows.

    Device times are shifted by ``offsets[comp node]`` (see :mod:`.clock`).
    """
    prof, ops = doc.profiler, doc.graph_exec.operator
    device = trace.add_process("MegEngine device", kind=ProcessKind.DEVICE, sort_index=1,
                               labels=["device clock"])
    host = trace.add_process("MegEngine host", kind=ProcessKind.HOST, sort_index=0,
                             labels=["host clock"])
    tracks: dict[tuple[int, str], int] = {}

    def track(process: int, place: str) -> int:
        key = (process, place)
        if key not in tracks:
            kind = TrackKind.STREAM if process == device else TrackKind.THREAD
            tracks[key] = trace.add_track(place, process=process, kind=kind,
                                          sort_index=len(tracks))
        return tracks[key]

    rows: dict[str, list[int]] = {}
    missing = 0
    for opr_id in doc.graph_exec.comp_seq:
        opr = ops.get(opr_id)
        dev_times = prof.device.get(opr_id, {})
        host_times = prof.host.get(opr_id, {})
        if opr is None or not (dev_times or host_times):
            missing += 1
            continue
        seconds = max((t.end - t.start for t in dev_times.values()), default=0.0)
        args = op_args(opr.type, opr_id, prof.opr_footprint.get(opr_id), seconds)
        host_rows = [row for place, t in host_times.items()
                     if (row := add_host_slice(trace, track(host, place), opr.name, t,
                                               args)) is not None]
        dev_rows = [row for place, t in dev_times.items()
                    if (row := add_device_slice(trace, track(device, place), opr.name, t,
                                                args, offsets.get(place, 0))) is not None]
        if host_rows:
            for row in dev_rows:
                trace.add_flow(host_rows[0], row, "launch", "launch")
        rows[opr_id] = host_rows + dev_rows
    trace.diagnostics.add("megengine.unprofiled_opr", count=missing)
    return rows


def span_ns(trace: Trace, t: TimingRecord, offset: int = 0) -> tuple[int, int | None, int] | None:
    """(start, kern or None, end) in ns; None (counted) when start/end are not finite.

    ``kern`` is None when no kernel ran (-1) or it is not finite; an end before the start
    stays so (the builder's rule makes it zero-length). ``offset`` (ns) is added to all three.
    """
    if not (math.isfinite(t.start) and math.isfinite(t.end)):
        trace.diagnostics.add("megengine.nonfinite_time", example=f"start={t.start} end={t.end}")
        return None
    start, end = seconds_to_ns(t.start) + offset, seconds_to_ns(t.end) + offset
    kern = seconds_to_ns(t.kern) + offset if math.isfinite(t.kern) and t.kern >= 0 else None
    return start, kern, end


def add_device_slice(trace: Trace, track: int, name: str, t: TimingRecord,
                     args: dict[str, Any], offset: int) -> int | None:
    """The opr's device slice, with ``wait``/``kernel`` children when it waited."""
    times = span_ns(trace, t, offset)
    if times is None:
        return None
    start, kern, end = times
    row = trace.add_slice(track, start, end - start, name, "opr", args)
    if kern is not None and start < kern <= end:
        trace.add_slice(track, start, kern - start, "wait", "wait")
        trace.add_slice(track, kern, end - kern, "kernel", "kernel")
    return row


def add_host_slice(trace: Trace, track: int, name: str, t: TimingRecord,
                   args: dict[str, Any]) -> int | None:
    """The opr's host slice; ``kern`` (first kernel launch, -1 = none) goes in the args."""
    times = span_ns(trace, t)
    if times is None:
        return None
    start, kern, end = times
    host_args = args if kern is None else dict(args, kernel_launch_ns=kern)
    return trace.add_slice(track, start, end - start, name, "opr", host_args)
