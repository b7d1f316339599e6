"""A regression gate people can trust (issue 36): steps are samples, gates fire on the
interval's lower bound, CI reports, exit codes.

Expected verdicts come from the construction (a copy of a real trace with every event
stretched in time by a known factor, random halves of one run's steps), never from the code
under test; per-step times are checked against the step markers read with plain ``json``.
"""

from __future__ import annotations

import gzip
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from traceconv.analysis import attribution
from traceconv.analysis.attribution import StepTimes, attribute_steps
from traceconv.analysis.bootstrap import RESAMPLES, median_change
from traceconv.analysis.fail_if import evaluate, parse_gate
from traceconv.analysis.timeline_diff import compare
from traceconv.cli import app

pytestmark = pytest.mark.slow

DATA = Path(__file__).parent / "data"
RESNET50 = DATA / "torch" / "kineto2021_resnet50.pt.trace.json.gz"   # 6 steps, one GPU
CNN = Path(__file__).parent.parent / "samples" / "torch" / "cnn_step5.pt.trace.json"


def _events(path: Path) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)


def _stretched(path: Path, factor: float, out: Path) -> Path:
    """A copy with every event stretched by ``factor`` in time (about the first event)."""
    doc = _events(path)
    origin = min(e["ts"] for e in doc["traceEvents"] if "ts" in e)
    for e in doc["traceEvents"]:
        if "ts" in e:
            e["ts"] = origin + (e["ts"] - origin) * factor
        if "dur" in e:
            e["dur"] = e["dur"] * factor
    out.write_text(json.dumps(doc))
    return out


def _run(*args: str):
    return CliRunner().invoke(app, ["diff", *map(str, args)])


@pytest.fixture(scope="module")
def stretched(tmp_path_factory) -> dict[float, Path]:
    folder = tmp_path_factory.mktemp("stretched")
    return {f: _stretched(RESNET50, f, folder / f"x{f}.json") for f in (1.01, 1.2)}


