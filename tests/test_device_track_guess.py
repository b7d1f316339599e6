"""A device stream written as a plain, uncategorised thread is read as a device stream.

The input has the shape of a real one (a Python CUPTI tool's ``gpu_trace.json``): one thread,
pid 1 / tid 7, no ``cat``, rounds of a host-to-device copy, an elementwise kernel and a
device-to-host copy, with correlation ids. Expected numbers are the generator's own integer
nanoseconds, summed here in plain Python.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import traceconv
from tests.conftest import DATA, SAMPLES, SHARED_ROOT, bundled_files
from traceconv.analysis import advise, critical_path, op_summary
from traceconv.errors import TraceconvError
from traceconv.model import ProcessKind, TrackKind

KERNEL = ("void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, "
          "float, float, at::native::binary_internal::MulFunctor<float> >, std::array<char*, "
          "2ul> >(int, at::native::AUnaryFunctor<float, float, float, "
          "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)")
ROUNDS = 100
CODE = "chrome.device_track_guessed"


def _rounds(seed: int = 14) -> list[tuple[str, int, int]]:
    """(name, start ns, duration ns) of every copy and kernel, one after another with gaps."""
    rng, now, work = random.Random(seed), 1_000_000_000, []
    for _ in range(ROUNDS):
        for name, low, high in (("[MEMCPY] HtoD", 7_000_000, 9_000_000), (KERNEL, 250_000, 350_000),
                                ("[MEMCPY] DtoH", 55_000_000, 70_000_000)):
            now += rng.randrange(1_000, 20_000_000)
            work.append((name, now, rng.randrange(low, high)))
            now += work[-1][2]
    return work


def _event(name: str, start: int, dur: int, i: int, **extra: object) -> dict:
    return {"name": name, "ph": "X", "ts": start / 1000, "dur": dur / 1000, "pid": 1, "tid": 7,
            "args": {"correlationId": i + 1, "externalId": 2 * i + 1}, **extra}


def _write(path: Path, events: list[dict]) -> Path:
    path.write_text(json.dumps(events))
    return path


@pytest.fixture(scope="module")
def stream_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    events = [_event(*work, i) for i, work in enumerate(_rounds())]
    return _write(tmp_path_factory.mktemp("cupti") / "gpu_trace.json", events)


def _kinds(trace: traceconv.Trace) -> list[tuple[ProcessKind, TrackKind, str]]:
    return [(trace.processes[t.process].kind, t.kind, t.name) for t in trace.tracks]


def test_the_thread_is_a_device_stream_and_the_guess_is_counted(stream_file: Path) -> None:
    trace = traceconv.load(stream_file)
    assert _kinds(trace) == [(ProcessKind.DEVICE, TrackKind.STREAM, "stream 7")]
    found = [d for d in trace.diagnostics if d.code == CODE]
    assert [(d.kind, d.count) for d in found] == [("guessed", 1)]
    assert found[0].example.startswith(
        f"pid 1 tid 7: {3 * ROUNDS} slices, none within another, all device work by name: "
        f"{2 * ROUNDS} copies or memsets, {ROUNDS} kernels")


def test_summary_advise_and_critical_path_give_the_hand_numbers(stream_file: Path) -> None:
    work = _rounds()
    by_name: dict[str, int] = {}
    for name, _, dur in work:
        by_name[name] = by_name.get(name, 0) + dur
    busy = sum(by_name.values())
    copies = busy - by_name[KERNEL]
    span = work[-1][1] + work[-1][2] - work[0][1]
    trace = traceconv.load(stream_file)

    rows = {row.name: row for row in op_summary(trace)}
    assert {name: (row.kind, row.calls, row.self_device_ns, row.self_host_ns)
            for name, row in rows.items()} == {
        "[MEMCPY] HtoD": ("memcpy", ROUNDS, by_name["[MEMCPY] HtoD"], None),
        "[MEMCPY] DtoH": ("memcpy", ROUNDS, by_name["[MEMCPY] DtoH"], None),
        KERNEL: ("kernel", ROUNDS, by_name[KERNEL], None)}

    findings = {f.rule: f for f in advise(trace).findings}
    assert "framework-overhead" not in findings
    idle = findings["gpu-idle"].evidence
    assert (idle["busy_ns"], idle["span_ns"], idle["idle_ns"]) == (busy, span, span - busy)
    heavy = findings["memcpy-heavy"].evidence
    assert (heavy["copy_ns"], heavy["busy_ns"], heavy["copies"]) == (copies, busy, 2 * ROUNDS)

    path = critical_path(trace)
    assert {k: v for k, v in path.breakdown.items() if v} == {
        "memcpy": copies, "kernel": by_name[KERNEL], "idle": span - busy}


# each variant breaks one part of the evidence: the thread stays a host thread
VARIANTS = {
    "categorised": lambda events: [{**e, "cat": "gpu"} for e in events],
    "a runtime call among them": lambda events: [*events, _event("cudaMemcpyAsync", 1, 1, 0)],
    "a framework operator": lambda events: [*events, _event("aten::copy_", 2, 1, 0)],
    "one slice within another": lambda events: [
        *events, _event("[MEMCPY] HtoD", events[0]["ts"] * 1000 + 1, 1, 0)],
    "a name that is no device work": lambda events: [*events, _event("step", 3, 1, 0)],
    "a host-side C++ function": lambda events: [*events, _event("void Foo::bar(int)", 4, 1, 0)],
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_thread_without_all_the_evidence_stays_a_host_thread(tmp_path: Path,
                                                               variant: str) -> None:
    events = VARIANTS[variant]([_event(*work, i) for i, work in enumerate(_rounds())])
    trace = traceconv.load(_write(tmp_path / "trace.json", events))
    assert _kinds(trace) == [(ProcessKind.HOST, TrackKind.THREAD, "thread 7")]
    assert trace.diagnostics.count(CODE) == 0


# host C++ with a kernel's shape: templated, "void ...<...>(...)", a function named a kernel
HOST_TEMPLATES = (
    "void std::__invoke_impl<void, Worker&>(std::__invoke_other, Worker&)",
    "void at::native::cpu_kernel_vec<at::TensorIteratorBase&, float>(at::TensorIteratorBase&)",
    "at::native::(anonymous namespace)::add_kernel<float>(at::TensorIteratorBase&)",
    "void std::thread::_Invoker<std::tuple<void (*)()> >::_M_invoke<0ul>(std::_Index_tuple<0ul>)")


def test_a_thread_of_kernel_shaped_host_templates_stays_a_host_thread(tmp_path: Path) -> None:
    """A CPU trace whose one thread runs templated host functions one after another: the
    shape of a kernel's signature, and no device copy anywhere in the process."""
    events = [{"name": name, "ph": "X", "ts": 20 * i, "dur": 10, "pid": 42, "tid": 2}
              for i, name in enumerate(HOST_TEMPLATES * 3)]
    trace = traceconv.load(_write(tmp_path / "cpu.json", events))
    assert _kinds(trace) == [(ProcessKind.HOST, TrackKind.THREAD, "thread 2")]
    assert trace.diagnostics.count(CODE) == 0
    assert all(row.self_device_ns is None for row in op_summary(trace))


