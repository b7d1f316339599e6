"""Paddle's Chrome JSON: the new profiler's export and the old tools/timeline.py output."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ....model import Trace, TrackKind
from ....model.slice_index import SliceIndex, enclosing_slices
from ....numbers import saturated_int
from ....vocabularies.paddle import (
    CPU_CATEGORY,
    KERNEL_CATEGORY,
    MEMCPY_CATEGORY,
    PADDLE_VOCABULARY,
    RUNTIME_CATEGORY,
)
from ..._paddle import (
    AllocatorLog,
    leaf_name,
    link_launches,
)
from ...device_properties import device_infos
from .base import Flavour, ReadContext

_DURATION_SUFFIX = re.compile(r"\[\d+(?:\.\d+)? ?(?:ns|us|ms|s)\]$")
_THREAD_KIND = re.compile(r"(\d+)\((\w[\w+]*)\)$")  # "14656(Python)", "14656(C++)"
MEMORY_EVENT = "[memory]"


class PaddleProfiler(Flavour):
    """``paddle.profiler`` export: names end in "[1.234 ms]", tids are "<tid>(Python|C++)",
    thread names are in the top-level ``ExtraInfo``; device work runs on pid = device id;
    ``[memory]`` instants are the allocator's records."""

    name = "paddle-profiler"
    framework = "PaddlePaddle"
    device_categories = frozenset({"Kernel", "Memcpy", "Memset"})
    vocabulary = PADDLE_VOCABULARY

    def __init__(self) -> None:
        self.stripped = 0
        self.typos = 0
        self.context: ReadContext | None = None

    @classmethod
    def detect(cls, envelope: dict, events: list) -> bool:
        return "span_indx" in envelope or "span_index" in envelope or any(
            isinstance(e, dict) and isinstance(e.get("tid"), str)
            and _THREAD_KIND.match(e["tid"]) for e in events[:200])

    def prepare(self, events: list, context: ReadContext) -> None:
        self.context = context
        for e in events:
            name = e.get("name") if isinstance(e, dict) else None
            if isinstance(name, str) and name.endswith("]"):
                short = _DURATION_SUFFIX.sub("", name)
                if short != name:
                    e["name"] = short
                    self.stripped += 1

    def name_process(self, pid: Any, device: bool, meta: dict[str, Any]) -> str:
        name = super().name_process(pid, device, meta)
        if "Deivce" in name:       # the writer's own spelling
            self.typos += 1
            name = name.replace("Deivce", "Device")
        return name

    def name_thread(self, pid: Any, tid: Any, device: bool, meta: dict[str, Any]) -> str:
        # ExtraInfo (written after the events) maps OS thread ids to thread names.
        names = self.context.envelope.get("ExtraInfo", {}) if self.context else {}
        names = names if isinstance(names, dict) else {}   # (type confusion in the file)
        if isinstance(tid, str) and (match := _THREAD_KIND.match(tid)):
            thread, kind = match.groups()
            return f"{names.get(thread, 'thread ' + thread)} ({kind})"
        if not device and str(tid) in names:
            return str(names[str(tid)])
        return super().name_thread(pid, tid, device, meta)

    def finalize(self, trace: Trace, context: ReadContext) -> None:
        envelope, meta = context.envelope, trace.metadata
        meta.source_version = f"schemaVersion {envelope.get('schemaVersion', '?')}"
        span = envelope.get("span_index", envelope.get("span_indx"))
        if span is not None:
            meta.attributes["paddle.span_index"] = span
        extra = envelope.get("ExtraInfo")
        if isinstance(extra, dict):
            meta.attributes.update({f"paddle.{k}": v for k, v in extra.items()
                                    if not str(k).isdecimal()})
        if isinstance(envelope.get("deviceProperties"), list):
            meta.attributes["paddle.device_properties"] = envelope["deviceProperties"]
            meta.devices = device_infos(envelope["deviceProperties"])
        trace.diagnostics.add("paddle.duration_suffix", count=self.stripped)
        trace.diagnostics.add("paddle.deivce_typo", count=self.typos)
        _memory_blocks(trace)


