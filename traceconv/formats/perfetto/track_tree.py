"""Perfetto's track tree (TrackDescriptors) as the model's processes and tracks.

* a ProcessDescriptor is a host process (its pid, its name or its command line);
* a ThreadDescriptor is a thread track in its pid's process;
* a named track belongs to the process of its nearest ancestor with a process or thread,
  as an async track (what runs on it is no thread's work: Chrome's async operations);
  one whose name (or an ancestor's) says GPU, queue, stream or copy goes to a device
  process beside that host process ("./a.out (GPU)"), as a stream track;
* a named track with no such ancestor is a group of its own, headed by its topmost
  ancestor (a device when that says GPU, else a synthetic group of async tracks), as
  traceconv's writer makes of a device;
* a CounterDescriptor makes a counter track (unit, multiplier, incremental values);
* events on a uuid no descriptor declares go to "undeclared tracks" (counted).

A file written by traceconv carries its model (:mod:`.model_attribute`): then its processes
and tracks come back as they were, and the lane tracks the writer added fold back into
their home track.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TrackDescriptor

from ...model import ProcessKind, Trace, TrackKind
from .._proto import Utf8Repair

# (a copy track is a device's copy engine: rocprofv3's "COPY to AGENT [1] THREAD [0] (CPU)"
# holds device-to-host copies, no thread's work)
DEVICE_WORDS = re.compile(r"\b(GPU|QUEUE|stream|device|CUDA|HIP|XPU|TPU|NPU|COPY)\b",
                          re.IGNORECASE)
UNITS = {1: "ns", 2: "count", 3: "bytes"}   # CounterDescriptor.Unit
# CounterDescriptor.type (BuiltinCounterType: thread time, instruction count) implies its unit
BUILTIN_UNITS = {1: "ns", 2: "count"}


@dataclass
class Counter:
    """How a counter track's values read: times ``multiplier``, deltas when incremental."""

    multiplier: float = 1.0
    incremental: bool = False


@dataclass
class TrackMap:
    """uuid -> model track id, and the counter tracks among them."""

    track: dict[int, int] = field(default_factory=dict)
    counters: dict[int, Counter] = field(default_factory=dict)


def merge_descriptor(known: TrackDescriptor | None, new: TrackDescriptor) -> TrackDescriptor:
    """A uuid declared again: what the new declaration sets is added (rocprofv3 declares a
    thread track twice, the second time with its parent only)."""
    if known is None:
        return new
    merged = TrackDescriptor()
    merged.CopyFrom(known)
    merged.MergeFrom(new)
    # a process keeps the first name it was declared with, as trace_processor names it
    # (Chrome declares a renderer "Renderer", then again with its command line as the name)
    if known.process.process_name:
        merged.process.process_name = known.process.process_name
    return merged


class _Builder:
    def __init__(self, trace: Trace, descriptors: dict[int, TrackDescriptor]) -> None:
        self.trace = trace
        self.text = Utf8Repair(trace.diagnostics, "perfetto")   # names: str, counted
        self.descriptors = descriptors
        self.host: dict[int, int] = {}      # pid -> process id
        self.device: dict[Any, int] = {}    # host process id or group uuid -> device process
        self.groups: dict[int, int] = {}    # topmost named uuid -> process id
        self.threads: dict[tuple[int, int], int] = {}
        self.map = TrackMap()
        # pid -> its ProcessDescriptors, in file order (looked up once per pid: a scan per
        # pid would be quadratic in a trace of one process per thread)
        self.of_pid: dict[int, list[TrackDescriptor]] = {}
        for desc in descriptors.values():
            if desc.HasField("process"):
                self.of_pid.setdefault(desc.process.pid, []).append(desc)

    def _own_name(self, desc: TrackDescriptor) -> str:
        text = self.text
        return text(desc.name) or text(desc.static_name) or text(desc.atrace_name)

    def _process_name(self, desc: TrackDescriptor) -> str:
        process, text = desc.process, self.text
        return text(process.process_name) or (text(process.cmdline[0]) if process.cmdline
                                              else "")

    def process_of_pid(self, pid: int) -> int:
        found = self.host.get(pid)
        if found is None:
            declared = self.of_pid.get(pid, [])
            name = (self._process_name(declared[0]) if declared else "") or f"Process {pid}"
            found = self.host[pid] = self.trace.add_process(name, pid=pid, labels=[
                label for d in declared for label in d.process.process_labels])
        return found

    def chain(self, uuid: int) -> list[TrackDescriptor]:
        """The descriptor of ``uuid`` and its ancestors, nearest first (cycles cut)."""
        out: list[TrackDescriptor] = []
        seen: set[int] = set()
        while uuid in self.descriptors and uuid not in seen and len(out) < 100:
            seen.add(uuid)
            desc = self.descriptors[uuid]
            out.append(desc)
            uuid = desc.parent_uuid if desc.HasField("parent_uuid") else -1
        return out

    def add(self, uuid: int) -> int:
        trace, chain = self.trace, self.chain(uuid)
        desc = chain[0]
        counter = desc.HasField("counter")
        if counter:
            c = desc.counter
            self.map.counters[uuid] = Counter(float(c.unit_multiplier or 1), c.is_incremental)
        unit = (UNITS.get(desc.counter.unit) or desc.counter.unit_name
                or BUILTIN_UNITS.get(desc.counter.type) or None) if counter else None
        kind = TrackKind.COUNTER if counter else None
        if desc.HasField("thread") and not counter:
            thread = desc.thread
            process = self.process_of_pid(thread.pid)
            key = (thread.pid, thread.tid)
            if key in self.threads:
                return self.threads[key]
            name = self.text(thread.thread_name) or self._own_name(desc) \
                or f"Thread {thread.tid}"
            track = self.threads[key] = trace.add_track(name, process=process, tid=thread.tid)
            return track
        owner = next((d for d in chain if d.HasField("process") or d.HasField("thread")), None)
        name = self._own_name(desc) \
            or (self._process_name(desc) if desc.HasField("process") else "") \
            or f"track {uuid}"
        names = [self._own_name(d) for d in chain if not (d.HasField("process")
                                                    or d.HasField("thread"))]
        device = any(DEVICE_WORDS.search(n) for n in names if n)
        if owner is not None:
            pid = owner.process.pid if owner.HasField("process") else owner.thread.pid
            process = self.process_of_pid(pid)
            if device and not counter:
                process = self._device_beside(process)
        else:
            top = chain[-1]
            if top.uuid not in self.groups:
                group = self._own_name(top) or f"track {top.uuid}"
                self.groups[top.uuid] = trace.add_process(
                    group, kind=ProcessKind.DEVICE if device else ProcessKind.SYNTHETIC)
            process = self.groups[top.uuid]
        if kind is None:   # (a track of no thread holds async slices, as Perfetto has them)
            kind = TrackKind.STREAM if device else TrackKind.ASYNC
        # (a counter of a thread, its CPU time: the thread it counts is part of what it is)
        tid = owner.thread.tid if counter and owner is not None and owner.HasField("thread") \
            else None
        return trace.add_track(name, process=process, kind=kind, unit=unit, tid=tid,
                               description=desc.description or None)

    def _device_beside(self, host: int) -> int:
        found = self.device.get(host)
        if found is None:
            name = f"{self.trace.processes[host].name} (GPU)"
            found = self.device[host] = self.trace.add_process(name, kind=ProcessKind.DEVICE)
        return found


