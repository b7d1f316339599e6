"""A text report cut at any byte reads every row wholly before the cut, or counts a loss;
and a cut at a line end that the format's own printing tells (a line it always prints after
a table's rows) counts the rows it lost. One rule for the drawn ``nsys stats`` tables, the
Paddle summary() tables and the old Paddle Profiling Report
(traceconv/formats/stray_lines.py, traceconv/formats/stated_totals.py).

Expected values: each sample's rows are split here, on the uncut file, by plain patterns of
the printed layouts (a row is a line under a header and its rule; in Paddle's printouts also
the overhead and memcpy lines and the Perf Summary's bar rows), checked to count what the
uncut file reads; a cut's expected rows are those whose text ends at or before it. A loss is
any code of :data:`~traceconv.formats.stray_lines.ROW_LOSSES`.
"""

from __future__ import annotations

import functools
import random
import re
from pathlib import Path

import pytest

import traceconv
from traceconv.formats.stray_lines import ROW_LOSSES
from traceconv.model import Trace

DATA = Path(__file__).parent / "data"
SAMPLES = Path(__file__).parent.parent / "samples"
NSYS = [DATA / "nsys_stats" / name for name in (
    "assignment2_stats_console_nsys2024.6.2.txt", "cs533_profile_stats_console_legacy.txt",
    "gpu_mvr_profile_stats_console.txt", "nanomoe_stats_console_nsys2026.1.txt",
    "nsight_deep_dive_two_runs_readme.md", "numdiff_readme_stats_console_nsys2023.2.3.md",
    "matmul_nvtx_stats_console_in_comment.cu", "r1_671b_stats_table_format_nsys2025.1.1.md")]
SUMMARIES = [SAMPLES / "paddle" / "summary_small_2.6.2.txt"] + [
    DATA / "paddle" / name for name in (
        "pir_static_summary_default.txt", "small_summary_time_unit_us.txt",
        "timer_only_perf_summary.txt", "timer_only_perf_summary_3.3.1.txt")]
REPORTS = [SAMPLES / "paddle" / "report_gpu_before.txt"] + [
    DATA / "paddle" / name for name in (
        "dygraph_All_Default.txt", "legacy_All_Default.txt", "legacy_CPU_OpDetail.txt",
        "legacy_GPU_Default.txt", "legacy_twice_combined_log.txt", "static_mt_CPU_Default.txt")]
CUTS_PER_FILE = 8   # (seeded; every line end and more in the slow sweep)

# -- the independent split of the uncut file: (start, end) of each row's text -------------

DASH_RULE = re.compile(r"^\s*-+(?:\s+-+)+\s*$")
BOX_RULE = re.compile(r"^\s*\+-+(?:\+-+)+\+?\s*$")
TITLE = re.compile(r"^-{2,}\s*\S.*?\S\s*-{2,}\s*$")
PADDLE_RULE = re.compile(r"^-+(?: {2,}-+)* *$")
OVERHEAD = re.compile(r"^\s*(?:Total time:|Computation time|Framework overhead)")
MEMCPY = re.compile(r"^\s*GpuMemcpy\w*\s+Calls:")


def _spans(text: str) -> list[tuple[int, str]]:
    """Each line of ``text`` with the offset it starts at."""
    spans, at = [], 0
    for line in text.split("\n"):
        spans.append((at, line.rstrip("\r")))
        at += len(line) + 1
    return spans


def nsys_rows(text: str) -> list[tuple[int, int]]:
    """The rows under a summary's header (a ``Total`` column) and its rule, up to a blank
    line or the box's bottom rule."""
    rows, lines = [], _spans(text)
    for index, (_, line) in enumerate(lines[1:], 1):
        header = lines[index - 1][1]
        boxed = BOX_RULE.match(line) and header.lstrip().startswith("|")
        if "Total" not in header or not (DASH_RULE.match(line) or boxed):
            continue
        for start, row in lines[index + 1:]:
            if not row.strip() or BOX_RULE.match(row) or (boxed and not row.startswith("|")):
                break
            rows.append((start, start + len(row.rstrip())))
    return rows


