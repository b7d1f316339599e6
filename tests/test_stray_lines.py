"""Real pages that paste a report among prose, markup, commands and a program's own prints:
only a line inside a table with a row's shape that cannot be read is a row lost; every other
line the readers skip is a foreign line, a note (traceconv/formats/stray_lines.py).

The expected numbers are counts done here with plain regexes over the files (or by hand,
as the comments say), never by the readers. The Paddle pages: tests/data/paddle/PROVENANCE.md.
The MIGraphX notes were saved whole from a stored public-repository index that did not
expose their repositories (the file id is the provenance; no license stated there):
``migraphx_hx370_perf_resnet50_fp16.md`` (id 23042409306, "AMD GPU Setup and Benchmarking
Guide", HX370: ``op --list`` and the trailer of ``migraphx-driver perf resnet50 --batch 64
--fp16``, 2.12) and ``migraphx_rocm7.0.2_perf_test_notes.md`` (id 60465719608, also
60433694974: notes on ROCm 7.0.2 around a whole ``migraphx-driver perf --test``, 2.13)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import traceconv
from traceconv.model import Trace

DATA = Path(__file__).parent / "data"
PADDLE_PAGES = {   # file: Event Summary rows, counted by hand in the page (= _rows below)
    "paddle_cpp_backend_least_square_report.md": 12,
    "paddle_docs_device_guard_profile_all.md": 13 + 11,
    "paddle_fluid_profiler_cn_api_two_reports.rst": 3 + 3,
    "paddle_inference_config_enable_profile_cn.md": 10,
    "paddle_models_textcnn_imdb_place_cuda_2017.md": 1,
}
# what a page left out of the reports it pasted: the guide shows two merged reports (its lines
# 82 and 162, "Note! This Report merge all thread info into one.") without the per-thread
# report Paddle prints after each (traceconv/formats/paddle_report/stated.py)
PAGE_LEFT_OUT = {"paddle_docs_device_guard_profile_all.md": {"paddle_report.rows_missing": 2}}
# a row: a name, its calls, then four or more numbers (a "CPU Time (Ratio)" cell is one)
ROW = re.compile(r"^\s*\S.*?\s+\d+(?:\s+[-+\d.e]+(?:\s*\([-+\d.e]+\))?){4,}\s*$")


def _rows(text: str) -> int:
    return sum(ROW.match(line) is not None for line in text.splitlines())


def _lost(trace: Trace) -> dict[str, int]:
    return {d.code: d.count for d in trace.diagnostics if d.kind == "dropped"}


@pytest.mark.parametrize("name", PADDLE_PAGES)
def test_a_paddle_report_pasted_in_a_page_loses_nothing(name):
    path = DATA / "paddle" / name
    trace = traceconv.load(path)
    assert _rows(path.read_text()) == PADDLE_PAGES[name]
    assert trace.counts()["slices"] == PADDLE_PAGES[name]
    # fences, </pre></code>, headings, run_time = 2093: nothing of what the page pasted is lost
    assert _lost(trace) == PAGE_LEFT_OUT.get(name, {})
    assert trace.diagnostics.count("paddle_report.foreign_lines") > 0


def test_a_program_print_after_the_table_is_foreign_and_a_cut_row_is_still_lost(tmp_path):
    path = DATA / "paddle" / "paddle_cpp_backend_least_square_report.md"
    trace = traceconv.load(path)
    assert trace.diagnostics["paddle_report.foreign_lines"].count == sum(
        1 for line in path.read_text().splitlines()
        if line.strip() and not ROW.match(line) and not re.match(   # the report's own lines
            r"\s*(-{5,}|Place:|Time unit:|Sorted by|Total time:|Computation time|Framework "
            r"overhead|GpuMemcpy|Event\s+Calls)", line))
    lines = path.read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("thread0::elementwise_sub_grad"))
    lines[row] = lines[row][:60]              # cut mid-way, inside the table: after Total
    cut = tmp_path / "cut.md"
    cut.write_text("\n".join(lines) + "\n")
    trace = traceconv.load(cut)
    assert _lost(trace) == {"paddle_report.cut_row": 1}
    assert trace.diagnostics["paddle_report.cut_row"].example.startswith(f"line {row + 1}: ")
    assert trace.counts()["slices"] == 12 - 1


def test_a_remark_among_summary_rows_is_an_elision():
    path = DATA / "paddle" / "paddlefleetx_docs_profiler_gpt_v100.md"
    trace = traceconv.load(path)
    remarks = [n for n, line in enumerate(path.read_text().splitlines(), 1)
               if line.startswith("# 此处有省略")]
    assert len(remarks) == 2
    # (the Overview's 7440 operator calls, of which the rows hold 726, fall short by what the
    # elisions left out: counted there, not twice)
    assert _lost(trace) == {"paddle_summary.elided": 2}
    assert trace.diagnostics["paddle_summary.elided"].example == f"line {remarks[0]}: # 此处有省略"


def _foreign_by_hand(text: str, output: range) -> int:
    """Non-blank lines outside ``output`` (the lines the driver printed, found by hand)."""
    return sum(1 for n, line in enumerate(text.splitlines(), 1)
               if line.strip() and n not in output)


def test_migraphx_notes_around_a_driver_run_are_foreign_lines():
    path = DATA / "migraphx" / "migraphx_rocm7.0.2_perf_test_notes.md"
    text = path.read_text()
    lines = text.splitlines()
    first = next(n for n, line in enumerate(lines, 1) if line.startswith("Running ["))
    last = next(n for n, line in enumerate(lines, 1) if "] Complete(" in line)
    trace = traceconv.load(path)
    assert _lost(trace) == {}
    assert trace.diagnostics.count("migraphx.foreign_lines") == \
        _foreign_by_hand(text, range(first, last + 1))
    assert trace.counts()["ops"] == 5         # @0, #output_0, b, a, @4


def test_migraphx_trailer_in_a_setup_guide_is_read_and_the_guide_is_foreign():
    path = DATA / "migraphx" / "migraphx_hx370_perf_resnet50_fp16.md"
    text = path.read_text()
    printed = [n for n, line in enumerate(text.splitlines(), 1) if re.match(
        r"\[ MIGraphX Version|Batch size:|Rate:|Total time:|Percentiles|Total instructions"
        r"|Overhead", line)]
    assert len(printed) == 9                  # two "Complete" lines and the 7-line trailer
    trace = traceconv.load(path)
    assert _lost(trace) == {}
    assert trace.diagnostics.count("migraphx.foreign_lines") == \
        _foreign_by_hand(text, range(0)) - len(printed)
    assert trace.metadata.attributes["programs"][0]["trailer"]["total_ms"] == 71.6228


def test_garbled_output_inside_a_migraphx_run_is_still_lost(tmp_path):
    path = DATA / "migraphx" / "migraphx_rocm7.0.2_perf_test_notes.md"
    text = path.read_text().replace("Total instructions time: 0.0104194ms",
                                    "Total instructions time: 0.01O4194ms")
    garbled = tmp_path / "garbled.md"
    garbled.write_text(text)
    trace = traceconv.load(garbled)
    assert _lost(trace) == {"migraphx.unparsed_line": 1}


def _summary_json(path: Path) -> dict:
    from traceconv.presentation.summary import summary_data
    return summary_data(traceconv.load(path))


def test_two_reports_in_one_page_are_summarised_run_by_run():
    path = DATA / "paddle" / "paddle_fluid_profiler_cn_api_two_reports.rst"
    # each report's Total column, summed with plain Python: 131.601299 and 9.977529 ms
    totals: list[float] = []
    for line in path.read_text().splitlines():
        if "Profiling Report" in line:
            totals.append(0.0)
        elif ROW.match(line):
            totals[-1] += float(line.split()[2])
    data = _summary_json(path)
    assert [run["run"] for run in data["runs"]] == [1, 2]
    assert [run["total_host_time"] for run in data["runs"]] == pytest.approx(
        [t / 1e3 for t in totals], abs=1e-9)
    assert "total_host_time" not in data          # no total adds the two runs
    from traceconv.presentation.summary import render
    text = render(traceconv.load(path), width=80)
    assert "run 1 of 2" in text and "run 2 of 2" in text
    assert "129.406ms" in text and "e-0" not in text   # the report's ms, not 0.129 s


def test_a_summary_of_an_elided_page_says_its_totals_are_the_listed_rows():
    data = _summary_json(DATA / "paddle" / "paddlefleetx_docs_profiler_gpt_v100.md")
    assert data["totals_note"].startswith("totals cover the listed rows only")
    # the page's Model Summary: "ProfileStep  3  1705.19 / ...  1397.52 / ..." (ms)
    assert data["stated_totals_ns"] == {"host": 1_705_190_000, "device": 1_397_520_000}
    # device time is by kernel, from the page's Kernel Summary: its 7 listed rows, by hand
    # 179.84 + 98.26 + 97.32 + 76.93 + 76.27 + 74.25 + 73.31 ms
    assert data["total_device_time"] == pytest.approx(0.67618)


def test_a_whole_report_has_no_totals_note():
    data = _summary_json(DATA / "paddle" / "paddle_inference_config_enable_profile_cn.md")
    assert "totals_note" not in data


SAMPLES = Path(__file__).parent.parent / "samples"
NSYS_CONSOLE = DATA / "nsys_stats" / "nanomoe_stats_console_nsys2026.1.txt"
MIGRAPHX_PERF = SAMPLES / "migraphx" / "perf_simple_graph_rocm4.txt"
PADDLE_SUMMARY = SAMPLES / "paddle" / "summary_small_2.6.2.txt"
# a MIGraphX instruction print (plain re): the second report has started by its first
MIGRAPHX_INSTRUCTION = re.compile(r"^@\d+ = ")


def _stat_rows(trace: Trace) -> list[tuple]:
    return [(s.section, s.name, s.calls, s.total_ns) for s in trace.stats]


@pytest.mark.parametrize(("first", "second"), [(NSYS_CONSOLE, MIGRAPHX_PERF),
                                               (PADDLE_SUMMARY, MIGRAPHX_PERF),
                                               (MIGRAPHX_PERF, NSYS_CONSOLE)],
                         ids=lambda p: p.stem)
def test_a_second_tools_report_is_counted_left_unread(tmp_path, first, second):
    """Two tools' reports in one file: one is read as alone; the other's lines, from where
    it shows, are a report left unread (dropped, naming its line and format), never foreign
    lines "nothing lost". Expected: the read of each file alone, and line numbers by a plain
    split of the two files."""
    one, two = (p.read_text(encoding="utf-8") for p in (first, second))
    both = tmp_path / "both.txt"
    both.write_text(one.rstrip("\n") + "\n" + two, encoding="utf-8")
    trace = traceconv.load(both)
    read_first = trace.metadata.source_format == traceconv.load(first).metadata.source_format
    read, unread = (first, second) if read_first else (second, first)
    alone = traceconv.load(read)
    assert _stat_rows(trace) == _stat_rows(alone)
    assert len(list(trace.iter_slices())) == len(list(alone.iter_slices()))
    reader = trace.metadata.source_format.replace("-", "_")
    other = trace.diagnostics[f"{reader}.other_report"]
    assert other.kind == "dropped"
    number = int(re.match(r"line (\d+): another format's report \((\S+)\)", other.example)[1])
    unread_format = traceconv.load(unread).metadata.source_format
    assert f"({unread_format})" in other.example
    first_lines = len(one.rstrip("\n").split("\n"))
    # the other report is named within the unread file's lines, by its third instruction
    # print when it is MIGraphX's (three tell MIGraphX apart, text_sniffing.migraphx)
    start = first_lines + 1 if read_first else 1
    end = start + len(two.split("\n")) if read_first else first_lines
    if unread == MIGRAPHX_PERF:
        end = start + [i for i, line in enumerate(two.split("\n"))
                       if MIGRAPHX_INSTRUCTION.match(line)][2]
    assert start <= number <= end
    # every row of the unread report is among the lines counted unread (plain re counts:
    # MIGraphX's instruction prints, nsys's rows of a share, a time and a count)
    rows = re.compile(r"^@\d+ = " if unread == MIGRAPHX_PERF else r"^\s+\d+\.\d\s+\d+\s+\d+\s")
    assert other.count >= sum(bool(rows.match(line)) for line in unread.read_text().split("\n"))


SYNTHETIC_RUN = DATA.parent.parent / "samples" / "migraphx" / "synthetic_resnet_perf_rocm7.2.txt"


def test_a_remark_after_a_closed_run_is_no_elision(tmp_path):
    """The sample pasted twice: its ``# SYNTHETIC ...`` first line follows the first copy's
    ``[ MIGraphX Version: V ] Complete`` line (line 640), which ends that run: nothing of
    either copy was left out, and the remark is foreign like the first copy's (2)."""
    text = SYNTHETIC_RUN.read_text()
    assert text.startswith("# SYNTHETIC") and "] Complete(" in text.splitlines()[-1]
    twice = tmp_path / "twice.txt"
    twice.write_text(text + text)
    trace = traceconv.load(twice)
    assert _lost(trace) == {}
    assert trace.diagnostics.count("migraphx.foreign_lines") == 2


