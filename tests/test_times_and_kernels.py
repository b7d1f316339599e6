"""Analyses that no input can make wrong in kind (issue 38, items 4-6): no negative self or
total time, kernels are kernels on every reader, and advice names matrix kernels by what
they compute. Expected values come from plain interval unions written here, ``sqlite3`` on
Nsight Systems exports, a protobuf walk of XPlane files and ``json`` on MegEngine profiles.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import traceconv
from tests.conftest import ROOT, SHARED, bundled_files
from tests.test_xplane import _fields
from traceconv import registry
from traceconv.analysis.activity import Timeline, slice_activity
from traceconv.analysis.advise import advise
from traceconv.analysis.idle import device_idle
from traceconv.analysis.op_summary import op_summary
from traceconv.analysis.summary import SummaryOptions, summarize
from traceconv.model import ProcessKind, Trace
from traceconv.model.activity import Activity

H100_NSYS = SHARED / "nsys" / "GindaChen__nsys-ai__h100_2gpu_1s.sqlite"
TF_GPU_XPLANE = SHARED / "xplane" / "openxla__xprof__34.83.195.179_6003.xplane.pb"
MEGENGINE = ROOT / "samples" / "megengine" / "convnet_lar_embed_profile.json"
TIMES = ("self_host_ns", "host_total_ns", "self_device_ns", "device_total_ns")


def _union_ns(spans: list[tuple[int, int]]) -> int:
    """Nanoseconds covered by ``spans`` (overlaps once): a plain sweep."""
    covered, reach = 0, None
    for lo, hi in sorted(spans):
        if reach is None or lo > reach:
            covered, reach = covered + hi - lo, hi
        elif hi > reach:
            covered, reach = covered + hi - reach, hi
    return covered


# -- every reader's samples ------------------------------------------------------------------

def _every_sample() -> list[Path]:
    seeds = [ROOT / seed.path for seeds in registry.SEED_SAMPLES.values() for seed in seeds]
    bundled = [p for p in bundled_files(ROOT / "samples")   # (not the deliberately broken)
               if p.suffix != ".md" and not any(part.startswith("broken") for part in p.parts)]
    return sorted(set(seeds) | set(bundled))


@pytest.mark.slow
@pytest.mark.parametrize("path", _every_sample(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_sample_summarises_without_negative_time_or_marks_as_kernels(path):
    trace = traceconv.load(path, joining=True)   # (a settings sample alone too)
    rows = op_summary(trace)
    for row in rows:
        for column in TIMES:
            value = getattr(row, column)
            assert value is None or value >= 0, (row.name, column, value)
        if row.self_host_ns is not None:
            assert row.self_host_ns <= row.host_total_ns, row.name
    for key in ("end", "kern"):
        result = summarize(trace, SummaryOptions(top=0, top_end_key=key))
        for summary_row in (*result.device_rows, *result.host_rows):
            assert summary_row.time >= 0, (summary_row.name, key, summary_row.time)
    # no kernel row is a step marker, an annotation or a range (by the reader's activity)
    activity = slice_activity(trace)
    not_work = (activity & Activity.STEP != 0) | np.isin(activity & 0x0F, [
        Activity.ANNOTATION, Activity.DEVICE_ANNOTATION, Activity.DEVICE_SYNC])
    names, name_ids = trace.strings.strings, trace.slices.numpy("name")
    marks = {names[i] for i in np.unique(name_ids[not_work]).tolist()}
    work = {names[i] for i in np.unique(name_ids[~not_work]).tolist()}
    assert not {row.name for row in rows if row.kind == "kernel"} & (marks - work)


# -- self time: the duration less the time its children cover --------------------------------

@st.composite
def _parents_with_overlapping_children(draw):
    """Per thread, one parent and children inside it that may overlap each other partially,
    but none inside another (so each is a direct child)."""
    threads = []
    for _ in range(draw(st.integers(1, 3))):
        length = draw(st.integers(10, 10_000))
        spans = draw(st.lists(st.tuples(st.integers(0, length), st.integers(0, length)),
                              max_size=8))
        children: list[tuple[int, int]] = []
        for a, b in spans:
            lo, hi = min(a, b), max(a, b)
            if lo == hi or any(c <= lo and hi <= d or lo <= c and d <= hi
                               for c, d in children):
                continue
            children.append((lo, hi))
        threads.append((length, children))
    return threads


@given(_parents_with_overlapping_children())
def test_self_time_is_duration_less_the_union_of_children(threads):
    trace = Trace()
    process = trace.add_process("python")
    expected = 0
    for number, (length, children) in enumerate(threads):
        track = trace.add_track(f"thread {number}", process=process, tid=number + 1)
        trace.add_slice(track, 0, length, "parent", "cpu_op")
        for lo, hi in children:
            trace.add_slice(track, lo, hi - lo, "child", "cpu_op")
        expected += length - _union_ns(children)
    rows = {row.name: row for row in op_summary(trace)}
    assert rows["parent"].self_host_ns == expected
    assert rows["parent"].host_total_ns == sum(length for length, _ in threads)
    if "child" in rows:
        child = rows["child"]
        assert child.self_host_ns == child.host_total_ns == sum(
            hi - lo for _, children in threads for lo, hi in children)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1000), st.integers(0, 1000)),
                max_size=40))
def test_any_slices_give_self_time_between_zero_and_the_duration(slices):
    trace = Trace()
    process = trace.add_process("python")
    tracks = [trace.add_track(f"t{i}", process=process, tid=i + 1) for i in range(4)]
    for track, start, dur in slices:
        trace.add_slice(tracks[track], start, dur, f"op{dur % 5}", "cpu_op")
    for row in op_summary(trace):
        assert 0 <= row.self_host_ns <= row.host_total_ns


# -- the Nsight Systems export where aten::mm had -54.849 ms of self time --------------------

def _nsys_self_time(path: Path, name: str) -> int:
    """Self time of the NVTX ranges called ``name`` (text ``name, op_id = N``): each
    range's duration less the union of what else ran on its thread inside it (ranges,
    runtime calls, CUPTI overhead)."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        ranges = db.execute(
            "SELECT globalTid, start, end, coalesce(text, value) FROM NVTX_EVENTS "
            "LEFT JOIN StringIds ON textId = id WHERE end IS NOT NULL").fetchall()
        calls = db.execute("SELECT globalTid, start, end FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                           "UNION ALL SELECT globalTid, start, end "
                           "FROM CUPTI_ACTIVITY_KIND_OVERHEAD").fetchall()
    by_thread: dict[int, list[tuple[int, int]]] = {}
    for tid, start, end, *_ in [*ranges, *calls]:
        by_thread.setdefault(tid, []).append((start, end))
    total = 0
    for tid, start, end, text in ranges:
        if text.split(",")[0] == name:
            inside = [(a, b) for a, b in by_thread[tid]
                      if start <= a and b <= end and (a, b) != (start, end)]
            total += end - start - _union_ns(inside)
    return total


