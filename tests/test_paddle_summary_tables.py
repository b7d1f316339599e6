"""Real Paddle pastes: every summary() table read by what it is (kernel rows are device
time by kernel, utilisation rows no operators), and a self time that an elision cut (in a
summary() table or an old Profiling Report) is unknown.

Expected values come from the files, read with plain regexes or by hand (Paddle's own
printed numbers), never from the reader.
"""

from __future__ import annotations

import re

import pytest

import traceconv
from tests.conftest import DATA
from traceconv.model.entities import CHILDREN_LEFT_OUT
from traceconv.presentation.summary import summary_data

A100 = DATA / "paddle" / "paddle_perf_analysis_a100_summary_excerpt.md"
KERNEL_ROW = re.compile(r"^(\S.*?)\s{2,}(\d+)\s+([\d.]+) / [\d.]+ / [\d.]+ / [\d.]+ / [\d.]+\s*$",
                        re.M)


def _block(text: str, title: str) -> str:
    """The fenced block holding ``title``'s table (plain string search)."""
    start = text.index(f"{title}---")
    return text[start:text.index("```", start)]


def _kernel_rows(text: str) -> list[tuple[str, int, float]]:
    return [(name, int(calls), float(ms))
            for name, calls, ms in KERNEL_ROW.findall(_block(text, "Kernel Summary"))]


def _without_operator_summary(text: str) -> str:
    """The page with its Operator Summary block (fence to fence) taken out."""
    start = text.rindex("```", 0, text.index("Operator Summary---"))
    end = text.index("```", text.index("Operator Summary---")) + 3
    return text[:start] + text[end:]


def _summary(path) -> dict:
    return summary_data(traceconv.load(path), top=0)


def test_the_kernel_summary_is_device_time_by_kernel():
    text = A100.read_text(encoding="utf-8")
    kernels = _kernel_rows(text)
    assert len(kernels) == 7 and kernels[0][1:] == (8400, 1390.78)   # the page's top row
    data = _summary(A100)
    # 1390.78 + 1284.27 + 686.11 + 628.44 + 607.21 + 603.83 + 554.28 = 5754.92 ms
    assert data["total_device_time"] == pytest.approx(5.75492)
    assert data["total_device_time"] == pytest.approx(sum(ms for *_, ms in kernels) / 1e3)
    assert [(r["name"], r["calls"], r["type"]) for r in data["rows"]] == [
        (name, calls, "kernel") for name, calls, _ in sorted(kernels, key=lambda k: -k[2])]


def test_without_an_operator_summary_utilisation_rows_are_no_operators(tmp_path):
    text = A100.read_text(encoding="utf-8")
    path = tmp_path / "no_operator_summary.md"
    path.write_text(_without_operator_summary(text), encoding="utf-8")
    assert "Operator Summary---" not in path.read_text(encoding="utf-8")
    data = _summary(path)
    assert data["total_device_time"] == pytest.approx(5.75492)
    names = {r["name"] for r in data["rows"]}
    assert not names & {"CPU(Process)", "CPU(System)", "GPU0"}
    assert len(data["rows"]) == 7
    trace = traceconv.load(path)
    # the Device Summary, by hand: CPU(Process) 102.29, CPU(System) 4.70, GPU0 59.68
    assert trace.metadata.attributes["paddle.utilization_pct"] == {
        "CPU(Process)": 102.29, "CPU(System)": 4.70, "GPU0": 59.68}


