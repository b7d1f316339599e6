"""Trimming (--window / --only / --exclude / --tracks), checked against plain counts over
the raw Kineto JSON (no traceconv code in the reference)."""

from __future__ import annotations

import gzip
import re
from collections import Counter
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

import traceconv
from traceconv.analysis.trim import parse_window
from traceconv.cli import app

CNN = "torch/cnn_step5.pt.trace.json"
DDP = "torch/ddp_gloo_rank0.pt.trace.json.gz"


def raw_events(path: Path) -> list[dict]:
    raw = path.read_bytes()
    return orjson.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)["traceEvents"]


def raw_origin_us(events: list[dict]) -> float:
    """The earliest timestamp of any slice, instant or counter event."""
    return min(e["ts"] for e in events if e.get("ph") in ("X", "i", "I", "C"))


@pytest.mark.parametrize("window", ["100ms:200ms", "0ms:1ms", "510ms:", ":20us", "250ms:250.5ms"])
def test_window_keeps_exactly_the_overlapping_slices(samples: Path, window: str):
    events = raw_events(samples / CNN)
    lo, hi = parse_window(window)
    origin = raw_origin_us(events)
    w0 = origin + (lo or 0) / 1000
    w1 = origin + hi / 1000 if hi is not None else float("inf")
    overlapping = [e for e in events if e["ph"] == "X" and e["ts"] < w1 and e["ts"] + e["dur"] > w0]
    inside = [e for e in events if e["ph"] == "i" and w0 <= e["ts"] <= w1]

    trace = traceconv.load(samples / CNN)
    out = traceconv.trim(trace, window=window)
    assert len(out.slices) == len(overlapping) > 0
    assert Counter(s.name for s in out.iter_slices()) == Counter(e["name"] for e in overlapping)
    assert len(out.instants) == len(inside)
    # clipped to the window, and every removal counted
    first = trace.time_range[0]
    assert all(first + (lo or 0) <= s.start and (hi is None or s.end <= first + hi)
               for s in out.iter_slices())
    assert out.diagnostics.count("trim.window.slices") == len(trace.slices) - len(out.slices)
    assert out.diagnostics.count("trim.window.instants") == len(trace.instants) - len(inside)
    clipped = sum(1 for e in overlapping if e["ts"] < w0 or e["ts"] + e["dur"] > w1)
    assert out.diagnostics.count("trim.window.clipped") == clipped


def test_flows_survive_only_with_both_ends(samples: Path):
    trace = traceconv.load(samples / CNN)
    out = traceconv.trim(trace, window="100ms:200ms")
    lo, hi = trace.time_range[0] + 100_000_000, trace.time_range[0] + 200_000_000
    alive = [f for f in trace.iter_flows()
             if all(trace.slice(r).start < hi and trace.slice(r).end > lo
                    for r in (f.source, f.target))]
    assert len(out.flows) == len(alive) and len(out.flows) < len(trace.flows)
    assert out.diagnostics.count("trim.flows") == len(trace.flows) - len(alive)
    pairs = Counter((trace.slice(f.source).name, trace.slice(f.target).name) for f in alive)
    assert Counter((out.slice(f.source).name, out.slice(f.target).name)
                   for f in out.iter_flows()) == pairs


def _containing(events: list[dict], child: dict) -> list[int]:
    return [i for i, e in enumerate(events)
            if e["pid"] == child["pid"] and e["tid"] == child["tid"] and e is not child
            and e["ts"] <= child["ts"] and e["ts"] + e["dur"] >= child["ts"] + child["dur"]]


def test_only_keeps_matches_and_their_ancestors(samples: Path):
    events = [e for e in raw_events(samples / CNN) if e["ph"] == "X"]
    pattern = re.compile(r"aten::relu")
    matches = [i for i, e in enumerate(events) if pattern.search(e["name"])]
    keep = set(matches)
    for i in matches:
        keep.update(_containing(events, events[i]))
    out = traceconv.trim(traceconv.load(samples / CNN), only="aten::relu")
    assert len(out.slices) == len(keep) > len(matches) > 0
    assert Counter(s.name for s in out.iter_slices()) == Counter(events[i]["name"] for i in keep)
    assert out.diagnostics.count("trim.only") == len(events) - len(keep)


def test_exclude_removes_just_the_matches(samples: Path):
    events = [e for e in raw_events(samples / CNN) if e["ph"] == "X"]
    gone = sum(1 for e in events if re.search("^aten::", e["name"]))
    out = traceconv.trim(traceconv.load(samples / CNN), exclude="^aten::")
    assert len(out.slices) == len(events) - gone and out.diagnostics.count("trim.exclude") == gone


def test_tracks_keeps_the_gpu(samples: Path):
    events = raw_events(samples / DDP)
    on_gpu = sum(1 for e in events if e.get("ph") == "X" and e.get("pid") == 0)
    trace = traceconv.load(samples / DDP)
    out = traceconv.trim(trace, tracks="^GPU 0 / ")
    assert len(out.slices) == on_gpu > 0
    assert {p.name for p in out.processes} == {"GPU 0"}
    assert all(out.tracks[s.track].process == 0 for s in out.iter_slices())
    assert out.diagnostics.count("trim.tracks.slices") == len(trace.slices) - on_gpu


def test_input_is_not_changed(samples: Path):
    trace = traceconv.load(samples / CNN)
    before = (trace.slices.numpy("start").tolist(), len(trace.tracks), len(trace.diagnostics))
    traceconv.trim(trace, window="1ms:2ms", only="conv", tracks="thread")
    assert (trace.slices.numpy("start").tolist(), len(trace.tracks),
            len(trace.diagnostics)) == before


def test_cli_window_and_bad_usage(tmp_path: Path, samples: Path):
    out = tmp_path / "w.json"
    result = CliRunner().invoke(app, [str(samples / CNN), "--window", "100ms:200ms",
                                      "--exclude", "^cuda", "-o", str(out)])
    assert result.exit_code == 0, result.output
    doc = orjson.loads(out.read_bytes())
    codes = {d["code"] for d in doc["traceconv"]["diagnostics"]}
    assert {"trim.window.slices", "trim.window.clipped"} <= codes
    for bad in (["--window", "100:200"], ["--window", "2s:1s"], ["--only", "("]):
        result = CliRunner().invoke(app, [str(samples / CNN), *bad, "-o", str(out)])
        assert result.exit_code == 2 and "Traceback" not in result.output


def test_trimmed_merge_keeps_its_straggler_table(samples: Path):
    from traceconv.analysis.stragglers import stragglers

    ranks = [traceconv.load(samples / f"torch/ddp_gloo_rank{r}.pt.trace.json.gz")
             for r in range(4)]
    job = traceconv.merge(ranks)
    hosts = traceconv.trim(job, tracks=r"python3 \(pid")   # host threads only
    assert len(hosts.processes) == 4
    assert stragglers(hosts) == stragglers(job)
