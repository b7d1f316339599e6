"""A report pasted through a terminal, a chat, a Markdown or an HTML page reads the rows its
clean original reads, and a cut report counts its lost rows as dropped, never as a note
(traceconv/formats/pasted_text.py, traceconv/formats/stray_lines.py).

Expected values: the rows of the clean samples are counted here by hand (the line ranges
below) or with a plain regex over the file, never by the readers; a dressed file must read
the same rows (by name) as its clean original.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

import pytest

import traceconv
from traceconv.formats.pasted_text import PastedLines
from traceconv.formats.stray_lines import rows_left_out
from traceconv.model import Trace

SAMPLES = Path(__file__).parent.parent / "samples"
SUMMARY = SAMPLES / "paddle" / "summary_small_2.6.2.txt"
REPORT = SAMPLES / "paddle" / "report_gpu_before.txt"
LEGACY = SAMPLES / "paddle" / "report_legacy_CPU_OpDetail.txt"
PERF = SAMPLES / "migraphx" / "perf_simple_graph_rocm4.txt"
RESNET = SAMPLES / "migraphx" / "synthetic_resnet_perf_rocm7.2.txt"
# hand count, by line number in the file: Device 5-6, Overview 20-28, Model 54-59,
# Operator 74-171, UserDefined 181, Memory 190-230
SUMMARY_ROWS = 2 + 9 + 6 + 98 + 1 + 41
# hand count: Event Summary rows are lines 24-31; with the overhead lines 11-13, GpuMemcpy
# lines 17-19 and the memory rows 36-37 the report states 16 values
REPORT_EVENTS, REPORT_STATS = 8, 8 + 3 + 3 + 2
# a MIGraphX perf line: an instruction and its time
TIMED = re.compile(r"^\S+ = .*: [-\d.e]+ms, [\d.]+%$", re.M)


def _names(trace: Trace) -> list[str]:
    return sorted(s.name for s in trace.stats)


def _dropped(trace: Trace) -> dict[str, int]:
    return {d.code: d.count for d in trace.diagnostics if d.kind == "dropped"}


DRESSES: dict[str, Callable[[str], str]] = {
    "ansi_numbers": lambda t: re.sub(r"(\d+(?:\.\d+)?)", "\x1b[1;32m\\1\x1b[0m", t),
    "ansi_lines": lambda t: "".join(f"\x1b[36m{line}\x1b[0m\n" for line in t.splitlines()),
    "tabs": lambda t: re.sub(r" {2,}", "\t", t),
    "nbsp": lambda t: t.replace("  ", "\u00a0\u00a0"),
    "ideographic_space": lambda t: t.replace("  ", "\u3000 "),
    "cr_only": lambda t: t.replace("\n", "\r"),
    # a page break (a printer's form feed) or another break before each line end: no blank
    # line after each line; a Unicode separator alone ends a line
    "form_feeds": lambda t: t.replace("\n", "\x0c\n"),
    "separators_before_crlf": lambda t: t.replace("\n", "\x0b\x1e\x85\r\n"),
    "paragraph_separators": lambda t: t.replace("\n", "\u2029"),
    "markdown_quote": lambda t: "".join(f"> {line}\n" for line in t.splitlines()),
    # (the last line end gets the indent too: the file ends on blanks, no cut)
    "indented": lambda t: "\n".join(f"    {line}" for line in t.split("\n")),
    "html_page": lambda t: f"<html><body><p>my profile</p><pre><code>{html.escape(t)}"
                           "</code></pre></body></html>\n",
}


def test_the_clean_samples_read_their_hand_counted_rows():
    assert len(traceconv.load(SUMMARY).stats) == SUMMARY_ROWS
    report = traceconv.load(REPORT)
    assert (report.counts()["slices"], len(report.stats)) == (REPORT_EVENTS, REPORT_STATS)
    assert traceconv.load(PERF).counts()["ops"] == len(TIMED.findall(PERF.read_text()))


@pytest.mark.parametrize("dress", DRESSES)
@pytest.mark.parametrize("sample", [SUMMARY, REPORT, LEGACY, PERF])
def test_a_dressed_paste_reads_the_rows_of_its_clean_original(tmp_path, sample, dress):
    dressed = tmp_path / sample.name
    dressed.write_text(DRESSES[dress](sample.read_text()), encoding="utf-8", newline="")
    clean, read = traceconv.load(sample), traceconv.load(dressed)   # (sniffed, as a user's)
    assert _names(read) == _names(clean)
    assert read.counts()["slices"] == clean.counts()["slices"]
    assert _dropped(read) == {}
    reader = clean.metadata.source_format.replace("-", "_")
    markup = sum(line.startswith("<") and line.endswith(">")   # the page's own lines
                 for line in dressed.read_text().splitlines())
    assert read.diagnostics.count(f"{reader}.foreign_lines") == \
        clean.diagnostics.count(f"{reader}.foreign_lines") + markup


def test_a_quoted_large_migraphx_paste_reads_as_the_unquoted_one(tmp_path):
    quoted = tmp_path / RESNET.name
    quoted.write_text(DRESSES["markdown_quote"](RESNET.read_text()))
    read, clean = traceconv.load(quoted), traceconv.load(RESNET)
    assert len(TIMED.findall(RESNET.read_text())) == 301   # and one untimed @return
    assert (read.counts()["ops"], _names(read)) == (clean.counts()["ops"], _names(clean))
    assert _dropped(read) == {}
    assert "migraphx.unparsed_line" not in read.diagnostics


def test_ansi_colours_read_with_the_format_named_too(tmp_path):
    coloured = tmp_path / "report.txt"
    coloured.write_text(DRESSES["ansi_numbers"](REPORT.read_text()))
    trace = traceconv.load(coloured, format="paddle-report")
    assert (trace.counts()["slices"], len(trace.stats)) == (REPORT_EVENTS, REPORT_STATS)


def _cut(tmp_path: Path, sample: Path, sixty_fourths: int) -> Path:
    data = sample.read_bytes()
    end = len(data) * sixty_fourths // 64
    assert data[end - 1:end] != b"\n"   # (the cut falls inside a line)
    cut = tmp_path / f"cut{sixty_fourths}_{sample.name}"
    cut.write_bytes(data[:end])
    return cut


# the summary cut at 18/64 stops in the padding after line 89's last cell, and the old
# report's at 34/64 in a row's padding: rows with every cell but short of their table's width
# (its rule's, its header's), so a cut table
@pytest.mark.parametrize(("sample", "rows", "sixty_fourths", "told_by"), [
    (SUMMARY, SUMMARY_ROWS, 8, "table_cut"), (SUMMARY, SUMMARY_ROWS, 18, "table_cut"),
    (SUMMARY, SUMMARY_ROWS, 48, "table_cut"), (REPORT, REPORT_STATS, 16, "table_cut"),
    (REPORT, REPORT_STATS, 34, "table_cut"), (REPORT, REPORT_STATS, 61, "table_cut"),
])
def test_a_report_cut_mid_line_counts_its_lost_rows_as_dropped(tmp_path, sample, rows,
                                                               sixty_fourths, told_by):
    trace = traceconv.load(_cut(tmp_path, sample, sixty_fourths))
    assert len(trace.stats) < rows
    reader = trace.metadata.source_format.replace("-", "_")
    assert trace.diagnostics.count(f"{reader}.{told_by}") >= 1
    assert rows_left_out(trace.diagnostics) >= 1


def test_a_row_cut_to_its_name_is_a_row_lost_not_a_foreign_line(tmp_path):
    # the sample cut at 31/64 ends on line 26, "    conv2d/compute        "
    trace = traceconv.load(_cut(tmp_path, REPORT, 31))
    assert trace.diagnostics["paddle_report.cut_row"].example == "line 26: conv2d/compute"
    foreign = trace.diagnostics["paddle_report.foreign_lines"]
    assert (foreign.count, foreign.example) == (1, "line 1: # hand-made: GPU-shaped "
                                                   "Profiling Report, own numbers")


def test_a_whole_file_without_its_last_line_end_reads_whole(tmp_path):
    whole = tmp_path / "summary.txt"
    whole.write_text(SUMMARY.read_text().rstrip("\n"))   # ends on a closing rule's spaces
    trace = traceconv.load(whole)
    assert len(trace.stats) == SUMMARY_ROWS
    assert _dropped(trace) == {}


def test_two_migraphx_reports_in_one_file_lose_nothing(tmp_path):
    # the second report's "# provenance" comment, after a blank line, is no elision
    text = PERF.read_text()
    two = tmp_path / "two.txt"
    two.write_text(text + "\n\n" + text)
    trace = traceconv.load(two)
    assert trace.counts()["ops"] == 2 * len(TIMED.findall(text))
    assert _dropped(trace) == {}


def test_a_coloured_report_at_the_end_of_a_long_training_log_is_found(tmp_path):
    log = tmp_path / "train.log"
    steps = "".join(f"step {n} loss 0.{n % 97:02d}\n" for n in range(8000))   # past the head
    log.write_text(steps + DRESSES["ansi_lines"](REPORT.read_text()))
    trace = traceconv.load(log)
    assert (trace.counts()["slices"], len(trace.stats)) == (REPORT_EVENTS, REPORT_STATS)


MIGRAPHX = SAMPLES / "migraphx" / "synthetic_resnet_perf_rocm7.2.txt"


@pytest.mark.parametrize("spacing", ["\n\n", "\r\r\n", "\n\f"])
def test_a_double_spaced_text_reads_as_the_clean_one(tmp_path, spacing):
    """A blank line after every line (a chat's double spacing, CR CR LF, a form feed after
    each newline): the same slices and statistics as the clean file, nothing counted lost,
    the repair counted once."""
    path = tmp_path / MIGRAPHX.name
    path.write_bytes(MIGRAPHX.read_bytes().replace(b"\n", spacing.encode()))
    clean, spaced = traceconv.load(MIGRAPHX), traceconv.load(path)
    assert [(s.name, s.dur) for s in spaced.iter_slices()] == \
        [(s.name, s.dur) for s in clean.iter_slices()]
    assert len(spaced.stats) == len(clean.stats)
    assert spaced.diagnostics.count("input.double_spaced") == 1
    assert {d.code for d in spaced.diagnostics} - {d.code for d in clean.diagnostics} == \
        {"input.double_spaced"}


def test_single_spaced_text_after_a_double_spaced_head_is_read_as_it_is():
    """Two lines of text one after the other end the double spacing: the rest keeps its
    blank lines (the lines expected by a plain split)."""
    head = "".join(f"line {n}\n\n" for n in range(40))   # (past the lines that judge it)
    rest = "a\nb\n\nc\n"
    assert list(PastedLines(head + rest)) == [f"line {n}" for n in range(40)] + \
        rest.rstrip("\n").split("\n")


def test_a_text_with_some_blank_lines_is_not_double_spaced():
    text = "Place: CPU\n\nrelu  3\ngelu  4\n\nTotal  7\n\nend\n\nx\n\n"
    assert list(PastedLines(text)) == text.split("\n")[:-1]
