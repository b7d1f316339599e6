"""Perfetto system traces (issue 34, part 2): ftrace bundles and the process tree, no
TrackEvent.

Expected values come from outside the reader: the real trace_processor (wasm) on the same
bytes, a walk of the raw packets with the ``perfetto`` package's generated classes, and the
bookkeeping of the generator that built the synthetic traces.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace as ProtoTrace
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

import traceconv
from tests.conftest import SHARED
from traceconv.cli import app
from traceconv.errors import InputError
from traceconv.model import TrackKind

ANDROID = SHARED.parent / "corpus" / "round4" / "perfetto" / "nowinandroid_trace.perfetto-trace"
THREAD_SLICES = "select s.name, s.ts, s.dur from slice s join thread_track t on s.track_id = t.id"


def _android() -> Path:
    if not ANDROID.is_file():
        pytest.skip("../shared/corpus is not beside this checkout")
    return ANDROID


def _thread_slices(trace: traceconv.Trace) -> list[tuple[str, int]]:
    return sorted((s.name, s.dur) for s in trace.iter_slices()
                  if trace.tracks[s.track].kind == TrackKind.THREAD)


def assert_flows_equal(trace_processor, trace: traceconv.Trace) -> int:
    """The same flows, each named by the slices it links; returns how many."""
    expected = sorted((r.a, r.b) for r in trace_processor.query(
        "select so.name a, si.name b from flow f join slice so on f.slice_out = so.id"
        " join slice si on f.slice_in = si.id"))
    ours = sorted((trace.slice(f.source).name, trace.slice(f.target).name)
                  for f in trace.iter_flows())
    assert ours == expected
    return len(expected)


def assert_thread_slices_equal(trace_processor, trace: traceconv.Trace,
                               only_threads: bool = True) -> int:
    """The thread slices (or all slices) of ``trace`` are trace_processor's: the same names
    and starts, the same durations where trace_processor's ended (a slice never ended has
    its duration -1 there; the model's ends at the last event, counted). Returns how many
    there are."""
    query = THREAD_SLICES if only_threads else "select name, ts, dur from slice"
    expected = sorted((r.name, r.ts, r.dur) for r in trace_processor.query(query))
    ours = sorted((s.name, s.start, s.dur) for s in trace.iter_slices()
                  if trace.tracks[s.track].kind == TrackKind.THREAD or not only_threads)
    assert [(name, ts) for name, ts, _ in ours] == [(name, ts) for name, ts, _ in expected]
    ended = [k for k, row in enumerate(expected) if row[2] >= 0]
    assert [ours[k] for k in ended] == [expected[k] for k in ended]
    return len(expected)


# -- a synthetic Linux system trace ------------------------------------------------------------

class SystemTrace:
    """A system trace built packet by packet, keeping what it wrote (the expected values)."""

    def __init__(self) -> None:
        self.builder = TraceProtoBuilder()
        self.atrace_slices: list[tuple[str, int]] = []
        self.counter_values = 0

    def process_tree(self, processes: dict[int, str], threads: dict[int, tuple[int, str]]
                     ) -> None:
        tree = self.builder.add_packet()
        tree.timestamp = 1
        for pid, cmdline in processes.items():
            process = tree.process_tree.processes.add()
            process.pid, process.ppid = pid, 1
            process.cmdline.extend([cmdline, "--flag"])
        for tid, (tgid, name) in threads.items():
            thread = tree.process_tree.threads.add()
            thread.tid, thread.tgid, thread.name = tid, tgid, name

    def memory(self, ts: int, pid: int, rss_kb: int, anon_kb: int, oom_score_adj: int) -> None:
        stats = self.builder.add_packet()
        stats.timestamp = ts
        process = stats.process_stats.processes.add()
        process.pid, process.vm_rss_kb, process.rss_anon_kb = pid, rss_kb, anon_kb
        process.oom_score_adj = oom_score_adj

    def system(self, ts: int, mem_total_kb: int, free_pages: int, user_ns: int) -> None:
        stats = self.builder.add_packet()
        stats.timestamp = ts
        meminfo = stats.sys_stats.meminfo.add()
        meminfo.key, meminfo.value = 1, mem_total_kb   # MEMINFO_MEM_TOTAL
        vmstat = stats.sys_stats.vmstat.add()
        vmstat.key, vmstat.value = 1, free_pages       # VMSTAT_NR_FREE_PAGES
        times = stats.sys_stats.cpu_stat.add()
        times.cpu_id, times.user_ns = 0, user_ns

    def bundle(self, cpu: int, events: list[tuple[int, int, str, object]]) -> None:
        """``events``: (timestamp, pid, kind, body) with kind ``print`` (the text),
        ``switch`` ((prev_pid, prev_comm, next_pid, next_comm[, prev_state]), the state 1
        when not given), ``waking`` (the pid woken), ``freq`` or ``idle`` (the state)."""
        packet = self.builder.add_packet()
        packet.ftrace_events.cpu = cpu
        for ts, pid, kind, body in events:
            event = packet.ftrace_events.event.add()
            event.timestamp, event.pid = ts, pid
            if kind == "print":
                event.print.buf = f"{body}\n"
            elif kind == "switch":
                prev_pid, prev_comm, next_pid, next_comm, *state = body  # type: ignore[misc]
                switch = event.sched_switch
                switch.prev_pid, switch.prev_comm = prev_pid, prev_comm
                switch.prev_state = state[0] if state else 1
                switch.next_pid, switch.next_comm = next_pid, next_comm
            elif kind == "waking":
                event.sched_waking.pid, event.sched_waking.target_cpu = body, cpu
            elif kind == "freq":
                event.cpu_frequency.cpu_id, event.cpu_frequency.state = cpu, body
            else:
                event.cpu_idle.cpu_id, event.cpu_idle.state = cpu, body

    def write(self, path: Path) -> Path:
        path.write_bytes(self.builder.serialize())
        return path


# cpu, timestamp, pid, event, what it says (sched_switch: prev pid and comm, next pid and comm)
LINUX_EVENTS = """
0 1000    0 switch 0 swapper/0 101 pt_main
0 1100  101 print  B|100|train_step
0 1200  101 print  B|100|forward
0 1300  101 print  C|100|queue_depth|3
0 1400  101 print  E|100
0 1450  101 print  S|100|prefetch|7
0 1500  101 print  E|100
0 1600  101 switch 101 pt_main 102 pt_autograd
0 1700  102 print  B|100|backward
0 1800  102 print  E|100
0 1900  102 switch 102 pt_autograd 0 swapper/0
0 1950    0 freq   1800000
0 2000    0 idle   1
0 2100    0 idle   4294967295
1 1050    0 switch 0 swapper/1 201 worker
1 1250  201 print  B|200|read_batch
1 1350  201 print  C|200|bytes_read|4096
1 1650  201 print  E|200
1 1700  201 print  F|100|prefetch|7
1 2050  201 switch 201 worker 0 swapper/1
1 2060    0 freq   2400000
"""


def _body(kind: str, text: str) -> object:
    if kind == "switch":
        prev_pid, prev_comm, next_pid, next_comm = text.split()
        return int(prev_pid), prev_comm, int(next_pid), next_comm
    return text if kind == "print" else int(text)


def linux_trace() -> SystemTrace:
    """A data loader and a trainer on two CPUs: scheduling, nested atrace slices, counters,
    an async slice, CPU frequency and idle states."""
    made = SystemTrace()
    made.process_tree({100: "/usr/bin/python3", 200: "loader"},
                      {101: (100, "pt_main"), 102: (100, "pt_autograd"), 201: (200, "worker")})
    events = [line.split(maxsplit=4) for line in LINUX_EVENTS.strip().splitlines()]
    for cpu in ("0", "1"):
        made.bundle(int(cpu), [(int(ts), int(pid), kind, _body(kind, body))
                               for on, ts, pid, kind, body in events if on == cpu])
    made.memory(1_000, 100, rss_kb=2_048, anon_kb=1_024, oom_score_adj=0)
    made.memory(2_000, 100, rss_kb=4_096, anon_kb=3_072, oom_score_adj=-100)
    made.system(1_500, mem_total_kb=16_000_000, free_pages=1_000, user_ns=5_000)
    made.system(2_500, mem_total_kb=16_000_000, free_pages=900, user_ns=9_000)
    made.atrace_slices = sorted([("train_step", 400), ("forward", 200), ("backward", 100),
                                 ("read_batch", 400)])
    # queue_depth, bytes_read; freq; idle; process memory; meminfo, vmstat, 8 CPU times
    made.counter_values = 2 + 2 + 2 + 6 + 2 * (1 + 1 + 8)
    return made


def test_linux_trace_by_hand(tmp_path: Path):
    made = linux_trace()
    trace = traceconv.load(made.write(tmp_path / "linux.pftrace"))
    assert _thread_slices(trace) == made.atrace_slices
    processes = {p.pid: p.name for p in trace.processes if p.pid is not None}
    assert processes == {100: "/usr/bin/python3", 200: "loader"}
    threads = {t.tid: t.name for t in trace.tracks if t.kind == TrackKind.THREAD}
    assert threads == {101: "pt_main", 102: "pt_autograd", 201: "worker"}
    cpu = sorted((trace.tracks[s.track].name, s.name, s.start, s.dur)
                 for s in trace.iter_slices() if s.category == "sched")
    assert cpu == [("CPU 0", "pt_autograd", 1_600, 300), ("CPU 0", "pt_main", 1_000, 600),
                   ("CPU 1", "worker", 1_050, 1_000)]
    assert len(trace.counters) == made.counter_values
    rss = [t.id for t in trace.tracks if t.name == "mem.rss"]
    assert [(c.ts, c.value) for c in trace.iter_counter_samples() if c.track in rss] == [
        (1_000, 2_048 * 1024), (2_000, 4_096 * 1024)]
    user = [t.id for t in trace.tracks if t.name == "CPU 0 user_ns"]
    assert [(c.ts, c.value) for c in trace.iter_counter_samples() if c.track in user] == [
        (1_500, 5_000), (2_500, 9_000)]
    prefetch = [s for s in trace.iter_slices() if s.name == "prefetch"]
    assert [(s.start, s.dur) for s in prefetch] == [(1_450, 250)]
    assert trace.tracks[prefetch[0].track].kind == TrackKind.ASYNC


@pytest.mark.integration
def test_linux_trace_equals_trace_processor(tmp_path: Path, trace_processor):
    path = linux_trace().write(tmp_path / "linux.pftrace")
    tp = trace_processor
    tp.load(path.read_bytes())
    trace = traceconv.load(path)
    assert assert_thread_slices_equal(tp, trace) == 4
    sched = sorted((r.cpu, r.ts, r.dur) for r in tp.query(
        "select cpu, ts, dur from sched where utid != 0"))
    ours = sorted((int(trace.tracks[s.track].name.split()[1]), s.start, s.dur)
                  for s in trace.iter_slices() if s.category == "sched")
    assert ours == sched
    values = sorted((r.name, r.ts, r.value) for r in tp.query(
        "select t.name, c.ts, c.value from counter c join track t on c.track_id = t.id"))
    ours = sorted((trace.tracks[c.track].name, c.ts, c.value) for c in trace.iter_counter_samples())
    # (trace_processor names the CPU counter tracks by kind: cpufreq, cpuidle)
    assert [v for v in ours if not v[0].startswith("CPU")] == [
        v for v in values if not v[0].startswith("cpu")]
    assert sorted(v[1:] for v in ours) == sorted(v[1:] for v in values)
    named = {r.pid: r.name for r in tp.query("select pid, name from process where name is not null")}
    assert named == {p.pid: p.name for p in trace.processes if p.pid is not None}
    threads = {r.tid: r.name for r in tp.query("select tid, name from thread where name is not null and tid != 0")}
    assert threads == {t.tid: t.name for t in trace.tracks if t.kind == TrackKind.THREAD}


def test_times_past_int64_move_to_the_edge_and_are_counted(tmp_path: Path):
    """(fuzz) ftrace timestamps are uint64: a CPU frequency, an idle state and an atrace
    mark at 2^64 - 1 are kept at the model's last time and counted, not an OverflowError."""
    made = SystemTrace()
    made.process_tree({100: "python3"}, {101: (100, "main")})
    late = 2**64 - 1
    made.bundle(0, [(1_000, 0, "freq", 1_800_000), (late, 0, "freq", 2_400_000),
                    (late, 0, "idle", 1), (2_000, 101, "print", "B|100|step"),
                    (late, 101, "print", "E|100")])
    trace = traceconv.load(made.write(tmp_path / "late.pftrace"))
    assert traceconv.validate(trace) == []
    edge = 35 * 10**17   # the model's last time (model.time_beyond_range)
    assert sorted(trace.counters.numpy("ts").tolist()) == [1_000, edge, edge]
    assert [(s.name, s.start, s.end) for s in trace.iter_slices()
            if s.name == "step"] == [("step", 2_000, edge)]
    assert trace.diagnostics.count("model.time_beyond_range") == 3


