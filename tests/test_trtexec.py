"""TensorRT trtexec exports: each file alone and one engine's files together, counted with
plain ``json.loads`` and hand counts, never with the reader's own output."""

from __future__ import annotations

import gzip
import json
import math
import os
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

import traceconv
from traceconv.errors import InputError
from traceconv.model import ProcessKind

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data" / "trtexec"
RESNET = ROOT / "samples" / "trtexec"
SET = [RESNET / f"resnet_rtx3090_fp32.engine.{kind}.json.gz"
       for kind in ("graph", "profile", "timing")]
SHARED = Path(os.environ.get("TRACECONV_SHARED_SAMPLES", ROOT.parent / "shared" / "samples")) \
    / "trtexec"
# PROVENANCE_formats.md: layers, profile entries (with the count), timing records
PROVENANCE = {"NVIDIA__TensorRT__mobilenet.qat.onnx.engine": (73, 74, 8_945),
              "NVIDIA__TensorRT__A100-fp16.resnet.onnx.engine": (36, 37, 3_698),
              "NVIDIA__TensorRT__RTX3090-fp32.resnet.onnx.engine": (103, 104, 263)}
GRAPHS = sorted(RESNET.glob("*.graph.json.gz")) + sorted(DATA.glob("*.graph.json.gz"))
PROFILES = sorted(RESNET.glob("*.profile.json.gz")) + sorted(DATA.glob("*.profile.json.gz"))
if SHARED.is_dir():
    GRAPHS += sorted(SHARED.glob("*.graph.json"))
    PROFILES += sorted(SHARED.glob("*.profile.json"))
TIMINGS = [SET[2]] + (sorted(SHARED.glob("*.timing.json")) if SHARED.is_dir() else [])


def _json(path: Path):
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)


@pytest.mark.parametrize("path", GRAPHS, ids=lambda p: p.name)
def test_layer_information_is_the_op_graph(path):
    document = _json(path)
    layers = document["Layers"]
    tensors = {t["Name"] for layer in layers for t in layer["Inputs"] + layer["Outputs"]}
    edges = sum(len(layer["Inputs"]) + len(layer["Outputs"]) for layer in layers)
    trace = traceconv.load(path)
    assert trace.metadata.source_format == "trtexec"
    assert (trace.op_count, trace.tensor_count) == (len(layers), len(tensors))
    assert trace.graph.number_of_edges() == edges
    ops = {d["name"]: d for _, d in trace.graph.nodes(data=True) if d["kind"] == "op"}
    for layer in layers:
        op = ops[layer["Name"]]
        assert op["type"] == layer["LayerType"]
        assert op.get("trt_tactic") == layer.get("TacticName")
        assert op["out_shapes"] == [t["Dimensions"] for t in layer["Outputs"]]
    bindings = {d["name"] for _, d in trace.graph.nodes(data=True) if d.get("binding")}
    assert bindings == set(document["Bindings"])
    stem = path.name.removesuffix(".gz").removesuffix(".graph.json")
    if stem in PROVENANCE:
        assert len(layers) == PROVENANCE[stem][0]


def test_tensor_bytes_and_producers():
    trace = traceconv.load(SET[0])
    first = _json(SET[0])["Layers"][1]   # Conv__435: FP32 in and out
    out = first["Outputs"][0]
    node = next(n for n, d in trace.graph.nodes(data=True) if d.get("name") == out["Name"]
                and d["kind"] == "tensor")
    data = trace.graph.nodes[node]
    assert data["dtype"] == "float32" and data["bytes"] == math.prod(out["Dimensions"]) * 4
    assert trace.graph.nodes[data["owner"]]["name"] == first["Name"]


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_profile_is_per_layer_statistics(path):
    rows = _json(path)
    count = rows[0]["count"]
    layers = [r for r in rows[1:]]
    trace = traceconv.load(path)
    assert len(trace.stats) == len(layers)
    assert [s.name for s in trace.stats] == [r["name"] for r in layers]
    assert all(s.calls == count for s in trace.stats)
    assert sum(s.total_ns for s in trace.stats) == sum(round(r["timeMs"] * 1e6) for r in layers)
    assert len(trace.slices) == len(layers)   # the aggregate breakdown, one slice per layer
    # each layer's numbers on its slice, the median too where the profile has one
    assert [s.args.get("median_ms") for s in trace.iter_slices()] == pytest.approx(
        [r.get("medianMs") for r in layers], abs=1e-6)
    assert "not a timeline" in trace.metadata.clock
    stem = path.name.removesuffix(".gz").removesuffix(".profile.json")
    if stem in PROVENANCE:
        assert len(rows) == PROVENANCE[stem][1]