def test_a_20_percent_stretch_fires_a_3_percent_gate_with_confidence(stretched):
    raw_steps = [e for e in _events(RESNET50)["traceEvents"]
                 if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
    result = _run(RESNET50, stretched[1.2], "--fail-if", "total:+3%", "--json")
    assert result.exit_code == 3, result.output
    check = json.loads(result.stdout)["verdict"]["checks"][0]
    assert check["samples_a"] == check["samples_b"] == len(raw_steps) == 6
    assert check["mode"] == "interval" and check["regressed"]
    assert check["median_change_pct"] == pytest.approx(20, abs=0.05)   # the stretch
    assert 3 < check["ci_pct"][0] <= 20 <= check["ci_pct"][1]
    # the smallest change it fires on: the limit plus the distance median → lower bound
    assert check["detectable_pct"] == pytest.approx(
        3 + check["median_change_pct"] - check["ci_pct"][0], abs=0.01)
    assert check["rows"] >= max(check["rows_a"], check["rows_b"]) > 100


def test_a_1_percent_stretch_does_not_fire_but_the_point_gate_does(stretched):
    gated = _run(RESNET50, stretched[1.01], "--fail-if", "total:+0.5%", "--json")
    assert gated.exit_code == 0, gated.output
    check = json.loads(gated.stdout)["verdict"]["checks"][0]
    assert check["ci_pct"][0] < 0.5 < check["median_change_pct"]
    point = _run(RESNET50, stretched[1.01], "--fail-if-any", "total:+0.5%", "--json")
    assert point.exit_code == 3
    assert json.loads(point.stdout)["verdict"]["checks"][0]["mode"] == "median"


def test_reports_for_ci_are_well_formed_and_stable(stretched):
    from traceconv.presentation.gate_reports import REPORTS

    gates = ["--fail-if", "total:+3%", "--fail-if", "kernel:+50%"]
    data = json.loads(_run(RESNET50, stretched[1.2], *gates, "--report", "json").stdout)
    assert {"subject", "rows_a", "rows_b", "samples_a", "samples_b", "median_change_ns",
            "ci_ns", "regressed", "detectable_ns"} <= set(data["verdict"]["checks"][0])
    junit = _run(RESNET50, stretched[1.2], *gates, "--report", "junit")
    assert junit.exit_code == 3
    assert junit.stdout == REPORTS["junit"](data, 0)   # a second run: the same bytes
    suites = ET.fromstring(junit.stdout)
    cases = suites.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["total:+3%", "kernel:+50%"]
    assert suites.get("failures") == "1" and cases[0].find("failure") is not None
    github = REPORTS["github"](data, 0).splitlines()
    assert [line.split(" ", 1)[0] for line in github] == ["::error", "::notice"]
    markdown = REPORTS["markdown"](data, 10)
    assert "| `total:+3%` | ❌ regressed |" in markdown and "| 6 → 6 |" in markdown


def test_a_folder_of_split_pieces_gives_one_sample_a_step(tmp_path):
    from traceconv.splitting import split

    manifest = split(CNN, tmp_path / "pieces", by="step")
    steps = [e for e in _events(CNN)["traceEvents"]
             if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
    result = _run(tmp_path / "pieces", tmp_path / "pieces", "--json", "--steps-b", "2,4")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["samples_a"] == len(steps) == 3 and data["samples_b"] == 2
    assert data["traces_a"] == len(manifest["pieces"]) - 1   # the piece before step 2: out
    assert "left out 1 trace(s) without step markers" in result.stderr
    several = _run(tmp_path / "pieces" / manifest["pieces"][1]["file"], CNN, "vs", CNN,
                   "--json")
    assert json.loads(several.stdout)["samples_a"] == 1 + 3


@pytest.mark.parametrize(("args", "status", "said"), [
    (["--steps-a", "7"], 2, "--steps-a '7' names none of the steps there are (2, 3, 4)"),
    (["--steps-a", "x:"], 2, "expected N, A:B"),
    (["--fail-if", "total:+3 percent"], 2, "SUBJECT:+LIMIT"),
    (["--fail-if-any", "totl:+3%"], 2, "did you mean 'total'?"),
    (["vs"], 2, "give traces on both sides"),
])
def test_exit_status_2_for_usage(args, status, said):
    result = _run(CNN, CNN, *args)
    assert result.exit_code == status, result.output
    assert said in result.output


def test_exit_status_1_for_unreadable_input(tmp_path):
    (tmp_path / "bad.json").write_text("{ not json")
    result = _run(CNN, tmp_path / "bad.json", "--fail-if", "total:+3%")
    assert result.exit_code == 1 and "bad.json" in result.output
    report = Path(__file__).parent.parent / "samples" / "paddle" / "report_gpu_before.txt"
    several = _run(CNN, CNN, "vs", report, "--fail-if", "total:+3%")
    assert several.exit_code == 1 and "report_gpu_before.txt: not a timeline" in several.output
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run(CNN, empty).exit_code == 1


def test_one_drawn_diff_needs_one_trace_a_side(tmp_path):
    result = _run(CNN, CNN, "vs", CNN, "-o", tmp_path / "d.pftrace")
    assert result.exit_code == 2 and "-o draws one trace a side" in result.output
    assert not (tmp_path / "d.pftrace").exists()


@settings(max_examples=40, derandomize=True, deadline=None)
@given(st.lists(st.integers(0, 10**6), min_size=1, max_size=30), st.integers(0, 2**32))
def test_a_redraw_median_is_the_median_of_the_redrawn_samples(values, seed):
    """The order-statistic shortcut equals numpy's median of each redraw."""
    from traceconv.analysis.bootstrap import _redraw_medians

    row = np.array([values])
    fast = _redraw_medians(row, np.random.default_rng(seed))
    positions = np.random.default_rng(seed).integers(0, len(values), (RESAMPLES, len(values)))
    slow = np.median(np.sort(row[0])[positions], axis=1)
    assert np.array_equal(fast[0], slow)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 30), st.integers(1, 2),
                          st.integers(0, 3)), min_size=1, max_size=25),
       st.lists(st.tuples(st.integers(0, 60), st.integers(1, 40)), min_size=1, max_size=3))
