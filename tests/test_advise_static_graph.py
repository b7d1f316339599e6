"""advise on Paddle runs that are already static graphs: no "run a static graph" advice, and
one-time setup in the profiled window reported apart from the overhead a step pays.

Expected values are the report's own printed numbers (plain regexes over the file).
"""

from __future__ import annotations

import re

import pytest

import traceconv
from tests.conftest import DATA
from traceconv.analysis.advise import advise
from traceconv.analysis.advise.frameworks import PADDLE_STATIC, framework_of

PARALLEL_EXECUTOR = DATA / "paddle" / "paddle_pr24611_pe_profiler_place_all.txt"


def test_advise_on_a_parallel_executor_run_reports_its_setup_apart():
    text = PARALLEL_EXECUTOR.read_text(encoding="utf-8")
    total = float(re.search(r"Total time: ([\d.]+)", text)[1])                  # 33.4768
    overhead = float(re.search(r"Framework overhead\s+Total: ([\d.]+)", text)[1])  # 23.9291
    prepare = float(re.search(r"FastThreadedSSAGraphExecutorPrepare\s+1\s+([\d.]+)",
                              text)[1])                                          # 26.0902
    trace = traceconv.load(PARALLEL_EXECUTOR)
    assert framework_of(trace) == PADDLE_STATIC
    (finding,) = [f for f in advise(trace).findings if f.rule == "framework-overhead"]
    assert finding.severity == "info" and finding.cause == "setup"
    assert finding.evidence["setup_rows"] == ["FastThreadedSSAGraphExecutorPrepare"]
    assert finding.evidence["setup_ns"] == round(prepare * 1e6)
    assert finding.evidence["overhead_outside_setup_max_pct"] == pytest.approx(
        100 * min(overhead, total - prepare) / total, abs=1e-4)
    assert "71.5%" in finding.title and "to_static" not in finding.advice


def test_advise_on_a_static_run_without_setup_never_says_run_a_static_graph(tmp_path):
    text = PARALLEL_EXECUTOR.read_text(encoding="utf-8")
    path = tmp_path / "no_setup_row.txt"
    path.write_text("".join(line for line in text.splitlines(keepends=True)
                            if "FastThreadedSSAGraphExecutorPrepare" not in line),
                    encoding="utf-8")
    (finding,) = [f for f in advise(traceconv.load(path)).findings
                  if f.rule == "framework-overhead"]
    # the report's own ratio: "Framework overhead  Total: 23.9291  Ratio: 71.4797%"
    assert finding.severity == "high" and finding.evidence["ratio_pct"] == 71.4797
    assert "to_static" not in finding.advice and "static-graph run" in finding.advice


def test_a_dygraph_report_keeps_the_static_graph_advice():
    trace = traceconv.load(DATA / "paddle" / "dygraph_All_Default.txt")
    assert framework_of(trace) == "paddle"