def test_names_and_prints_that_are_not_utf8_are_repaired_and_counted(tmp_path: Path):
    """A process name, a sched_switch comm and an atrace print with bytes that are not
    UTF-8: shown with U+FFFD and each counted (they were repaired silently before)."""
    path = linux_trace().write(tmp_path / "linux.pftrace")
    data = path.read_bytes()
    spoiled = {b"loader": b"lo\xffder", b"pt_autograd": b"pt_auto\xferad",
               b"read_batch": b"read\xc3batch"}
    counts = {good: data.count(good) for good in spoiled}
    for good, bad in spoiled.items():
        assert len(good) == len(bad)
        data = data.replace(good, bad)
    path.write_bytes(data)
    trace = traceconv.load(path)
    assert traceconv.validate(trace) == []
    names = {p.name for p in trace.processes} | {t.name for t in trace.tracks} \
        | {s.name for s in trace.iter_slices()}
    assert {"lo\ufffdder", "pt_auto\ufffdrad", "read\ufffdbatch"} <= names
    assert not {"loader", "pt_autograd", "read_batch"} & names
    assert trace.diagnostics.count("perfetto.invalid_utf8") == sum(counts.values())

def compact_trace(path: Path) -> Path:
    """sched_switch in the compact form (columns, delta timestamps, interned names) on
    CPU 2: python (pid 300) from 5,000 to 5,400, idle, then a worker from 5,900 to 6,200,
    idle. The first switch states no thread switched out: it opens no slice."""
    made = SystemTrace()
    compact = made.builder.add_packet().ftrace_events
    compact.cpu = 2
    sched = compact.compact_sched
    sched.intern_table.extend(["swapper/2", "python", "worker"])
    sched.switch_timestamp.extend([5_000, 400, 500, 300])
    sched.switch_next_pid.extend([300, 0, 301, 0])
    sched.switch_next_comm_index.extend([1, 0, 2, 0])
    sched.switch_prev_state.extend([0, 1, 0, 1])
    sched.switch_next_prio.extend([120] * 4)
    return made.write(path)


