"""``nsys stats`` NVTX trace CSV reports (``.csv.xz`` as nsys-jax writes them).

Expected counts come from the decompressed text itself (lines, and rows per PID/TID with
the standard ``csv`` module), not from the reader.
"""

from __future__ import annotations

import csv
import io
import lzma
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from traceconv.cli import app

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "nsys"
PAX = SAMPLES / "pax_fsdp4_proc0.nvtx_pushpop_trace.csv.xz"


def per_thread(path: Path) -> tuple[int, Counter[tuple[int, int]]]:
    text = lzma.decompress(path.read_bytes())
    rows = list(csv.DictReader(io.StringIO(text.decode())))
    return text.count(b"\n") - 1, Counter((int(r["PID"]), int(r["TID"])) for r in rows)


def check(path: Path) -> None:
    lines, threads = per_thread(path)
    trace = traceconv.load(path)
    assert trace.metadata.source_format == "nsys-stats"
    assert len(trace.slices) == lines == sum(threads.values())
    got = Counter((trace.processes[trace.tracks[s.track].process].pid, trace.tracks[s.track].tid)
                  for s in trace.iter_slices())
    assert got == threads


def test_bundled_report_counts():
    check(PAX)
    assert len(traceconv.load(PAX).slices) == 27891   # PROVENANCE_formats.md: 27,892 lines


def test_shared_reports(shared_samples: Path):
    reports = sorted((shared_samples / "nsys").glob("*.csv.xz"))
    assert len(reports) == 2
    for path in reports:
        check(path)


@pytest.mark.slow
def test_plain_csv_and_detection_by_content(tmp_path: Path):
    plain = tmp_path / "report"   # no extension
    plain.write_bytes(lzma.decompress(PAX.read_bytes()))
    assert len(traceconv.load(plain).slices) == 27891


def test_xz_bounded_by_the_size_limit():
    with pytest.raises(traceconv.errors.InputError, match="limit"):
        traceconv.load(PAX, max_bytes=1 << 20)


def test_cut_xz_is_one_clear_error(tmp_path: Path):
    cut = tmp_path / "cut.csv.xz"
    cut.write_bytes(PAX.read_bytes()[:100_000])
    result = CliRunner().invoke(app, ["info", str(cut)])
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(cut) in lines[0] and "Traceback" not in result.output


@pytest.mark.integration
def test_pftrace_loads_in_trace_processor(trace_processor):
    from tests.test_trace_processor import assert_loads_completely

    assert_loads_completely(trace_processor, traceconv.load(PAX))
