"""Real PyTorch 2.13 CPU profiles (tests/data/torch/cpu_2.13/PROVENANCE.md), checked against
torch's own ``key_averages()`` of the same runs and against hand counts of the raw JSON."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

import traceconv
from tests.test_advise import union_ns
from traceconv.analysis.advise import advise
from traceconv.analysis.critical_path import critical_path
from traceconv.analysis.op_summary import op_summary

HERE = Path(__file__).parent / "data" / "torch" / "cpu_2.13"
COMPILE = HERE / "compile.pt.trace.json.gz"
DATALOADER = HERE / "dataloader.pt.trace.json.gz"


def events(path: Path) -> list[dict]:
    with gzip.open(path) as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def test_aten_self_times_are_key_averages():
    """Every aten:: row's calls and self time are torch's (µs, to the ns)."""
    theirs = {r["name"]: r for r in json.loads((HERE / "compile.key_averages.json").read_text())
              if r["name"].startswith("aten::")}
    ours = {r.name: r for r in op_summary(traceconv.load(COMPILE)) if r.name.startswith("aten::")}
    assert set(ours) == set(theirs)
    for name, row in theirs.items():
        assert ours[name].calls == row["count"], name
        assert ours[name].self_host_ns / 1e3 == pytest.approx(row["self_cpu_time_total"],
                                                              abs=1e-3), name


def test_a_python_function_named_like_a_loader_is_no_loading_range():
    """The script's own function `sc_dataloader` spans the run: as a Python frame it is code,
    not a loading range. Loading is the DataLoader's `enumerate(DataLoader)#...__next__`
    ranges: their share of the steps, by hand from the JSON."""
    raw = events(DATALOADER)
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in raw if e["name"].startswith("ProfilerStep#")]
    loads = [(e["ts"], e["ts"] + e["dur"]) for e in raw if e.get("cat") != "python_function"
             and re.search(r"enumerate\(DataLoader\)", e["name"])]
    assert any("sc_dataloader" in e["name"] for e in raw)   # (what the file has)
    share = union_ns(loads) / union_ns(steps + loads)
    (finding,) = [f for f in advise(traceconv.load(DATALOADER)).findings
                  if f.rule == "dataloader-bound"]
    assert finding.severity == "medium" and share == pytest.approx(0.147, abs=0.001)
    assert finding.evidence["loader_ns"] / 1e3 == pytest.approx(union_ns(loads), rel=1e-3)


def test_the_critical_path_runs_on_the_thread_that_runs_the_ops():
    """torch.compile leaves idle pool threads whose Python `_worker` frame spans the run; the
    walk starts on the thread that runs the ops (the most cpu_op events, by hand), not there."""
    raw = events(COMPILE)
    ops: dict[tuple, int] = {}
    for e in raw:
        if e.get("cat") == "cpu_op":
            ops[(e["pid"], e["tid"])] = ops.get((e["pid"], e["tid"]), 0) + 1
    main = max(ops, key=ops.__getitem__)
    trace = traceconv.load(COMPILE)
    result = critical_path(trace, "timeline")
    elsewhere = sum(e.dur_ns for e in result.path if e.row is not None
                    and trace.tracks[trace.slices.track[e.row]].tid != main[1])
    assert elsewhere < 0.001 * result.length_ns   # (the pool threads' first µs only)
    assert sum(e.dur_ns for e in result.path if "_worker" in e.name) < 10_000
