"""Real ``nsys stats`` outputs in the layouts and places pastes put them: the boxed
``--format table``, an Indian locale's digit grouping, a first table far down a README or a
source file, a table whose header a paste damaged, reports nsys skipped before the first
table. Expected values come from a plain split of the text (on ``|``, or on two spaces with
the commas taken out) and from counts by hand, never from traceconv."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path

from click.testing import CliRunner

import traceconv
from tests.test_nsys_stats_console import number as number_of
from tests.test_nsys_stats_console import tables
from traceconv import registry
from traceconv.cli import app
from traceconv.io import Source

DATA = Path(__file__).parent / "data" / "nsys_stats"
BOXED = DATA / "r1_671b_stats_table_format_nsys2025.1.1.md"
INDIAN = DATA / "deepspeed_stats_console_en_IN_grouping.txt"
README = DATA / "numdiff_readme_stats_console_nsys2023.2.3.md"
IN_COMMENT = DATA / "matmul_nvtx_stats_console_in_comment.cu"
SKIPPING = DATA / "assignment2_stats_console_nsys2024.6.2.txt"
TWO_RUNS = DATA / "nsight_deep_dive_two_runs_readme.md"


def detect_format(path: Path) -> str:
    return registry.detect(Source(str(path))).name


SECTION = {"cuda_gpu_kern_sum": "kernels", "cuda_api_sum": "api", "nvtx_pushpop_sum": "nvtx",
           "osrt_sum": "os_runtime"}


def boxed_rows(path: Path) -> dict[str, list[list[str]]]:
    """The rows of each report of a ``--format table`` output: ``|`` lines that are not a
    header, cells split on ``|``, under the report the last ``Processing`` line names."""
    found: dict[str, list[list[str]]] = defaultdict(list)
    report = ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if named := re.search(r"/(\w+)\.py\]", line):
            report = named.group(1)
        elif line.startswith("|") and "Time (%)" not in line:
            found[report].append([c.strip() for c in line.strip().strip("|").split("|")])
    return found


def by_section(trace: traceconv.Trace) -> dict[str, list[tuple[str, int, int]]]:
    rows: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for stat in trace.stats:
        rows[stat.section].append((stat.name, stat.calls, stat.total_ns))
    return rows


def test_the_boxed_table_layout_is_told_and_read():
    """``nsys stats --format table`` (nsys 2025.1.1): found without ``--format``, every
    row of its four reports read with the numbers its cells state."""
    assert detect_format(BOXED) == "nsys-stats"
    want = {SECTION[report]: [(c[-1], int(c[2]), int(c[1])) for c in rows]
            for report, rows in boxed_rows(BOXED).items()}
    assert {s: len(r) for s, r in want.items()} == {"kernels": 33, "api": 18, "nvtx": 1,
                                                  "os_runtime": 13}   # (by hand)
    got = by_section(traceconv.load(BOXED))
    # (names nsys cut to its column end in "…" in both)
    assert got == want
    assert sum(t for _, _, t in got["kernels"]) == 27_320_569_792
    assert sum(t for _, _, t in got["api"]) == 10_097_800_162


def test_numbers_grouped_by_an_indian_locale_are_read():
    """nsys under en_IN groups the last three digits, then twos: ``27,65,96,75,62,725``."""
    rows = [re.split(r"\s{2,}", line.strip())
            for line in INDIAN.read_text(encoding="utf-8").splitlines()
            if re.match(r"\s+\d", line)]
    trace = traceconv.load(INDIAN)
    assert [(s.name, s.calls, s.total_ns) for s in trace.stats] == [
        (r[-1], int(r[2].replace(",", "")), int(r[1].replace(",", ""))) for r in rows]
    assert trace.stats[0].total_ns == 2_765_967_562_725   # (by hand)
    # (the test file kept each table's top rows: 53.9 + 40.8 = 94.7 % of the NVTX time; its
    # last line, the 4 blanks before the block's closing quotes, has no line end and is
    # wider than the paste's 1-blank margin: by the one cut rule, inside a row's alignment)
    assert [d.code for d in trace.diagnostics] == ["nsys_stats.rows_missing",
                                                   "nsys_stats.table_cut"]
    assert INDIAN.read_bytes().endswith(b"\n    ")


def test_a_report_far_down_a_readme_is_found_and_read():
    """The README's own text fills its first 56 lines; its six reports are read, and the
    ``nvtx_gpu_proj_trace`` table after them is counted as a report not read."""
    assert detect_format(README) == "nsys-stats"
    trace = traceconv.load(README)
    assert Counter(s.section for s in trace.stats) == {
        "nvtx": 9, "os_runtime": 25, "api": 6, "kernels": 9, "memops": 2, "memory_sizes": 2}
    device = sum(s.device_ns or 0 for s in trace.stats if s.section in ("kernels", "memops"))
    assert device == 29_856 + 31_903   # the two tables' Total Time columns, summed by hand
    unread = trace.diagnostics["nsys_stats.table_not_read"]
    assert unread.count == 10 and "nvtx_gpu_proj_trace" in unread.example


def test_a_header_shifted_off_its_rule_is_read_by_its_gaps():
    """The ``.cu`` paste lost the ``nvtx_sum`` header's leading space, so the rule's columns
    cut it mid-name; its gaps still cut it into the ten names, and its 6 rows are read with
    the five tables after it (the range names copied by hand from the file, lines 87-92)."""
    assert detect_format(IN_COMMENT) == "nsys-stats"
    trace = traceconv.load(IN_COMMENT)
    assert "nsys_stats.table_not_read" not in trace.diagnostics
    assert [s.name for s in trace.stats if s.section == "nvtx"] == [
        ":matmul", ":memory allocation", ":memory copy D2H", ":kernel execution",
        ":memory copy H2D", ":memory deallocation"]
    assert Counter(s.section for s in trace.stats) == {
        "nvtx": 6, "os_runtime": 24, "api": 5, "kernels": 1, "memops": 2, "memory_sizes": 2}
    assert [s.device_ns for s in trace.stats if s.section == "kernels"] == [1_187_266]


def test_reports_skipped_before_the_first_table_are_counted():
    skipped = sum(line.startswith("SKIPPED:")
                  for line in SKIPPING.read_text(encoding="utf-8").splitlines())
    trace = traceconv.load(SKIPPING)
    assert trace.diagnostics.count("nsys_stats.report_skipped") == skipped == 15
    assert "NVTX" in trace.diagnostics["nsys_stats.report_skipped"].example   # (line 3's)


def test_lines_outside_the_tables_are_foreign_and_name_their_first():
    result = CliRunner().invoke(app, ["info", "--json", str(README)])
    assert result.exit_code == 0, result.output
    found = {d["code"]: d for d in json.loads(result.output)["diagnostics"]}
    # (the README's own text: foreign to the report, a note, as every text reader counts it)
    assert (found["nsys_stats.foreign_lines"]["kind"], found["nsys_stats.foreign_lines"][
        "example"]) == ("note", "line 1: # Numerical Differentiation")


def test_a_table_after_many_lines_of_other_text_is_read(tmp_path: Path):
    """Where a paste starts is no limit within the head the format is told by: 300 lines
    of notes (about 10 KB) before a column-layout table."""
    path = tmp_path / "notes.md"
    path.write_text("a line of notes before the run\n" * 300
                    + " Time (%)  Total Time (ns)  Num Calls  Name\n"
                    + " --------  ---------------  ---------  ----------\n"
                    + "     90.0              900          3  cudaMalloc\n")
    assert detect_format(path) == "nsys-stats"
    trace = traceconv.load(path)
    assert [(s.name, s.calls, s.cpu_ns) for s in trace.stats] == [("cudaMalloc", 3, 900)]
    assert trace.diagnostics["nsys_stats.foreign_lines"].count == 300


def test_a_table_without_a_header_read_here_names_its_line(tmp_path: Path):
    path = tmp_path / "proj.txt"
    path.write_text("Generating r.sqlite\n\n Name  Projected Start (ns)\n ----  ----\n"
                    " fwd           282,734,719\n")
    result = CliRunner().invoke(app, ["info", "--format", "nsys-stats", str(path)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"traceconv: error: {path}:line 3: no table of a report traceconv reads: this table's "
        "header names none (Name  Projected Start (ns))"]


def test_two_runs_pasted_in_one_file_are_kept_apart(tmp_path: Path):
    """A README pasting two ``nsys profile --stats=true`` runs (``_v3``, ``_v4``): each row
    names its run, the summary gives each run's totals (a plain split of each half of the
    file: the kernel and memory-operation tables' Total Time), never their sum."""
    text = TWO_RUNS.read_text(encoding="utf-8")
    second = text.index("Generating '/tmp/nsys-report-a98b.qdstrm'")
    device = []
    for number, half in enumerate((text[:second], text[second:])):
        path = tmp_path / f"run{number}.txt"
        path.write_text(half, encoding="utf-8")
        device.append(sum(number_of(row[1]) for header, rows in tables(path)
                          # (kernels: Instances and Name; memory operations' times)
                          if {"Instances", "Name"} <= set(header)
                          or {"Operation", "Total Time (ns)"} <= set(header)
                          for row in rows))
    assert device == [1_836_049, 1_835_134]   # (the probe's hand sums agree)
    trace = traceconv.load(TWO_RUNS)
    assert list(dict.fromkeys(s.extra["run"] for s in trace.stats)) == [
        "vector_add_profile_v3", "vector_add_profile_v4"]
    result = CliRunner().invoke(app, ["summary", "--json", str(TWO_RUNS)])
    assert result.exit_code == 0, result.output
    runs = json.loads(result.output)["runs"]
    assert [(r["label"], round(r["total_device_time"] * 1e9)) for r in runs] == [
        ("vector_add_profile_v3", device[0]), ("vector_add_profile_v4", device[1])]
    drawn = tmp_path / "runs.json"
    assert CliRunner().invoke(app, ["convert", str(TWO_RUNS), "-o", str(drawn)]).exit_code == 0
    lanes = {e["args"]["name"] for e in json.loads(drawn.read_text())["traceEvents"]
             if e.get("ph") == "M" and e.get("name") == "thread_name"}
    assert {"kernels, run 1", "kernels, run 2"} <= lanes


