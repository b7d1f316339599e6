"""An ``XSpace`` message → a :class:`~traceconv.model.Trace`.

Each plane with events is a process (host, device, or synthetic for custom planes), each
line with events a track (a host thread, a device stream, or a row xprof derived from the
streams). An event's slice is named by its metadata (``display_name``, else ``name``; a
different full name is kept as ``long_name``) and its args are the metadata's stats then
the event's own. Times: ``line.timestamp_ns`` plus the event's ``offset_ps``, floored to ns.

Links: a host event and the device events with its ``correlation_id`` (CUDA / HIP launch →
kernel or copy), the producer → consumer context stats (``_pt``/``_p`` → ``_ct``/``_c``) and
``flow`` stats (out → in). XLA ops (TPU ``XLA Ops`` rows, GPU kernels and XLA:CPU thunks
with ``hlo_op``) and TensorFlow ops become op nodes identified by HLO module and op name,
each listing the slices of its executions.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from ...model import ProcessKind, Trace, TrackKind
from ...model.graph import add_op
from ...numbers import INT64_MAX, INT64_MIN, clamp_int64
from .._proto import Utf8Repair
from . import planes as P
from .memory import MEMORY_EVENTS, MemoryLog
from .stats import StatReader, XFlow

_MODULE_WITH_ID = re.compile(r"^(?P<name>.*)\((?P<id>\d+)\)$")
_HOST_RUNTIME_STAT = "correlation_id"
_RANGES = frozenset({P.DEVICE_ANNOTATION, P.STEP})   # rows that span work, not work
_LINK_STATS = frozenset({_HOST_RUNTIME_STAT, "_p", "_c", "flow"})   # what _Links.note reads


class _Links:
    """Flow ends collected while reading, joined once every plane is read."""

    def __init__(self) -> None:
        self.launches: dict[Any, list[int]] = defaultdict(list)   # correlation id → host rows
        self.device: dict[Any, list[int]] = defaultdict(list)     # correlation id → device rows
        self.producers: dict[tuple[Any, Any], list[int]] = defaultdict(list)
        self.consumers: dict[tuple[Any, Any], list[int]] = defaultdict(list)
        self.flow_out: dict[int, list[int]] = defaultdict(list)
        self.flow_in: dict[int, list[int]] = defaultdict(list)

    def note(self, row: int, args: dict[str, Any], on_host: bool) -> None:
        if (cid := args.get(_HOST_RUNTIME_STAT)) is not None:
            (self.launches if on_host else self.device)[cid].append(row)
        if "_p" in args:
            self.producers[(args.get("_pt"), args["_p"])].append(row)
        if "_c" in args:
            self.consumers[(args.get("_ct"), args["_c"])].append(row)
        flow = args.get("flow")
        if isinstance(flow, int):
            end = XFlow.decode(flow & ((1 << 64) - 1))
            if end.leaves:
                self.flow_out[end.id].append(row)
            if end.enters:
                self.flow_in[end.id].append(row)

    def join(self, trace: Trace) -> None:
        made: set[tuple[int, int]] = set()

        def link(source: int, target: int, category: str) -> None:
            if source != target and (source, target) not in made:
                made.add((source, target))
                trace.add_flow(source, target, category, category)

        diag = trace.diagnostics
        for cid, hosts in self.launches.items():
            targets = self.device.get(cid, [])
            if len(hosts) > 1:
                diag.add("xplane.ambiguous_correlation", "correlation ids on several host "
                         "events: no launch flow drawn", kind="dropped", example=str(cid))
                continue
            for target in targets:
                link(hosts[0], target, "launch")
        diag.add("xplane.launch_without_device_event", "host events with a correlation_id "
                 "that no device event shares (the device side was not captured)",
                 kind="note", count=sum(1 for c in self.launches if c not in self.device))
        diag.add("xplane.device_event_without_launch", "device events whose correlation_id "
                 "no host event shares (launched before the capture, or by another process)",
                 kind="note", count=sum(len(r) for c, r in self.device.items()
                                         if c not in self.launches))
        for key, targets in self.consumers.items():
            sources = self.producers.get(key)
            if not sources:
                diag.add("xplane.consumer_without_producer", "events consuming a context "
                         "(_ct/_c) that no event produced", kind="note", count=len(targets))
                continue
            for target in targets:
                link(sources[0], target, "context")
            diag.add("xplane.ambiguous_producer", "contexts produced by several events: "
                     "linked from the first", kind="guessed", count=int(len(sources) > 1))
        for flow_id, sources in self.flow_out.items():
            for source in sources:
                for target in self.flow_in.get(flow_id, []):
                    link(source, target, "flow")
        diag.add("xplane.flow_single_end", "flow stats whose id no other event shares "
                 "(no arrow to draw)", kind="note",
                 count=sum(1 for i in set(self.flow_out) | set(self.flow_in)
                           if not any(s != t for s in self.flow_out.get(i, [])
                                      for t in self.flow_in.get(i, []))))


class _EventNames:
    """Per plane: event metadata id → (slice name, args from the metadata's stats)."""

    def __init__(self, plane, stat_names: dict[int, str], builder: SpaceBuilder) -> None:
        self.metadata = {entry.key: entry.value for entry in plane.event_metadata}
        self.stat_names, self.builder = stat_names, builder
        self.cache: dict[int, tuple[str, tuple[tuple[str, Any], ...]]] = {}

    def __call__(self, metadata_id: int) -> tuple[str, tuple[tuple[str, Any], ...]]:
        found = self.cache.get(metadata_id)
        if found is None:
            found = self.cache[metadata_id] = self._describe(metadata_id)
        return found

    def _describe(self, metadata_id: int) -> tuple[str, tuple[tuple[str, Any], ...]]:
        text = self.builder.text
        meta = self.metadata.get(metadata_id)
        if meta is None:
            self.builder.trace.diagnostics.add(
                "xplane.unknown_event_metadata", "events whose metadata id the plane does not "
                "define: named by the id", kind="repaired", example=str(metadata_id))
            return f"<event metadata {metadata_id}>", ()
        name, display = text(meta.name), text(meta.display_name)
        items: dict[str, Any] = {"long_name": name} if display and display != name else {}
        self.builder.stats.into(items, meta.stats, self.stat_names)
        return display or name or f"<event metadata {metadata_id}>", tuple(items.items())


class SpaceBuilder:
    """Reads the planes of one ``XSpace`` into ``trace``."""

    def __init__(self, space, trace: Trace) -> None:
        self.space, self.trace = space, trace
        self.text = Utf8Repair(trace.diagnostics, "xplane")
        self.links = _Links()
        self.memory = MemoryLog(trace)
        self.modules: dict[int, str] = {}       # program id → HLO module name
        self.ops: dict[tuple[Any, Any, str], XlaOp] = {}   # (module, program, op) → runs
        self.stats = StatReader()
        self.binary_stats = 0   # HLO protos of /host:metadata
        self.sub_ns = 0
        self.hostname = self.text(space.hostnames[0]) if space.hostnames else None

    # -- the whole space ------------------------------------------------------------------

    def build(self) -> Trace:
        trace, space = self.trace, self.space
        meta = trace.metadata
        if self.hostname:
            meta.attributes["xplane.hostnames"] = [self.text(h) for h in space.hostnames]
        for what in ("errors", "warnings"):
            found = [self.text(item) for item in getattr(space, what)]
            if found:
                meta.attributes[f"xplane.{what}"] = found
                trace.diagnostics.add(f"xplane.profiler_{what}", f"{what} the profiler "
                                      "recorded in the XSpace (see the attributes)",
                                      kind="note", count=len(found), example=found[0])
        planes = list(space.planes)
        for plane in planes:   # module names first: device ops name their module by id
            if plane.name == P.METADATA_PLANE:
                self.metadata_plane(plane)
        order = sorted(range(len(planes)), key=lambda i: _plane_order(planes[i].name, i))
        for index in order:
            plane = planes[index]
            if plane.name != P.METADATA_PLANE:
                self.plane(plane)
        self.clock()
        self.links.join(trace)
        self.add_ops()
        self.memory.finish()
        self.report()
        return trace

    def clock(self) -> None:
        """Line timestamps count from the profile's start; ``Task Environment`` says when
        that was (epoch ns), which becomes the trace's clock base."""
        meta = self.trace.metadata
        start = meta.attributes.get("xplane.planes_without_events", {}).get(
            P.TASK_ENVIRONMENT, {}).get("profile_start_time")
        if isinstance(start, int) and start > 0:
            meta.clock_base_ns = start
            meta.clock = "ns since the profile start (Task Environment profile_start_time)"
        else:
            meta.clock = "profiler clock (line timestamps)"

    def report(self) -> None:
        diag, stats = self.trace.diagnostics, self.stats
        for value in stats.repaired:
            self.text(value)
        diag.add("xplane.binary_stats", "stat values holding serialized protos (core details, "
                 "memory access breakdowns, HLO protos) left out of the args", kind="dropped",
                 count=self.binary_stats + stats.binary)
        diag.add("xplane.unknown_stat_metadata", "stats whose metadata id the plane does not "
                 "define: named stat#<id>", kind="repaired", count=len(stats.missing),
                 example=str(stats.missing[0]) if stats.missing else None)
        diag.add("xplane.sub_ns_times", "events whose picosecond start or duration is not a "
                 "whole nanosecond: floored to ns", kind="repaired", count=self.sub_ns)

    def metadata_plane(self, plane) -> None:
        """``/host:metadata``: one event metadata per compiled HLO module, named
        ``module(program id)``; the serialized ``HloProto`` bytes are not decoded."""
        names = []
        for entry in plane.event_metadata:
            name = self.text(entry.value.name)
            names.append(name)
            match = _MODULE_WITH_ID.match(name)
            if match:
                self.modules[int(match["id"])] = match["name"]
            if entry.value.metadata:
                self.binary_stats += 1
        self.trace.metadata.attributes["xplane.hlo_modules"] = sorted(names)

    def plane(self, plane) -> None:
        trace = self.trace
        name = self.text(plane.name)
        stat_names = {entry.key: self.text(entry.value.name) for entry in plane.stat_metadata}
        plane_stats: dict[str, Any] = {}
        self.stats.into(plane_stats, plane.stats, stat_names)
        lines = [line for line in plane.lines if line.events]
        if not lines:
            trace.metadata.attributes.setdefault("xplane.planes_without_events", {})[name] = \
                plane_stats
            trace.diagnostics.add("xplane.plane_without_events", "planes with no events "
                                  "(device properties or profile times only): their stats "
                                  "are in the attributes", kind="note", example=name)
            return
        trace.diagnostics.add("xplane.empty_lines", "lines with no events (no track made)",
                              kind="note", count=len(plane.lines) - len(lines))
        kind = P.plane_kind(name)
        ordinal = P.device_ordinal(name)
        process = trace.add_process(
            P.process_name(name, self.hostname), kind=kind,
            sort_index=None if ordinal is None else 0x10000000 + ordinal,
            labels=[f"{k}={v}" for k, v in plane_stats.items()])
        names = _EventNames(plane, stat_names, self)
        for position, line in enumerate(lines):
            self.line(line, process, kind, position, names, stat_names)

    def line(self, line, process: int, kind: ProcessKind, position: int,
             names: _EventNames, stat_names: dict[int, str]) -> None:
        trace, text = self.trace, self.text
        line_name = text(line.display_name or line.name) or f"line {line.id}"
        on_host = kind == ProcessKind.HOST
        if on_host:
            category = P.HOST
            track = trace.add_track(line_name, process=process, kind=TrackKind.THREAD,
                                    tid=line.id, sort_index=position)
        else:
            found = P.device_line_category(line_name)
            if found is None:
                trace.diagnostics.add("xplane.unknown_device_line", "device lines traceconv "
                                      "does not know: read as annotations", kind="guessed",
                                      example=line_name)
            category = found or P.DEVICE_ANNOTATION
            track = trace.add_track(line_name, process=process, kind=TrackKind.STREAM,
                                    tid=line.id, sort_index=position)
        ops_line = category == P.XLA_OP or line_name in P.TF_OPS_LINES
        base_ps = line.timestamp_ns * 1000
        add_slice, note = trace.add_slice, self.links.note
        into = self.stats.into
        aggregated = sub_ns = beyond = 0
        for event in line.events:
            if event.num_occurrences:
                aggregated += 1
                continue
            name, meta_items = names(event.metadata_id)
            start_ps = base_ps + event.offset_ps
            end_ps = start_ps + event.duration_ps
            start, end = start_ps // 1000, end_ps // 1000
            if start_ps % 1000 or end_ps % 1000:
                sub_ns += 1
            if not (INT64_MIN <= start <= INT64_MAX and INT64_MIN <= end - start <= INT64_MAX):
                # (int64 picoseconds plus a base: wider than the model's int64 ns)
                start = clamp_int64(start)
                end = start + clamp_int64(end - start)
                beyond += 1
            args = dict(meta_items)
            stats = event.stats
            if stats:
                into(args, stats, stat_names)
            if on_host:
                if name in MEMORY_EVENTS:
                    self.memory.record(track, start, name, args)
                    continue
                cat = category
                if _HOST_RUNTIME_STAT in args:
                    cat = P.runtime_category(name)
                elif "step_num" in args:
                    cat = P.STEP   # jax.profiler.StepTraceAnnotation, TF's step markers
                elif name.startswith("$"):
                    cat = "python_function"   # the Python tracer's frames
            else:
                cat = category
                if cat == P.KERNEL and ("memcpy_details" in args or "memset_details" in args):
                    cat = P.MEMCPY if "memcpy_details" in args else P.MEMSET
            row = add_slice(track, start, end - start, name, cat, args or None)
            if not _LINK_STATS.isdisjoint(args):
                note(row, args, on_host)
            if ops_line or ("hlo_op" in args and cat not in _RANGES
                            and (not on_host or _HOST_RUNTIME_STAT not in args)):
                # (XLA's CPU backend runs ops on host threads; a GPU launch names its op too;
                # an async op's start..done range is not the op's time)
                self.xla_op(row, name, cat, line_name, start, end, args, on_host)
        self.sub_ns += sub_ns
        trace.diagnostics.add("xplane.time_beyond_int64", count=beyond)
        trace.diagnostics.add("xplane.aggregated_events", "events that only count occurrences "
                              "(no time of their own): left out of the timeline",
                              kind="dropped", count=aggregated)

    # -- ops ------------------------------------------------------------------------------

    def xla_op(self, row: int, name: str, category: str, line_name: str, start: int,
               end: int, args: dict[str, Any], on_host: bool) -> None:
        """Note an execution of an XLA op (TPU ``XLA Ops`` row, GPU kernel or CPU thunk
        naming its ``hlo_op``) or a TensorFlow op (``TensorFlow Ops`` row)."""
        if category == P.XLA_OP or "hlo_op" in args:
            program = args.get("program_id")
            module = args.get("hlo_module") or (self.modules.get(program)
                                                if isinstance(program, int) else None)
            op_name = str(args.get("hlo_op") or name)
            op = self.ops.get((module, program, op_name))
            if op is None:
                op = self.ops[(module, program, op_name)] = XlaOp(
                    op_name, str(args.get("hlo_category") or name), module, program,
                    _int(args.get("flops")), _int(args.get("bytes_accessed")))
        elif line_name in P.TF_OPS_LINES:
            full = str(args.get("long_name") or name)
            op = self.ops.get((None, None, full))
            if op is None:
                op = self.ops[(None, None, full)] = XlaOp(full, name, None, None, None, None)
        else:
            return
        op.slices.append(row)
        op.busy_ns += end - start
        op.host |= on_host

    def add_ops(self) -> None:
        """One op node per op (HLO module + op name, or TensorFlow op name), listing the
        slices of all its executions. No per-place spans: an op runs many times, and the
        timeline keeps each run; ``computation`` and ``memory`` are per execution."""
        if not self.ops:
            return
        graph = self.trace.graph
        for index, op in enumerate(self.ops.values()):
            attrs: dict[str, Any] = {"slices": op.slices, "executions": len(op.slices),
                                     "xla_busy_ns": op.busy_ns, "computation": op.flops,
                                     "memory": op.bytes_accessed}
            if op.module is not None or op.program is not None:
                attrs.update(hlo_module=op.module, program_id=op.program)
            else:
                attrs["tf_op"] = op.name
            add_op(graph, index, op.name, op.type, **attrs)


class XlaOp:
    """The executions of one op seen so far."""

    __slots__ = ("name", "type", "module", "program", "flops", "bytes_accessed", "slices",
                 "busy_ns", "host")

    def __init__(self, name: str, op_type: str, module: str | None, program: Any,
                 flops: int | None, bytes_accessed: int | None) -> None:
        self.name, self.type, self.module, self.program = name, op_type, module, program
        self.flops, self.bytes_accessed = flops, bytes_accessed
        self.slices: list[int] = []
        self.busy_ns = 0
        self.host = False


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _plane_order(name: str | bytes, index: int) -> tuple[int, int, int]:
    """Host planes first, then devices by ordinal, then the rest, each in file order (a
    name that is not UTF-8 comes as bytes; it is counted where the plane is read)."""
    name = P.as_text(name)
    if name.startswith(P.HOST_PREFIX):
        return (0, 0, index)
    ordinal = P.device_ordinal(name)
    return (1, ordinal, index) if ordinal is not None else (2, 0, index)