def test_nsys_self_time_of_mm_is_what_its_thread_did_outside_its_children(shared_samples):
    trace = traceconv.load(H100_NSYS)
    rows = op_summary(trace)
    mm = next(row for row in rows if row.name == "aten::mm" and row.kind == "op")
    assert mm.self_host_ns == _nsys_self_time(H100_NSYS, "aten::mm")   # was -54,849,205
    assert all(getattr(row, c) is None or getattr(row, c) >= 0 for row in rows for c in TIMES)


# -- kernels of a TensorFlow GPU XPlane: its "Steps" rows are no kernels ---------------------

def _gpu_events(data: bytes) -> dict[str, list[tuple[str, int, int, bool]]]:
    """Per ``/device:GPU`` plane, its events as (line, start ps, end ps, is a copy: a
    ``memcpy_details`` / ``memset_details`` stat): a walk of the wire format."""
    planes: dict[str, list[tuple[str, int, int, bool]]] = {}
    for number, plane in _fields(data):
        if number != 1:
            continue
        fields = list(_fields(plane))
        name = next((v.decode() for n, v in fields if n == 2), "")
        if not name.startswith("/device:GPU"):
            continue
        stats = {}
        for entry in (v for n, v in fields if n == 5):   # stat_metadata map: id → name
            parts = dict(_fields(entry))
            stats[parts.get(1)] = dict(_fields(parts.get(2, b""))).get(2, b"").decode()
        events = planes.setdefault(name, [])
        for line in (v for n, v in fields if n == 3):
            parts = list(_fields(line))
            line_name = next((v.decode() for n, v in parts if n in (11, 2) and v), "")
            base_ps = next((v for n, v in parts if n == 3), 0) * 1000
            for event in (v for n, v in parts if n == 4):
                f = list(_fields(event))
                start = base_ps + next((v for n, v in f if n == 2), 0)
                end = start + next((v for n, v in f if n == 3), 0)
                named = {stats.get(dict(_fields(v)).get(1)) for n, v in f if n == 4}
                events.append((line_name, start, end,
                               bool(named & {"memcpy_details", "memset_details"})))
    return planes


def test_xplane_kernel_total_is_the_files(shared_samples):
    trace = traceconv.load(TF_GPU_XPLANE)
    kernels = [row for row in op_summary(trace) if row.kind == "kernel"]
    planes = _gpu_events(TF_GPU_XPLANE.read_bytes())
    expected = sum(end - start for events in planes.values()
                   for line, start, end, copy in events
                   if line.startswith("Stream #") and not copy) // 1000
    assert expected == 29_690_748                                   # xprof: 29.69 ms
    assert sum(row.self_device_ns for row in kernels) == expected   # was 70.87 ms
    assert "0" not in {row.name for row in kernels}    # the two step markers, 41.18 ms