def _boxed_with_row(tmp_path: Path, redraw) -> tuple[Path, int, list[str]]:
    """BOXED with its first row redrawn by ``redraw`` (given the row's cells, by a plain
    split at its bars); the row's line number and its clean cells."""
    lines = BOXED.read_text(encoding="utf-8").splitlines()
    at = next(i for i in range(2, len(lines)) if lines[i].startswith("|")
              and lines[i - 1].startswith("+") and lines[i - 2].startswith("|"))
    cells = [cell.strip() for cell in lines[at].strip().strip("|").split("|")]
    lines[at] = redraw(cells)
    path = tmp_path / BOXED.name
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, at + 1, cells


def test_a_boxed_row_off_the_rule_whose_name_holds_a_bar_is_read(tmp_path: Path):
    """Bars not at the rule's corners and a "|" in the Name: the name takes the rest of the
    row; every row of the clean file is read, that one under its new name."""
    path, _, cells = _boxed_with_row(
        tmp_path, lambda cells: "| " + " | ".join([*cells[:-1], "a|b " + cells[-1]]) + " |")
    clean = [(s.section, s.name, s.calls, s.total_ns) for s in traceconv.load(BOXED).stats]
    read = traceconv.load(path)
    renamed = [(s.section, s.name.removeprefix("a|b "), s.calls, s.total_ns) for s in read.stats]
    assert renamed == clean
    assert [s.name for s in read.stats].count("a|b " + cells[-1]) == 1
    assert read.stats[0].calls == int(cells[2])   # (Instances, the row's third cell)
    assert "nsys_stats.malformed_row" not in read.diagnostics


