"""diff of timelines: per-op/kernel deltas that add up to the change of the step window;
op classes across frameworks; nonsense refused; runs of one file diffed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import orjson
from click.testing import CliRunner

import traceconv
from traceconv.analysis.timeline_diff import timeline_diff
from traceconv.cli import app

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
STREAMS = ROOT / "samples" / "torch" / "streams_graph_nccl_cuda.pt.trace.json.gz"
RESNET = DATA / "torch" / "resnet18_train_cuda.pt.trace.json.gz"
GPT = DATA / "torch" / "gpt_compile_bf16_cuda.pt.trace.json.gz"
CNN = ROOT / "samples" / "torch" / "cnn_step5.pt.trace.json"
PADDLE_TIMELINE = DATA / "paddle" / "small_2.6.2.paddle_trace.pb.gz"
MIGRAPHX_TWO_RUNS = DATA / "migraphx" / "rocm7.2_perf_test_two_runs.txt"
PADDLE_TWO_WINDOWS = DATA / "paddle" / "legacy_twice_combined_log.txt"


def test_rows_add_up_to_the_change_of_the_step_window():
    with gzip.open(RESNET) as f:
        events = json.load(f)["traceEvents"]
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#")]
    result = timeline_diff(traceconv.load(RESNET), traceconv.load(GPT))
    assert result.steps_a == len(steps) == 2
    assert abs(result.window_a_ns - sum(e["dur"] for e in steps) * 1000) <= 2
    assert sum(r.delta_ns for r in result.rows) == result.total_delta_ns
    assert sum(r.a_ns for r in result.rows) == result.window_a_ns
    assert any(r.name.startswith("(idle") for r in result.rows)   # the residue, its own row


def test_device_work_is_charged_its_own_time():
    """The pageable copies run alone on the device: their row is their summed duration."""
    with gzip.open(STREAMS) as f:
        events = json.load(f)["traceEvents"]
    copies = sum(round(e["dur"] * 1000) for e in events
                 if e.get("cat") == "gpu_memcpy" and "Pageable" in e["name"])
    trace = traceconv.load(STREAMS)
    result = timeline_diff(trace, trace)
    row = next(r for r in result.rows if r.name == "Memcpy DtoH (Device -> Pageable)")
    assert row.a_ns == row.b_ns == copies
    assert result.total_delta_ns == 0 and all(r.delta_ns == 0 for r in result.rows)


def test_frameworks_differ_so_op_classes_are_compared():
    result = timeline_diff(traceconv.load(CNN), traceconv.load(PADDLE_TIMELINE))
    assert result.by_op_class
    names = {r.name for r in result.rows}
    conv = next(r for r in result.rows if r.name == "convolution")
    assert conv.a_ns > 0 and conv.b_ns > 0           # aten::convolution vs conv2d
    assert not any(n.startswith("aten::") for n in names)
    assert sum(r.delta_ns for r in result.rows) == result.total_delta_ns


def test_cli_refuses_a_timeline_against_a_report():
    result = CliRunner().invoke(app, ["diff", str(CNN), str(ROOT / "samples" / "paddle" /
                                                               "report_gpu_before.txt")])
    assert result.exit_code == 1
    assert "cannot diff a timeline (PyTorch) against a statistics report" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_cli_json_contract():
    result = CliRunner().invoke(app, ["diff", str(RESNET), str(GPT), "--json"])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.output)
    assert sum(r["delta_ns"] for r in doc["rows"]) == doc["total_delta_ns"]
    assert all({"name", "delta_ns"} <= set(r) for r in doc["rows"])


def test_migraphx_file_with_two_runs_is_diffed_run_against_run():
    """gpu::gemm: 0.00880674 ms in run 1, 0.00872388 ms in run 2 (the report's own lines)."""
    runner = CliRunner()
    one = orjson.loads(runner.invoke(app, ["diff", str(MIGRAPHX_TWO_RUNS), "--json",
                                           "--timeline"]).output)
    two = orjson.loads(runner.invoke(app, ["diff", f"{MIGRAPHX_TWO_RUNS}@1",
                                           f"{MIGRAPHX_TWO_RUNS}@2", "--json", "--timeline"]).output)
    assert one["rows"] == two["rows"] and one["kind"] == "timeline"
    gemm = next(r for r in one["rows"] if r["name"] == "gpu::gemm")
    assert (gemm["a_ns"], gemm["b_ns"]) == (8807, 8724)
    # without --timeline the report's own summary lines are compared
    stats = orjson.loads(runner.invoke(app, ["diff", str(MIGRAPHX_TWO_RUNS), "--json",
                                             "--section", "summary"]).output)
    gemm = next(r for r in stats["rows"] if r["name"] == "gpu::gemm")
    assert (gemm["a"]["total_ns"], gemm["b"]["total_ns"]) == (8807, 8724)


def test_paddle_log_with_two_windows_keeps_the_report_diff():
    """Executor::Run 22.9455 ms in window 1 and 17.4576 ms in window 2."""
    result = CliRunner().invoke(app, ["diff", str(PADDLE_TWO_WINDOWS), "--json"])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(result.output)
    run = next(r for r in doc["rows"] if r["name"] == "Executor::Run")
    assert (run["a"]["total_ns"], run["b"]["total_ns"]) == (22_945_500, 17_457_600)
    bad = CliRunner().invoke(app, ["diff", f"{PADDLE_TWO_WINDOWS}@3", str(CNN)])
    assert bad.exit_code == 1 and "no run 3 of 2" in bad.output
