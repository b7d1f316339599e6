"""The command line on MegEngine profiles: info, convert to graph formats and summaries."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest
from click.testing import CliRunner

import traceconv
from traceconv import check as check_file
from traceconv.cli import app

RESNET = "megengine/resnet50ish_lar_embed_profile.json.gz"
CONVNET = "megengine/convnet_lar_embed_profile.json.gz"


def run(*args: str):
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def test_info_json_counts(data):
    info = json.loads(run("info", str(data / RESNET), "--json").output)
    assert info["format"] == "megengine"
    assert (info["ops"], info["tensors"], info["memory_blocks"]) == (422, 799, 547)
    assert info["flows"] == 422 and info["source"]["framework"] == "MegEngine"


def test_convert_to_graphml_and_dot(data, tmp_path):
    graphml = tmp_path / "g.graphml"
    run("convert", str(data / CONVNET), "-o", str(graphml))
    graph = nx.read_graphml(graphml)
    assert sum(k == "op" for _, k in graph.nodes(data="kind")) == 41
    dot = tmp_path / "g.dot"
    run(str(data / CONVNET), "--to", "dot", "-o", str(dot))
    assert dot.read_text().startswith("digraph traceconv {")


def test_convert_to_summary_json_matches_summary_command(data, tmp_path):
    out = tmp_path / "s.summary.json"
    run(str(data / CONVNET), "--to", "summary-json", "-o", str(out))
    written = json.loads(out.read_text())
    printed = json.loads(run("summary", str(data / CONVNET), "--json", "--show-host").output)
    assert written == printed
    assert [r["id"] for r in written["rows"]] == ["134", "139", "152"]
    assert written["total_device_time"] == 0.00961500000000022


def test_convert_to_summary_text(data):
    text = run(str(data / CONVNET), "--to", "summary", "-o", "-").output
    assert "total device time  0.009615 s" in text and "conv2.Convolution" in text


def test_truncated_profile_is_one_line(data, tmp_path):
    path = tmp_path / "cut_profile.json"
    path.write_bytes((data.parent.parent / "samples/megengine/convnet_lar_embed_profile.json")
                     .read_bytes()[:30_000])
    result = CliRunner().invoke(app, ["info", str(path), "--format", "megengine"])
    assert result.exit_code == 1
    assert result.output.startswith(f"traceconv: error: {path}:1:")
    assert "not valid JSON" in result.output


MEGENGINE_INPUTS = sorted(p.name for p in (Path(__file__).parent / "data/megengine").iterdir()
                          if p.is_file()) + ["convnet_static_mem_info/StaticMemoryInfo.json"]


@pytest.mark.slow
@pytest.mark.parametrize("name", MEGENGINE_INPUTS)
@pytest.mark.parametrize("suffix", [".pftrace", ".json"])
def test_every_input_converts_and_passes_check(data, tmp_path, name, suffix):
    out = tmp_path / f"out{suffix}"
    run(str(data / "megengine" / name), "-o", str(out))
    report = check_file(str(out))
    assert report.ok, report.errors
    warnings = {w["code"]: w["count"] for w in report.warnings}
    if suffix == ".json":   # a kernel ended before its launch began (MegEngine's clocks):
        # its arrow cannot be drawn: its end comes before its start, which nothing follows
        # (counted by numpy)
        trace = traceconv.load(data / "megengine" / name)
        start, dur = trace.slices.numpy("start"), trace.slices.numpy("dur")
        source, target = trace.flows.numpy("source"), trace.flows.numpy("target")
        back = int((start[target] + dur[target] < start[source]).sum())
        assert warnings.pop("flow_unpaired", 0) == back
        assert warnings.pop("flow_start_unfollowed", 0) == back
    assert not warnings, report.warnings