def test_a_boxed_row_short_of_its_columns_is_counted_with_its_line(tmp_path: Path):
    """A row that cannot be cut into its columns is a row lost, named by its line, never
    skipped: the other rows are read."""
    path, number, _ = _boxed_with_row(tmp_path, lambda cells: "| " + " | ".join(cells[:3]) + " |")
    clean = traceconv.load(BOXED).stats
    read = traceconv.load(path)
    assert len(read.stats) == len(clean) - 1
    found = read.diagnostics["nsys_stats.malformed_row"]
    assert found.count == 1 and found.example.startswith(f"line {number}: ")


GREPPED_RUNS = DATA / "cuda_intro_notebook_grep_A_four_runs.md"


def test_runs_whose_report_files_a_paste_left_out_are_kept_apart():
    """A notebook pasting ``nsys profile --stats=true ./add_gpu_vN | grep -A N
    'cuda_gpu_kern_sum'`` of four runs: no report file is named, but nsys numbers the steps
    of a run once, so ``[6/8] Executing 'cuda_gpu_kern_sum'`` after step 7 or 6 starts the
    next run. Each run's device time is its tables' Total Time (a plain split; which table
    is whose run by hand: the first run's grep kept two tables, the others one each), never
    the four runs' sum; the second table, cut by its grep after one row, stays counted."""
    totals = [sum(number_of(row[1]) for row in rows) for _, rows in tables(GREPPED_RUNS)]
    assert totals == [1_558_137, 20_116_269, 89_023_173_952, 3_280_318_336, 1_539_004]
    by_run = [totals[0] + totals[1], *totals[2:]]
    result = CliRunner().invoke(app, ["summary", "--json", str(GREPPED_RUNS)])
    assert result.exit_code == 0, result.output
    assert [(r["label"], round(r["total_device_time"] * 1e9))
            for r in json.loads(result.output)["runs"]] == [
        (f"run {n}", ns) for n, ns in enumerate(by_run, 1)]
    assert traceconv.load(GREPPED_RUNS).diagnostics.count("nsys_stats.rows_missing") == 1


