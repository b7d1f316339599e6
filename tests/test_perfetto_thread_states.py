"""Thread states of a Linux system trace (sched_switch and sched_waking), equal to
trace_processor's ``thread_state`` table on the same bytes (issue 34, part 2).

Expected values: the real trace_processor (wasm), and by hand for the small trace.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

import traceconv
from tests.test_perfetto_system import _app, linux_trace, read_as_compared

THREAD_STATES = ("select t.tid, s.ts, s.dur, s.state from thread_state s "
                 "join thread t on s.utid = t.utid")


def states(trace: traceconv.Trace) -> list[tuple[int, int, int, str]]:
    """(tid, start, duration, state) of the model's thread states (the tid from the track's
    name, "<thread> <tid> state")."""
    return sorted((int(trace.tracks[s.track].name.split()[-2]), s.start, s.dur, s.name)
                  for s in trace.iter_slices() if s.category == "thread_state")


def assert_states_equal(trace_processor, trace: traceconv.Trace) -> int:
    """The same states, the same durations where trace_processor's ended (-1 where it left
    one open; the model's ends at the last event, counted). Returns how many."""
    expected = sorted((r.tid, r.ts, r.dur, r.state) for r in trace_processor.query(THREAD_STATES))
    ours = states(trace)
    assert [(tid, ts, name) for tid, ts, _, name in ours] == [
        (tid, ts, name) for tid, ts, _, name in expected]
    assert [o for o, e in zip(ours, expected, strict=True) if e[2] >= 0] == [
        e for e in expected if e[2] >= 0]
    assert trace.diagnostics.count("perfetto.thread_state_not_ended") == sum(
        e[2] < 0 for e in expected)
    return len(expected)


def loader_trace(path: Path) -> Path:
    """A data-loader thread waking the trainer: one CPU, sleeping, runnable, preempted."""
    made = _app(100, (101, 102), "t")
    made.bundle(0, [
        (1_000, 0, "switch", (0, "swapper/0", 101, "t101", 0)),
        (1_100, 101, "waking", 102),
        (1_200, 101, "switch", (101, "t101", 102, "t102", 1)),        # 101 sleeps
        (1_300, 102, "switch", (102, "t102", 0, "swapper/0", 0x800)),  # 102 preempted
        (1_400, 0, "waking", 101),
        (1_500, 0, "switch", (0, "swapper/0", 101, "t101", 0)),
        (1_600, 101, "switch", (101, "t101", 0, "swapper/0", 2)),     # 101 in D
    ])
    return made.write(path)


def test_thread_states_by_hand(tmp_path: Path):
    trace = traceconv.load(loader_trace(tmp_path / "loader.pftrace"))
    assert states(trace) == [(101, 1_000, 200, "Running"), (101, 1_200, 200, "S"),
                             (101, 1_400, 100, "R"), (101, 1_500, 100, "Running"),
                             (101, 1_600, 0, "D"), (102, 1_100, 100, "R"),
                             (102, 1_200, 100, "Running"), (102, 1_300, 300, "R+")]
    assert trace.diagnostics.count("perfetto.thread_state_not_ended") == 2


@pytest.mark.integration
def test_thread_states_equal_trace_processor(tmp_path: Path, trace_processor):
    path = loader_trace(tmp_path / "loader.pftrace")
    trace_processor.load(path.read_bytes())
    assert assert_states_equal(trace_processor, traceconv.load(path)) == 8


# (cpu, what: a switch to that thread (0: idle) with the state the one switched out is left
# in, or a wakeup of that thread; the gap in ns before it)
_EVENTS = st.lists(st.tuples(st.sampled_from([0, 1]), st.sampled_from([0, 31, 32, 33]),
                             st.sampled_from([0, 1, 2, 0x800, None]), st.integers(1, 300)),
                   min_size=1, max_size=40)


@pytest.mark.integration
@pytest.mark.slow
@settings(max_examples=20, phases=(Phase.explicit, Phase.generate))   # (no shrinking: each
# example loads the wasm trace_processor)
@given(events=_EVENTS)
def test_random_switches_and_wakeups_equal_trace_processor(tmp_path_factory, trace_processor,
                                                           events):
    made = _app(30, (31, 32, 33), "w")
    running = {0: 0, 1: 0}
    ts, per_cpu = 1_000, {0: [], 1: []}
    for cpu, tid, state, gap in events:
        ts += gap
        if state is None:   # a wakeup, written by the thread running on that CPU
            per_cpu[cpu].append((ts, running[cpu], "waking", tid))
            continue
        previous = running[cpu]
        if tid == previous or (tid and tid == running[1 - cpu]):
            continue   # (the kernel never switches to the thread running, nor runs one twice)
        per_cpu[cpu].append((ts, previous, "switch",
                             (previous, f"w{previous}", tid, f"w{tid}", state)))
        running[cpu] = tid
    for cpu, bundle in per_cpu.items():
        made.bundle(cpu, bundle)
    path = made.write(tmp_path_factory.mktemp("states") / "random.pftrace")
    trace_processor.load(path.read_bytes())
    assert_states_equal(trace_processor, read_as_compared(path))


@pytest.mark.integration
def test_linux_trace_states_equal_trace_processor(tmp_path: Path, trace_processor):
    """The synthetic Linux trace of tests/test_perfetto_system.py: two CPUs, atrace slices."""
    path = linux_trace().write(tmp_path / "linux.pftrace")
    trace_processor.load(path.read_bytes())
    assert assert_states_equal(trace_processor, traceconv.load(path)) == 6
