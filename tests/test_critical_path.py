"""critical-path on real timelines and op graphs; --highlight writes a new trace.

``tests/data/migraphx/migraphx_rocm7.0.2_perf_test_notes.md``: Markdown notes of a ROCm 7.0.2
setup found in the public code index (id 60465719608, repository not recorded), whole: a
full ``migraphx-driver perf --test`` output of migraphx-driver 2.13 (program listing,
per-instruction times, Summary, trailer) between prose and shell commands.
"""

from __future__ import annotations

import gzip
import json
from itertools import pairwise
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from tests.tp_wasm.layout import slices_per_track
from traceconv.analysis.critical_path import critical_path
from traceconv.analysis.highlight import highlight
from traceconv.cli import app

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
STREAMS = ROOT / "samples" / "torch" / "streams_graph_nccl_cuda.pt.trace.json.gz"
MEGENGINE = ROOT / "samples" / "megengine" / "convnet_lar_embed_profile.json"
MIGRAPHX = ROOT / "samples" / "migraphx" / "synthetic_resnet_perf_rocm7.2.txt"


def check_shape(result) -> None:
    """Time order, no overlap, and the breakdown adds up to the length exactly."""
    path = result.path
    assert all(a.end_ns <= b.start_ns for a, b in pairwise(path))
    assert all(e.dur_ns > 0 for e in path)
    assert sum(result.breakdown.values()) == result.length_ns <= result.span_ns


def test_blocking_pageable_copies_are_on_the_timeline_path():
    """The three pageable device→host copies block the host (cudaMemcpyAsync returns after
    them): all three are on the path with their full durations from the source file."""
    with gzip.open(STREAMS) as f:
        events = json.load(f)["traceEvents"]
    copies = [e for e in events if e.get("cat") == "gpu_memcpy" and "Pageable" in e["name"]]
    result = critical_path(traceconv.load(STREAMS))
    assert result.mode == "timeline"
    check_shape(result)
    on_path = [e for e in result.path if "Pageable" in e.name]
    assert sorted(e.dur_ns for e in on_path) == sorted(round(c["dur"] * 1000) for c in copies)
    assert all(e.kind == "memcpy" for e in on_path)
    assert result.breakdown["memcpy"] == sum(e.dur_ns for e in result.path if e.kind == "memcpy")


def test_graph_path_is_a_chain_of_data_dependencies():
    trace = traceconv.load(MEGENGINE)
    result = critical_path(trace)
    assert result.mode == "graph"
    check_shape(result)
    graph = trace.graph
    ops = [e.op for e in result.path if e.kind != "other"]   # (other ops between links)
    for producer, consumer in pairwise(ops):
        assert any(graph.has_edge(tensor, consumer) for tensor in graph.successors(producer))
    # the chain starts at an op with no producer op before it and ends at one with no consumer
    assert not any(graph.predecessors(t) for t in graph.predecessors(ops[0]))


def test_modes_can_be_forced_and_migraphx_program_order():
    trace = traceconv.load(MIGRAPHX)
    graph_mode = critical_path(trace)
    timeline_mode = critical_path(trace, "timeline")
    assert (graph_mode.mode, timeline_mode.mode) == ("graph", "timeline")
    check_shape(graph_mode)
    check_shape(timeline_mode)
    assert graph_mode.breakdown["kernel"] <= timeline_mode.length_ns


def test_highlight_returns_a_new_trace_and_leaves_the_input_alone(tmp_path):
    trace = traceconv.load(STREAMS)
    before = trace.counts()
    result = critical_path(trace)
    shown = highlight(trace, result)
    assert trace.counts() == before
    track = shown.tracks[-1]
    assert track.name.startswith("critical path")
    assert len([s for s in shown.iter_slices(track=track.id)]) == len(result.path)
    rows = [e.row for e in result.path if e.row is not None]
    links = sum(1 for a, b in pairwise(rows) if a != b)
    assert len(shown.flows) - len(trace.flows) == links


