"""The stored synthetic Linux system trace (``tests/data/perfetto/linux_system.pftrace``, written
by ``make_linux_system.py`` beside it from a fixed seed): scheduling on four CPUs with thread
states, atrace slices and counters, CPU frequency and idle, process and system stats, log lines.

Expected values: a walk of the raw packets with the ``perfetto`` package's classes, and the
real trace_processor on the same bytes.
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from pathlib import Path

import pytest
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace as ProtoTrace

import traceconv
from tests.test_perfetto_system import assert_thread_slices_equal
from tests.test_perfetto_thread_states import assert_states_equal
from traceconv.model import TrackKind

HERE = Path(__file__).resolve().parent / "data" / "perfetto"
SAMPLE = HERE / "linux_system.pftrace"


def _events() -> list[tuple[int, object]]:
    """(cpu, FtraceEvent) of every ftrace event, in file order."""
    return [(p.ftrace_events.cpu, e) for p in ProtoTrace.FromString(SAMPLE.read_bytes()).packet
            if p.HasField("ftrace_events") for e in p.ftrace_events.event]


def _sched_per_cpu(trace: traceconv.Trace) -> Counter[int]:
    return Counter(int(trace.tracks[s.track].name.split()[1]) for s in trace.iter_slices()
                   if s.category == "sched")


def test_the_generator_writes_the_stored_file():
    spec = importlib.util.spec_from_file_location("make_linux_system", HERE / "make_linux_system.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build() == SAMPLE.read_bytes()


def test_counts_against_a_raw_walk():
    events = _events()
    kinds = Counter(e.WhichOneof("event") for _, e in events)
    lines = Counter(e.print.buf[:1] for _, e in events if e.HasField("print"))
    switched_in = Counter(cpu for cpu, e in events
                          if e.HasField("sched_switch") and e.sched_switch.next_pid)
    packets = ProtoTrace.FromString(SAMPLE.read_bytes()).packet
    stats_values = sum(len(p.process_stats.processes) + len(p.sys_stats.meminfo)
                       for p in packets)
    trace = traceconv.load(SAMPLE)
    assert sum(trace.tracks[s.track].kind == TrackKind.THREAD for s in trace.iter_slices()) == \
        lines["B"] == 25
    assert _sched_per_cpu(trace) == switched_in
    assert len(trace.counters) == (lines["C"] + kinds["cpu_frequency"] + kinds["cpu_idle"]
                                   + stats_values)
    assert not [c.code for c in trace.diagnostics if "not_modelled" in c.code]
    logs = [e for p in packets for e in p.android_log.events]
    assert sorted((i.ts, i.name) for i in trace.iter_instants() if i.category == "log") == sorted(
        (e.timestamp - 1_790_000_000_000_000_000 + 1_000_000, e.message) for e in logs)
    assert len(logs) == 6


@pytest.mark.integration
def test_equals_trace_processor(trace_processor):
    trace_processor.load(SAMPLE.read_bytes())
    trace = traceconv.load(SAMPLE)
    assert assert_thread_slices_equal(trace_processor, trace) == 25
    rows = trace_processor.query("select cpu, ts, dur from sched where utid != 0")
    assert _sched_per_cpu(trace) == Counter(r.cpu for r in rows)
    ours = {(int(trace.tracks[s.track].name.split()[1]), s.start): s.dur
            for s in trace.iter_slices() if s.category == "sched"}
    assert sorted(ours) == sorted((r.cpu, r.ts) for r in rows)
    assert all(ours[(r.cpu, r.ts)] == r.dur for r in rows if r.dur >= 0)
    assert assert_states_equal(trace_processor, trace) == 64
    values = sorted((r.ts, r.value) for r in trace_processor.query("select ts, value from counter"))
    assert sorted((c.ts, c.value) for c in trace.iter_counter_samples()) == values
    logs = sorted((r.ts, r.tid, r.msg) for r in trace_processor.query(
        "select l.ts, t.tid, l.msg from android_logs l join thread t on l.utid = t.utid"))
    assert sorted((i.ts, trace.tracks[i.track].tid, i.name) for i in trace.iter_instants()
                  if i.category == "log") == logs
    assert len(logs) == 6