def test_painting_charges_what_the_event_sweep_charges(work, windows):
    """Each stretch to the same item: the vectorised paint and the one-at-a-time sweep."""
    spans = sorted(windows)
    merged: list[list[int]] = []
    for start, length in spans:   # the step windows are disjoint
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], start + length)
        else:
            merged.append([start, start + length])
    items = attribution._Items(
        np.array([s for s, _ in merged] + [s for s, _, _, _ in work]),
        np.array([e for _, e in merged] + [s + d for s, d, _, _ in work]),
        np.array([0] * len(merged) + [c for _, _, c, _ in work]),
        np.array([0] * len(merged) + [1 + k for _, _, _, k in work]),
        np.array([-1] * len(merged) + [(k % 3) - 1 for _, _, _, k in work]))
    starts = np.array([0, 25])
    painted = attribution._paint(items, 5, starts)
    assert painted is not None
    assert np.array_equal(painted, attribution._sweep(items, 5, starts))
    inside = sum(e - s for s, e in merged)
    assert painted.sum() == inside


def test_a_median_change_interval_is_deterministic():
    rng = np.random.default_rng(5)
    a, b = rng.normal(100, 10, (3, 40)), rng.normal(110, 10, (3, 50))
    first, again = median_change(a, b), median_change(a, b)
    assert np.array_equal(first.low, again.low) and np.array_equal(first.high, again.high)
    assert (first.samples_a, first.samples_b) == (40, 50)


# -- the numbers of issue 36, on the real 200-step CPU run (../shared) ------------------------

LARGE = "torch/large/large_cpu_200steps.pt.trace.json.gz"


@pytest.fixture(scope="module")
def large_steps(shared_samples) -> StepTimes:
    """The run's steps, each its time per (name, kind): computed once."""
    import traceconv

    path = shared_samples / LARGE
    if not path.exists():
        pytest.skip(f"{LARGE} is not in ../shared/samples")
    steps = attribute_steps(traceconv.load(path))
    with gzip.open(path, "rt") as f:
        raw = {int(e["name"].split("#")[1]): round(e["dur"] * 1000)
               for e in json.load(f)["traceEvents"] if e.get("ph") == "X"
               and str(e.get("name", "")).startswith("ProfilerStep#")}
    # a CPU run: each step's sample is its marker's duration, to the nanosecond
    assert dict(zip(steps.steps, steps.per_step.tolist(), strict=True)) == raw
    assert len(raw) == 200
    return steps


def _halves(steps: StepTimes, seed: int) -> tuple[StepTimes, StepTimes]:
    order = np.random.default_rng(seed).permutation(len(steps.steps))
    a, b = np.sort(order[:100]), np.sort(order[100:])
    return (StepTimes(steps.keys, steps.ns[:, a], [steps.steps[i] for i in a]),
            StepTimes(steps.keys, steps.ns[:, b], [steps.steps[i] for i in b]))


def _fires(a: StepTimes, b: StepTimes, stretch: float) -> bool:
    # every event of B's steps stretched in time: each piece of B's steps grows by it
    b = StepTimes(b.keys, np.rint(b.ns * stretch).astype(np.int64), b.steps)
    return evaluate(compare(a, b), [parse_gate("total:+3%")])["regressed"]


def test_random_halves_of_one_run_pass_and_stretched_halves_fire(large_steps):
    halves = [_halves(large_steps, seed) for seed in range(20)]
    a_a = sum(_fires(a, b, 1.0) for a, b in halves)
    a_b = sum(_fires(a, b, 1.2) for a, b in halves)
    small = sum(_fires(a, b, 1.01) for a, b in halves)
    assert a_a <= 1          # passes in >= 19 of 20
    assert a_b >= 19         # fires in >= 19 of 20
    assert small <= 1        # a 1 % stretch does not fire
    # the same halves through a single-number gate at +3 %: noise fires it
    point = sum(evaluate(compare(a, b), [parse_gate("total:+3%", False)])["regressed"]
                for a, b in halves)
    assert point >= 2


# -- across profilers and platforms (issue 36, item 4) ----------------------------------------