def test_a_stream_of_kernels_alone_is_one_beside_its_devices_copies(tmp_path: Path) -> None:
    """pid 1: tid 7 runs the rounds (copies and kernels), tid 9 kernels only: both streams
    (the copies on 7 prove pid 1 a device). pid 2: tid 9 the same kernels, and no copy in
    its process: a host thread."""
    events = [_event(*work, i) for i, work in enumerate(_rounds())]
    kernels_only = [_event(KERNEL, 10_000 * k, 5_000, 1000 + k, tid=9) for k in range(5)]
    elsewhere = [{**e, "pid": 2} for e in kernels_only]
    trace = traceconv.load(_write(tmp_path / "two.json", events + kernels_only + elsewhere))
    assert sorted(_kinds(trace), key=lambda kind: kind[2]) == [
        (ProcessKind.DEVICE, TrackKind.STREAM, "stream 7"),
        (ProcessKind.DEVICE, TrackKind.STREAM, "stream 9"),
        (ProcessKind.HOST, TrackKind.THREAD, "thread 9")]
    assert trace.diagnostics.count(CODE) == 2


# host symbols with a copy word in them (libc's, a program's): no device names them so
HOST_COPIES = ("__memcpy_avx_unaligned_erms", "__memset_avx2_unaligned", "memcpy", "memset",
               "__memmove_avx_unaligned_erms", "memcpy_helper", "__memcpy_chk")