def test_compact_sched_by_hand(tmp_path: Path):
    trace = traceconv.load(compact_trace(tmp_path / "compact.pftrace"))
    assert sorted((trace.tracks[s.track].name, s.name, s.start, s.dur)
                  for s in trace.iter_slices()) == [("CPU 2", "worker", 5_900, 300)]
    assert trace.diagnostics.count("perfetto.sched_first_compact_switch") == 1


@pytest.mark.integration
def test_compact_sched_equals_trace_processor(tmp_path: Path, trace_processor):
    path = compact_trace(tmp_path / "compact.pftrace")
    trace_processor.load(path.read_bytes())
    expected = sorted((r.name, r.ts, r.dur) for r in trace_processor.query(
        "select t.name, s.ts, s.dur from sched s join thread t using (utid) where utid != 0"))
    trace = traceconv.load(path)
    assert sorted((s.name, s.start, s.dur) for s in trace.iter_slices()) == expected


def _steps(who: list[int], what: st.SearchStrategy) -> st.SearchStrategy:
    """Lists of (who, what, the gap in ns before it)."""
    return st.lists(st.tuples(st.sampled_from(who), what, st.integers(1, 400)),
                    min_size=1, max_size=40)


def _app(pid: int, tids: tuple[int, ...], prefix: str) -> SystemTrace:
    """A system trace whose process tree holds one process and its threads."""
    made = SystemTrace()
    made.process_tree({pid: "app"}, {tid: (pid, f"{prefix}{tid}") for tid in tids})
    return made