def _memory_blocks(trace: Trace) -> None:
    """``[memory]`` instants → allocator counters and memory blocks owned by the op whose
    slice encloses them on the same thread (the protobuf export hangs them on that node)."""
    name_id = trace.strings.find(MEMORY_EVENT)
    if name_id is None:
        return
    i, strings = trace.instants, trace.strings.strings
    rows = sorted((ts, row) for row, (ts, nm) in enumerate(zip(i.ts, i.name, strict=True))
                  if nm == name_id)
    if not rows:
        return
    points = [(i.track[row], ts) for ts, row in rows]
    # the op that allocated: the enclosing Operator, else the innermost enclosing slice
    tracks = np.array([track for track, _ in points], dtype=np.int64)
    times = np.array([ts for _, ts in points], dtype=np.int64)
    owners = [op if op is not None else inner for op, inner in zip(
        enclosing_slices(SliceIndex(trace, "Operator"), tracks, times),
        enclosing_slices(SliceIndex(trace), tracks, times), strict=True)]
    log = AllocatorLog(trace, trace.tracks[i.track[rows[0][1]]].process, "paddle")
    malformed = 0
    for (ts, row), owner in zip(rows, owners, strict=True):
        args = i.args[row] or {}
        addr, increase = _integer(args.get("addr")), _integer(args.get("increase_bytes"))
        if addr is None or increase is None:
            malformed += 1
            continue
        log.add(ts, strings[i.category[row]], str(args.get("place", "")), addr, increase,
                _integer(args.get("current_allocated")), _integer(args.get("current_reserved")),
                None if owner is None else trace.slice(owner).name)
    log.finish()
    trace.diagnostics.add("paddle.memory_record_malformed", count=malformed)