def test_runs_whose_first_table_is_their_only_one_are_kept_apart(tmp_path: Path):
    """The last three runs of the same notebook alone: each run's first table is its only
    one, so the step that starts a run follows the first run's opening step."""
    text = GREPPED_RUNS.read_text(encoding="utf-8")
    path = tmp_path / "three_runs.md"
    path.write_text(text[text.index("    === Version 1"):], encoding="utf-8")
    totals = [sum(number_of(row[1]) for row in rows) for _, rows in tables(path)]
    assert totals == [89_023_173_952, 3_280_318_336, 1_539_004]
    stats = traceconv.load(path).stats
    assert [(s.extra["run"], s.device_ns) for s in stats] == [
        (f"run {n}", ns) for n, ns in enumerate(totals, 1)]


IN_LINE_COMMENTS = DATA / "naive_matmul_stats_console_in_line_comments.cu"


def test_a_console_output_pasted_as_line_comments_is_read_whole(tmp_path: Path):
    """A CUDA source ending in its ``nsys profile --stats=true`` output, each line commented
    out with ``//`` (the blank lines left bare): detected and read as the output itself,
    each table under its report's name: every row of a plain split of the lines without
    their ``// ``, and the reports nsys skipped (3, by hand) counted."""
    plain = tmp_path / "uncommented.txt"
    plain.write_text("\n".join(line.removeprefix("// ") for line in IN_LINE_COMMENTS.read_text(
        encoding="utf-8").splitlines()), encoding="utf-8")
    expected = [(row[-1], int(row[2]), int(row[1])) for _, rows in tables(plain) for row in rows]
    assert len(expected) == 17 + 5 + 1
    assert detect_format(IN_LINE_COMMENTS) == "nsys-stats"
    trace = traceconv.load(IN_LINE_COMMENTS)
    assert [(s.name, s.calls, s.total_ns) for s in trace.stats] == expected
    assert Counter(s.extra["report"] for s in trace.stats) == {
        "osrt_sum": 17, "cuda_api_sum": 5, "cuda_gpu_kern_sum": 1}
    assert trace.diagnostics.count("nsys_stats.report_skipped") == 3


REMARKED = DATA / "cuda_course_zh_stats_console_remarked.md"


def test_remarks_written_after_rows_are_no_part_of_the_names(tmp_path: Path):
    """A Chinese how-to annotated every row of its ``nsys profile --stats=true`` output with
    a ``# remark`` (by hand: all 42 rows, each remark opening with ``# ``), some set off by
    one blank (``cudaDeviceSynchronize # 显式同步 API``), one inside the name column's width
    (``matrixMulKernel(...)    # 矩阵乘法 ...``). The names are those of a plain split of the
    rows cut before their `` # ``; the remarks are counted, the numbers untouched (device
    time: the kernel and memory-operation tables' Total Time, by hand)."""
    plain = tmp_path / "remarks_cut.txt"
    plain.write_text("\n".join(re.split(r"\s#\s", line)[0] for line in REMARKED.read_text(
        encoding="utf-8").splitlines()), encoding="utf-8")
    names = [row[-1] for _, rows in tables(plain) for row in rows]
    assert len(names) == 42
    trace = traceconv.load(REMARKED)
    assert [s.name for s in trace.stats] == names
    assert trace.diagnostics.count("nsys_stats.row_remark") == 42
    assert sum(s.device_ns or 0 for s in trace.stats) == 2_644_050 + 1_154_050 + 1_008_390
    # host time: the cuda_api_sum and osrt_sum Total Time columns less the three waits
    # (poll, sem_timedwait, pthread_cond_wait), summed by hand; with the remarks in their
    # names the waits went unrecognised and counted (500,829,198 ns)
    result = CliRunner().invoke(app, ["summary", "--json", str(REMARKED)])
    assert round(json.loads(result.output)["total_host_time"] * 1e9) == 213_638_881