def test_a_self_time_that_an_elision_cut_is_unknown():
    trace = traceconv.load(A100)
    ops = {s.name: s for s in trace.stats if s.section == "operator"}
    # the page lists 4 kernels under "matmul_grad compute" (686.11 + 10.88 + 377.17 +
    # 545.14 = 1619.30 ms of its 4537.66 ms), then "..."
    for name in ("MatmulGradNode", "matmul_grad compute"):
        assert ops[name].extra[CHILDREN_LEFT_OUT] and ops[name].self_ns is None
    listed = [s for s in trace.stats if s.section == "operator" and s.depth == 2]
    assert sum(s.device_ns for s in listed) == 1_619_300_000
    assert all(s.self_ns == s.total_ns for s in listed)   # leaves: nothing derived
    data = summary_data(trace, top=0, show_host=True)
    host = {r["name"]: r["host_self_time"] for r in data["host_rows"]}
    # only infer_meta (5.05 ms CPU, no children) has a self time to rank
    assert host == {"matmul_grad infer_meta": pytest.approx(0.00505)}
    assert "2 rows whose children were left out have no self time" in data["totals_note"]
    assert not any(r["device_self_time"] == pytest.approx(2.91836) for r in data["rows"])


def test_the_same_page_without_its_elision_derives_the_self_times(tmp_path):
    path = tmp_path / "no_elision.md"
    path.write_text(A100.read_text(encoding="utf-8").replace("    ...\n", ""),
                    encoding="utf-8")
    trace = traceconv.load(path)
    assert not any(CHILDREN_LEFT_OUT in s.extra for s in trace.stats)
    host = {r["name"]: r["host_self_time"]
            for r in summary_data(trace, top=0, show_host=True)["host_rows"]}
    # by hand, CPU ms: MatmulGradNode 819.74 - 5.05 - 710.65; its compute 710.65 (its
    # kernel rows print no CPU time)
    assert host == pytest.approx({"MatmulGradNode": 0.10404, "matmul_grad compute": 0.71065,
                                  "matmul_grad infer_meta": 0.00505})


def test_a_table_cut_inside_nested_rows_leaves_the_open_parents_without_self_time(tmp_path):
    text = A100.read_text(encoding="utf-8")
    cut = text.index("MEMSET") + len("MEMSET  ")        # the input stops inside a kernel row
    path = tmp_path / "cut.md"
    path.write_text(text[:cut], encoding="utf-8")
    trace = traceconv.load(path)
    assert trace.diagnostics.count("paddle_summary.table_cut") == 1
    flagged = [s.name for s in trace.stats if s.extra.get(CHILDREN_LEFT_OUT)]
    assert flagged == ["MatmulGradNode", "matmul_grad compute"]


def _with_elision_after(text: str, row_name: str) -> str:
    """``text`` with a ``...`` line indented like the row ``row_name`` right after it."""
    line = next(line for line in text.splitlines(keepends=True)
                if line.lstrip().startswith(row_name + " "))
    indent = line[:len(line) - len(line.lstrip())]
    return text.replace(line, line + indent + "...\n", 1)


@pytest.mark.parametrize("collapsed", [False, True])
def test_a_report_elided_among_nested_rows_has_no_self_time_for_the_open_rows(
        tmp_path, collapsed):
    text = (DATA / "paddle" / "legacy_All_Default.txt").read_text(encoding="utf-8")
    pasted = _with_elision_after(text, "conv2d")   # a depth-2 row of the Event Summary
    if collapsed:   # (a web page's paste: whitespace runs collapsed)
        pasted = re.sub(r"[ \t]+", " ", pasted)
    path = tmp_path / "elided.txt"
    path.write_text(pasted, encoding="utf-8")
    trace = traceconv.load(path)
    assert trace.diagnostics.count("paddle_report.elided") == 1
    # by the file's indentation: conv2d (4 spaces) sits in Executor::RunPartialPreparedContext
    # (2) in thread0::Executor::Run (0); those two were open at the elision
    flagged = [s.name for s in trace.stats if s.extra.get(CHILDREN_LEFT_OUT)]
    assert flagged == ["thread0::Executor::Run", "Executor::RunPartialPreparedContext"]
    assert all(s.self_ns is None for s in trace.stats if s.extra.get(CHILDREN_LEFT_OUT))
    conv = next(s for s in trace.stats if s.name == "conv2d")
    assert conv.self_ns == conv.total_ns == 2_924_890   # a leaf: its printed 2.92489 ms