@pytest.mark.parametrize("path", TIMINGS, ids=lambda p: p.name)
def test_times_are_a_timeline(path):
    records = _json(path)
    trace = traceconv.load(path)
    by_track = {}
    for s in trace.iter_slices():
        by_track.setdefault(trace.tracks[s.track].name, []).append(s)
    assert len(by_track["compute"]) == len(by_track["enqueue"]) == len(records)
    assert len(trace.flows) == len(records)
    copies = sum((r["endH2dMs"] > r["startH2dMs"]) + (r["endD2hMs"] > r["startD2hMs"])
                 for r in records)
    assert len(by_track.get("H2D", [])) + len(by_track.get("D2H", [])) == copies
    assert trace.diagnostics.count("trtexec.zero_length_transfers") == 2 * len(records) - copies
    compute = by_track["compute"]
    assert [s.start for s in compute] == [round(r["startComputeMs"] * 1e6) for r in records]
    devices = {p.id for p in trace.processes if p.kind == ProcessKind.DEVICE}
    assert all(trace.tracks[s.track].process in devices for s in compute)
    stem = path.name.removesuffix(".gz").removesuffix(".timing.json")
    if stem in PROVENANCE:
        assert len(records) == PROVENANCE[stem][2]


def test_one_engines_exports_together_are_one_trace():
    parts = [traceconv.load(p) for p in SET]
    before = [p.counts() for p in parts]
    trace = traceconv.api.combine(parts)
    assert [p.counts() for p in parts] == before   # the inputs are not changed
    layers = _json(SET[0])["Layers"]
    profile = _json(SET[1])
    records = _json(SET[2])
    assert trace.op_count == len(layers) and len(trace.stats) == len(profile) - 1
    assert len(trace.slices) == 2 * len(records) + len(profile) - 1
    assert trace.metadata.clock.startswith("ms since trtexec started")
    ops = {d["name"]: d for _, d in trace.graph.nodes(data=True) if d["kind"] == "op"}
    for row in profile[1:]:
        assert ops[row["name"]]["trt_avg_ns"] == round(row["averageMs"] * 1e6)
    types = {layer["Name"]: layer["LayerType"] for layer in layers}
    assert all(s.type == types[s.name] for s in trace.stats)


def test_trex_metadata_joins_the_set_as_attributes():
    """trt-engine-explorer's files beside the exports (not trtexec's): attributes only."""
    metadata = [RESNET / f"resnet_rtx3090_fp32.engine.{k}.metadata.json.gz"
                for k in ("build", "profile")]
    trace = traceconv.api.combine([traceconv.load(p, joining=True) for p in SET + metadata])
    assert trace.op_count == 103 and len(trace.stats) == 103
    summary = _json(metadata[1])["performance_summary"]
    assert trace.metadata.attributes["trtexec.performance_summary"] == summary
    assert trace.metadata.attributes["trtexec.build_options"] == _json(metadata[0])[
        "build_options"]
    assert trace.diagnostics.count("trtexec.trex_metadata") == 2
    device = DATA / "resnet_a100_fp16.engine.metadata.json.gz"
    alone = traceconv.load(device, joining=True)
    assert alone.counts()["slices"] == 0
    assert alone.metadata.attributes["trtexec.devices"][0]["Name"] == _json(device)[0]["Name"]
    # (given with nothing to join: nothing read, the line saying what to give with it)
    with pytest.raises(InputError, match=r"nothing read: .*give it together with the "
                                         r"engine's trtexec exports"):
        traceconv.load(device)


