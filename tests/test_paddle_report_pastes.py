"""Paddle report fragments as users paste them: one synthetic example per failing class.

Expected values are the numbers printed in each example (read off the text), not the
parser's output.
"""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from traceconv.cli.app import app
from traceconv.formats import paddle_report

TITLE = "-" * 25 + "       Event Summary       " + "-" * 25
HEADER = "Event                          Calls       Total       Min.        Max.        Ave.        Ratio."


def rows(text: str):
    log, trace = paddle_report.parse(text)
    return log, trace, [s for s in trace.stats if s.section.startswith("events")]


def test_p1_no_banner_paste_starts_at_total_time():
    text = "\n".join(["Total time: 12.5", TITLE, HEADER,
                      "relu                           4           2.0         0.4         0.6"
                      "         0.5         0.16"])
    log, trace, events = rows(text)
    assert [(s.name, s.calls, s.total_ns, s.min_ns, s.max_ns) for s in events] == [
        ("relu", 4, 2_000_000, 400_000, 600_000)]
    assert log.reports[0].overhead.total_ms == 12.5 and log.reports[0].implicit


def test_p1_second_header_inside_an_open_table_starts_a_new_table():
    text = "\n".join([HEADER, "relu 4 2.0 0.4 0.6 0.5 0.16", HEADER,
                      "softmax 5 1.0 0.1 0.3 0.2 0.08", TITLE, HEADER,
                      "mul 6 3.0 0.4 0.6 0.5 0.24"])
    log, trace, _ = rows(text)
    assert [[r.name for r in report.events] for report in log.reports] == [
        ["relu"], ["softmax"], ["mul"]]
    assert "paddle_report.unreadable_row" not in trace.diagnostics


def test_p1b_rows_without_header_and_an_indented_first_row():
    text = "  relu_grad  4  2.0  0.4  0.6  0.5  0.16\nsoftmax  4  1.0  0.2  0.3  0.25  0.08\n"
    _, trace, events = rows(text)
    assert [(s.name, s.depth, s.parent) for s in events] == [("relu_grad", 0, None),
                                                             ("softmax", 0, None)]
    assert trace.diagnostics.count("paddle_report.headerless_table") == 1


def test_p2_memory_report_alone_and_a_cut_memory_row():
    text = ("Event    Alloc Calls    Size(MB)    Free Calls    Size(MB)\n"
            "Place(gpu:0):conv2d/compute    200    12.5    200    12.5\n"
            "Place(gpu:0):Unknown    3    0.00024")
    _, trace, _ = rows(text)
    memory = [s for s in trace.stats if s.section == "memory"]
    assert [(s.name, s.extra["alloc_calls"], s.extra["free_mb"]) for s in memory] == [
        ("Place(gpu:0):conv2d/compute", 200, 12.5)]
    assert trace.diagnostics.count("paddle_report.cut_row") == 1
    assert "paddle_report.foreign_lines" not in trace.diagnostics


def test_p3_header_cut_after_gpu_time_reads_that_prefix_of_columns(tmp_path):
    text = ("Event   Calls   Total   CPU Time (Ratio)   GPU Time (Ratio)\n"
            "conv2d  200  60.5  10.500000 (0.173554)  50.000000 (0.826446)\n"
            "  conv2d/compute  200  58.0  8.000000 (0.137931)  50.000000 (0.862069)\n")
    _, _, events = rows(text)
    assert [(s.name, s.total_ns, s.cpu_ns, s.device_ns, s.min_ns, s.depth) for s in events] == [
        ("conv2d", 60_500_000, 10_500_000, 50_000_000, None, 0),
        ("conv2d/compute", 58_000_000, 8_000_000, 50_000_000, None, 1)]
    path = tmp_path / "p3.txt"
    path.write_text(text)
    result = CliRunner().invoke(app, ["convert", str(path), "-o", str(tmp_path / "p3.pftrace")])
    assert result.exit_code == 0, result.output


