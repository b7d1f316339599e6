"""``summary --launch-stats --as hta`` equals HTA's ``get_cuda_kernel_launch_stats``.

The expected values are HTA's own output (HolisticTraceAnalysis run in a throwaway
environment on each trace; the script, HTA's version and each result are stored in
``tests/data/launch_stats/hta_expected.json``), never computed by traceconv. Traces HTA
could not read are listed there with its error and not compared.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import traceconv
from tests.conftest import DATA, ROOT
from traceconv.analysis.activity import Timeline
from traceconv.analysis.launch_stats import hta_launch_stats, launch_stats

EXPECTED = json.loads((DATA / "launch_stats" / "hta_expected.json").read_text())
RESULTS = {path: item["result"] for path, item in EXPECTED["traces"].items()
           if "result" in item}
SHARED_PREFIX = "../shared/"


def _cases() -> list:
    cases = []
    for path in sorted(RESULTS):
        marks = [pytest.mark.slow] + ([pytest.mark.shared] if path.startswith(SHARED_PREFIX)
                                      else [])
        cases.append(pytest.param(path, marks=marks, id=Path(path).name))
    return cases


def _ours(stats: dict, key: str) -> dict:
    """Our distribution under HTA's keys (p50 for the median)."""
    return {("p50" if k == "median" else k): v for k, v in stats[key].items()}


@pytest.mark.parametrize("path", _cases())
def test_as_hta_equals_hta(path):
    file = ROOT / path
    if not file.exists():
        pytest.skip(f"{path} is not beside this checkout")
    want = RESULTS[path]
    got = hta_launch_stats(Timeline(traceconv.load(file)))
    assert got["launches"] == want["launches"]
    for ours, theirs in (("cpu_us", "cpu_us"), ("gpu_us", "gpu_us"), ("delay_us", "delay_us")):
        assert _ours(got, ours) == pytest.approx(want[theirs], rel=1e-12, abs=1e-9), ours
    assert got["short_kernels"] == want["short_kernels"]
    assert got["runtime_outliers"]["count"] == want["runtime_outliers"]
    assert got["long_delay"]["count"] == want["launch_delay_outliers"]


def test_every_bundled_gpu_trace_has_hta_values():
    """The bundled CUDA traces are all compared (a fresh clone checks them)."""
    bundled = [p for p in RESULTS if not p.startswith(SHARED_PREFIX)]
    assert "samples/torch/resnet18_train_cuda.pt.trace.json.gz" in bundled
    assert len(bundled) >= 5


def test_default_keeps_the_wider_definition():
    """traceconv's default counts every linked launch: on the torch.compile trace the
    driver-API and graph launches HTA leaves out (more launches than HTA's)."""
    path = "samples/torch/gpt_compile_bf16_cuda.pt.trace.json.gz"
    wider = launch_stats(Timeline(traceconv.load(ROOT / path))).as_dict()["launches"]
    assert wider > RESULTS[path]["launches"]


def test_summary_as_hta_prints_htas_count():
    """The command line: ``summary --launch-stats --as hta`` heads its table with HTA's count."""
    from click.testing import CliRunner

    from traceconv.cli import app

    path = "samples/torch/gpt_compile_bf16_cuda.pt.trace.json.gz"
    result = CliRunner().invoke(app, ["summary", str(ROOT / path), "-t", "1",
                                      "--launch-stats", "--as", "hta"])
    assert result.exit_code == 0, result.output
    assert f"launches as HTA counts them: {RESULTS[path]['launches']} " in result.stdout