def test_a_remark_after_a_reports_last_line_is_no_elision(tmp_path):
    """A pre-6.1 perf report (no ``Complete`` line) pasted twice: the second copy's
    ``# provenance`` line follows the first's ``Overhead: a%, b%``, the line a report
    ends with."""
    text = (DATA / "migraphx" / "srcdoc_AMDMIGraphX_driver_perf_simple_graph.txt").read_text()
    assert text.startswith("# provenance") and text.splitlines()[-1].startswith("Overhead:")
    twice = tmp_path / "twice.txt"
    twice.write_text(text + text)
    assert _lost(traceconv.load(twice)) == {}


def test_a_remark_among_migraphx_rows_is_an_elision_shown_as_written(tmp_path):
    """A remark between two instruction lines of a report (hand-made, line 2) says the
    paste left rows out there; the example shows the line as written."""
    path = tmp_path / "perf.txt"
    path.write_text("@0 = @literal{1} -> float_type, {1}, {0}: 0.5ms, 50%\n"
                    "# rows left out here\n"
                    "@1 = @literal{2} -> float_type, {1}, {0}: 0.5ms, 50%\n")
    elided = traceconv.load(path).diagnostics["migraphx.elided"]
    assert (elided.count, elided.example) == (1, "line 2: # rows left out here")