def test_p5_collapsed_merged_report_nests_memcpy_by_arithmetic():
    # top level: conv2d 60.5 + while 30 + GpuMemcpyAsync 1.5 + fetch 0.1 = Total time 92.1;
    # GpuMemcpySync (4.5) is under while, which only the arithmetic can tell once collapsed
    text = """Total time: 92.1
Event Calls Total Min. Max. Ave. Ratio.
conv2d 200 60.5 0.2 0.6 0.3025 0.656895
conv2d/compute 200 58.0 0.2 0.55 0.29 0.629750
while 10 30.0 2.5 3.5 3.0 0.325733
GpuMemcpySync:GPU->CPU 800 4.5 0.001 0.05 0.005625 0.0488599
GpuMemcpyAsync:CPU->GPU 400 1.5 0.001 0.03 0.00375 0.0162866
fetch 10 0.1 0.009 0.011 0.01 0.00108578
"""
    _, trace, events = rows(text)
    by_name = {s.name: s for s in events}
    assert trace.stats[by_name["GpuMemcpySync:GPU->CPU"].parent].name == "while"
    top = [s for s in events if s.parent is None]
    assert [s.name for s in top] == ["conv2d", "while", "GpuMemcpyAsync:CPU->GPU", "fetch"]
    assert sum(s.total_ns for s in top) == 92_100_000
    assert sum(s.ratio for s in top) == pytest.approx(100, abs=1e-3)
    assert trace.diagnostics.count("paddle_report.nesting_guessed") == 1


def test_p5_per_thread_collapsed_memcpy_never_nests_under_a_memcpy():
    text = re.sub(" +", " ", (SAMPLES / "paddle" / "report_gpu_before.txt").read_text())
    _, trace, events = rows(text)
    by_name = {s.name: s for s in events}
    assert trace.stats[by_name["GpuMemcpyAsync:CPU->GPU"].parent].name != \
        "GpuMemcpySync:GPU->CPU"


def test_nothing_read_is_an_error_and_the_digest_is_one_line(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("Event  Calls  Total  Min.  Max.  Ave.  Ratio.\nhello\n")
    result = CliRunner().invoke(app, ["convert", str(empty), "--format", "paddle_report",
                                      "-o", str(tmp_path / "x.pftrace")])
    assert result.exit_code == 1 and "empty.txt" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "x.pftrace").exists()
    cut = tmp_path / "cut.txt"
    cut.write_text(HEADER + "\nrelu 4 2.0 0.4 0.6 0.5 0.16\nsoftmax 4 1.0 0.2\n")
    result = CliRunner().invoke(app, ["convert", str(cut), "-o", str(tmp_path / "c.pftrace")])
    assert result.exit_code == 0
    digest = [line for line in result.output.splitlines() if "left out" in line]
    counts = "1 left out (paddle_report.cut_row)"
    full = f"traceconv: {cut}: {counts} (traceconv info {cut} --json lists them)"
    if len(full) <= 100:
        assert digest == [full]
    else:   # (a long temporary path: the command shortened, the line within 100 columns)
        (line,) = digest
        assert len(line) <= 100 and line.startswith("traceconv: ")
        assert line.endswith(f"cut.txt: {counts} (info --json)")


def test_p4_new_profiler_summary_rows_without_title_rules_or_header():
    from traceconv.formats import paddle_summary

    text = ("conv2d dygraph   10   1.20 / 0.12 / 0.20 / 0.10 / 0.50   "
            "3.00 / 0.30 / 0.40 / 0.20 / 0.60   0\n"
            "  conv2d compute 10 1.00 / 0.10 / 0.15 / 0.05 / 83.3 "
            "3.00 / 0.30 / 0.40 / 0.20 / 100.00 -\n"
            "relu dygraph 5 0.50 / 0.10 / 0.12 / 0.08 / 0.21 0.00 / 0.00 / 0.00 / 0.00 / 0.00 0\n")
    doc, trace = paddle_summary.parse(text)
    (table,) = doc.tables
    assert table.title == "Operator Summary"
    rows = [(s.name, s.section, s.calls, s.total_ns, s.device_ns, s.depth) for s in trace.stats]
    assert rows == [("conv2d dygraph", "operator", 10, 1_200_000, 3_000_000, 0),
                    ("conv2d compute", "operator", 10, 1_000_000, 3_000_000, 1),
                    ("relu dygraph", "operator", 5, 500_000, 0, 0)]
    assert trace.diagnostics.count("paddle_summary.untitled_rows") == 1


def test_a_line_wider_than_any_wrap_is_read_alone_and_a_wrapped_row_still_joins():
    """(fuzz: 1 MB of rows indented by 2,000 spaces took 20 s) pieces of a hard-wrapped
    paste are short; a long line is never held to be joined with the next ones."""
    row = "relu                           4           2.0         0.4         0.6         0.5"
    wrapped = [HEADER, row[:60], row[60:] + "         0.16"]
    _, trace, events = rows("\n".join(wrapped))
    assert [(s.name, s.calls) for s in events] == [("relu", 4)]
    assert trace.diagnostics.count("paddle_report.wrapped_line") == 1
    wide = [HEADER, " " * 600 + row[:60], row[60:] + "         0.16"]
    _, trace, events = rows("\n".join(wide))
    assert "paddle_report.wrapped_line" not in trace.diagnostics
    assert all(s.calls != 4 for s in events)   # the cut row is not made whole