def read_as_compared(path: Path) -> traceconv.Trace:
    """Our trace of a generated ``path``; one of which nothing is read (every line left out)
    is refused in one line, and compared here as the empty trace it is."""
    try:
        return traceconv.load(path)
    except InputError as exc:
        assert "nothing read" in str(exc), exc
        return traceconv.Trace()


# nested B/E lines (thread, begin or end, gap), written in time order in one bundle
_LINES = _steps([11, 12, 13], st.booleans())


@pytest.mark.integration
@settings(max_examples=15)
@given(lines=_LINES)
def test_random_atrace_equals_trace_processor(tmp_path_factory, trace_processor, lines):
    made = _app(10, (11, 12, 13), "t")
    ts, events = 1_000, []
    for k, (tid, begin, gap) in enumerate(lines):
        ts += gap
        events.append((ts, tid, "print", f"B|10|s{k}" if begin else "E|10"))
    made.bundle(0, events)
    path = made.write(tmp_path_factory.mktemp("atrace") / "random.pftrace")
    trace_processor.load(path.read_bytes())
    trace = read_as_compared(path)
    assert_thread_slices_equal(trace_processor, trace)
    never_ended = trace_processor.query("select count(*) n from slice where dur < 0")[0].n
    assert trace.diagnostics.count("perfetto.slice_not_ended") == never_ended


