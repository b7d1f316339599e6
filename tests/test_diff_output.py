"""``diff A B -o DIFF.pftrace`` and ``--fail-if`` (issue #27): one viewable trace with both runs
aligned at their first step, and CI gates with exit status 3 on a regression."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from tests.tp_wasm.layout import slices_per_track
from traceconv.analysis.fail_if import parse_gate
from traceconv.cli import app

ROOT = Path(__file__).parent.parent
RESNET = ROOT / "samples" / "torch" / "resnet18_train_cuda.pt.trace.json.gz"


def _raw_steps() -> dict[str, tuple[int, int]]:
    """ProfilerStep#N host windows straight from the JSON (ns)."""
    with gzip.open(RESNET, "rt") as f:
        events = json.load(f)["traceEvents"]
    return {e["name"]: (round(e["ts"] * 1000), round(e["dur"] * 1000)) for e in events
            if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#")}


def _diff(*args: str):
    return CliRunner().invoke(app, ["diff", str(RESNET), str(RESNET), "--json", *args])


def test_steps_select_and_windows_match_the_raw_step_markers():
    steps = _raw_steps()
    result = _diff("--steps", "2", "--fail-if", "total:+50%")
    # --steps applies to both inputs: the same step on both sides, no change
    data = json.loads(result.stdout)
    assert result.exit_code == 0, result.output
    assert data["window_a_ns"] == data["window_b_ns"] == steps["ProfilerStep#2"][1]
    assert data["verdict"]["regressed"] is False


@pytest.fixture(scope="module")
def step2_vs_step3(tmp_path_factory):
    """A = step 2 of the ResNet-18 run, B = its step 3 (two real steps of one run)."""
    trace = traceconv.load(RESNET)
    folder = tmp_path_factory.mktemp("steps")
    from traceconv.analysis.steps import select_steps

    paths = []
    for number in ("2", "3"):
        path = folder / f"step{number}.json"
        traceconv.save(select_steps(trace, number), path, format="chrome")
        paths.append(path)
    return paths


@pytest.mark.slow
def test_fail_if_exits_3_past_the_limit_and_0_below(step2_vs_step3):
    a, b = step2_vs_step3
    steps = _raw_steps()
    wa, wb = steps["ProfilerStep#2"][1], steps["ProfilerStep#3"][1]
    assert wb > wa            # step 3 is slower than step 2 in the recording
    pct = 100 * (wb - wa) / wa
    below, above = math.floor(pct * 100) / 100, math.ceil(pct * 100) / 100
    fails = CliRunner().invoke(app, ["diff", str(a), str(b), "--json",
                                     "--fail-if", f"total:+{below}%"])
    assert fails.exit_code == 3, fails.output
    data = json.loads(fails.stdout)
    check = data["verdict"]["checks"][0]
    assert (check["a_ns"], check["b_ns"], check["regressed"]) == (wa, wb, True)
    passes = CliRunner().invoke(app, ["diff", str(a), str(b), "--json",
                                      "--fail-if", f"total:+{above}%"])
    assert passes.exit_code == 0, passes.output
    assert json.loads(passes.stdout)["verdict"]["regressed"] is False
    # per kind and per op: the gate sums the rows of that kind / name
    rows = data["rows"]
    kernel_delta = sum(r["delta_ns"] for r in rows if r["kind"] == "kernel")
    gate = CliRunner().invoke(app, ["diff", str(a), str(b), "--json", "--fail-if",
                                    f"kernel:+{max(kernel_delta, 0) + 1}ns"])
    assert gate.exit_code == 0
    assert json.loads(gate.stdout)["verdict"]["checks"][0]["delta_ns"] == kernel_delta


def test_diff_trace_is_a_valid_new_trace(step2_vs_step3):
    from traceconv.analysis.diff_trace import diff_trace
    from traceconv.analysis.timeline_diff import timeline_diff

    a, b = (traceconv.load(p) for p in step2_vs_step3)
    counts = (a.counts(), b.counts())
    shown = diff_trace(a, b, timeline_diff(a, b))
    assert traceconv.validate(shown) == [] and (a.counts(), b.counts()) == counts
    assert len(shown.slices) > len(a.slices) + len(b.slices)


def test_bad_gate_is_a_usage_error():
    result = _diff("--fail-if", "total:5 parsecs")
    assert result.exit_code == 2 and "SUBJECT:+LIMIT" in result.output
    assert parse_gate("aten::conv2d:+2ms").subject == "aten::conv2d"


def test_diff_output_loads_in_trace_processor_aligned_at_step_starts(
        step2_vs_step3, tmp_path, trace_processor):
    a, b = step2_vs_step3
    out = tmp_path / "diff.pftrace"
    result = CliRunner().invoke(app, ["diff", str(a), str(b), "--json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["rows"]
    trace_processor.load(out.read_bytes())
    # A holds step 2, B step 3 (B's host process has A's pid: B's gets a made-up one)
    starts = trace_processor.query(
        "select name, ts from slice where name like 'ProfilerStep#%' order by name")
    assert [r.name for r in starts] == ["ProfilerStep#2", "ProfilerStep#3"]
    assert starts[0].ts == starts[1].ts
    bars = sum(n for name, n in slices_per_track(trace_processor).items()
               if str(name).startswith("per-op Δ"))   # a thread of the "Δ B − A" process
    assert bars == min(len(rows), 200) + (len(rows) > 200)
    stats = trace_processor.query("select count(*) as n from stats where severity = 'error' "
                                  "and value > 0")
    assert stats[0].n == 0


@pytest.mark.slow
@pytest.mark.parametrize(("gate", "said"), [
    ("kernal:+1%", "did you mean 'kernel'?"),
    ("totl:+5%", "did you mean 'total'?"),
    ("gloo:broadcst:+50%", "no row of either trace is 'gloo:broadcst'"),
    ("communication:+5%", "neither trace has communication rows"),   # (one GPU, no NCCL)
])
def test_a_gate_that_matches_nothing_is_a_usage_error_with_a_suggestion(gate, said):
    """A gate that could never fire must not pass (issue 36): exit 2, one line, nothing on
    standard output, whatever the traces' change."""
    result = CliRunner().invoke(app, ["diff", str(RESNET), str(RESNET), "--fail-if", gate])
    assert result.exit_code == 2, result.output
    assert said in result.output and result.stdout.count("\n") <= 1


def test_a_gate_on_a_name_present_in_either_trace_is_evaluated(step2_vs_step3):
    a, b = step2_vs_step3
    name = next(e["name"] for e in json.loads(gzip.decompress(RESNET.read_bytes()))["traceEvents"]
                if e.get("cat") == "cpu_op" and e.get("name", "").startswith("aten::"))
    result = CliRunner().invoke(app, ["diff", str(a), str(b), "--json", "--fail-if",
                                      f"{name}:+1000%"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["verdict"]["checks"][0]["rows"] >= 1