def summary_rows(text: str) -> list[tuple[int, int]]:
    """The rows of summary()'s tables (under a header between two rules, the Overview's
    second header too, up to a rule or a blank line; ``Thread:`` titles are none) and the
    Perf Summary's bar rows (not its header of blank first cell)."""
    rows, state, perf = [], None, False
    for start, line in _spans(text):
        body = line.rstrip()
        if re.match(r"^=+\s*Perf Summary\s*=+$", body):
            perf, state = True, None
        elif perf and body.startswith("|"):
            if body.strip().strip("|").split("|")[0].strip():
                rows.append((start, start + len(body)))
        elif perf and body.startswith(("Reader Ratio", "Time Unit")):
            pass
        elif TITLE.match(body) and not PADDLE_RULE.match(body):
            perf, state = False, state if "Thread:" in body else "title"
        elif body and PADDLE_RULE.match(body):
            state = {"title": "top", "header": "rows", "rows": "end"}.get(state, state)
        elif (state == "top" and body.strip()) or (state == "end" and body[:1] == " "):
            state = "header"   # (the Overview's second header: its first cell blank)
        elif state == "rows" and body.strip():
            rows.append((start, start + len(body)))
        elif state == "rows":
            state = None
    return rows


def report_rows(text: str) -> list[tuple[int, int]]:
    """The Event Summary's and the memory report's rows (under their ``Event`` header, up to
    a blank line), and the overhead and memcpy lines."""
    rows, table = [], False
    for start, line in _spans(text):
        body = line.rstrip()
        if re.match(r"^\s*Event\s{2,}(?:Calls|Alloc Calls)", body):
            table = True
        elif (table and body.strip()) or OVERHEAD.match(body) or MEMCPY.match(body):
            rows.append((start, start + len(body)))
        else:
            table = False
    return rows


SPLIT = {**dict.fromkeys(NSYS, nsys_rows), **dict.fromkeys(SUMMARIES, summary_rows),
         **dict.fromkeys(REPORTS, report_rows)}


def _text(sample: Path) -> str:
    """The sample's bytes as characters one for one (the split's offsets are the cuts')."""
    return sample.read_bytes().decode("latin-1")


def _losses(trace: Trace) -> list[str]:
    return [d.code for d in trace.diagnostics
            if d.kind == "dropped" and d.code.rsplit(".", 1)[-1] in ROW_LOSSES]


@functools.cache
def _format(sample: Path) -> str:
    return traceconv.load(sample).metadata.source_format


def _load_cut(sample: Path, end: int, folder: Path) -> Trace | None:
    cut = folder / "cut"
    cut.write_bytes(sample.read_bytes()[:end])
    try:
        return traceconv.load(cut, format=_format(sample))
    except traceconv.InputError:
        return None   # (nothing of a report left: refused with a message)


@pytest.mark.parametrize("sample", SPLIT, ids=lambda p: p.name)
def test_the_split_counts_what_the_uncut_sample_reads(sample):
    trace = traceconv.load(sample)
    assert (len(trace.stats), _losses(trace)) == (len(SPLIT[sample](_text(sample))), [])


def _silent_cuts(sample: Path, ends: list[int], folder: Path) -> list[tuple[int, int, int]]:
    """The cuts of ``sample`` at ``ends`` that read other rows than those wholly before
    them and count no loss: (cut, rows read, rows before it)."""
    silent = []
    rows = SPLIT[sample](_text(sample))
    for end in ends:
        trace = _load_cut(sample, end, folder)
        shown = sum(row_end <= end for _, row_end in rows)
        if trace is None:
            assert shown == 0, end
        elif len(trace.stats) != shown and not _losses(trace):
            silent.append((end, len(trace.stats), shown))
    return silent


