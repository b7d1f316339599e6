"""A text report cut anywhere reads every row of its original or counts a named loss; the
untouched file counts none (traceconv/formats/pasted_text.py, the end of input in
traceconv/formats/stray_lines.py, judged alike for every text reader).

Expected values: the rows of the originals are counted here with a plain regex per format
(where the regex counts exactly what the format states, below) or by hand
(tests/test_pasted_text.py); a cut's rows are compared with its original's, and a loss is
any code of :data:`~traceconv.formats.stray_lines.ROW_LOSSES`, or a report cut before its
stated end (``migraphx.report_truncated``).
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

import traceconv
from traceconv.formats.stray_lines import ROW_LOSSES, rows_left_out
from traceconv.model import Trace

ROOT = Path(__file__).parent.parent
TEXT_READERS = ("paddle-report", "paddle-summary", "migraphx")
SAMPLES = sorted(p for folder in ("samples/paddle", "samples/migraphx", "tests/data/paddle",
                                  "tests/data/migraphx")
                 for p in (ROOT / folder).iterdir()
                 if p.suffix in (".txt", ".md", ".rst") and p.name != "PROVENANCE.md")
# a MIGraphX perf line (an instruction, its time and share); an old Paddle report's row, or
# a line of its overhead and memcpy summaries (a name, two spaces, a number)
TIMED = re.compile(r"^\S+ = .*: [-\d.e]+ms, [\d.]+%\s*$", re.M)
REPORT_ROW = re.compile(r"^\s*(?:\S+ )*\S+:?\s{2,}[-+]?\d", re.M)
# the samples the regexes count exactly (checked on the untouched file)
REGEX_COUNTED = {"perf_simple_graph_rocm4.txt": TIMED,
                 "srcdoc_AMDMIGraphX_driver_perf_simple_graph.txt": TIMED,
                 "migraphx_rocm7.0.2_perf_test_notes.md": TIMED,
                 "layout_2019_flat.txt": REPORT_ROW}
CUTS_PER_FILE = 40
# the cuts nothing in the text can tell (checked apart, or out of the rule's reach):
# * at a line end, or losing only a line end: the same text as a file cut at a line end,
#   which only a stated total, a closing rule (tests/test_stated_totals.py) or a title with
#   nothing after it (test_a_file_that_ends_on_a_section_title_is_cut) tells;
# * a last number cut short where no padding follows it (a collapsed paste), an optional
#   suffix lost (MIGraphX's target id or debug symbols, or the time of a perf line with none
#   timed before it), or the next line glued to this one: the line is whole by its
#   table's grammar;
# * a log's own prints between two reports or runs (hand-identified below): outside every
#   table, so what follows them is lost with nothing in the text to promise it
CUT_NUMBER = re.compile(rb"\.?\d+")
OPTIONAL_SUFFIX = re.compile(rb", target_id=\d+.*| ?# .*|: [-\d.e]+ms, [\d.]+%|\S+ = .*|, [-\d.e]+ms")
LOG_PRINTS = {"legacy_twice_combined_log.txt": ("Epoch ", "-"),
              "rocm7.2_perf_test_two_runs.txt": ("[ MIGraphX Version",),
              "srcdoc_AMDMIGraphX_driver_run_simple_graph.txt": ("Allocating params",)}


def _losses(trace: Trace) -> list[str]:
    return [d.code for d in trace.diagnostics if d.kind == "dropped" and
            d.code.rsplit(".", 1)[-1] in (*ROW_LOSSES, "report_truncated")]


def _rows(trace: Trace) -> int:
    return trace.counts()["ops"] if trace.metadata.source_format == "migraphx" else \
        len(trace.stats)


def _tellable(data: bytes, end: int, sample: str) -> bool:
    """Whether a cut of ``data`` at ``end`` is one the text can tell (see above)."""
    line_start = data.rfind(b"\n", 0, end) + 1
    line_end = len(data) if (found := data.find(b"\n", end)) < 0 else found
    rest, kept = data[end:line_end].rstrip(b"\r"), data[line_start:end]
    if not rest or not kept:
        return False
    if (CUT_NUMBER.fullmatch(rest) and kept[-1:] in b".0123456789") or \
            OPTIONAL_SUFFIX.fullmatch(rest):
        return False
    line = data[line_start:line_end].decode(errors="replace")
    return not line.startswith(LOG_PRINTS.get(sample, ()))


def _text_samples() -> list[Path]:
    return [p for p in SAMPLES
            if traceconv.load(p).metadata.source_format in TEXT_READERS]


def test_the_regex_counted_samples_read_their_rows():
    for sample in SAMPLES:
        if sample.name in REGEX_COUNTED:
            assert _rows(traceconv.load(sample)) == len(
                REGEX_COUNTED[sample.name].findall(sample.read_text())), sample.name


@pytest.mark.slow
def test_a_sample_cut_anywhere_reads_every_row_or_counts_a_loss(tmp_path):
    seeded = random.Random(20261201)
    missed = []
    for sample in _text_samples():
        data, original = sample.read_bytes(), traceconv.load(sample)
        if _losses(original):
            continue   # (a fragment as published: its own losses would hide a cut's)
        rows = _rows(original)
        ends = seeded.sample(range(1, len(data)), min(CUTS_PER_FILE, len(data) - 1))
        for end in ends:
            if not _tellable(data, end, sample.name):
                continue
            cut = tmp_path / f"{end}_{sample.name}"
            cut.write_bytes(data[:end])
            try:
                trace = traceconv.load(cut, format=original.metadata.source_format)
            except traceconv.InputError:
                continue   # (nothing of a report left: refused with a message)
            if _rows(trace) < rows and not _losses(trace):
                missed.append((sample.name, end, _rows(trace), rows))
    assert missed == []


LEGACY = ROOT / "tests" / "data" / "paddle" / "legacy_All_Default.txt"
REPORT = ROOT / "samples" / "paddle" / "report_gpu_before.txt"
SUMMARY = ROOT / "samples" / "paddle" / "summary_small_2.6.2.txt"
# hand count: the Event Summary's rows are lines 21-42 (22), with the 4 overhead and memcpy
# values of lines 10-12 and 16
LEGACY_ROWS = 26


def _dropped(trace: Trace) -> dict[str, int]:
    return {d.code: d.count for d in trace.diagnostics if d.kind == "dropped"}


def test_a_cut_inside_the_next_rows_indentation_is_a_cut_table(tmp_path):
    text = LEGACY.read_bytes()
    nested = text.index(b"\n    sgd ") + 1   # a row nested 4 spaces deep, near the end
    cut = tmp_path / "cut.txt"
    cut.write_bytes(text[:nested + 3])
    trace = traceconv.load(cut)
    assert len(trace.stats) < LEGACY_ROWS
    lineno = text[:nested].count(b"\n") + 1
    assert trace.diagnostics["paddle_report.table_cut"].example.startswith(
        f"line {lineno}: the input stops inside a row's indentation")


def test_a_paste_indented_whole_ends_on_its_indent_without_a_cut(tmp_path):
    indented = tmp_path / "indented.txt"
    indented.write_text("\n".join(f"    {line}" for line in LEGACY.read_text().split("\n")))
    assert indented.read_bytes().endswith(b"\n    ")
    trace = traceconv.load(indented)
    assert (len(trace.stats), _dropped(trace)) == (LEGACY_ROWS, {})


def test_a_whole_report_without_its_last_line_end_is_no_cut(tmp_path):
    unended = tmp_path / "unended.txt"
    unended.write_bytes(REPORT.read_bytes().rstrip(b"\n"))
    trace = traceconv.load(unended)
    # (hand count: 8 events, 3 overhead and 3 memcpy lines, 2 memory rows)
    assert (len(trace.stats), _dropped(trace)) == (16, {})


def test_a_file_that_ends_on_a_section_title_is_cut(tmp_path):
    text = SUMMARY.read_bytes()
    title_end = text.index(b"\n", text.index(b"Operator Summary")) + 1
    for end in (title_end, title_end - 1):   # with and without its line end
        cut = tmp_path / f"cut{end}.txt"
        cut.write_bytes(text[:end])
        trace = traceconv.load(cut)
        assert "after its title, before any row (in or after the Operator Summary)" in \
            trace.diagnostics["paddle_summary.table_cut"].example
        assert rows_left_out(trace.diagnostics) == 1