# sched_switch events on two CPUs: (cpu, thread switched in (0: idle), gap before it)
_SWITCHES = _steps([0, 1], st.sampled_from([0, 21, 22, 23]))


@pytest.mark.integration
@settings(max_examples=15)
@given(switches=_SWITCHES)
def test_random_sched_equals_trace_processor(tmp_path_factory, trace_processor, switches):
    made = _app(20, (21, 22, 23), "w")
    running = {0: 0, 1: 0}
    ts, per_cpu = 1_000, {0: [], 1: []}
    for cpu, tid, gap in switches:
        ts += gap
        previous = running[cpu]
        per_cpu[cpu].append((ts, previous, "switch", (previous, f"w{previous}", tid, f"w{tid}")))
        running[cpu] = tid
    for cpu, events in per_cpu.items():
        made.bundle(cpu, events)
    path = made.write(tmp_path_factory.mktemp("sched") / "random.pftrace")
    trace_processor.load(path.read_bytes())
    rows = trace_processor.query("select cpu, ts, dur from sched where utid != 0")
    trace = read_as_compared(path)
    ours = {(int(trace.tracks[s.track].name.split()[1]), s.start): s.dur
            for s in trace.iter_slices() if s.category == "sched"}
    assert sorted(ours) == sorted((r.cpu, r.ts) for r in rows)
    assert all(ours[(r.cpu, r.ts)] == r.dur for r in rows if r.dur >= 0)
    assert trace.diagnostics.count("perfetto.sched_not_ended") == sum(r.dur < 0 for r in rows)


# -- the Android trace ---------------------------------------------------------------------------

ANDROID_CUT = Path(__file__).resolve().parent.parent / "samples" / "perfetto" / \
    "nowinandroid_cut.perfetto-trace"