ROCM = DATA / "torch" / "tracelens_mi300_resnet_act_checkpoint.json.gz"   # Kineto on MI300
CUDA = Path(__file__).parent.parent / "samples" / "torch" / "resnet18_train_cuda.pt.trace.json.gz"
NSYS = Path(__file__).parent.parent / "samples" / "nsys" / "mfu_2xh100_nccl_nsys2026.2.sqlite.gz"


def _rows(*args) -> dict[tuple[str, str], dict]:
    result = _run(*args, "--json", "--by-name")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    return {(r["name"], r["kind"]): r for r in data["rows"]} | {("", "names"): data["names"]}


def test_cuda_and_rocm_runs_meet_on_normalised_names():
    names = {e["name"] for path in (CUDA, ROCM) for e in _events(path)["traceEvents"]
             if e.get("cat") == "cuda_runtime"}
    assert {"cudaLaunchKernel", "hipLaunchKernel"} <= names
    normalised = _rows(CUDA, ROCM)                      # auto: the platforms differ
    raw = _rows(CUDA, ROCM, "--names", "raw")
    assert normalised[("", "names")] == "normalised" and raw[("", "names")] == "as recorded"
    launch = normalised[("gpuLaunchKernel", "cpu")]
    assert launch["a_ns"] == raw[("cudaLaunchKernel", "cpu")]["a_ns"] > 0
    assert launch["b_ns"] == raw[("hipLaunchKernel", "cpu")]["b_ns"] > 0
    assert normalised[("Memset", "memcpy")]["a_ns"] == raw[("Memset (Device)", "memcpy")]["a_ns"]
    gated = _run(CUDA, ROCM, "--json", "--fail-if", "runtime:+10000%", "--fail-if",
                 "cudaLaunchKernel:+10000%", "--fail-if", "memset:+10000%")
    checks = json.loads(gated.stdout)["verdict"]["checks"]
    assert [(c["rows_a"] > 0, c["rows_b"] > 0) for c in checks] == [(True, True)] * 3


def test_kineto_and_nsight_systems_kernels_meet_without_template_arguments():
    kernel = "at::native::vectorized_elementwise_kernel"
    # the two profilers spell the template arguments differently
    assert any(e.get("cat") == "kernel" and "vectorized_elementwise_kernel<2," in e["name"]
               for e in _events(CUDA)["traceEvents"])
    rows = _rows(CUDA, NSYS)
    assert rows[("", "names")] == "normalised"
    assert rows[(kernel, "kernel")]["a_ns"] > 0 and rows[(kernel, "kernel")]["b_ns"] > 0
    assert not any("<" in name for name, kind in rows if kind == "kernel")


def _union_ns(spans: list[tuple[float, float]]) -> int:
    """The length (ns) of the union of µs spans."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(spans):
        total += max(0.0, stop - max(start, end))
        end = max(end, stop)
    return round(total * 1000)


def test_device_work_is_charged_to_the_step_that_launched_it():
    """The MI300 run's device is ~32 ms behind its host: a step's kernels run in the next
    step's host window. Its last step's device time is the union of the copies and kernels
    that its host window launched (runtime call → work by correlation, read with json)."""
    events = _events(ROCM)["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"], int(e["name"].split("#")[1])) for e in events
                   if e.get("ph") == "X" and e.get("cat") == "user_annotation"
                   and e["name"].startswith("ProfilerStep#"))
    launched_at = {e["args"]["correlation"]: e["ts"] for e in events
                   if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    last_start, last_end, last = steps[-1]
    spans = [(e["ts"], e["ts"] + e["dur"]) for e in events
             if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
             and last_start <= launched_at.get(e["args"].get("correlation"), -1) < last_end]
    assert min(s for s, _ in spans) > last_end   # it all ran after the host closed the step
    import traceconv

    times = attribute_steps(traceconv.load(ROCM))
    device = [i for i, (_, kind) in enumerate(times.keys) if kind != "cpu" and kind != "idle"]
    charged = dict(zip(times.steps, times.ns[device].sum(axis=0).tolist(), strict=True))
    assert abs(charged[last] - _union_ns(spans)) <= 100   # (µs → ns rounding of the JSON)
