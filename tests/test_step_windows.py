"""Device-side step windows (issue #27): when the GPU runs behind the host, each step's device
work is found by launch correlation and the device analyses use the extended windows."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from traceconv.analysis.activity import Timeline
from traceconv.analysis.idle import device_idle
from traceconv.analysis.steps import parse_steps, step_windows
from traceconv.cli import app

ROOT = Path(__file__).parent.parent
SHARED = Path(os.environ.get("TRACECONV_SHARED", ROOT.parent / "shared"))
LAGGING = SHARED / "corpus" / "torch" / "round3" / "kineto" / \
    "tracelens_mi300_resnet_act_checkpoint.json.gz"
RESNET = ROOT / "samples" / "torch" / "resnet18_train_cuda.pt.trace.json.gz"


def _ns(us: float) -> int:
    return round(us * 1000)


@pytest.mark.shared
@pytest.mark.skipif(not LAGGING.exists(), reason="needs ../shared")
def test_device_windows_follow_launch_correlation_when_the_gpu_lags():
    """MI300 ResNet with activation checkpointing: the device work of each step starts 30-35
    ms after the host opened the step and ends 32-38 ms after the host closed it."""
    with gzip.open(LAGGING, "rt") as f:
        events = json.load(f)["traceEvents"]
    steps = [e for e in events if e.get("cat") == "user_annotation"
             and e["name"].startswith("ProfilerStep#")]
    runtime = {e["args"]["correlation"]: e for e in events
               if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    device = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    twins = {e["name"]: e for e in events if e.get("cat") == "gpu_user_annotation"}
    expected = {}
    for step in steps:
        lo, hi = _ns(step["ts"]), _ns(step["ts"]) + _ns(step["dur"])
        mine = [d for d in device if (r := runtime.get(d["args"].get("correlation")))
                and lo <= _ns(r["ts"]) < hi]
        starts = [_ns(d["ts"]) for d in mine] + [_ns(twins[step["name"]]["ts"])]
        ends = [_ns(d["ts"]) + _ns(d["dur"]) for d in mine] + [
            _ns(twins[step["name"]]["ts"]) + _ns(twins[step["name"]]["dur"])]
        # relative to the host step's start (the reader moves the clock to its epoch)
        expected[step["name"]] = (min(starts) - lo, max(ends) - lo, max(ends) - hi)
    trace = traceconv.load(LAGGING)
    windows = step_windows(Timeline(trace))
    got = {w.name: (w.device_start - w.host_start, w.device_end - w.host_start,
                    w.device_lag_ns) for w in windows}
    assert got == expected
    assert all(20_000_000 < lag < 40_000_000 for _, _, lag in got.values())
    # device idle is measured over the host windows extended by the device ones
    idle = device_idle(Timeline(trace))[0]
    first = min(steps, key=lambda s: s["ts"])
    last = max(steps, key=lambda s: s["ts"])
    assert idle.window_ns == expected[last["name"]][1] + _ns(last["ts"]) - _ns(first["ts"])


def test_step_selection_keeps_one_step_and_names_the_steps_on_error():
    assert parse_steps("3:5") == (3, 5)
    result = CliRunner().invoke(app, ["summary", str(RESNET), "--steps", "7", "--json"])
    assert result.exit_code == 1 and "steps 2, 3" in result.stderr
    result = CliRunner().invoke(app, ["critical-path", str(RESNET), "--steps", "3", "--json"])
    assert result.exit_code == 0, result.output
    with gzip.open(RESNET, "rt") as f:
        events = json.load(f)["traceEvents"]
    step3 = next(e for e in events if e.get("name") == "ProfilerStep#3")
    data = json.loads(result.stdout)
    # the cut trace spans step 3 (no device work runs past it in this recording)
    assert data["span_ns"] == _ns(step3["dur"])
