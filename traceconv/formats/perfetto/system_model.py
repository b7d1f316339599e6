"""A system trace's packets (:mod:`.ftrace`) as the model, the way trace_processor reads them.

* the process tree's processes (named by the first word of the command line) and threads
  (tid, tgid, name) are the model's processes and thread tracks; a process the track
  descriptors already declared under the same pid is the same process;
* atrace ``B``/``E`` lines are slices on the writing thread's track (one stack per
  thread, as trace_processor keeps it), ``C`` lines values of a counter track of the
  process, ``S``/``F`` lines async slices (paired by process, name and cookie) on a track
  of the process named by the slice, ``I`` lines instants on the thread's track; a thread
  whose process the tree does not give belongs to the tgid its atrace lines name, else is a
  process of its own;
* ``sched_switch`` events make one track per CPU ("CPU 3") whose slices are the threads that
  ran there, named by the thread (switched-in ``next_comm``), idle (pid 0) left out; the
  thread running when the trace ends has no end in the input (trace_processor leaves it
  open): the builder ends it at the trace's last timestamp, marked ``unfinished``
  (:meth:`~traceconv.model.builder.TraceBuilder.not_ended`, counted), as every slice
  never ended here (atrace ``B`` and ``S`` lines, frames); in the compact form (which does
  not state the thread switched out) a CPU's first switch opens no slice, as in
  trace_processor (counted);
* ``sched_switch`` and ``sched_waking`` also give each thread's states (:mod:`.thread_states`);
* ``cpu_frequency`` (kHz) and ``cpu_idle`` (the state as the kernel writes it) events are
  values of one counter track per CPU;
* ``process_stats`` samples are counter tracks of their process, named as trace_processor
  names them (``mem.rss``, ``mem.virt``, ... in bytes; ``oom_score_adj``);
* ``sys_stats`` values (:mod:`.sys_stats`): meminfo and vmstat counters in a "System"
  group, CPU times as counters per CPU in the "CPUs" group;
* FrameTimeline packets: see :mod:`.frame_timeline`;
* log lines (:mod:`.android_log`) are instants (category ``log``, the tag and priority as
  args) on the writing thread's track, its process the pid the line names.

Timestamps are taken as the file states them (ftrace's clock is the trace's clock, BOOTTIME,
on Android and Linux).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ...model import Diagnostics, ProcessKind, Trace, TrackKind
from ...model.builder import TraceBuilder
from .atrace import ASYNC_BEGIN, ASYNC_END, BEGIN, COUNTER, END, INSTANT, AtraceLine
from .frame_timeline import build_frames
from .ftrace import SystemPackets
from .ftrace_columns import CPU_FREQUENCY, CPU_IDLE, SCHED_SWITCH
from .thread_states import build_thread_states

_CPU_COUNTERS = {CPU_FREQUENCY: ("frequency", "kHz"), CPU_IDLE: ("idle state", None)}


class SystemTracks:
    """Processes and tracks of the system trace, made when first needed."""

    def __init__(self, trace: Trace, packets: SystemPackets) -> None:
        self.trace = trace
        self.packets = packets
        self.process: dict[int, int] = {p.pid: p.id for p in trace.processes
                                        if p.pid is not None and p.kind == ProcessKind.HOST}
        self.thread: dict[int, int] = {}
        self.named: dict[tuple[int, str, TrackKind], int] = {}   # per process, by name
        self.groups: dict[str, int] = {}   # synthetic groups: "CPUs", "System"
        self.tgid: dict[int, int] = {}     # tid -> tgid its atrace lines name
        self.comm: dict[int, str] = {}     # tid -> name sched_switch gives
        self.states: dict[int, int] = {}   # tid -> its thread state track

    def of_pid(self, pid: int) -> int:
        found = self.process.get(pid)
        if found is None:
            name = self.packets.processes.get(pid, (0, ""))[1] or f"Process {pid}"
            found = self.process[pid] = self.trace.add_process(name, pid=pid)
        return found

    def of_tid(self, tid: int) -> int:
        found = self.thread.get(tid)
        if found is None:
            tgid, name = self.packets.threads.get(tid, (0, ""))
            if not tgid:
                tgid = tid if tid in self.packets.processes else self.tgid.get(tid, tid)
            name = name or self.comm.get(tid, "") or f"Thread {tid}"
            found = self.thread[tid] = self.trace.add_track(name, process=self.of_pid(tgid),
                                                            tid=tid)
        return found

    def state_of(self, tid: int) -> int:
        """The track of the states of thread ``tid`` (:mod:`.thread_states`)."""
        found = self.states.get(tid)
        if found is None:
            thread = self.trace.tracks[self.of_tid(tid)]
            found = self.states[tid] = self.trace.add_track(
                f"{thread.name} {tid} state", process=thread.process, kind=TrackKind.SYNTHETIC)
        return found

    def named_track(self, process: int, name: str, kind: TrackKind,
                    unit: str | None = None) -> int:
        key = (process, name, kind)
        found = self.named.get(key)
        if found is None:
            found = self.named[key] = self.trace.add_track(name, process=process, kind=kind,
                                                           unit=unit)
        return found

    def group(self, name: str) -> int:
        found = self.groups.get(name)
        if found is None:
            found = self.groups[name] = self.trace.add_process(name, kind=ProcessKind.SYNTHETIC)
        return found


def build_system(trace: TraceBuilder, packets: SystemPackets) -> None:
    """Add the processes, threads, slices and counters of ``packets`` to ``trace``.

    >>> from traceconv.formats.perfetto.ftrace import PRINT, FtraceRecord
    >>> from traceconv.formats.perfetto.atrace import parse
    >>> lines = [(10, "B|7|step"), (15, "B|7|load"), (25, "E|7"), (40, "E|7")]
    >>> trace = TraceBuilder()
    >>> build_system(trace, SystemPackets([FtraceRecord(ts, 0, 8, PRINT, parse(text))
    ...                                    for ts, text in lines]))
    >>> [(s.name, s.start, s.dur, trace.tracks[s.track].name) for s in trace.iter_slices()]
    [('step', 10, 30, 'Thread 8'), ('load', 15, 10, 'Thread 8')]
    >>> [(p.pid, p.name) for p in trace.processes]
    [(7, 'Process 7')]
    """
    tracks = SystemTracks(trace, packets)
    records = sorted(packets.records, key=lambda r: r.ts)   # (stable: ties in file order)
    for record, line in packets.atrace():
        if line.tgid:
            tracks.tgid.setdefault(record.tid, line.tgid)
    for log in packets.logs:
        if log.pid:
            tracks.tgid.setdefault(log.tid, log.pid)
    for record in records:
        if record.what == SCHED_SWITCH:
            switch: Any = record.data
            tracks.comm.setdefault(switch.next_pid, switch.next_comm)
            if switch.prev_comm:   # (the compact form does not state it)
                tracks.comm.setdefault(switch.prev_pid, switch.prev_comm)
    for pid in packets.processes:
        tracks.of_pid(pid)
    for tid in packets.threads:
        tracks.of_tid(tid)
    frames = sorted(packets.frames, key=lambda f: f.ts)
    _atrace(trace, tracks, records)
    _sched(trace, tracks, records)
    build_thread_states(trace, tracks.state_of, records)
    _cpu_counters(trace, tracks, records)
    build_frames(trace, tracks, frames)
    for counter in packets.process_counters:
        unit = None if counter.name == "oom_score_adj" else "bytes"
        track = tracks.named_track(tracks.of_pid(counter.pid), counter.name, TrackKind.COUNTER,
                                   unit)
        trace.add_counter(track, counter.ts, counter.value)
    for value in packets.system_counters:
        if value.cpu is None:
            track = tracks.named_track(tracks.group("System"), value.name, TrackKind.COUNTER,
                                       value.unit)
        else:
            track = tracks.named_track(tracks.group("CPUs"), f"CPU {value.cpu} {value.name}",
                                       TrackKind.COUNTER, value.unit)
        trace.add_counter(track, value.ts, value.value)
    for log in sorted(packets.logs, key=lambda log: log.ts):   # (their strings are text)
        trace.add_instant(tracks.of_tid(log.tid), log.ts, log.message, "log",
                          {"tag": log.tag, "prio": log.prio})
    _count_rest(trace.diagnostics, packets)


def _atrace(trace: TraceBuilder, tracks: SystemTracks, records: list[Any]) -> None:
    stacks: dict[int, list[tuple[int, str]]] = defaultdict(list)
    started: dict[tuple[int, str, float], list[int]] = defaultdict(list)
    slices: list[tuple[int, int, int | None, str]] = []
    unmatched = 0
    for record in records:
        line = record.data
        if not isinstance(line, AtraceLine):
            continue
        if line.phase == BEGIN:
            stacks[record.tid].append((record.ts, line.name))
        elif line.phase == END:
            if stacks[record.tid]:
                start, name = stacks[record.tid].pop()
                slices.append((tracks.of_tid(record.tid), start, record.ts, name))
            else:
                unmatched += 1
        elif line.phase == COUNTER:
            counter = tracks.named_track(tracks.of_pid(line.tgid), line.name, TrackKind.COUNTER)
            trace.add_counter(counter, record.ts, line.value)
        elif line.phase == ASYNC_BEGIN:
            started[(line.tgid, line.name, line.value)].append(record.ts)
        elif line.phase == ASYNC_END:
            opened = started[(line.tgid, line.name, line.value)]
            if opened:
                slices.append((_async_track(tracks, line), opened.pop(), record.ts, line.name))
            else:
                unmatched += 1
        elif line.phase == INSTANT:
            trace.add_instant(tracks.of_tid(record.tid), record.ts, line.name)
    for tid, stack in stacks.items():   # (never ended: no end, the builder's rule)
        slices += [(tracks.of_tid(tid), start, None, name) for start, name in stack]
    for (tgid, name, cookie), opened in started.items():
        line = AtraceLine(ASYNC_BEGIN, tgid, name, cookie)
        slices += [(_async_track(tracks, line), start, None, name) for start in opened]
    trace.diagnostics.add("perfetto.end_without_begin", count=unmatched)
    not_ended: list[int] = []
    for track, start, end, name in sorted(slices, key=_longest_first):
        row = trace.add_interval(track, start, start if end is None else end, name)
        if end is None:
            not_ended.append(row)
    trace.not_ended(not_ended, "perfetto.slice_not_ended")


def _longest_first(item: tuple[int, int, int | None, Any]) -> tuple[int, int, bool, int]:
    """The order of slices (track, start, end, ...): by track and start, then the longest
    first; a slice never ended (end None) outlasts those that did.

    >>> sorted([(0, 5, 9, "a"), (0, 5, None, "b"), (0, 5, 20, "c")], key=_longest_first)
    [(0, 5, None, 'b'), (0, 5, 20, 'c'), (0, 5, 9, 'a')]
    """
    track, start, end = item[:3]
    return track, start, end is not None, -(end or 0)


def _async_track(tracks: SystemTracks, line: AtraceLine) -> int:
    return tracks.named_track(tracks.of_pid(line.tgid), line.name, TrackKind.ASYNC)


def _sched(trace: TraceBuilder, tracks: SystemTracks, records: list[Any]) -> None:
    running: dict[int, tuple[int, str, int] | None] = {}   # cpu -> tid, name, since
    slices: list[tuple[int, int, int | None, str, int]] = []
    first_compact = 0
    for record in records:
        if record.what != SCHED_SWITCH:
            continue
        switch = record.data
        previous = running.get(record.cpu)
        if previous is not None:
            tid, name, since = previous
            slices.append((record.cpu, since, record.ts, name, tid))
        if switch.prev_pid < 0 and record.cpu not in running:
            # a CPU's first switch in the compact form: trace_processor opens no slice
            running[record.cpu] = None
            first_compact += int(switch.next_pid != 0)
        else:
            running[record.cpu] = (switch.next_pid, switch.next_comm, record.ts)
    # (a thread still running: no end, the builder's rule)
    slices += [(cpu, state[2], None, state[1], state[0]) for cpu, state in running.items()
               if state is not None and state[0]]
    trace.diagnostics.add("perfetto.sched_first_compact_switch", count=first_compact)
    open_rows: list[int] = []
    for cpu, start, end, name, tid in sorted(slices, key=lambda s: (
            s[0], s[1], s[2] is None, s[2] or 0)):
        if tid == 0:   # (the idle task: trace_processor's sched table keeps it as utid 0)
            continue
        track = tracks.named_track(tracks.group("CPUs"), f"CPU {cpu}", TrackKind.SYNTHETIC)
        row = trace.add_interval(track, start, start if end is None else end,
                                 name or f"Thread {tid}", "sched", {"tid": tid})
        if end is None:
            open_rows.append(row)
    trace.not_ended(open_rows, "perfetto.sched_not_ended")


def _cpu_counters(trace: TraceBuilder, tracks: SystemTracks, records: list[Any]) -> None:
    for record in records:
        if record.what in _CPU_COUNTERS:
            what, unit = _CPU_COUNTERS[record.what]
            state = record.data
            track = tracks.named_track(tracks.group("CPUs"), f"CPU {state.cpu_id} {what}",
                                       TrackKind.COUNTER, unit)
            trace.add_counter(track, record.ts, float(state.state))


def _count_rest(diagnostics: Diagnostics, packets: SystemPackets) -> None:
    for kind, count in sorted(packets.unmodelled.items()):
        diagnostics.add(f"perfetto.ftrace_not_modelled.{kind}", count=count)
    for name, count in sorted(packets.unmodelled_stats.items()):
        diagnostics.add(f"perfetto.sys_stats_not_modelled.{name}", count=count)
    diagnostics.add("perfetto.ftrace_clock_not_boot", count=packets.other_clock)
    diagnostics.add("perfetto.ftrace_print_not_atrace", count=packets.not_atrace,
                    example=packets.not_atrace_example or None)