def test_a_thread_of_host_copy_symbols_stays_a_host_thread(tmp_path: Path) -> None:
    """A CPU-only trace (one thread in ``main``, one running libc's copies one after
    another): nothing in it is a device's, so nothing has device time or copy advice."""
    events = [{"name": "main", "ph": "X", "ts": 0, "dur": 1000, "pid": 42, "tid": 1}] + [
        {"name": name, "ph": "X", "ts": 20 * i, "dur": 10, "pid": 42, "tid": 2}
        for i, name in enumerate(HOST_COPIES)]
    trace = traceconv.load(_write(tmp_path / "cpu.json", events))
    assert {(kind, track) for kind, track, _ in _kinds(trace)} == {
        (ProcessKind.HOST, TrackKind.THREAD)}
    assert trace.diagnostics.count(CODE) == 0
    assert all(row.self_device_ns is None for row in op_summary(trace))
    assert "memcpy-heavy" not in {f.rule for f in advise(trace).findings}


def test_host_threads_beside_it_stay_and_a_round_trip_keeps_every_kind(tmp_path: Path) -> None:
    events = [_event(*work, i) for i, work in enumerate(_rounds())]
    host = [{"name": "train", "ph": "X", "ts": 999_000.0, "dur": 30_000_000.0, "pid": 1, "tid": 8},
            {"name": "forward", "ph": "X", "ts": 1_000_000.0, "dur": 10.0, "pid": 1, "tid": 8},
            {"name": "thread_name", "ph": "M", "pid": 1, "tid": 8, "args": {"name": "main"}}]
    trace = traceconv.load(_write(tmp_path / "mixed.json", events + host))
    expected = [(ProcessKind.DEVICE, TrackKind.STREAM, "stream 7"),
                (ProcessKind.HOST, TrackKind.THREAD, "main")]
    assert _kinds(trace) == expected
    assert trace.diagnostics.count(CODE) == 1
    traceconv.save(trace, tmp_path / "again.json")
    again = traceconv.load(tmp_path / "again.json")
    assert _kinds(again) == expected
    host_rows = again.slices.numpy("track") == 1
    assert sorted(again.strings.strings[n] for n in again.slices.numpy("name")[host_rows]) == [
        "forward", "train"]


def _chrome_inputs(folder: Path) -> list[Path]:
    return [p for p in (bundled_files(folder) if folder != SHARED_ROOT else sorted(
        folder.rglob("*"))) if p.name.endswith((".json", ".json.gz"))]


def _guesses(paths: list[Path]) -> list[str]:
    """The inputs read as Chrome JSON in which a thread was read as a device stream."""
    guessed = []
    for path in paths:
        try:
            trace = traceconv.load(path)
        except TraceconvError:
            continue   # (hostile inputs and other formats' companions: not traces)
        if trace.metadata.source_format == "chrome" and trace.diagnostics.count(CODE):
            guessed.append(path.name)
    return guessed


@pytest.mark.slow
def test_no_bundled_trace_has_a_guessed_stream() -> None:
    """Every Chrome, Kineto, viztracer, Paddle, MegEngine trace bundled keeps its kinds."""
    assert _guesses(_chrome_inputs(DATA) + _chrome_inputs(SAMPLES)) == []


@pytest.mark.slow
@pytest.mark.shared
def test_no_shared_trace_has_a_guessed_stream() -> None:
    if not SHARED_ROOT.is_dir():
        pytest.skip("../shared is not beside this checkout")
    assert _guesses(_chrome_inputs(SHARED_ROOT)) == []
