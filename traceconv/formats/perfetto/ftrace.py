"""The packets of a Perfetto system trace: ftrace event bundles, the process tree,
Android's FrameTimeline (:mod:`.frame_timeline`) and log lines (:mod:`.android_log`),
decoded from field tables (numbers from Perfetto's ``ftrace_event_bundle.proto``,
``ftrace_event.proto``, ``ftrace/{ftrace,sched,power}.proto`` and ``process_tree.proto``).
A bundle's ``compact_sched`` (sched_switch as columns, the default of recent Perfetto
configs) gives the same switches as the full events.

:class:`SystemPackets` keeps, in file order, what the model takes from them (see
:mod:`.system_model`): atrace lines written to ftrace ``print``, ``sched_switch``,
``sched_waking``, ``cpu_frequency`` and ``cpu_idle`` events, processes and threads; every
other ftrace event kind is counted by its name.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import FtraceEvent, ProcessStats

from ...model import Diagnostics
from .._proto import Utf8Repair
from ..protowire import iter_fields, message_classes
from ..protowire.columns import WireError
from .android_log import ANDROID_LOG, LogLine, log_lines
from .atrace import AtraceLine
from .frame_timeline import FRAME_TIMELINE_EVENT, FrameEvent, decode
from .ftrace_columns import (
    PRINT,
    SCHED_SWITCH,
    Bundles,
    Switch,
    decode_bundles,
)
from .sys_stats import SYS_STATS, SysCounter, other_fields, sys_counters

FTRACE_EVENTS, PROCESS_TREE, PROCESS_STATS = 1, 2, 9   # TracePacket fields
_EVENT_NAMES = {f.number: f.name for f in FtraceEvent.DESCRIPTOR.fields}
_PROCESS_FIELDS = {f.number: f.name for f in ProcessStats.Process.DESCRIPTOR.fields}

_MESSAGES = message_classes("perfetto_system", {
    "Process": [("pid", 1, "int32"), ("ppid", 2, "int32"), ("cmdline", 3, "repeated string")],
    "Thread": [("tid", 1, "int32"), ("name", 2, "string"), ("tgid", 3, "int32")],
    "ProcessTree": [("processes", 1, "repeated Process"), ("threads", 2, "repeated Thread")],
    "ProcessMemory": [("pid", 1, "int32"), ("vm_size_kb", 2, "uint64"),
                      ("vm_rss_kb", 3, "uint64"), ("rss_anon_kb", 4, "uint64"),
                      ("rss_file_kb", 5, "uint64"), ("rss_shmem_kb", 6, "uint64"),
                      ("vm_swap_kb", 7, "uint64"), ("vm_locked_kb", 8, "uint64"),
                      ("vm_hwm_kb", 9, "uint64"), ("oom_score_adj", 10, "int64")],
    "ProcessStats": [("processes", 1, "repeated ProcessMemory")],
    # sched_switch and sched_waking as columns, timestamps as deltas, names interned
    "CompactSched": [("intern_table", 5, "repeated string"),
                     ("switch_timestamp", 1, "repeated uint64"),
                     ("switch_next_pid", 3, "repeated int32"),
                     ("switch_next_comm_index", 6, "repeated uint32"),
                     ("waking_timestamp", 7, "repeated uint64")],
})


# process_stats fields as trace_processor names its counters (kB values: bytes)
PROCESS_COUNTERS = {"vm_size_kb": "mem.virt", "vm_rss_kb": "mem.rss",
                    "rss_anon_kb": "mem.rss.anon", "rss_file_kb": "mem.rss.file",
                    "rss_shmem_kb": "mem.rss.shmem", "vm_swap_kb": "mem.swap",
                    "vm_locked_kb": "mem.locked", "vm_hwm_kb": "mem.rss.watermark",
                    "oom_score_adj": "oom_score_adj"}


class ProcessCounter(NamedTuple):
    """One value of a process_stats counter (bytes, or the OOM score adjustment)."""

    ts: int
    pid: int
    name: str
    value: float


class FtraceRecord(NamedTuple):
    """One modelled ftrace event: ``what`` is the event's FtraceEvent field number and
    ``data`` its decoded form (an :class:`~.atrace.AtraceLine` or None for ``print``)."""

    ts: int
    cpu: int
    tid: int
    what: int
    data: object


@dataclass
class SystemPackets:
    """What a system trace's packets hold for the model, gathered packet by packet."""

    records: list[FtraceRecord] = field(default_factory=list)
    processes: dict[int, tuple[int, str]] = field(default_factory=dict)   # pid -> ppid, name
    threads: dict[int, tuple[int, str]] = field(default_factory=dict)     # tid -> tgid, name
    unmodelled: Counter[str] = field(default_factory=Counter)   # ftrace event kinds
    not_atrace: int = 0             # print buffers that are no atrace line
    not_atrace_example: str = ""
    other_clock: int = 0   # bundles whose ftrace clock is not the boot clock
    frames: list[FrameEvent] = field(default_factory=list)   # FrameTimeline, file order
    process_counters: list[ProcessCounter] = field(default_factory=list)
    system_counters: list[SysCounter] = field(default_factory=list)
    unmodelled_stats: Counter[str] = field(default_factory=Counter)   # sys_stats fields
    logs: list[LogLine] = field(default_factory=list)   # android_log lines, file order
    # names and texts as text, those that are not UTF-8 repaired and counted (the reader's)
    text: Utf8Repair = field(default_factory=lambda: Utf8Repair(Diagnostics(), "perfetto"))

    def add(self, kind: int, payload: bytes, ts: int = 0, clock: int = 0) -> None:
        """Take one packet's payload (TracePacket field ``kind``, not an ftrace bundle: see
        :meth:`add_bundles`; the packet's timestamp and its clock, 0 when it names none,
        are the FrameTimeline's and the process stats' times).

        >>> found = SystemPackets()
        >>> found.add(PROCESS_TREE, b"\\x0a\\x08\\x08\\x07\\x10\\x01\\x1a\\x02sh")
        >>> found.processes
        {7: (1, 'sh')}
        """
        if kind == ANDROID_LOG:
            self.logs += log_lines(payload, self.text)
        elif kind == SYS_STATS:
            self.system_counters += sys_counters(payload, ts)
            self.unmodelled_stats.update(other_fields(payload))
        elif kind == PROCESS_STATS:
            self._process_stats(payload, ts)
        elif kind == FRAME_TIMELINE_EVENT:
            frame = decode(payload, ts, clock)
            if frame is not None:
                self.frames.append(frame)
        elif kind == PROCESS_TREE:
            tree = _MESSAGES["ProcessTree"].decode(payload)
            for process in tree.processes:
                name = process.cmdline[0] if process.cmdline else ""
                self.processes[process.pid] = (process.ppid, self.text(name))
            for thread in tree.threads:
                tgid = thread.tgid if thread.has("tgid") else thread.tid
                self.threads[thread.tid] = (tgid, self.text(thread.name))

    def _process_stats(self, payload: bytes, ts: int) -> None:
        for number, wire, start, end in iter_fields(payload):   # what is not modelled
            if number == 1 and wire == 2:
                self.unmodelled_stats.update(
                    f"process_{_PROCESS_FIELDS.get(inner, inner)}"
                    for inner, _, _, _ in iter_fields(payload, start, end) if inner > 10)
        for process in _MESSAGES["ProcessStats"].decode(payload).processes:
            for field_name, name in PROCESS_COUNTERS.items():
                if process.has(field_name):
                    value = getattr(process, field_name)
                    scale = 1 if field_name == "oom_score_adj" else 1024
                    self.process_counters.append(ProcessCounter(ts, process.pid, name,
                                                                float(value * scale)))

    def add_bundles(self, data: bytes, buf: np.ndarray, starts: np.ndarray,
                    ends: np.ndarray) -> int:
        """Take the ftrace bundles ``data[starts[i]:ends[i]]`` (``buf``: ``data`` padded),
        all at once; returns how many did not decode (those are left out).

        >>> event = b"\\x08\\x64\\x10\\x07\\x1a\\x0a\\x12\\x08B|7|step"
        >>> bundle = b"\\x08\\x03\\x12" + bytes([len(event)]) + event
        >>> from traceconv.formats.protowire.columns import padded
        >>> found = SystemPackets()
        >>> found.add_bundles(bundle, padded(bundle), np.array([0]), np.array([len(bundle)]))
        0
        >>> found.records[0][:4]
        (100, 3, 7, 3)
        """
        try:
            found = decode_bundles(data, buf, starts, ends, self.text.decode)
        except WireError:   # one by one: only the damaged ones are left out
            if len(starts) == 1:
                return 1
            return sum(self.add_bundles(data, buf, starts[k:k + 1], ends[k:k + 1])
                       for k in range(len(starts)))
        self._keep(data, found)
        return 0

    def _keep(self, data: bytes, found: Bundles) -> None:
        self.records += [FtraceRecord(*event) for event in found.events]
        for offset, end, cpu in found.compact:
            self._compact_sched(data[offset:end], cpu)
        for number, count in found.unmodelled.items():
            self.unmodelled[_EVENT_NAMES.get(number, f"field {number}")] += count
        self.not_atrace += len(found.not_atrace)
        if found.not_atrace and not self.not_atrace_example:
            self.not_atrace_example = found.not_atrace[0][:80]
        self.other_clock += found.other_clock

    def _compact_sched(self, payload: bytes, cpu: int) -> None:
        compact = _MESSAGES["CompactSched"].decode(payload)
        names = [self.text(name) for name in compact.intern_table]
        stamps, pids = compact.switch_timestamp, compact.switch_next_pid
        comms = compact.switch_next_comm_index
        complete = min(len(stamps), len(pids), len(comms))
        ts = 0
        for delta, pid, comm in zip(stamps[:complete], pids[:complete], comms[:complete],
                                    strict=True):
            ts += delta
            name = names[comm] if comm < len(names) else ""
            self.records.append(FtraceRecord(ts, cpu, 0, SCHED_SWITCH,
                                             Switch(-1, "", pid, name)))
        self.unmodelled["compact_sched_incomplete"] += len(stamps) - complete
        self.unmodelled["sched_waking"] += len(compact.waking_timestamp)

    def atrace(self) -> list[tuple[FtraceRecord, AtraceLine]]:
        """The atrace lines, each with its event."""
        return [(r, r.data) for r in self.records
                if r.what == PRINT and isinstance(r.data, AtraceLine)]