@pytest.mark.parametrize("sample", SPLIT, ids=lambda p: p.name)
def test_a_sample_cut_anywhere_reads_the_rows_before_the_cut_or_counts_a_loss(sample, tmp_path):
    seeded = random.Random(f"cuts of {sample.name}")   # (a str seed: the same every run)
    size = len(sample.read_bytes())
    assert _silent_cuts(sample, seeded.sample(range(1, size), CUTS_PER_FILE), tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("sample", SPLIT, ids=lambda p: p.name)
def test_every_line_end_and_many_bytes_of_every_sample(sample, tmp_path):
    data = sample.read_bytes()
    line_ends = [m.start() for m in re.finditer(b"\n", data)]
    seeded = random.Random(f"sweep of {sample.name}")
    ends = sorted({*line_ends, *(end + 1 for end in line_ends[:-1]),
                   *seeded.sample(range(1, len(data)), 60)})
    assert _silent_cuts(sample, ends, tmp_path) == []


# -- cuts at a line end that the format's own printing tells --------------------------------

def _line_end_cuts(sample: Path) -> list[int]:
    """The offsets right after each line end of ``sample`` but its last."""
    data = sample.read_bytes()
    return [m.end() for m in re.finditer(b"\n", data)][:-1]


# the line ends where a cut loses rows with nothing in the text to promise them
# (hand-identified; the line numbers are the cut's last line):
# * summary(): after the Device Summary (its Note's rule and the blank lines, 12-14: "if
#   total ProfileStep time is 0 the output stops here"); in or after an unruled table (the
#   UserDefined Summary's last row and blank lines, the Memory Summary's rows), which ends
#   with blank lines only, and an editor trims those (so may a whole file's end: no cut);
# * the old report: in the Memory Profiling Report's rows (ended by a blank line only), and a
#   log's own prints between two report groups (lines 54-59 of the combined log)
UNTOLD_LINES = {"summary_small_2.6.2.txt": {12, 13, 14, 181, 182, 183, *range(190, 230)},
                "small_summary_time_unit_us.txt": {12, 13, 14, 181, 182, 183,
                                                   *range(190, 230)},
                "pir_static_summary_default.txt": {12, 13, 14, 135, 136, 137,
                                                   *range(144, 183)},
                "report_gpu_before.txt": {36},
                "legacy_twice_combined_log.txt": set(range(54, 60))}


@pytest.mark.slow
@pytest.mark.parametrize("sample", SUMMARIES + REPORTS, ids=lambda p: p.name)
def test_a_paddle_printout_cut_at_any_line_end_counts_what_the_format_promised(sample,
                                                                               tmp_path):
    rows, missed = len(SPLIT[sample](_text(sample))), []
    for end in _line_end_cuts(sample):
        line = sample.read_bytes()[:end].count(b"\n")
        trace = _load_cut(sample, end, tmp_path)
        if trace is not None and len(trace.stats) < rows and not _losses(trace) and \
                line not in UNTOLD_LINES.get(sample.name, ()):
            missed.append(line)
    assert missed == []


SUMMARY = SAMPLES / "paddle" / "summary_small_2.6.2.txt"
LEGACY_OP_DETAIL = DATA / "paddle" / "legacy_CPU_OpDetail.txt"
PERF = DATA / "paddle" / "timer_only_perf_summary.txt"


def _cut_after_line(sample: Path, line: int, folder: Path) -> Trace:
    """``sample`` cut right after its line ``line`` (1-based) and its line end, read."""
    end = _line_end_cuts(sample)[line - 1]
    trace = _load_cut(sample, end, folder)
    assert trace is not None
    return trace


def _dropped(trace: Trace) -> dict[str, str]:
    return {d.code: d.example or "" for d in trace.diagnostics if d.kind == "dropped"}


def test_a_device_summary_cut_before_its_note_closes_is_cut(tmp_path):
    for line in (7, 9):   # its rows' closing rule; inside its Note (lines 8-11, rule 12)
        assert _dropped(_cut_after_line(SUMMARY, line, tmp_path)) == {
            "paddle_summary.rows_missing": "line 1: Device Summary: the input ends before "
                                           "the rule that closes its Note"}


def test_a_perf_summary_without_its_ips_row_is_cut(tmp_path):
    trace = _cut_after_line(PERF, 10, tmp_path)   # (lines 9-11: reader_cost, batch_cost, ips)
    assert _dropped(trace) == {"paddle_summary.rows_missing": "line 5: Perf Summary: the input "
                               "ends before its reader_cost, batch_cost, ips rows"}


def test_an_old_report_cut_among_its_last_nested_rows_is_cut(tmp_path):
    # lines 21-99 are the Event Summary's rows under thread0::Executor::Run (line 21), the
    # Memory Profiling Report's banner at line 101; a cut after a row nested 3 deep
    trace = _cut_after_line(LEGACY_OP_DETAIL, 60, tmp_path)
    assert _dropped(trace) == {"paddle_report.rows_missing": "line 2: Profiling Report: the "
                               "input ends before the Memory Profiling Report printed after "
                               "its Event Summary"}
    assert len(trace.stats) == 3 + 1 + 40   # (overhead lines 10-12, memcpy 16, rows 21-60)


NANOMOE = DATA / "nsys_stats" / "nanomoe_stats_console_nsys2026.1.txt"


def test_an_nsys_console_row_cut_in_its_name_is_a_cut_table(tmp_path):
    text = NANOMOE.read_bytes()
    row = text.index(b"cudaLaunchKernel ")   # a cuda_api_sum row, its name padded to the rule
    trace = _load_cut(NANOMOE, row + 6, tmp_path)   # ("cudaLa")
    assert trace is not None
    line = text[:row].count(b"\n") + 1
    assert _dropped(trace)["nsys_stats.table_cut"] == \
        f"line {line}: the input stops mid-line (in or after the cuda_api_sum table)"


def test_a_trimmed_nsys_paste_ending_on_a_whole_row_is_no_cut(tmp_path):
    trimmed = tmp_path / "trimmed.txt"   # (an editor's trim: no padding, no last line end)
    trimmed.write_text("\n".join(line.rstrip() for line in NANOMOE.read_text().split("\n"))
                       .rstrip())
    trace = traceconv.load(trimmed)
    assert (len(trace.stats), _losses(trace)) == (len(nsys_rows(NANOMOE.read_text())), [])


def test_an_nsys_box_row_cut_before_its_bars_is_a_cut_table(tmp_path):
    boxed = DATA / "nsys_stats" / "r1_671b_stats_table_format_nsys2025.1.1.md"
    text = boxed.read_bytes()
    row = text.index(b"|     25.4 |")   # the kernel table's second row
    trace = _load_cut(boxed, row + 20, tmp_path)   # (in its Total Time cell)
    assert trace is not None
    line = text[:row].count(b"\n") + 1
    assert _dropped(trace)["nsys_stats.table_cut"] == \
        f"line {line}: the input stops mid-line (in or after the cuda_gpu_kern_sum table)"
    # (the cut line is the table's, not foreign: the page's own before it are lines 1, 3
    # and 4, its title, a heading and a fence)
    assert trace.diagnostics["nsys_stats.foreign_lines"].count == 3


def test_an_nsys_table_cut_right_after_its_rule_is_a_cut_table(tmp_path):
    text = NANOMOE.read_bytes()
    second_rule = text.index(b" --------  ----", text.index(b"cuda_gpu_kern_sum):"))
    trace = _load_cut(NANOMOE, text.index(b"\n", second_rule) + 1, tmp_path)
    assert trace is not None
    assert len(trace.stats) == 5   # (the cuda_api_sum rows, lines 13-17, by hand)
    assert _dropped(trace) == {"nsys_stats.table_cut": "line 24: the input stops after its "
                               "title, before any row (in or after the cuda_gpu_kern_sum "
                               "table)"}