def test_cli_json_contract_and_highlight_output(tmp_path):
    out = tmp_path / "path.pftrace"
    result = CliRunner().invoke(app, ["critical-path", str(STREAMS), "--json", "--highlight",
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"length_ns", "span_ns", "path", "breakdown"} <= set(data)
    assert set(data["breakdown"]) == {"cpu", "kernel", "memcpy", "communication", "wait",
                                      "untraced", "other", "idle"}
    assert all(set(p) == {"name", "kind", "start_ns", "dur_ns"} for p in data["path"])
    starts = [p["start_ns"] for p in data["path"]]
    assert starts == sorted(starts) and starts[0] >= 0
    check = CliRunner().invoke(app, ["check", str(out)])
    assert check.exit_code == 0, check.output


def test_highlight_is_seen_by_trace_processor(tmp_path, trace_processor):
    out = tmp_path / "path.pftrace"
    trace = traceconv.load(STREAMS)
    result = critical_path(trace)
    traceconv.save(highlight(trace, result), out)
    trace_processor.load(out.read_bytes())
    shown = sum(n for name, n in slices_per_track(trace_processor).items()
                if str(name).startswith("critical path"))   # a thread of its own process
    assert shown == len(result.path)


def test_execution_trace_linked_to_kineto_gives_resnet18s_main_path():
    """ResNet-18's longest data-dependency chain of the forward pass is its main path: the stem
    convolution plus 8 basic blocks of 2 convolutions (17; the 3 downsample convolutions are
    side branches), as many batch norms and ReLUs, one max-pool and 8 residual additions."""
    kineto = ROOT / "samples" / "torch" / "resnet18_train_cuda.pt.trace.json.gz"
    et = ROOT / "samples" / "torch" / "resnet18_train_et.json.gz"
    result = CliRunner().invoke(app, ["critical-path", str(kineto), str(et), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["mode"] == "graph"
    names = [p["name"] for p in data["path"]]
    counts = {n: names.count(n) for n in set(names)}
    assert counts["aten::conv2d"] == counts["aten::batch_norm"] == 17
    assert counts["aten::relu_"] == 17 and counts["aten::max_pool2d"] == 1
    assert counts["aten::add_"] == 8


def test_profiler_overhead_is_its_own_piece_of_the_path():
    """A real A100 trace whose first ``aten::mm`` ran out of trace buffer: Kineto's
    "Activity Buffer Request" (pid -1, inside that op's time) is on the path as itself, for
    its whole length, and no piece of the op overlaps it (torch nests it the same way)."""
    path = ROOT / "tests" / "data" / "torch" / "jeremymorlier_a100_mm_overhead.pt.trace.json"
    data = json.loads(path.read_text())
    overhead = next(e for e in data["traceEvents"] if e.get("cat") == "overhead")
    lo = data.get("baseTimeNanoseconds", 0) + round(overhead["ts"] * 1000)
    hi = lo + round(overhead["dur"] * 1000)
    on_path = critical_path(traceconv.load(path)).path
    requests = [e for e in on_path if e.name == "Activity Buffer Request"]
    assert [(e.start_ns, e.end_ns) for e in requests] == [(lo, hi)]
    assert not [e for e in on_path if e.name == "aten::mm" and e.start_ns < hi and lo < e.end_ns]


def perf_instructions(path: Path) -> list[tuple[str, list[str], float]]:
    """(name, inputs, ns) of each timed instruction of a ``migraphx-driver perf`` output, in
    program order, read with plain string handling (the ``[...]`` attributes dropped)."""
    found = []
    for line in path.read_text().splitlines():
        head, sep, tail = line.rpartition(": ")
        if not sep or " = " not in head or not tail.split(",")[0].endswith("ms"):
            continue
        name, _, rest = head.partition(" = ")
        call = rest.split(" -> ")[0]
        depth, plain = 0, ""
        for char in call:   # drop the bracketed attributes, keep "(inputs)"
            depth += (char == "[") - (char == "]")
            plain += char if depth == 0 and char != "]" else ""
        inputs = plain[plain.index("(") + 1:-1].split(",") if plain.endswith(")") else []
        found.append((name, inputs, float(tail.split("ms")[0]) * 1e6))
    return found


def hand_path(instructions, kernels: set[str]) -> tuple[float, float, float]:
    """(time of the kernels of the longest data chain, time of its other links, time of the
    other instructions run between its first and last link), the instructions run back to
    back in program order; ``kernels``: the names of the instructions that run a kernel."""
    best: dict[str, tuple[float, list[int]]] = {}
    for index, (name, inputs, ns) in enumerate(instructions):
        before = max((best[i] for i in inputs if i in best), default=(0.0, []))
        best[name] = (before[0] + ns, [*before[1], index])
    length, chain = max(best.values())
    on_kernels = sum(instructions[i][2] for i in chain if instructions[i][0] in kernels)
    between = sum(ns for index, (_n, _i, ns) in enumerate(instructions)
                  if chain[0] < index < chain[-1] and index not in chain)
    return on_kernels, length - on_kernels, between


@pytest.mark.parametrize("path", [MIGRAPHX,
                                  DATA / "migraphx" / "migraphx_rocm7.0.2_perf_test_notes.md"])
def test_sequential_program_has_no_idle_time(path):
    """A program timed one instruction after another never leaves the device idle: the time
    between the path's links is the other instructions' (summed by hand from the file);
    the path's kernels are its ``gpu::`` instructions, its bookkeeping (``@param``, ``load``,
    views) is other work, never a kernel."""
    instructions = perf_instructions(path)
    kernels = {name for name, line in _instruction_lines(path) if " = gpu::" in line}
    on_kernels, on_bookkeeping, between = hand_path(instructions, kernels)
    result = critical_path(traceconv.load(path))
    check_shape(result)
    assert result.mode == "graph" and result.breakdown["idle"] == 0
    slack = len(instructions)   # (each instruction rounded to whole ns)
    assert on_bookkeeping > 0   # (both files: the chain starts at a @param)
    assert abs(result.breakdown["kernel"] - on_kernels) <= slack
    assert abs(result.breakdown["other"] - between - on_bookkeeping) <= slack


def _instruction_lines(path: Path) -> list[tuple[str, str]]:
    """(name, line) of each ``name = ...`` line of a perf output, by plain string handling."""
    return [(line.partition(" = ")[0], line) for line in path.read_text().splitlines()
            if " = " in line]