def test_android_cut_against_a_raw_walk():
    packets = ProtoTrace.FromString(ANDROID_CUT.read_bytes()).packet
    lines = Counter(e.print.buf[:1] for p in packets if p.HasField("ftrace_events")
                    for e in p.ftrace_events.event if e.HasField("print"))
    trace = traceconv.load(ANDROID_CUT)
    assert len(_thread_slices(trace)) == lines["B"] == 216
    # 2 B lines whose E was cut off, and the S line: never ended; 2 E lines whose B was cut
    assert trace.diagnostics.count("perfetto.slice_not_ended") == 3
    assert trace.diagnostics.count("perfetto.end_without_begin") == 2
    frame_pids = {pid for kind in _frame_starts(ANDROID_CUT).values() for pid in kind}
    assert {p.pid for p in trace.processes} == {9305} | frame_pids


@pytest.mark.integration
def test_android_cut_equals_trace_processor(trace_processor):
    trace_processor.load(ANDROID_CUT.read_bytes())
    trace = traceconv.load(ANDROID_CUT)
    assert assert_thread_slices_equal(trace_processor, trace) == 216
    assert assert_thread_slices_equal(trace_processor, trace, only_threads=False) == len(
        trace.slices)
    assert assert_flows_equal(trace_processor, trace) == len(trace.flows) > 0


@pytest.mark.shared
def test_android_trace_against_a_raw_walk():
    path = _android()
    packets = ProtoTrace.FromString(path.read_bytes()).packet
    lines = Counter(e.print.buf[:1] for p in packets if p.HasField("ftrace_events")
                    for e in p.ftrace_events.event if e.HasField("print"))
    trace = traceconv.load(path)
    on_threads = _thread_slices(trace)
    assert len(on_threads) == lines["B"] == 3_122
    # FrameTimeline: one slice per start packet (each ends at the FrameEnd of its cookie),
    # but expected surface frames repeating a token of their process
    starts = _frame_starts(path)
    repeated = sum(n - len(set(tokens)) for n, tokens in (
        (len(t), t) for t in starts["expected surface"].values()))
    assert trace.diagnostics.count("perfetto.frame_timeline_token_repeated") == repeated == 117
    assert len(trace.slices) == lines["B"] + lines["S"] + sum(
        len(tokens) for kind in starts.values() for tokens in kind.values()) - repeated
    assert len(trace.flows) == sum(len(t) for t in starts["actual surface"].values()) == 1_068


def _frame_starts(path: Path) -> dict[str, dict[int, list[int]]]:
    """Per FrameTimeline start kind, per pid, the tokens, walking the raw wire (the
    ``perfetto`` package's classes predate FrameTimelineEvent, TracePacket field 76)."""
    from traceconv.formats.protowire import iter_fields

    kinds = {1: "expected display", 2: "actual display", 3: "expected surface",
             4: "actual surface"}
    pid_field = {1: 3, 2: 3, 3: 4, 4: 4}
    found: dict[str, dict[int, list[int]]] = {kind: {} for kind in kinds.values()}
    data = path.read_bytes()
    for _, _, start, end in iter_fields(data):
        for number, _, value, after in iter_fields(data, start, end):
            if number != 76:
                continue
            for kind, _, body, body_end in iter_fields(data, value, after):
                if kind in kinds:
                    message = {n: v for n, _, v, _ in iter_fields(data, body, body_end)}
                    found[kinds[kind]].setdefault(message[pid_field[kind]], []).append(
                        message[2])
    return found


@pytest.mark.shared
@pytest.mark.integration
def test_android_trace_equals_trace_processor(trace_processor):
    path = _android()
    trace_processor.load(path.read_bytes())
    trace = traceconv.load(path)
    assert assert_thread_slices_equal(trace_processor, trace) == 3_122
    assert assert_thread_slices_equal(trace_processor, trace, only_threads=False) == 6_744
    assert assert_flows_equal(trace_processor, trace) == 1_068
    processes = {r.pid for r in trace_processor.query("select pid from process where pid != 0")}
    assert processes == {p.pid for p in trace.processes} and len(processes) == 5
    threads = {r.tid for r in trace_processor.query(
        "select distinct tid from thread join thread_track using (utid)")}
    assert threads == {t.tid for t in trace.tracks if t.kind == TrackKind.THREAD}