def build_tracks(trace: Trace, descriptors: dict[int, TrackDescriptor], used: Iterable[int],
                 model: dict[str, Any] | None) -> TrackMap:
    """Add to ``trace`` the processes and tracks that the uuids in ``used`` need; returns
    uuid -> track. ``model``: the file's :mod:`.model_attribute`, when traceconv wrote it."""
    builder = _Builder(trace, descriptors)
    mapping = builder.map
    if model is not None:
        _own_model(trace, descriptors, model, mapping)
        for uuid, desc in descriptors.items():
            if desc.HasField("counter"):
                mapping.counters[uuid] = Counter(float(desc.counter.unit_multiplier or 1),
                                                 desc.counter.is_incremental)
    undeclared: int | None = None
    for uuid in sorted(set(used)):
        if uuid in mapping.track:
            continue
        if uuid in descriptors:
            top = builder.chain(uuid)[-1]
            if top.HasField("parent_uuid") and top.parent_uuid not in descriptors:
                mapping.track[uuid] = -1   # (trace_processor drops its events: so here)
                continue
            mapping.track[uuid] = builder.add(uuid)
            continue
        if undeclared is None:
            undeclared = trace.add_process("undeclared tracks", kind=ProcessKind.SYNTHETIC)
        name = "global" if uuid == 0 else f"track {uuid}"
        mapping.track[uuid] = trace.add_track(name, process=undeclared,
                                              kind=TrackKind.SYNTHETIC)
        if uuid:
            trace.diagnostics.add("perfetto.undeclared_track", example=f"uuid {uuid}")
    return mapping


def _own_model(trace: Trace, descriptors: dict[int, TrackDescriptor], model: dict[str, Any],
               mapping: TrackMap) -> None:
    """Processes and tracks as traceconv's writer had them; lanes fold into their home."""
    for name, kind, pid, sort_index, labels in model["processes"]:
        trace.add_process(name, kind=ProcessKind(kind), pid=_int(pid),
                          sort_index=_int(sort_index), labels=list(labels))
    for name, process, kind, tid, sort_index, unit, description, parent in model["tracks"]:
        trace.add_track(name, process=process, kind=TrackKind(kind), tid=_int(tid),
                        sort_index=_int(sort_index), unit=unit, description=description,
                        parent=parent)
    base, count = int(model["base"]), len(model["tracks"])
    for uuid in descriptors:
        offset = uuid - base - 2
        if 0 <= offset < 2 * count and offset % 2 == 0:
            mapping.track[uuid] = offset // 2
    for uuid, desc in descriptors.items():   # lanes: the nearest ancestor that is a track
        seen = 0
        parent = desc.parent_uuid
        while uuid not in mapping.track and parent in descriptors and seen < 100:
            if parent in mapping.track:
                mapping.track[uuid] = mapping.track[parent]
            parent, seen = descriptors[parent].parent_uuid, seen + 1


def _int(value: Any) -> int | None:
    """An id kept as a number (the writer spells one beyond 64 bits as text: dropped)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
