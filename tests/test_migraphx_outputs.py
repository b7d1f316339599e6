"""MIGraphX traces through the rest of traceconv: summary, diff, dataflow flows, Perfetto."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from traceconv.analysis.dataflow import with_dataflow_flows
from traceconv.cli import app

DATA = Path(__file__).resolve().parent / "data" / "migraphx"
PERF_DOC = DATA / "srcdoc_AMDMIGraphX_driver_perf_simple_graph.txt"
SYNTH_72 = DATA / "synthetic_resnet_perf_dialect_7.2.txt.gz"
SYNTH_42 = DATA / "synthetic_resnet_perf_dialect_4.2.txt.gz"


def run_json(*args: str) -> dict:
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_summary_ranks_instructions_with_shapes_and_bytes():
    out = run_json("summary", str(PERF_DOC), "-t", "2")
    assert out["total_device_time"] == pytest.approx(0.000414368, abs=2e-8)  # Σ ms printed
    top = out["rows"][0]
    assert (top["name"], top["type"]) == ("gpu::gemm", "gpu::gemm")
    assert top["device_self_time"] == pytest.approx(0.000212592)
    assert top["in_shapes"] == [[1, 784], [784, 128], [1, 128]]
    # x (3136 B) and the weight (401408 B) read, 512 B written into the load
    assert top["memory"] == 3136 + 784 * 128 * 4 + 512
    assert out["rows"][1]["device_self_time"] == pytest.approx(0.0733071e-3, abs=1e-9)


def test_summary_of_an_untimed_listing_uses_no_fake_times():
    trace = traceconv.load(DATA / "srcdoc_AMDMIGraphX_driver_read_simple_graph.txt")
    assert not any("device_spans" in d for _, d in trace.graph.nodes(data=True))


def test_diff_of_two_dialects_matches_groups_by_name():
    out = run_json("diff", str(SYNTH_42), str(SYNTH_72), "--section", "summary")
    rows = {r["name"]: r for r in out["rows"]}
    # the same instruction times, grouped differently: 4.2 has no per-kernel groups
    assert rows["gpu::code_object"]["a"]["total_ns"] == 1_136_010
    assert rows["gpu::code_object"]["b"] is None
    assert rows["gpu::code_object::mlir_convolution_add_relu"]["b"]["calls"] == 33
    load = rows["load"]
    assert (load["a"]["calls"], load["b"]["calls"], load["delta"]["total_ns"]) == (71, 71, 0)


def test_dataflow_flows_follow_the_graph():
    trace = traceconv.load(SYNTH_72)
    # 386 inputs in the report; the one into @return (which has no slice) gets no flow
    assert len(with_dataflow_flows(trace).flows) - len(trace.flows) == 385
    trace = traceconv.load(PERF_DOC)
    assert with_dataflow_flows(trace).diagnostics.count("dataflow.flows") == 21


@pytest.mark.integration
@pytest.mark.parametrize("path", [PERF_DOC, SYNTH_72, DATA / "rocm4.5_if_submodules_perf.txt",
                                  DATA / "rocm6.4_streams_output_arg_perf.txt",
                                  DATA / "rocm7.2_perf_test_two_runs.txt",
                                  DATA / "trace_eval_rocm5.7_level2_two_passes.txt"],
                         ids=lambda p: p.name[:40])
def test_perfetto_output_passes_check_and_trace_processor(path, tmp_path, trace_processor):
    trace = with_dataflow_flows(traceconv.load(path))
    out = tmp_path / "out.pftrace"
    traceconv.save(trace, out)
    data = out.read_bytes()
    try:  # `traceconv check`'s validator (lands with the Perfetto writer's branch)
        from traceconv.formats.perfetto.validate import validate_bytes
    except ImportError:
        validate_bytes = None
    if validate_bytes is not None:
        report = validate_bytes(data)
        assert not report.errors, report.errors
    trace_processor.load(data)
    counts = trace.counts()
    row = trace_processor.query("select count(*) n, sum(dur) total from slice")[0]
    assert row.n == counts["slices"]
    assert row.total == sum(s.dur for s in trace.iter_slices())
    assert trace_processor.query("select count(*) n from flow")[0].n == counts["flows"]
    assert trace_processor.query("select count(*) n from counter")[0].n == counts["counter_samples"]
    assert trace_processor.bad_stats() == []
