"""``nsys stats --format csv`` summary reports as stat rows (issue 34, part 4).

The inputs are real outputs (``tests/data/nsys_stats/PROVENANCE.md``); the expected values are a
plain ``csv`` read of the same files: the lines after nsys's prose, each field as printed,
times rounded to the ns with ``round``.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.cli import app

DATA = Path(__file__).resolve().parent / "data" / "nsys_stats"
# file -> (section, the column of the calls, the column of the names, time on the device)
REPORTS = {
    "cuda_gpu_kern_sum.csv": ("kernels", "Instances", "Name", True),
    "cuda_api_sum.csv": ("api", "Num Calls", "Name", False),
    "cuda_gpu_mem_time_sum.csv": ("memops", "Count", "Operation", True),
    "nvtx_sum_stdout.csv": ("nvtx", "Instances", "Range", False),
}


def table(text: str) -> list[list[str]]:
    """The header and the rows: every line from the first that starts with "Time"."""
    lines = text.splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("Time"))
    return list(csv.reader(lines[start:]))


def expected(text: str, calls: str, name: str, scale: int = 1) -> list[tuple]:
    header, *rows = table(text)
    at = {column: k for k, column in enumerate(header)}
    total = next(c for c in header if c.startswith("Total Time"))
    avg = next(c for c in header if c.startswith(("Avg", "Average")))
    low = next(c for c in header if c.startswith(("Min", "Minimum")))
    high = next(c for c in header if c.startswith(("Max", "Maximum")))
    return [(r[at[name]], int(r[at[calls]]), round(float(r[at[total]]) * scale),
             round(float(r[at[avg]]) * scale), round(float(r[at[low]]) * scale),
             round(float(r[at[high]]) * scale), float(r[at["Time (%)" if "Time (%)" in at
                                                            else "Time(%)"]]))
            for r in rows if len(r) == len(header)]


def ours(trace: traceconv.Trace) -> list[tuple]:
    return [(s.name, s.calls, s.total_ns, s.avg_ns, s.min_ns, s.max_ns, s.ratio)
            for s in trace.stats]


@pytest.mark.parametrize("file", sorted(REPORTS))
def test_real_report_equals_a_plain_csv_read(file: str):
    section, calls, name, on_device = REPORTS[file]
    path = DATA / file
    trace = traceconv.load(path)
    assert trace.metadata.source_format == "nsys-stats"
    assert ours(trace) == expected(path.read_text(), calls, name)
    assert {s.section for s in trace.stats} == {section}
    assert all((s.device_ns if on_device else s.cpu_ns) == s.total_ns for s in trace.stats)


def test_median_stddev_and_style_kept_as_extras():
    trace = traceconv.load(DATA / "nvtx_sum_stdout.csv")
    header, first, *_ = table((DATA / "nvtx_sum_stdout.csv").read_text())
    row = dict(zip(header, first, strict=True))
    assert trace.stats[0].extra == {"median_ns": round(float(row["Med (ns)"])),
                                    "stddev_ns": round(float(row["StdDev (ns)"])),
                                    "Style": row["Style"], "report": "nvtx_sum",
                                    "time is": "enclosing"}   # (ranges around other rows)


def test_cut_last_row_is_counted():
    # the notebook cut the row, the copy ended it with a line end: a row of another width
    text = (DATA / "nvtx_sum_stdout.csv").read_text()
    header, *rows = table(text)
    cut = [r for r in rows if len(r) != len(header)]
    assert len(cut) == 1 and text.endswith("\n")
    trace = traceconv.load(DATA / "nvtx_sum_stdout.csv")
    assert len(trace.stats) == len(rows) - 1 == 35
    assert trace.diagnostics.count("csv.row_width_mismatch") == 1
    assert not trace.diagnostics.count("nsys_stats.malformed_row")


def test_report_named_by_the_prose_or_the_file():
    assert traceconv.load(DATA / "cuda_gpu_mem_time_sum.csv").metadata.source_version == \
        "cuda_gpu_mem_time_sum"
    assert traceconv.load(DATA / "cuda_api_sum.csv").metadata.source_version == "cuda_api_sum"


def test_several_reports_on_standard_output(tmp_path: Path):
    """nsys stats without -o: the reports one after another, each after its prose."""
    parts, wanted = [], []
    for file, (_, calls, name, _) in REPORTS.items():
        text = (DATA / file).read_text()
        header, *rows = table(text)
        report = file.removesuffix(".csv").removesuffix("_stdout")
        parts.append(f"\nProcessing [r.sqlite] with [/opt/nsys/reports/{report}.py]... \n\n"
                     + "\n".join(",".join(f'"{c}"' if "," in c else c for c in r)
                                 for r in [header, *rows]) + "\n")
        wanted += [(row[0], report) for row in expected(text, calls, name)]
    path = tmp_path / "stats.csv"
    path.write_text("".join(parts))
    trace = traceconv.load(path)
    assert [(s.name, s.extra["report"]) for s in trace.stats] == wanted
    assert trace.metadata.source_version == ", ".join(
        f.removesuffix(".csv").removesuffix("_stdout") for f in REPORTS)


def test_old_report_names_and_units(tmp_path: Path):
    """The pre-2022 spelling (gpukernsum: Time(%), Average, Minimum, Maximum, no median or
    std dev) with the times in µs reads as the same statistics."""
    text = (DATA / "cuda_gpu_kern_sum.csv").read_text()
    header, *rows = table(text)
    keep = ["Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Min (ns)", "Max (ns)", "Name"]
    old = ["Time(%)", "Total Time (us)", "Instances", "Average", "Minimum", "Maximum", "Name"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(old)
    for row in rows:
        values = dict(zip(header, row, strict=True))
        writer.writerow([f"{float(values[c]) / 1000:.4f}" if "(ns)" in c else values[c]
                         for c in keep])
    path = tmp_path / "report_gpukernsum.csv"
    path.write_text(out.getvalue())
    trace = traceconv.load(path)
    assert trace.metadata.source_version == "gpukernsum"
    assert ours(trace) == expected(out.getvalue(), "Instances", "Name", scale=1000)
    assert [s.total_ns for s in trace.stats] == [int(r[1]) for r in rows]


def test_report_nsys_skipped_is_one_line_exit_1():
    result = CliRunner().invoke(app, ["info", str(DATA / "kern_sum_skipped.csv")])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "kern_sum_skipped.csv" in lines[0] and "SKIPPED" in lines[0]


def test_a_header_without_a_name_column_is_refused(tmp_path: Path):
    path = tmp_path / "cut_header.csv"
    path.write_text("Time (%),Total Time (ns),Instances,Avg (ns)\n100.0,10,1,10.0\n")
    result = CliRunner().invoke(app, ["info", str(path), "--format", "nsys-stats"])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and "cut_header.csv" in result.output


def test_a_row_with_a_word_for_a_number_is_counted(tmp_path: Path):
    path = tmp_path / "api.csv"
    path.write_text("Time (%),Total Time (ns),Num Calls,Avg (ns),Name\n"
                    "60.0,600,3,200.0,cudaMalloc\n40.0,lots,2,200.0,cudaFree\n")
    trace = traceconv.load(path)
    assert [s.name for s in trace.stats] == ["cudaMalloc"]
    assert trace.diagnostics.count("nsys_stats.malformed_row") == 1


_ROWS = st.lists(st.tuples(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1,
                                   max_size=12).filter(lambda s: s.strip() == s),
                           st.integers(0, 10**6), st.integers(0, 2**40),
                           st.decimals(0, 10**9, places=1)),
                 min_size=1, max_size=15)


@settings(max_examples=40, derandomize=True, deadline=None)
@given(rows=_ROWS)
def test_any_kernel_summary_reads_as_written(tmp_path_factory, rows):
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Name"])
    writer.writerows([("1.0", total, calls, avg, name) for name, calls, total, avg in rows])
    path = tmp_path_factory.mktemp("kern") / "cuda_gpu_kern_sum.csv"
    path.write_text(out.getvalue())
    trace = traceconv.load(path)
    assert [(s.name, s.calls, s.total_ns, s.avg_ns) for s in trace.stats] == [
        (name, calls, total, round(avg)) for name, calls, total, avg in rows]


CONSOLE = DATA / "nanomoe_stats_console_nsys2026.1.txt"


def console_tables(text: str) -> dict[str, list[list[str]]]:
    """Each report's rows of nsys's column layout, read apart: after a ``(report):`` banner,
    the lines under the dashes, fields split at runs of two or more spaces (no cell of this
    file holds two spaces)."""
    import re

    tables: dict[str, list[list[str]]] = {}
    report, rows = None, None
    for line in text.splitlines():
        banner = re.search(r"\((\w+)\):$", line.strip())
        if banner:
            report, rows = banner.group(1), None
        elif report and line.strip().startswith("---"):
            rows = tables.setdefault(report, [])
        elif rows is not None and line.strip():
            rows.append(re.split(r"\s{2,}", line.strip()))
        elif rows is not None:
            report, rows = None, None
    return tables


def test_the_console_layout_reads_as_its_csv_would():
    """``nsys stats`` without ``--format csv`` (what ``nsys profile --stats=true`` prints):
    every row of its three reports, the shell prompt counted, names nsys cut counted."""
    tables = console_tables(CONSOLE.read_text())
    trace = traceconv.load(CONSOLE)
    assert trace.metadata.source_format == "nsys-stats"
    assert trace.metadata.source_version == "cuda_api_sum, cuda_gpu_kern_sum, nvtx_sum"
    got = [(s.extra["report"], s.name, s.calls, s.total_ns, s.ratio) for s in trace.stats]
    want = [(report, r[-1], int(r[2]), int(r[1]), float(r[0]))
            for report, rows in tables.items() for r in rows]
    assert got == want and len(got) == 5 + 17 + 3
    assert trace.diagnostics.count("nsys_stats.name_cut") == sum(
        r[-1].endswith("…") for rows in tables.values() for r in rows) == 16
    assert trace.diagnostics.count("nsys_stats.foreign_lines") == 1   # the prompt
    # each report counts as a file of its own would: kernels on the device, calls on the host
    from traceconv.analysis.summary import summarize

    result = summarize(trace)
    assert result.total("device") == pytest.approx(
        sum(int(r[1]) for r in tables["cuda_gpu_kern_sum"]) / 1e9)


def test_the_console_layout_is_told_apart_without_a_format():
    result = CliRunner().invoke(app, ["info", str(CONSOLE)])
    assert result.exit_code == 0, result.output
    assert "nsys-stats" in result.output


def _column_layout(header: list[str], rows: list[list[str]], numbers: int) -> str:
    """A table drawn as nsys's column layout draws it: each column as wide as its widest
    cell, numbers right-aligned, text left-aligned, two spaces apart, a rule of dashes."""
    widths = [max(len(c) for c in column) for column in zip(header, *rows, strict=True)]

    def line(cells: list[str], centred: bool = False) -> str:
        return " " + "  ".join(c.center(w) if centred else c.rjust(w) if k < numbers
                               else c.ljust(w) for k, (c, w) in enumerate(zip(cells, widths,
                                                                              strict=True)))
    return "\n".join([line(header, centred=True), " " + "  ".join("-" * w for w in widths),
                      *map(line, rows)]) + "\n"


@settings(max_examples=40, derandomize=True, deadline=None)
@given(rows=_ROWS)
def test_any_kernel_summary_in_the_column_layout_reads_as_written(tmp_path_factory, rows):
    """The same rows nsys would print without --format csv: names with single spaces,
    commas and brackets, any number width; every row as written."""
    text = "Processing [r.sqlite] with [/opt/nsys/reports/cuda_gpu_kern_sum.py]... \n\n" \
        + _column_layout(["Time (%)", "Total Time (ns)", "Instances", "Avg (ns)", "Name"],
                         [["1.0", str(total), str(calls), str(avg), name]
                          for name, calls, total, avg in rows], numbers=4)
    path = tmp_path_factory.mktemp("kern") / "stats.txt"
    path.write_text(text)
    trace = traceconv.load(path)
    assert [(s.name, s.calls, s.total_ns, s.avg_ns) for s in trace.stats] == [
        (name, calls, total, round(avg)) for name, calls, total, avg in rows]


@pytest.mark.integration
def test_the_console_layout_converts_to_a_breakdown(trace_processor, tmp_path: Path):
    """Converted, the rows are drawn as any statistics no reader drew: the real trace_processor
    finds one slice per row, one lane per report's kind, each as long as its report's total
    (from the console text read apart), on a process that says it is not a timeline."""
    tables = console_tables(CONSOLE.read_text())
    out = tmp_path / "stats.pftrace"
    traceconv.convert(CONSOLE, out)
    trace_processor.load(out.read_bytes())
    assert trace_processor.bad_stats() == []
    lanes = trace_processor.query(
        "select thread.name lane, count(*) n, sum(s.dur) total from slice s join thread_track "
        "tt on s.track_id = tt.id join thread using (utid) group by lane")
    section = {"cuda_gpu_kern_sum": "kernels", "cuda_api_sum": "api", "nvtx_sum": "nvtx"}
    assert {(r.lane, r.n, r.total) for r in lanes} == {
        (section[report], len(rows), sum(int(r[1]) for r in rows))
        for report, rows in tables.items()}
    names = {r.name for r in trace_processor.query("select name from process where name is not null")}
    assert "nsys-stats statistics: aggregate breakdown (not a timeline)" in names
