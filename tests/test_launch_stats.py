"""summary --launch-stats (issue #27): launch delay = work start − end of its runtime call,
clipped at 0 (HTA's definition), recomputed here from the raw JSON in exact ns."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from traceconv.cli import app

ROOT = Path(__file__).parent.parent
TORCH = ROOT / "samples" / "torch"


def _ns(us: float) -> int:
    return round(us * 1000)


def _nearest_rank(values: list[int], p: int) -> int:
    ordered = sorted(values)
    k = -(-p * len(ordered) // 100)      # ceil(p/100 · n), 1-based
    return ordered[max(k, 1) - 1]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet18_train_cuda.pt.trace.json.gz",
                                  "streams_graph_nccl_cuda.pt.trace.json.gz",
                                  "gpt_compile_bf16_cuda.pt.trace.json.gz"])
def test_launch_delay_matches_the_raw_json(name):
    with gzip.open(TORCH / name, "rt") as f:
        events = json.load(f)["traceEvents"]
    calls = {e["args"]["correlation"]: e for e in events
             if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e["args"]}
    delays, cpu, gpu = [], [], []
    for e in events:
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset"):
            continue
        call = calls.get(e["args"].get("correlation"))
        if call is None:
            continue
        delays.append(max(0, _ns(e["ts"]) - (_ns(call["ts"]) + _ns(call["dur"]))))
        cpu.append(_ns(call["dur"]))
        gpu.append(_ns(e["dur"]))
    result = CliRunner().invoke(app, ["summary", str(TORCH / name), "--launch-stats", "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.stdout)["launch_stats"]
    assert stats["launches"] == len(delays)
    for key, values in (("delay_ns", delays), ("cpu_ns", cpu), ("gpu_ns", gpu)):
        got = stats[key]
        assert got["median"] == _nearest_rank(values, 50)
        assert got["p95"] == _nearest_rank(values, 95)
        assert (got["min"], got["max"], got["total"]) == (min(values), max(values), sum(values))
    assert stats["shorter_than_launch"] == sum(g < c for g, c in zip(gpu, cpu, strict=True))