# -- nothing to model ----------------------------------------------------------------------------

def _config_only(path: Path) -> Path:
    builder = TraceProtoBuilder()
    for _ in range(2):
        builder.add_packet().trace_config.duration_ms = 1000
    builder.add_packet().system_info.utsname.sysname = "Linux"
    path.write_bytes(builder.serialize())
    return path


def test_config_only_file_is_refused_naming_its_packets(tmp_path: Path):
    path = _config_only(tmp_path / "config.perfetto-trace")
    with pytest.raises(InputError, match="2 trace_config, 1 system_info"):
        traceconv.load(path)
    result = CliRunner().invoke(app, ["info", str(path)])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "trace_config" in lines[0]


def test_a_damaged_bundle_is_left_out_and_counted(tmp_path: Path):
    """Bundles are decoded a block at a time; one whose event runs past its end is left
    out (counted), the others of its block kept."""
    made = SystemTrace()
    made.bundle(0, [(10, 5, "print", "B|5|kept"), (30, 5, "print", "E|5")])
    bundle = b"\x08\x01\x12\x09\x08\x01"   # cpu 1, an event of 9 bytes holding 2
    packet = b"\x0a" + bytes([len(bundle)]) + bundle   # TracePacket.ftrace_events
    path = made.write(tmp_path / "damaged.pftrace")
    path.write_bytes(path.read_bytes() + b"\x0a" + bytes([len(packet)]) + packet)
    trace = traceconv.load(path)
    assert _thread_slices(trace) == [("kept", 20)]
    assert trace.diagnostics.count("perfetto.packet_decode") == 1


QML_JULIA = Path(__file__).resolve().parent / "data" / "perfetto" / "qmljulia_trace.pftrace"


def test_real_file_without_events_is_refused():
    """A real trace of config, stats and service packets only (trace_processor loads no
    slice and no counter): one line naming them, exit 1 (it read as an empty trace)."""
    kinds = Counter(p.WhichOneof("data") for p in ProtoTrace.FromString(
        QML_JULIA.read_bytes()).packet)
    result = CliRunner().invoke(app, ["info", str(QML_JULIA)])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(QML_JULIA) in lines[0]
    assert all(f"{n} {kind}" in lines[0] for kind, n in kinds.items() if kind), (kinds, lines)


def test_what_is_not_modelled_is_counted(tmp_path: Path):
    made = SystemTrace()
    made.bundle(0, [(10, 5, "print", "B|5|kept"), (20, 5, "print", "just text"),
                    (30, 5, "print", "E|5"), (40, 5, "print", "E|5")])
    packet = made.builder.add_packet()
    waking = packet.ftrace_events.event.add()
    waking.timestamp, waking.pid = 50, 5
    waking.sched_wakeup.pid = 6
    packet.ftrace_events.ftrace_clock = 2   # FTRACE_CLOCK_GLOBAL
    made.builder.add_packet().sys_stats.num_forks = 12
    process = made.builder.add_packet().process_stats.processes.add()
    process.pid, process.vm_rss_kb, process.chrome_private_footprint_kb = 5, 64, 32
    trace = traceconv.load(made.write(tmp_path / "rest.pftrace"))
    assert _thread_slices(trace) == [("kept", 20)]
    assert trace.diagnostics.count("perfetto.ftrace_print_not_atrace") == 1
    assert trace.diagnostics.count("perfetto.end_without_begin") == 1
    assert trace.diagnostics.count("perfetto.ftrace_not_modelled.sched_wakeup") == 1
    assert trace.diagnostics.count("perfetto.ftrace_clock_not_boot") == 1
    assert trace.diagnostics.count("perfetto.sys_stats_not_modelled.num_forks") == 1
    assert trace.diagnostics.count(
        "perfetto.sys_stats_not_modelled.process_chrome_private_footprint_kb") == 1
