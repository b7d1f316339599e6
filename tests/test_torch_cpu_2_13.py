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


def test_the_graph_path_is_a_chain_of_ops_through_tensors():
    """An execution trace beside its Kineto trace: the longest producer → consumer chain is
    made of ops, never of the step range around them (it was the whole path, 73.4 ms);
    each link feeds the next through a tensor of the ET, and each weighs its Kineto time
    (by rf_id, from the JSON)."""
    with gzip.open(HERE / "et_run.et.json.gz") as f:
        nodes = json.load(f)["nodes"]
    rf_id = {n["id"]: next(a["value"] for a in n["attrs"] if a["name"] == "rf_id")
             for n in nodes if any(a["name"] == "rf_id" for a in n["attrs"])}

    def tensors(node: dict, side: str) -> set[tuple]:
        return {tuple(v[:2]) for v in node.get(side, {}).get("values", [])
                if isinstance(v, list) and len(v) == 6}

    by_name_rf = {(n["name"], rf_id.get(n["id"])): n for n in nodes}
    kineto = {e["args"]["Record function id"]: e["dur"] for e in events(
        HERE / "et_run.pt.trace.json.gz") if "Record function id" in e.get("args", {})}
    trace = traceconv.combine([traceconv.load(HERE / "et_run.pt.trace.json.gz"),
                               traceconv.load(HERE / "et_run.et.json.gz")])
    result = critical_path(trace, "graph")
    links = [e for e in result.path if e.row is not None]
    assert len(links) > 5 and not any(e.name.startswith("ProfilerStep") for e in links)
    chain = [by_name_rf[(e.name, trace.slices.args[e.row]["Record function id"])]
             for e in links]
    for a, b in zip(chain, chain[1:], strict=False):
        assert tensors(a, "outputs") & tensors(b, "inputs"), (a["name"], b["name"])
    assert sum(e.dur_ns for e in links) / 1e3 == pytest.approx(
        sum(kineto[rf_id[n["id"]]] for n in chain), abs=1e-3 * len(chain))


def test_the_steps_are_one_row_as_in_key_averages():
    """torch lists ProfilerStep#1..#5 as one `ProfilerStep*` row: its calls and times."""
    theirs = next(r for r in json.loads((HERE / "dataloader.key_averages.json").read_text())
                  if r["name"] == "ProfilerStep*")
    rows = [r for r in op_summary(traceconv.load(DATALOADER)) if "ProfilerStep" in r.name]
    assert [(r.name, r.calls) for r in rows] == [("ProfilerStep*", theirs["count"])]
    assert rows[0].host_total_ns / 1e3 == pytest.approx(theirs["cpu_time_total"], abs=1e-3)


def test_a_profile_taken_without_the_et_observer_says_so(tmp_path):
    """The same run with every Kineto record function id 0 (what a profile taken without
    the ExecutionTraceObserver holds): nothing links, and the note says why, instead of
    leaving a user to hunt for a difference of names."""
    with gzip.open(HERE / "et_run.pt.trace.json.gz") as f:
        document = json.load(f)
    zeroed = 0
    for event in document["traceEvents"]:
        if "Record function id" in event.get("args", {}):
            event["args"]["Record function id"] = 0
            zeroed += 1
    kineto = tmp_path / "no_observer.pt.trace.json"
    kineto.write_text(json.dumps(document))
    linked = traceconv.combine([traceconv.load(kineto),
                                traceconv.load(HERE / "et_run.et.json.gz")])
    assert linked.diagnostics.count("link_et.record_function_ids_zero") == zeroed > 0
    assert not linked.diagnostics.count("link_et.linked_ops")
    real = traceconv.combine([traceconv.load(HERE / "et_run.pt.trace.json.gz"),
                              traceconv.load(HERE / "et_run.et.json.gz")])
    assert not real.diagnostics.count("link_et.record_function_ids_zero")
