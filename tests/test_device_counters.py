"""--device-counters (issue #27): launch queue per stream and memcpy bandwidth as counter
tracks, read back by the real trace_processor and checked against a sweep of the raw JSON."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

from click.testing import CliRunner

import traceconv
from traceconv.analysis.device_counters import with_device_counters
from traceconv.cli import app

ROOT = Path(__file__).parent.parent
STREAMS = ROOT / "samples" / "torch" / "streams_graph_nccl_cuda.pt.trace.json.gz"
DEVICE = ("kernel", "gpu_memcpy", "gpu_memset")


def _raw():
    with gzip.open(STREAMS, "rt") as f:
        return json.load(f)["traceEvents"]


def _sweep(events: list[tuple[float, float]]) -> float:
    """The highest running sum of (time, delta) events, ends first at a tie."""
    level = best = 0.0
    for _, delta in sorted(events, key=lambda e: (e[0], e[1])):
        level += delta
        best = max(best, level)
    return best


def test_counters_match_a_sweep_of_the_raw_json(tmp_path, trace_processor):
    events = _raw()
    runtime = {e["args"]["correlation"]: e for e in events if e.get("cat") == "cuda_runtime"
               and "correlation" in e.get("args", {})}
    queue: dict[int, list[tuple[float, float]]] = {}
    for e in events:
        launch = runtime.get(e.get("args", {}).get("correlation")) if e.get("cat") in DEVICE \
            else None
        if launch is not None:
            items = queue.setdefault(e["tid"], [])
            items += [(round(launch["ts"] * 1000), 1), (round((e["ts"] + e["dur"]) * 1000), -1)]
    copies: dict[str, list[tuple[float, float]]] = {}
    for e in events:
        if e.get("cat") == "gpu_memcpy" and e["dur"] > 0 and e["args"].get("bytes"):
            rate = e["args"]["bytes"] / round(e["dur"] * 1000)
            items = copies.setdefault(re.search(r"HtoD|DtoH|DtoD", e["name"])[0], [])
            items += [(round(e["ts"] * 1000), rate), (round((e["ts"] + e["dur"]) * 1000), -rate)]
    out = tmp_path / "counters.pftrace"
    result = CliRunner().invoke(app, [str(STREAMS), "--device-counters", "-o", str(out)])
    assert result.exit_code == 0, result.output
    trace_processor.load(out.read_bytes())
    rows = trace_processor.query(
        "select counter_track.name as name, max(counter.value) as top from counter "
        "join counter_track on counter.track_id = counter_track.id group by counter_track.name")
    got = {r.name: r.top for r in rows}
    for stream, items in queue.items():
        assert got[f"launch queue: stream {stream}"] == _sweep(items)
    for direction, items in copies.items():
        assert abs(got[f"memcpy {direction} GB/s"] - _sweep(items)) < 1e-6


def test_the_input_trace_is_not_changed():
    trace = traceconv.load(STREAMS)
    before = (trace.counts(), len(trace.tracks), len(trace.metadata.diagnostics))
    shown = with_device_counters(trace)
    assert (trace.counts(), len(trace.tracks), len(trace.metadata.diagnostics)) == before
    assert len(shown.tracks) > len(trace.tracks)
    assert traceconv.validate(shown) == [] and shown.frozen
