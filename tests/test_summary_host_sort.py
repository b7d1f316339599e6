"""A summary with no device time shows host time, sorted by it, and says so (a CPU-only
report used to be a table of zeros sorted by device time)."""

from __future__ import annotations

import re

from click.testing import CliRunner

from tests.conftest import DATA, SAMPLES
from traceconv.cli.app import app
from traceconv.presentation.summary.ops import NO_DEVICE_TIME

CPU_SUMMARY = SAMPLES / "paddle" / "summary_small_2.6.2.txt"
CPU_TIMELINE = DATA / "paddle" / "dygraph_CPU_Default.timeline.json.gz"
MILLISECONDS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def _summary(path) -> str:
    result = CliRunner().invoke(app, ["summary", str(path), "--wide"])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_cpu_only_paddle_summary_is_its_host_table_sorted_by_host_time():
    # independent: every GPU total the report prints (the figure after the CPU column's
    # ratio) is 0.00
    gpu_totals = re.findall(r"/ [\d.]+\s{2,}([\d.]+) / ", CPU_SUMMARY.read_text())
    assert len(gpu_totals) > 10 and set(gpu_totals) == {"0.00"}
    text = _summary(CPU_SUMMARY)
    assert "total device time  0.000us" in text and NO_DEVICE_TIME in text
    assert "host self time per operator" in text and "device self time" not in text
    # (a row's first line: its number, then the host self time with its unit)
    first_lines = re.findall(r"^\s*\d+\s+([\d.]+)(us|ms|s)\s+[\d.]+(?:us|ms|s)\s", text, re.M)
    scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
    times = [float(value) * scale[unit] for value, unit in first_lines]
    assert len(times) >= 5 and times == sorted(times, reverse=True) and times[0] > 0


def test_a_cpu_only_timeline_is_sorted_by_self_host_time_and_says_so():
    text = _summary(CPU_TIMELINE)
    assert NO_DEVICE_TIME in text and "Self device" not in text
    rows = re.findall(r"^\S.*?\s{2,}op\s+([\d.]+)(us|ms|s)\s", text, re.M)
    times = [float(value) * MILLISECONDS[unit] for value, unit in rows]
    assert len(times) >= 10 and times == sorted(times, reverse=True)


def test_a_summary_with_device_time_says_nothing_of_the_sort():
    cuda = SAMPLES / "torch" / "streams_graph_nccl_cuda.pt.trace.json.gz"
    assert NO_DEVICE_TIME not in _summary(cuda)
