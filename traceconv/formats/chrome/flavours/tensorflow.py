"""TensorFlow 1.x step timelines: ``timeline.Timeline(run_metadata.step_stats)
.generate_chrome_trace_format()``.

Every device of the step's statistics is a pair of processes named after it, ``<device>
Compute`` (its ops, ``cat: "Op"``, the op type as the name and ``args.name``/``args.op``)
and ``<device> Tensors`` (tensor lifetimes), beside an ``Allocators`` process. The executor
of a device is a host thread: ``/job:localhost/replica:0/task:0/device:GPU:0 Compute``
holds the host side of the GPU's ops. What ran on the GPU comes from TF's GPU tracer, on
devices that TF's own ``timeline.py`` tells apart by ``/stream:`` or ``/memcpy`` in their
names: each such process is a stream track (``stream:12``) of one device process per TF
device (``/gpu:0``), as every reader draws a GPU. The tracer writes every record twice
(``device_tracer.cc``): a kernel on ``/stream:all`` and on its own ``/stream:N``, a copy on
``/memcpy`` and on its ``/stream:N``. The per-stream tracks hold each record once and stay
the device's work; ``stream:all`` and ``memcpy`` repeat them, so they are drawn as ranges
that no total counts (``tensorflow.stream_view_repeated``), unless no per-stream process of
their device is named.

With ``show_memory=True`` the timeline also holds its tensors (objects of the ``Tensors``
processes, read as memory blocks: :mod:`.tensorflow_tensors`); every op lists its inputs,
the graph, and the GPU's records name their op, the launch (:mod:`.tensorflow_graph`).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ....model import ProcessKind, Trace
from ....vocabularies.tensorflow import (
    COPY_CATEGORY,
    DEVICE_CATEGORY,
    REPEAT_CATEGORY,
    TENSORFLOW_VOCABULARY,
)
from .base import Flavour, ReadContext, hashable, process_name
from .tensorflow_graph import link_launches, op_graph
from .tensorflow_tensors import (
    OBJECT_PHASE_LETTERS,
    TENSOR_CATEGORY,
    add_tensor_blocks,
    as_instant,
    describe_allocator_counters,
    tensor_objects,
)

# a device as TF names one (``/job:w/replica:0/task:0/gpu:0``, ``/device:GPU:0``), then a
# GPU tracer's part (``/stream:all``, ``/stream:12``, ``/memcpy``), then the view's suffix
TF_PROCESS = re.compile(r"(?P<device>(?:/job:[^/\s]+/replica:\d+/task:\d+)?"
                        r"/(?:device:)?[A-Za-z_]+:\d+)"
                        r"(?:/(?P<part>stream:\w+|memcpy))? (?:Compute|Tensors)")
REPEATING_PARTS = ("stream:all", "memcpy")
# (a flow's category names its chain; its point finds its track by pid and tid, moved too)
FLOW_PHASES = ("s", "t", "f")


def gpu_tracer_part(process_name: str) -> tuple[str, str] | None:
    """The device and the GPU tracer's part (``stream:N``, ``stream:all``, ``memcpy``) of a
    TF ``Compute`` process of GPU records; None for any other process.

    >>> gpu_tracer_part("/device:GPU:0/stream:12 Compute")
    ('/device:GPU:0', 'stream:12')
    >>> gpu_tracer_part("/gpu:0/memcpy Compute"), gpu_tracer_part("/gpu:0/memcpy Tensors")
    (('/gpu:0', 'memcpy'), None)
    >>> gpu_tracer_part("/job:localhost/replica:0/task:0/gpu:0 Compute") is None
    True
    """
    match = TF_PROCESS.fullmatch(process_name)
    if match is None or match["part"] is None or not process_name.endswith(" Compute"):
        return None
    return match["device"], match["part"]


class TensorFlow(Flavour):
    """TensorFlow's step timeline (``timeline.Timeline``): devices by process name."""

    name = "tensorflow"
    framework = "TensorFlow"
    device_categories = frozenset({DEVICE_CATEGORY, COPY_CATEGORY, REPEAT_CATEGORY})
    vocabulary = TENSORFLOW_VOCABULARY

    def __init__(self) -> None:
        self.parts: dict[Any, tuple[str, str]] = {}   # pid -> (device, part) of GPU records
        self.streams: dict[str, dict[str, str]] = {}   # device -> {its track: the part}
        self.repeated = 0
        self.example: str | None = None

    @classmethod
    def detect(cls, envelope: dict, events: list) -> bool:
        return any(TF_PROCESS.fullmatch(name) for e in events[:200]
                   if (name := process_name(e)) is not None)

    def prepare(self, events: list, context: ReadContext) -> None:
        for e in events:
            if (isinstance(e, dict) and e.get("ph") in OBJECT_PHASE_LETTERS
                    and e.get("cat") == TENSOR_CATEGORY):
                as_instant(e)
            name = process_name(e)   # (None for an event that is not an object)
            if name is not None and hashable(pid := e.get("pid")) and (
                    device_part := gpu_tracer_part(name)) is not None:
                self.parts[pid] = device_part
        if not self.parts:
            return
        streamed = {device for device, part in self.parts.values()
                    if part not in REPEATING_PARTS}
        for e in events:
            if (not isinstance(e, dict) or e.get("ph") == "M"
                    or not hashable(e.get("pid"))
                    or (found := self.parts.get(e.get("pid"))) is None):
                continue
            device, part = found
            e["pid"], e["tid"] = device, self._stream_track(device, part, e.get("tid"))
            if e.get("ph") in FLOW_PHASES:
                continue
            if part in REPEATING_PARTS and device in streamed:
                e["cat"] = REPEAT_CATEGORY
                if e.get("ph") == "X":
                    self.repeated += 1
                    self.example = self.example or f"{device}/{part}: {e.get('name')!r}"
            else:   # (a memcpy process with no stream to repeat holds the copies once)
                e["cat"] = COPY_CATEGORY if part == "memcpy" else DEVICE_CATEGORY

    def _stream_track(self, device: str, part: str, tid: Any) -> str:
        """The track of the device that a tracer process's thread becomes: named after its
        part (``stream:12``), and its thread when the tracer wrote more than thread 0."""
        track = part if tid in (0, "0", None) else f"{part} tid {tid}"
        self.streams.setdefault(device, {})[track] = part
        return track

    def name_process(self, pid: Any, device: bool, meta: dict[str, Any]) -> str:
        if device and pid in self.streams:
            return str(pid)   # (a device the tracer's processes make: its TF name)
        name = meta.get("name")
        return str(name) if name else super().name_process(pid, device, meta)

    def finalize(self, trace: Trace, context: ReadContext) -> None:
        trace.diagnostics.add("tensorflow.stream_view_repeated", count=self.repeated,
                              example=self.example)
        _copies_on_streams(trace, self.streams)
        objects = tensor_objects(trace)
        graph = op_graph(trace, objects)
        link_launches(trace, graph, {DEVICE_CATEGORY, COPY_CATEGORY})
        add_tensor_blocks(trace, objects, graph.tensors, graph.ops)
        describe_allocator_counters(trace)