def test_exports_of_two_engines_stay_apart():
    graphs = [traceconv.load(SET[0]), traceconv.load(DATA / "resnet_a100_fp16.engine.graph.json.gz")]
    profiles = [traceconv.load(DATA / "resnet_a100_fp16.engine.profile.json.gz"),
                traceconv.load(SET[1])]
    from traceconv.formats.trtexec.engine_set import combine_engine_sets

    combined = combine_engine_sets(graphs + profiles)
    assert len(combined) == 2
    assert sorted(t.op_count for t in combined) == [36, 103]
    assert sorted(len(t.stats) for t in combined) == [36, 103]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "traceconv", *args], capture_output=True,
                          text=True, cwd=ROOT)


def test_cli_reads_a_set_and_refuses_broken_input(tmp_path):
    done = _cli("info", "--json", *map(str, SET))
    assert done.returncode == 0, done.stderr
    counts = json.loads(done.stdout)
    assert (counts["ops"], counts["stat_rows"], counts["flows"]) == (103, 103, 263)
    broken = tmp_path / "e.profile.json"
    broken.write_text('[{"count": 3}, {"name": "conv", "timeMs": "fast", "averageMs": 1}]')
    done = _cli("info", str(broken))
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert f"{broken}:$[1]" in done.stderr and "Traceback" not in done.stderr
    times = tmp_path / "e.timing.json"
    times.write_text('[{"startEnqMs": 1, "endEnqMs": 2, "startComputeMs": 2, "endComputeMs": 3},'
                     ' {"startEnqMs": 4, "endEnqMs": "x", "startComputeMs": 5, "endComputeMs": 6}]')
    done = _cli("info", str(times))
    assert done.returncode == 1 and f"{times}:$[1].endEnqMs:" in done.stderr
    cut = tmp_path / "e.graph.json"
    cut.write_bytes(gzip.decompress(SET[0].read_bytes())[:5000])
    done = _cli("info", str(cut))
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and "JSON" in done.stderr


@pytest.mark.parametrize("name", ["export", "export.json"])
def test_detected_by_content_without_the_usual_name(tmp_path, name):
    """No extension, or a plain ``.json`` that Chrome JSON shares (an array of objects)."""
    for path, kind in zip(SET, ("graph", "profile", "times"), strict=True):
        plain = tmp_path / f"{kind}-{name}"
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        trace = traceconv.load(plain)
        assert trace.metadata.source_format == "trtexec"
        assert trace.metadata.attributes["trtexec.exports"] == [kind]


def test_summary_of_a_profile_lists_layers():
    from traceconv.analysis.summary import view_of

    trace = traceconv.load(SET[1])
    assert view_of(trace) == "stats"
    combined = traceconv.api.combine([traceconv.load(p) for p in SET])
    from traceconv.analysis.op_summary import op_summary

    rows = {r.name: r for r in op_summary(combined)}
    first = _json(SET[1])[1]
    assert rows[first["name"]].self_device_ns == round(first["timeMs"] * 1e6)
    assert rows["compute"].calls == len(_json(SET[2]))


@pytest.mark.integration
def test_loads_in_trace_processor(trace_processor, tmp_path):
    trace = traceconv.api.combine([traceconv.load(p) for p in SET])
    out = tmp_path / "out.pftrace"
    traceconv.save(trace, out)
    trace_processor.load(out.read_bytes())
    assert trace_processor.bad_stats() == []
    assert trace_processor.query("select count(*) as n from slice")[0].n == len(trace.slices)
    assert trace_processor.query("select count(*) as n from flow")[0].n == len(trace.flows)