def test_xplane_idle_is_each_gpus_own_steps(shared_samples):
    planes = _gpu_events(TF_GPU_XPLANE.read_bytes())
    expected = {}
    for plane, events in planes.items():
        steps = [(a, b) for line, a, b, _ in events if line == "Steps"]
        if steps:
            work = [(max(a, s0), min(b, s1)) for line, a, b, _ in events
                    if line.startswith("Stream #") for s0, s1 in steps if min(b, s1) > max(a, s0)]
            window = _union_ns(steps)
            expected[plane] = (window - _union_ns(work)) / window
    assert sorted(round(v, 2) for v in expected.values()) == [0.25, 0.30]   # the file: 25-30 %
    idle = {d.device: d for d in device_idle(Timeline(traceconv.load(TF_GPU_XPLANE)))}
    for plane, share in expected.items():
        assert idle[plane].idle_share == pytest.approx(share, abs=1e-6)   # was 63.9 %


def test_a_step_drawn_on_a_device_line_is_a_range():
    trace = Trace()
    gpu = trace.add_track("Steps", process=trace.add_process("GPU 0", kind=ProcessKind.DEVICE))
    trace.add_slice(gpu, 0, 100, "0", "step", activity=Activity.OTHER | Activity.STEP)
    trace.add_slice(gpu, 10, 20, "gemm", "kernel", activity=Activity.KERNEL)
    assert {(r.name, r.kind) for r in op_summary(trace)} == {("0", "gpu_annotation"),
                                                              ("gemm", "kernel")}


# -- MegEngine: matrix kernels are the ops that multiply matrices ---------------------------

def test_megengine_matrix_kernels_are_convolutions_and_matmuls():
    document = json.loads(MEGENGINE.read_text())
    operators = document["graph_exec"]["operator"]
    matrix = {i for i, op in operators.items()
              if op["type"] in ("ConvolutionForward", "MatrixMul")}   # by hand, from the file
    expected_ns = sum(round(span["end"] * 1e9) - round(span["start"] * 1e9)
                      for i in matrix for span in document["profiler"]["device"][i].values())
    findings = {f.rule: f for f in advise(traceconv.load(MEGENGINE)).findings}
    finding = findings["no-mixed-precision"]
    listed = finding.where["kernels"]
    assert sorted(listed) == sorted(operators[i]["name"] for i in matrix)
    assert not any(operators[i]["type"] in ("ImmutableTensor", "Elemwise")
                   and operators[i]["name"] in listed for i in operators)
    assert abs(finding.evidence["matrix_kernel_ns"] - expected_ns) <= len(matrix)   # rounding
    # kernel time is the oprs' device time, once: not their wait part or kernel part again
    every_ns = sum(round(span["end"] * 1e9) - round(span["start"] * 1e9)
                   for spans in document["profiler"]["device"].values()
                   for span in spans.values())
    assert finding.evidence["kernel_ns"] == every_ns          # 9.615 ms (was 11.129 ms)


@pytest.mark.shared
def test_graph_replay_idle_apart_from_set_up():
    """vLLM decode by CUDA-graph replay: 8.4 ms of host set-up before the first kernel is
    idle of the window, not of the work span (TraceLens: 0.24 % idle)."""
    path = ROOT.parent / "shared" / "corpus" / "round4" / "kineto" \
        / "tracelens_vllm_decode_full_graph_execution.json.gz"
    if not path.is_file():
        pytest.skip("../shared/corpus is not beside this checkout")
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    work = [(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("ph") == "X"
            and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    span = max(b for _, b in work) - min(a for a, _ in work)
    expected = 1 - _union_ns(work) / span
    trace = traceconv.load(path)
    (device,) = device_idle(Timeline(trace))
    assert round(expected, 4) == 0.0024
    assert device.span_idle_share == pytest.approx(expected, abs=1e-5)
    assert device.idle_share > 0.4   # the window (no step markers: all the work) holds set-up
    # no step markers: advice is graded on the work span (it said "idle 43.9 %", medium)
    assert not [f for f in advise(trace).findings if f.rule == "gpu-idle"]


def test_megengine_summary_has_no_negative_time_when_no_kernel_ran(tmp_path):
    """MegEngine writes host ``kern`` -1 when no kernel ran; a waiting time of -2.7 s came
    of it (``--top-end-key kern``). An end before the start is a zero-length run."""
    document = json.loads((ROOT / "tests" / "data" / "seeds" / "megengine_profile.json")
                          .read_text())
    for spans in document["profiler"]["host"].values():
        for span in spans.values():
            span["kern"] = -1
    first = next(iter(document["profiler"]["device"].values()))
    for span in first.values():
        span["end"] = span["start"] - 0.001
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(document))
    trace = traceconv.load(path)
    for key in ("end", "kern"):
        result = summarize(trace, SummaryOptions(top=0, top_end_key=key))
        assert all(row.time >= 0 for row in (*result.device_rows, *result.host_rows)), key
