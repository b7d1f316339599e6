"""Every Paddle report and MIGraphX sample, pasted the ways users paste it, reads the same.

The variants come from :mod:`tests.paste_variants` (plain text operations); each must read
the rows of the pristine file, or exactly what the cut left. The pristine reading itself is
checked against an independent count of the text (simple line regexes).
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import paste_variants as pv
from traceconv.formats import migraphx, paddle_report
from traceconv.formats.migraphx.document import parse_document
from traceconv.formats.migraphx.units import units_of
from traceconv.formats.paddle_report.parser import ReportParser
from traceconv.model import Diagnostics

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
PADDLE = sorted([*ROOT.glob("samples/paddle/report_*.txt"),
                 *[p for p in (DATA / "paddle").glob("*.txt")
                   if "Profiling Report" in p.read_text()]])
# the pristine samples (samples/*/paste_*.txt are already pastes, shown in the docs)
MIGRAPHX = sorted(p for p in [*ROOT.glob("samples/migraphx/*.txt"),
                               *(DATA / "migraphx").glob("*.txt*")]
                  if not p.name.startswith("paste_"))
PROPERTY = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


def read_text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()


# -- Paddle ----------------------------------------------------------------------------------

def paddle_rows(text: str) -> tuple[list[tuple], ReportParser]:
    parser = ReportParser()
    log = parser.parse_text(text)
    rows = [(r.name, r.calls, r.total_ms, r.ratio) for report in log.reports
            for r in report.events]
    rows += [(m.event, m.alloc_calls, m.alloc_mb, m.free_mb) for memory in log.memory
             for m in memory.rows]
    return rows, parser


def paddle_row_lines(text: str) -> list[int]:
    """Indices of the table row lines, found the simple way: after a header, up to the
    blank line that follows the rows (an empty memory table is its header and a blank)."""
    found, inside, seen, memory = [], False, 0, False
    for index, line in enumerate(pv.lines_of(text)):
        if m := re.match(r"^\s*Event\s+(Alloc\s+)?Calls", line):
            inside, seen, memory = True, 0, m[1] is not None
        elif inside and not line.strip():
            inside = seen == 0 and not memory
        elif inside:
            found.append(index)
            seen += 1
    return found


@pytest.mark.parametrize("path", PADDLE, ids=lambda p: p.name)
def test_paddle_pristine_rows_match_an_independent_count(path):
    text = read_text(path)
    rows, parser = paddle_rows(text)
    assert len(rows) == len(paddle_row_lines(text))
    assert not parser.diagnostics.count("paddle_report.unreadable_row")
    assert not parser.diagnostics.count("paddle_report.cut_row")


PADDLE_VARIANTS = {
    "no banner": pv.drop(re.compile(r"-{5,}>\s*Profiling Report")),
    "no titles": pv.drop(pv.PADDLE_CONTEXT),
    "no header": pv.drop(pv.PADDLE_HEADER),
    "collapsed": pv.collapse,
    "crlf": pv.crlf,
    "tabs": pv.tabs,
    **{f"wrapped at {w}": pv.hard_wrap(w) for w in pv.WRAP_WIDTHS},
}


def _same(rows: list[tuple], expected: list[tuple]) -> bool:
    return [r[:3] for r in rows] == [r[:3] for r in expected]


@pytest.mark.slow
@pytest.mark.parametrize("variant", PADDLE_VARIANTS, ids=str)
@pytest.mark.parametrize("path", PADDLE, ids=lambda p: p.name)
def test_paddle_variant_reads_the_same_rows(path, variant):
    text = read_text(path)
    expected, _ = paddle_rows(text)
    rows, parser = paddle_rows(PADDLE_VARIANTS[variant](text))
    assert _same(rows, expected)


@pytest.mark.parametrize("path", PADDLE, ids=lambda p: p.name)
def test_paddle_two_reports_in_one_file_stay_apart(path):
    text = read_text(path)
    log, _ = paddle_report.parse(text)
    twice, _ = paddle_report.parse(pv.twice(text))
    assert len(twice.reports) == 2 * len(log.reports)
    assert [len(r.events) for r in twice.reports] == [len(r.events) for r in log.reports] * 2
    assert twice.reports[len(log.reports)].group > log.reports[-1].group


@pytest.mark.parametrize("keep", [1, 2])
@pytest.mark.parametrize("path", PADDLE, ids=lambda p: p.name)
def test_paddle_one_or_two_rows_alone(path, keep):
    text = read_text(path)
    lines = pv.lines_of(text)
    first = [lines[i] for i in paddle_row_lines(text)
             if not lines[i].lstrip().startswith("Place(")][:keep]
    expected, _ = paddle_rows("\n".join(lines[:paddle_row_lines(text)[0]]) + "\n"
                              + "\n".join(first))
    rows, _ = paddle_rows("\n".join(first))
    assert _same(rows, expected[-len(first):]) and len(rows) == len(first)


@pytest.mark.slow
@PROPERTY
@given(data=st.data())
@pytest.mark.parametrize("path", PADDLE, ids=lambda p: p.name)
def test_paddle_cut_paste_reads_what_is_left_and_counts_the_cut_row(path, data):
    text = read_text(path)
    lines = pv.lines_of(text)
    row_lines = paddle_row_lines(text)
    cut = data.draw(st.integers(0, len(lines) - 1), label="cut line")
    line = lines[cut].rstrip()
    last_cell = len(line) - len(line.split()[-1]) if line.strip() else 0
    cells = re.match(r"^\s*\S.*?\s+\d+\s+", line)
    column = None
    if cut in row_lines and cells is not None and cells.end() < last_cell:
        column = data.draw(st.integers(cells.end(), last_cell - 1), label="cut column")
    expected, _ = paddle_rows(text)
    rows, parser = paddle_rows(pv.cut_at(cut, column)(text))
    kept = sum(index < cut or (index == cut and column is None) for index in row_lines)
    assert _same(rows, expected[:kept])
    assert parser.diagnostics.count("paddle_report.cut_row") == (column is not None)


# -- MIGraphX --------------------------------------------------------------------------------

def migraphx_key(text: str) -> list[tuple]:
    """What a document holds: instructions (name, op, dims), times, Summary and trailer."""
    doc = parse_document(text)

    def ins(i):
        return (i.name, i.op, i.shape.type if i.shape else None,
                i.shape.lens if i.shape else None)

    def same(value):   # nan (never run) equals nan here
        return "nan" if value != value else value

    out: list[tuple] = []
    for run in doc.runs:
        out += [("listing", *ins(i)) for listing in run.listings for i in listing.instructions]
        out += [("eval", *ins(r.instruction), same(r.device_ms)) for r in run.eval_records
                if r.instruction]
        if run.report is not None:
            out += [("perf", *ins(p.instruction), same(p.ms)) for p in run.report.lines]
            out += [("summary", r.group, r.total_ms, r.count, r.percent)
                    for r in run.report.summary]
            trailer = run.report.trailer
            out.append(("trailer", trailer.total_ms, trailer.instructions_ms, trailer.rate))
    return out


MIGRAPHX_VARIANTS = {
    "no Summary: line": pv.drop(re.compile(r"^\s*Summary:\s*$")),
    "crlf": pv.crlf,
    "tabs": pv.tabs,
    **{f"wrapped at {w}": pv.hard_wrap(w) for w in pv.WRAP_WIDTHS},
}


@pytest.mark.parametrize("path", MIGRAPHX, ids=lambda p: p.name)
def test_migraphx_pristine_instructions_match_an_independent_count(path):
    text = read_text(path)
    doc = parse_document(text)
    instructions = sum(len(listing.instructions) for run in doc.runs
                       for listing in run.listings)
    instructions += sum(len(run.report.lines) for run in doc.runs if run.report)
    instructions += sum(r.instruction is not None for run in doc.runs for r in run.eval_records)
    printed = [line for line in text.splitlines()
               if re.match(r"^(?:\S+ \[\w+\] \[[^\]]*\] ?)?\s*(?:Run instruction: )?[^\s=]+ ?= ?\S",
                           re.sub(r"^\d{4}-\S+ ", "", line))
               and not re.match(r"^\s*[A-Z0-9_]*MIGRAPHX", line)]
    glued_returns = sum(len(re.findall(r"@return\([^)]*\)(?=\S)", line)) for line in printed)
    assert instructions == len(printed) - len(doc.wrapped) + glued_returns


@pytest.mark.slow
@pytest.mark.parametrize("variant", MIGRAPHX_VARIANTS, ids=str)
@pytest.mark.parametrize("path", MIGRAPHX, ids=lambda p: p.name)
def test_migraphx_variant_reads_the_same(path, variant):
    text = read_text(path)
    assert migraphx_key(MIGRAPHX_VARIANTS[variant](text)) == migraphx_key(text)


@pytest.mark.slow
@pytest.mark.parametrize("path", MIGRAPHX, ids=lambda p: p.name)
def test_migraphx_two_runs_in_one_file_stay_apart(path):
    text = read_text(path)
    once = units_of(parse_document(text), Diagnostics())
    twice = units_of(parse_document(pv.twice(text)), Diagnostics())
    assert migraphx_key(pv.twice(text)) == migraphx_key(text) * 2
    # each run its own program (a process in the trace); trace-eval passes each a pass
    assert len(twice) == 2 * len(once) or sum(map(len, (u.eval_passes for u in twice))) == \
        2 * sum(map(len, (u.eval_passes for u in once)))


def _timed_lines(path: Path) -> list[str]:
    """The instruction lines of a perf report (``... -> shape: 0.0123ms, 4%``)."""
    return [line for line in read_text(path).splitlines()
            if re.search(r"->.*:\s*[\d.]+ms,\s*\d+%\s*$", line)]


@pytest.mark.parametrize("keep", [1, 2])
@pytest.mark.parametrize("path", [p for p in MIGRAPHX if _timed_lines(p)], ids=lambda p: p.name)
def test_migraphx_one_or_two_timed_lines_alone_are_detected_and_read(path, keep):
    timed = _timed_lines(path)
    paste = "\n".join(timed[:keep]) + "\n"
    assert migraphx.sniff(paste.encode()) >= 0.9
    (run,) = parse_document(paste).runs
    assert run.report is not None and len(run.report.lines) == min(keep, len(timed))


@pytest.mark.slow
@PROPERTY
@given(data=st.data())
@pytest.mark.parametrize("path", MIGRAPHX, ids=lambda p: p.name)
def test_migraphx_cut_paste_never_raises_and_keeps_a_prefix(path, data):
    text = read_text(path)
    lines = pv.lines_of(text)
    cut = data.draw(st.integers(0, len(lines) - 1), label="cut line")
    column = data.draw(st.integers(0, len(lines[cut])), label="cut column")
    full = [k for k in migraphx_key(text) if k[0] != "trailer"]
    before = [k for k in migraphx_key(pv.cut_at(cut - 1)(text)) if k[0] != "trailer"] \
        if cut else []
    got = [k for k in migraphx_key(pv.cut_at(cut, column)(text)) if k[0] != "trailer"]
    # what the lines before the cut hold is read whole; the cut line adds at most one item
    assert {k[:2] for k in before} <= {k[:2] for k in got} and len(got) <= len(before) + 1
    assert len(got) <= len(full)