def test_a_layer_list_alone_is_refused_a_timeline(tmp_path: Path):
    """An engine's layer information (``--exportLayerInfo``) has no times: converting it
    alone to a timeline says so in one line, naming its ops, instead of writing an empty
    trace (``summary``, ``dot`` and ``graphml`` show it)."""
    from tests.cli_errors import one_error_line, run

    graph = Path(__file__).parent / "data" / "trtexec" / "mobilenet_qat_titanrtx.engine.graph.json.gz"
    layers = len(json.loads(gzip.decompress(graph.read_bytes()))["Layers"])
    out = tmp_path / "g.pftrace"
    one_error_line(run(str(graph), "--format", "trtexec", "-o", str(out)),
                   "nothing to put on a timeline", f"({layers:,} ops)")
    assert not out.exists()


def test_layers_whose_times_add_past_int64_are_laid_within_the_time_range(tmp_path: Path):
    """Three layers of 9e12 ms each: every one fits int64 in ns, their sum does not. The
    breakdown lays them end to end through the same rule as every other breakdown
    (``model.breakdown.side_by_side``): no start past the model's time edge, no error."""
    from traceconv.model.repairs import TIME_MAX

    path = tmp_path / "huge.profile.json"
    path.write_text(json.dumps([{"count": 1}] + [
        {"name": f"layer{i}", "timeMs": 9e12, "averageMs": 9e12, "percentage": 33.3}
        for i in range(3)]))
    trace = traceconv.load(path, format="trtexec")
    drawn = list(trace.iter_slices())
    assert len(drawn) == 3 and all(0 <= s.start <= TIME_MAX for s in drawn)
    assert all(s.start + s.dur <= TIME_MAX for s in drawn)


# Each layer's ``percentage`` is its share of the engine's time: a whole profile's layers
# share 100 % (to within their 6 printed digits), a profile cut after its top layers does
# not. The DETR profile (641 inferences) as a head of its first 9 layers: 3.072538 %.
DETR_HEAD = DATA / "farabimahmud__detr-logs-trtexec__detr-profile_head.json"


def _shares_found(trace: traceconv.Trace) -> dict[str, str | None]:
    return {d.code: d.example for d in trace.diagnostics
            if d.code in ("trtexec.rows_missing", "trtexec.stated_total_differs")}


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.name)
def test_a_whole_profiles_shares_agree_with_100_percent(path):
    layers = _json(path)[1:]
    assert sum(r["percentage"] for r in layers) == pytest.approx(100, abs=1e-4)
    assert _shares_found(traceconv.load(path)) == {}


def _head(path: Path, layers: int, into: Path) -> Path:
    into.write_text(json.dumps(_json(path)[:1 + layers]))
    return into


@pytest.mark.parametrize(("path", "layers"), [
    (DETR_HEAD, 9), (DATA / "resnet_a100_fp16.engine.profile.json.gz", 30)],
    ids=["detr-head", "resnet-a100-head"])
def test_a_profile_cut_after_its_top_layers_says_rows_are_missing(path, layers, tmp_path):
    head = path if path == DETR_HEAD else _head(path, layers, tmp_path / "head.profile.json")
    rows = _json(head)[1:]
    shares = sum(Decimal(repr(r["percentage"])) for r in rows)
    trace = traceconv.load(head)
    assert len(trace.stats) == len(rows) == layers and shares < 100 - Decimal("0.001")
    found = _shares_found(trace)
    assert list(found) == ["trtexec.rows_missing"]
    stated, _, read = str(found["trtexec.rows_missing"]).rpartition(" ")
    assert stated == (f"{head} ({layers} layers): 100 % of the time (percentage) stated, the "
                      "rows read give")
    assert Decimal(read) == shares.quantize(Decimal(read))