def _copies_on_streams(trace: Trace, streams: dict[str, dict[str, str]]) -> None:
    """The records of a device's streams that its ``/memcpy`` track repeats (same name,
    start and length) are copies, whatever their name: the tracer names a copy after its op
    (a ``MatMul`` copy), so only the process it repeats it on tells. They get the copy
    category, which a written trace keeps."""
    processes = trace.processes
    device_part = []   # (device, part) per track; ("", "") off the tracer's devices
    for t in trace.tracks:
        process = processes[t.process]
        device = process.name if process.kind is ProcessKind.DEVICE else ""
        device_part.append((device, streams.get(device, {}).get(t.name, "")))
    copy_tracks = [t for t, (_, part) in enumerate(device_part) if part == "memcpy"]
    stream_tracks = [t for t, (_, part) in enumerate(device_part)
                     if part and part not in REPEATING_PARTS]
    s = trace.slices
    if not copy_tracks or not stream_tracks or not len(s):
        return
    track, start, dur = s.numpy_view("track"), s.numpy_view("start"), s.numpy_view("dur")

    def key(row: int) -> tuple[str, int, int, int]:
        return device_part[track[row]][0], int(start[row]), int(dur[row]), s.name[row]

    copies = {key(r) for r in np.flatnonzero(np.isin(track, copy_tracks)).tolist()}
    copy = trace.strings.intern(COPY_CATEGORY)
    for row in np.flatnonzero(np.isin(track, stream_tracks)).tolist():
        if key(row) in copies:
            s.category[row] = copy
