"""A trace shorter than a microsecond reads in its own unit everywhere a lone duration is
printed (``info``, ``critical-path``, ``diff``, ``report``): 300 ns, never "0.000 ms".

The trace is Kineto's own unit-test output (tests/data/torch/PROVENANCE.md): a whole run of
300 ns. Expected figures are counted by hand from its JSON, read with ``json``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from traceconv.cli import app

TRACE = Path(__file__).parent / "data" / "torch" / "kineto_before_fix_trace.json"


def _ns(us: float) -> int:
    return round(us * 1000)


@pytest.fixture(scope="module")
def events() -> list[dict]:
    return [e for e in json.loads(TRACE.read_text())["traceEvents"] if e["ph"] != "M"]


def _output(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, str(TRACE)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "0.000" not in result.stdout   # (a nonzero figure never reads as nothing)
    return result.stdout


def _host_work_ns(events: list[dict]) -> int:
    """The host ops from the first start to the last end (the work the path walks)."""
    host = [e for e in events if e.get("cat") in ("cpu_op", "cuda_runtime")]
    return _ns(max(e["ts"] + e["dur"] for e in host)) - _ns(min(e["ts"] for e in host))


def test_info_span(events):
    # first event (Iteration Start, ts …101.719) to last (Record Window End, …102.019)
    span = _ns(max(e["ts"] + e.get("dur", 0) for e in events)) - _ns(min(e["ts"] for e in events))
    assert span == 300
    assert re.search(r"^span +300 ns *$", _output("info"), re.M)


def test_critical_path_headline_and_column(events):
    work = _host_work_ns(events)   # cudaLaunchKernel at …101.729 to op_evt_sync's end …101.859
    assert work == 130
    out = _output("critical-path")
    assert f"critical path (timeline): {work} ns of {work} ns of work" in out
    assert re.search(r"^name +kind +on path ns +% +links", out, re.M)


def test_diff_headline(events):
    result = CliRunner().invoke(app, ["diff", str(TRACE), str(TRACE)], catch_exceptions=False)
    assert result.exit_code == 0
    work = _host_work_ns(events)
    assert f"window {work} ns → {work} ns, Δ 0 ns" in result.stdout


def test_report_sentences(events, tmp_path):
    page = tmp_path / "report.html"
    CliRunner().invoke(app, ["report", str(TRACE), "-o", str(page)], catch_exceptions=False)
    html = page.read_text()
    work = _host_work_ns(events)
    assert "schemaVersion 1 · 300 ns" in html   # the subtitle's span
    assert f"1 step, {work} ns)" in html
    assert f"critical path: {work} ns of {work} ns of work" in html
    # the kernel (…101.749, 0.02 µs) is the step's only device work: compute 20 ns
    kernel = next(e for e in events if e.get("cat") == "kernel")
    assert f"compute: {_ns(kernel['dur'])} ns (" in html
    assert "0.000" not in html