def _integer(value: Any) -> int | None:
    """An integer arg (the writer prints ``addr`` as a decimal string) of any size, None if
    it is not one (an address or size past int64 is the trace builder's to judge).

    >>> _integer("140000000000000"), _integer(-64), _integer("x"), _integer(True)
    (140000000000000, -64, None, None)
    >>> _integer(2**70) == _integer(str(2**70)) == 2**70, _integer("9" * 5000) == 2**64
    (True, True)
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.lstrip("-").isdecimal():
        value = saturated_int(value)
    return value if isinstance(value, int) else None


_MEMORY_PROCESS = re.compile(r"^memory usage on (?P<trainer>.+?):\w+:\d+$")
_PROCESS_ROLE = re.compile(r"^(?P<trainer>.+?):(?:cpu:block:(?P<depth>\d+)|(?P<api>cuda_api)|"
                           r"gpu:(?P<gpu>\d+))$")


class PaddleTimeline(Flavour):
    """``tools/timeline.py`` output: ``ts``/``dur`` in nanoseconds, one pid per
    (trainer, block depth) for CPU records, ``<trainer>:cuda_api`` and ``<trainer>:gpu:N``.

    Records are put back where the binary profile has them: one host process per trainer
    with a track per profiler thread (the block depth becomes an arg), CUDA runtime calls on
    their thread, kernels and memcpys on device streams, names shortened to the leaf of the
    annotation path (kept in ``args["path"]``)."""

    name = "paddle-timeline"
    framework = "PaddlePaddle"
    device_categories = frozenset({KERNEL_CATEGORY, MEMCPY_CATEGORY})
    vocabulary = PADDLE_VOCABULARY

    def __init__(self) -> None:
        self.roles: dict[Any, tuple[str, str, int | None]] = {}   # pid → (trainer, role, n)
        self.host_pid: dict[str, Any] = {}                         # trainer → host pid
        self.memory_pid: dict[str, Any] = {}                       # trainer → memory pid
        self.memory_trainer: dict[Any, str] = {}

    @classmethod
    def detect(cls, envelope: dict, events: list) -> bool:
        stamps = [e["ts"] for e in events[:500] if isinstance(e, dict)
                  and isinstance(e.get("ts"), int | float)]
        # Epoch µs is ~1.8e15 today; ~1.8e18 can only be nanoseconds.
        return bool(stamps) and min(stamps) > 1e17

    def time_unit_ns(self, events: list) -> int:
        return 1

    def prepare(self, events: list, context: ReadContext) -> None:
        for e in events:
            if (isinstance(e, dict) and e.get("ph") == "M" and e.get("name") == "process_name"
                    and isinstance(e.get("pid"), int) and isinstance(e.get("args"), dict)):
                self._learn(e["pid"], str(e["args"].get("name", "")))
        for e in events:
            if not isinstance(e, dict) or not isinstance(e.get("pid"), int):
                continue
            if e.get("ph") == "X" and e.get("pid") in self.roles:
                self._rewrite(e)
            elif e.get("ph") == "C" and e.get("pid") in self.memory_trainer:
                # One running total over every place of the trainer, written under the pid
                # of whichever place changed last: keep it as one series.
                e["pid"] = self.memory_pid[self.memory_trainer[e["pid"]]]
                args = e.get("args")
                values = list(args.values()) if isinstance(args, dict) else []
                e["args"] = {"all places": values[0]} if len(values) == 1 else e.get("args")

    def _learn(self, pid: Any, name: str) -> None:
        if (memory := _MEMORY_PROCESS.match(name)) is not None:
            self.memory_pid.setdefault(memory["trainer"], pid)
            self.memory_trainer[pid] = memory["trainer"]
            return
        match = _PROCESS_ROLE.match(name)
        if match is None:
            return
        trainer = match["trainer"]
        if match["gpu"] is not None:
            self.roles[pid] = (trainer, "gpu", int(match["gpu"]))
        elif match["api"]:
            self.roles[pid] = (trainer, "api", None)
        else:
            self.roles[pid] = (trainer, "cpu", int(match["depth"]))
        if match["gpu"] is None:   # the trainer's first host pid takes all of its threads
            self.host_pid.setdefault(trainer, pid)

    def _rewrite(self, e: dict) -> None:
        trainer, role, n = self.roles[e["pid"]]
        args = e.get("args")
        args = e["args"] = dict(args) if isinstance(args, dict) else {}
        path = args["path"] = str(args.pop("name", e.get("name", "")))
        if "mem_bytes" in args:
            args["bytes"] = args.pop("mem_bytes")
        detail = str(args.get("detail_info") or "")
        if role == "gpu":
            e["cat"] = MEMCPY_CATEGORY if "bytes" in args else KERNEL_CATEGORY
            e["name"] = detail if detail and e["cat"] == KERNEL_CATEGORY else leaf_name(path)
            return
        e["pid"] = self.host_pid.get(trainer, e["pid"])
        if role == "api":
            e["cat"], e["name"] = RUNTIME_CATEGORY, detail or leaf_name(path)
        else:
            e["cat"], e["name"] = CPU_CATEGORY, leaf_name(path)
            args["block_depth"] = n

    def name_process(self, pid: Any, device: bool, meta: dict[str, Any]) -> str:
        role = self.roles.get(pid)
        if pid in self.memory_trainer:
            return f"{self.memory_trainer[pid]}: memory"
        if role is None:
            return super().name_process(pid, device, meta)
        trainer, kind, n = role
        return f"{trainer}: GPU {n}" if kind == "gpu" else f"{trainer}: host"

    def finalize(self, trace: Trace, context: ReadContext) -> None:
        memory = {p.id for p in trace.processes if p.name.endswith(": memory")}
        for track in trace.tracks:
            if track.process in memory and track.kind is TrackKind.COUNTER:
                track.unit = "bytes"
                track.description = ("timeline.py's running total of the profile's memory "
                                     "events, all places summed")
        if memory:
            trace.diagnostics.add("paddle.timeline_memory_total")
        link_launches(trace, "paddle")
