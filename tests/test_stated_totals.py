"""What a report states of its own tables is compared with the rows read, within the printed
precision (traceconv/formats/stated_totals.py): rows lost without a trace (a cut at a line
end, a partial paste, rows deleted) are counted as ``{reader}.rows_missing``, numbers edited
up as ``{reader}.stated_total_differs``.

Expected values come from the samples' own stated totals, which Paddle, MIGraphX and nsys
wrote, added up here with plain regular expressions and the csv module (never by the
readers), and from cut or edited variants of those samples.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.errors import InputError
from traceconv.formats.stray_lines import rows_left_out
from traceconv.model import Trace

ROOT = Path(__file__).parent.parent
SUMMARY = ROOT / "samples" / "paddle" / "summary_small_2.6.2.txt"
LEGACY = ROOT / "samples" / "paddle" / "report_legacy_CPU_OpDetail.txt"
MIGRAPHX = ROOT / "tests" / "data" / "migraphx" / "migraphx_rocm7.0.2_perf_test_notes.md"
MIGRAPHX_ROCM4 = ROOT / "samples" / "migraphx" / "perf_simple_graph_rocm4.txt"
KERNELS = ROOT / "tests" / "data" / "nsys_stats" / "cuda_gpu_kern_sum.csv"
NVTX_CUT = ROOT / "tests" / "data" / "nsys_stats" / "nvtx_sum_stdout.csv"
# hand count (tests/test_pasted_text.py): Device 2, Overview 9, Model 6, Operator 98,
# UserDefined 1, Memory 41 rows (lines 190-230; a table nothing else states)
SUMMARY_ROWS, MEMORY_ROWS = 157, 41
# the summary's lines 7-14: its Device Summary whole and nothing after it, which is what
# Paddle prints for a run of no step time (profiler_statistic.py stops there)
DEVICE_ONLY = range(7, 15)
FINDINGS = ("rows_missing", "stated_total_differs")
# an Operator Summary row at the top level: no indent, a name, its calls, a compound cell
TOP_OPERATOR = re.compile(r"^(\S.*?) {2,}(\d+) {2,}[\d.]+ / ", re.M)


def _findings(trace: Trace) -> dict[str, int]:
    return {d.code: d.count for d in trace.diagnostics if d.code.rsplit(".", 1)[1] in FINDINGS}


def _operator_table(text: str) -> str:
    return text.split("Operator Summary---", 1)[1].split("UserDefined Summary---", 1)[0]


def _read(path: Path, format: str) -> Trace | None:
    """The trace of ``path``, or None when reading it is an error (one line, exit 1: a loss
    nobody can miss)."""
    try:
        return traceconv.load(path, format=format)
    except InputError:
        return None


def _cut_at_line_end(tmp_path: Path, sample: Path, lines: int) -> Path:
    data = sample.read_bytes().split(b"\n")
    cut = tmp_path / f"cut{lines}_{sample.name}"
    cut.write_bytes(b"\n".join(data[:lines]) + b"\n")
    return cut


def test_the_samples_state_what_their_rows_hold():
    summary = SUMMARY.read_text()
    overview = int(re.search(r"^  Operator +(\d+) ", summary, re.M)[1])
    assert overview == 544 == sum(int(calls) for _, calls in
                                  TOP_OPERATOR.findall(_operator_table(summary)))
    perf = MIGRAPHX.read_text()
    stated = re.search(r"^Total instructions time: ([\d.]+)ms", perf, re.M)[1]
    lines = re.findall(r"^\S+ = .*: ([\d.]+)ms, \d+%$", perf, re.M)
    # (each printed to six significant digits: within half a unit of its last digit)
    slack = sum(0.5 * 10.0 ** -len(text.partition(".")[2]) for text in [stated, *lines])
    assert len(lines) == 5 and abs(sum(map(float, lines)) - float(stated)) <= slack
    with KERNELS.open() as rows:
        shares = [float(row["Time (%)"]) for row in csv.DictReader(rows)]
    assert abs(sum(shares) - 100) <= 0.05 * len(shares)
    legacy = LEGACY.read_text()
    top = re.findall(r"^thread0::\S+.* ([\d.e-]+)\s*$", legacy, re.M)
    assert len(top) == 1 and float(top[0]) == 1   # one top-level row: all of the time


@pytest.mark.parametrize("sample", [SUMMARY, LEGACY, MIGRAPHX, MIGRAPHX_ROCM4, KERNELS],
                         ids=lambda p: p.name)
def test_a_whole_sample_agrees_with_itself(sample):
    assert _findings(traceconv.load(sample)) == {}


def test_a_table_cut_at_a_line_end_falls_short_of_its_shares(tmp_path):
    # the kernel summary without its last 12 rows: its first row's 87.2 % alone
    cut = _cut_at_line_end(tmp_path, KERNELS, 2)
    trace = traceconv.load(cut)
    assert trace.diagnostics["nsys_stats.rows_missing"].example == (
        "cuda_gpu_kern_sum table: 100 % of the time (Time (%)) stated, the rows read give 87.2")
    # a paste cut mid-row (the notebook printed its first 3,000 characters, then a line end):
    # the shares read add up to 92 %, a loss its short last row already counts
    # (csv.row_width_mismatch), not counted twice
    with NVTX_CUT.open() as text:
        shares = [float(row[0]) for row in csv.reader(text) if row and
                  re.fullmatch(r"[\d.]+", row[0])]
    assert round(sum(shares)) == 92
    found = traceconv.load(NVTX_CUT).diagnostics
    assert (found.count("csv.row_width_mismatch"), found.count("nsys_stats.rows_missing")) == \
        (1, 0)


@pytest.mark.slow
@settings(max_examples=25)
@given(st.data())
def test_a_deleted_operator_row_is_missing_and_a_raised_count_differs(tmp_path_factory, data):
    text = SUMMARY.read_text()
    table = _operator_table(text)
    rows = list(TOP_OPERATOR.finditer(table))
    row = data.draw(st.sampled_from(rows))
    start = text.index(table) + row.start()
    line_end = text.index("\n", start) + 1
    # the row and its children (the indented lines under it) deleted: the Overview's 544
    # calls exceed the rows read by the row's calls
    end = line_end
    while text[end:end + 2] == "  ":
        end = text.index("\n", end) + 1
    folder = tmp_path_factory.mktemp("edited")
    deleted = folder / "deleted.txt"
    deleted.write_text(text[:start] + text[end:])
    found = traceconv.load(deleted).diagnostics
    assert found["paddle_summary.rows_missing"].example.endswith(
        f"Operator Summary: 544 calls (Overview Summary) stated, the rows read give "
        f"{544 - int(row[2])}")
    # its calls raised: more calls than stated, nothing lost (a note)
    raised = int(row[2]) + data.draw(st.integers(1, 10**6))
    line = text[start:line_end]
    edited = folder / "raised.txt"
    edited.write_text(text[:start] + line.replace(f"  {row[2]}  ", f"  {raised}  ", 1)
                      + text[line_end:])
    found = traceconv.load(edited).diagnostics
    assert "paddle_summary.rows_missing" not in found
    assert found["paddle_summary.stated_total_differs"].kind == "note"
    assert found["paddle_summary.stated_total_differs"].example.endswith(
        f"the rows read give {544 - int(row[2]) + raised}")


@pytest.mark.slow
def test_a_summary_cut_at_any_line_end_reads_its_rows_or_counts_them(tmp_path):
    lines = SUMMARY.read_bytes().count(b"\n")
    for end in range(1, lines + 1):
        trace = _read(_cut_at_line_end(tmp_path, SUMMARY, end), "paddle-summary")
        if trace is None:
            continue
        read = len(trace.stats)
        if read == SUMMARY_ROWS:
            assert _findings(trace) == {}, end
        elif end not in DEVICE_ONLY and read < SUMMARY_ROWS - MEMORY_ROWS:
            assert rows_left_out(trace.diagnostics) >= 1, end


@pytest.mark.slow
@pytest.mark.parametrize("sample", [MIGRAPHX, MIGRAPHX_ROCM4], ids=lambda p: p.name)
def test_a_perf_report_cut_at_any_line_end_reads_its_rows_or_counts_them(tmp_path, sample):
    text = sample.read_text().splitlines()
    whole = traceconv.load(sample)
    # before 6.1 nothing states what a printed program holds, nor that a report follows it:
    # a cut there reads as a shorter program; from "Running performance report" on, the
    # report states its rows and its end
    first = next(n for n, line in enumerate(text, 1) if line.startswith("Running "))
    for end in range(first, len(text) + 1):
        trace = _read(_cut_at_line_end(tmp_path, sample, end), "migraphx")
        if trace is not None and (len(trace.stats) < len(whole.stats) or
                                  trace.counts()["slices"] < whole.counts()["slices"]):
            assert any(d.kind == "dropped" for d in trace.diagnostics), end


def test_a_summary_without_its_last_line_end_after_a_whole_row_is_not_cut(tmp_path):
    # up to the Memory Summary's last row (line 230), its line end and what follows left out
    text = SUMMARY.read_text().splitlines()
    ends = tmp_path / "ends_on_a_row.txt"
    ends.write_text("\n".join(text[:230]))
    trace = traceconv.load(ends)
    assert len(trace.stats) == SUMMARY_ROWS
    assert "paddle_summary.table_cut" not in trace.diagnostics
    assert rows_left_out(trace.diagnostics) == 0


# A hand-made perf report: two instruction lines of 0.6 and 0.65 ms (1.25 together, each
# to within 0.005), and a trailer whose total is printed as {total}.
PRINTED_TOTAL = ("@0 = @literal{{1}} -> float_type, {{1}}, {{0}}: 0.6ms, 50%\n"
                 "@1 = @literal{{2}} -> float_type, {{1}}, {{0}}: 0.65ms, 50%\n"
                 "Summary:\n@literal: 1.25ms / 2 = 0.625ms, 100%\n"
                 "Total time: 1.3ms\nTotal instructions time: {total}ms\n"
                 "Overhead time: 0.05ms, 0.3ms\nOverhead: 4%, 23%\n")


@pytest.mark.parametrize(("total", "differs"), [("1", 0), ("1.0", 2), ("1.25", 0)])
def test_a_stated_total_is_judged_by_the_digits_it_was_printed_with(tmp_path, total, differs):
    """``1`` stands for 0.5 to 1.5 ms and holds the rows' 1.25; ``1.0`` stands for 0.95 to
    1.05 and does not (the instruction lines and the Summary: two findings). A float of
    1.0 cannot tell them apart: the comparison is given the text."""
    path = tmp_path / "perf.txt"
    path.write_text(PRINTED_TOTAL.format(total=total))
    trace = traceconv.load(path)
    assert trace.diagnostics.count("migraphx.stated_total_differs") == differs
    assert trace.diagnostics.count("migraphx.rows_missing") == 0


def test_a_printed_number_given_as_a_float_is_refused():
    """Every caller passes the text printed (or an int, an exact whole): a float has lost
    its digits, and is refused as a stated total and as a part."""
    from traceconv.formats.stated_totals import compare_total
    from traceconv.model import Diagnostics
    for stated, parts in ((1.0, ["0.6"]), ("1", [0.6])):
        with pytest.raises(TypeError, match="not a float"):
            compare_total(Diagnostics(), "migraphx", "line 1", stated, parts, what="ms")


def test_a_total_printed_past_the_largest_float_bounds_nothing(tmp_path):
    """``0e999`` (hand-edited into the report above) is 0 to within half of 1e999: no float
    holds that unit, and the comparison agrees instead of overflowing."""
    path = tmp_path / "perf.txt"
    path.write_text(PRINTED_TOTAL.format(total="0e999"))
    trace = traceconv.load(path)
    assert not {d.code for d in trace.diagnostics} & {
        "migraphx.stated_total_differs", "migraphx.rows_missing"}


def test_a_share_printed_as_no_number_is_counted_unchecked_not_a_crash(tmp_path):
    """A top-level Operator Summary share edited to text (``abcde``): the table's shares
    cannot be added up, so the comparison is not made and says so (a note naming the
    table's title line), the file still reads whole (an internal ValueError before)."""
    text = SUMMARY.read_text()
    row = re.search(r"^conv2d dygraph .*/ (12\.29) ", text, re.M)   # a top-level row
    edited = tmp_path / "summary.txt"
    edited.write_text(text[:row.start(1)] + "abcde" + text[row.end(1):])
    title = text[:text.index("Operator Summary---")].count("\n") + 1   # (line 68, by hand)
    trace = traceconv.load(edited)
    assert _findings(trace) == {}
    assert len(trace.stats) == SUMMARY_ROWS
    assert trace.diagnostics["paddle_summary.stated_total_unchecked"].example == (
        f"line {title}: Operator Summary, thread All threads merged: % of the time printed "
        "'abcde', no number: not compared")


def test_a_stated_total_printed_as_no_number_is_counted_unchecked():
    from traceconv.formats.stated_totals import compare_total
    from traceconv.model import Diagnostics
    found = Diagnostics()
    assert compare_total(found, "migraphx", "line 9: perf report", "1.5ms?", ["1.5"],
                         what="ms of instruction time")
    assert [(d.code, d.count) for d in found] == [("migraphx.stated_total_unchecked", 1)]
