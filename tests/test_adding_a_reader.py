"""The example reader of docs/adding-a-reader.md, registered as a plugin would be, reads
its tiny sample; the expected values are counted by hand from the four lines of
tests/data/spans_csv/tiny.spans.csv."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import traceconv
from traceconv import registry
from traceconv.errors import InputError
from traceconv.model.repairs import TIME_MAX
from traceconv.model.validate import validate

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "spans_csv.py"
SAMPLE = Path(__file__).parent / "data" / "spans_csv" / "tiny.spans.csv"


@pytest.fixture()
def spans_csv() -> Iterator[registry.FormatInfo]:
    sys.path.insert(0, str(EXAMPLE.parent))
    info = registry.register(registry.FormatInfo(
        "spans-csv", "example: one span a line", "spans_csv", (".spans.csv",), reads=True,
        origin="docs example"))
    try:
        yield info
    finally:
        del registry._FORMATS[registry._key(info.name)]
        sys.path.remove(str(EXAMPLE.parent))
        sys.modules.pop("spans_csv", None)


def test_the_example_reader_is_under_60_lines():
    assert len(EXAMPLE.read_text().splitlines()) < 60


def test_the_example_reader_reads_its_sample(spans_csv):
    trace = traceconv.load(SAMPLE)
    assert trace.frozen and validate(trace) == []
    assert trace.metadata.source_format == "spans-csv"
    assert [t.name for t in trace.tracks] == ["main", "worker"]
    got = [(s.name, s.track, s.start, s.dur) for s in trace.iter_slices()]
    assert got == [("step", 0, 0, 100_000), ("forward", 0, 10_000, 50_000),
                   ("load", 1, 5_000, 0),                      # ends before it starts
                   ("backward", 0, 60_000, TIME_MAX - 60_000)]  # µs × 1000 past int64
    assert {d.code: d.count for d in trace.diagnostics} == {
        "model.end_before_start": 1, "model.time_beyond_range": 1}


def test_the_example_reader_says_where_a_line_is_wrong(spans_csv, tmp_path):
    bad = tmp_path / "bad.spans.csv"
    bad.write_text("thread,name,start_us,end_us\nmain,step,0,100\nmain,oops,1,x\n")
    with pytest.raises(InputError, match="line 3"):
        traceconv.load(bad)


def test_the_example_reader_leaves_out_a_row_of_another_width(spans_csv, tmp_path):
    short = tmp_path / "short.spans.csv"
    short.write_text("thread,name,start_us,end_us\nmain,step,0,100\nmain,oops,1\n")
    trace = traceconv.load(short)
    assert [s.name for s in trace.iter_slices()] == ["step"]
    assert trace.diagnostics["csv.row_width_mismatch"].example == "line 3: 3 cells, header 4"
