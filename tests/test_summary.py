"""`summary` beyond profile_analyze's golden runs: the option sets where MegEngine crashes,
and traces that are not MegEngine profiles (timelines, stats-only reports)."""

from __future__ import annotations

import gzip
import json
import math

import pytest
from click.testing import CliRunner

import traceconv
from traceconv.analysis.summary import SummaryOptions, op_records, summarize
from traceconv.cli import app
from traceconv.model import OpStat, ProcessKind, Trace

PROFILE = "megengine/convnet_lar_embed_profile.json.gz"


@pytest.fixture(scope="module")
def convnet(data):
    return traceconv.load(data / PROFILE, format="megengine")


@pytest.fixture(scope="module")
def document(data):
    return json.loads(gzip.decompress((data / PROFILE).read_bytes()))


def device_seconds(document) -> dict[str, float]:
    return {oid: max(t["end"] - t["start"] for t in places.values())
            for oid, places in document["profiler"]["device"].items()}


def test_aggregate_by_type_defaults_to_sum(convnet):
    implicit = summarize(convnet, aggregate_by="type", top=0)
    explicit = summarize(convnet, aggregate_by="type", aggregate="sum", top=0)
    assert [(r.type, r.count, r.time) for r in implicit.device_rows] == [
        (r.type, r.count, r.time) for r in explicit.device_rows]


def test_aggregate_max_ignores_missing_values(convnet, document):
    rows = summarize(convnet, aggregate_by="type", aggregate="max", top=0).device_rows
    times = device_seconds(document)
    ops = document["graph_exec"]["operator"]
    by_type: dict[str, list[str]] = {}
    for oid in document["graph_exec"]["comp_seq"]:
        by_type.setdefault(ops[oid]["type"], []).append(oid)
    for row in rows:
        members = by_type[row.type]
        assert row.count == len(members)
        assert row.time == max(times[o] for o in members)
        comps = [document["profiler"]["opr_footprint"][o]["computation"] for o in members]
        assert row.computation == (max((c for c in comps if c), default=None) or None)


def test_order_by_flops_puts_missing_last(convnet):
    rows = summarize(convnet, order_by="flops", top=0).device_rows
    known = [r.flops for r in rows if r.flops is not None]
    assert rows[len(known)].flops is None and all(r.flops is None for r in rows[len(known):])
    finite = [f for f in known if not math.isnan(f)]
    assert finite == sorted(finite, reverse=True)
    assert len(rows) == 41


def test_input_dtype_skips_unplanned_inputs(convnet, document):
    varz = document["graph_exec"]["var"]
    expected = [oid for oid, op in document["graph_exec"]["operator"].items()
                if oid in document["profiler"]["device"]
                and any((varz[v]["mem_plan"] or {}).get("layout", {}).get("dtype") == "Float32"
                        for v in op["input"])]
    rows = summarize(convnet, input_dtype="Float32", top=0, order_by="+opr_id").device_rows
    assert sorted(r.id for r in rows) == sorted(expected) and len(expected) == 20


def test_unknown_order_column_is_one_line_error(data):
    result = CliRunner().invoke(app, ["summary", str(data / PROFILE), "--format", "megengine",
                                      "--order-by", "colour"])
    assert result.exit_code == 1 and "cannot order by 'colour'" in result.output


def test_text_table_reads_well(data):
    result = CliRunner().invoke(app, ["summary", str(data / PROFILE), "--format", "megengine",
                                      "-t", "2", "--show-host", "--wide"])
    assert result.exit_code == 0
    text = result.output
    assert "total device time  0.009615 s" in text
    assert "conv2.Convolution" in text and "37.75 MFLO" in text and "7.95 GFLOPS" in text
    assert "host self time" in text


def test_timeline_records_use_self_time():
    trace = Trace()
    gpu = trace.add_process("gpu", kind=ProcessKind.DEVICE)
    stream = trace.add_track("stream 7", process=gpu)
    host = trace.add_track("main", process=trace.add_process("python"))
    trace.add_slice(host, 0, 10_000, "step")
    trace.add_slice(host, 1_000, 4_000, "aten::conv2d")
    trace.add_slice(host, 2_000, 1_000, "cudaLaunchKernel")
    trace.add_slice(stream, 3_000, 2_000, "implicit_gemm")
    records = {r.name: r.times for r in op_records(trace)}
    assert records["step"] == {("host", "end"): 6e-06}
    assert records["aten::conv2d"] == {("host", "end"): 3e-06}
    assert records["implicit_gemm"] == {("device", "end"): 2e-06}
    result = summarize(trace, SummaryOptions(top=0))
    assert result.total_device_time == 2e-06 and result.total_host_time == 1e-05
    assert [r.name for r in result.host_rows] == ["step", "aten::conv2d", "cudaLaunchKernel"]


def test_stats_only_trace():
    trace = Trace()
    trace.add_stat(OpStat("conv2d", calls=3, total_ns=9_000, device_ns=6_000, cpu_ns=3_000,
                          type="Operator"))
    trace.add_stat(OpStat("relu", calls=3, total_ns=2_000, device_ns=1_000, cpu_ns=1_000,
                          type="Operator"))
    result = summarize(trace, top=0)
    assert result.total_device_time == pytest.approx(7e-06)
    assert [(r.name, r.time) for r in result.device_rows] == [("conv2d", 6e-06),
                                                               ("relu", 1e-06)]
    assert [r.name for r in result.host_rows] == ["conv2d", "relu"]


def test_host_only_timeline_shows_host_table_with_names():
    """A CPU-only PyTorch trace: self time per slice name on properly nested tracks."""
    from pathlib import Path

    import traceconv
    from traceconv.analysis.summary import summarize
    from traceconv.presentation.summary import render_text

    trace = traceconv.load(Path(__file__).parent.parent / "samples" / "torch" / "cnn_step5.pt.trace.json")
    result = summarize(trace, top=0)
    assert result.total_device_time is None
    # self times never exceed what the tracks can hold: each nested track sums to its span
    assert result.total_host_time <= trace.span_ns / 1e9 * len(trace.tracks)
    forward = next(r for r in result.host_rows if r.name == "forward")
    assert forward.type == "annotation"   # the kind of op_summary (a user_annotation range)
    text = render_text(summarize(trace, top=3))
    assert "host self time per operator" in text and "device self time" not in text
