"""``traceconv check`` of inputs that are not Chrome or Perfetto files (issue 23, class 5).

A MIGraphX report, a memory_flow.svg or a Paddle report cut in the middle is read, and the
cut (its reader's finding of severity ``error``) makes ``check`` fail: exit 1 and the
report form of ``check`` (``NAME: FORMAT, N errors``, the counts, the errors table). The
same files uncut pass. The cut places are chosen by hand from the files' text.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from cli_errors import one_error_line, run

import traceconv

SAMPLES = Path(__file__).parent.parent / "samples"
MIGRAPHX_REPORT = SAMPLES / "migraphx" / "perf_simple_graph_rocm4.txt"
PADDLE_REPORT = SAMPLES / "paddle" / "report_gpu_after.txt"
MEMFLOW_SVG = Path(__file__).parent / "data" / "megengine" / "infer_traced_memory_flow.svg"


def _cut_after(source: Path, marker: str, more_lines: int, tmp_path: Path,
               name: str | None = None, keep: int = 25) -> Path:
    """``source`` up to ``more_lines`` lines after the first line starting with ``marker``,
    then ``keep`` characters of the next line."""
    lines = source.read_text().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if line.startswith(marker))
    kept = lines[:first + more_lines]
    cut = tmp_path / (name or source.name)
    cut.write_text("".join(kept) + lines[first + more_lines][:keep])
    return cut


def test_a_migraphx_report_cut_among_its_timed_lines_fails_check(tmp_path: Path):
    cut = _cut_after(MIGRAPHX_REPORT, "Running performance report", 6, tmp_path, "cut.txt")
    result = run("check", str(cut), "--wide")
    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[0] == f"{cut}: migraphx, 1 errors"
    assert "migraphx.report_truncated" in result.stdout


def test_a_memory_flow_svg_cut_midway_fails_check(tmp_path: Path):
    data = MEMFLOW_SVG.read_bytes()
    cut = tmp_path / "memory_flow.svg"
    cut.write_bytes(data[:len(data) // 2])
    result = run("check", str(cut), "--json")
    assert result.exit_code == 1, result.output
    report = orjson.loads(result.stdout)
    assert (report["ok"], report["format"]) == (False, "megengine-memflow-svg")
    assert [e["code"] for e in report["errors"]] == ["megengine_memflow.truncated"]
    assert report["counts"]["memory_blocks"] > 0


def test_a_paddle_report_cut_inside_its_event_table_fails_check(tmp_path: Path):
    # the Event Summary's header and 3 rows, then the fourth cut after its Total column
    # ("    conv2d/compute    200    55.68")
    cut = _cut_after(PADDLE_REPORT, "Event  ", 3, tmp_path, keep=62)
    result = run("check", str(cut), "--json")
    assert result.exit_code == 1, result.output
    report = orjson.loads(result.stdout)
    # (the cut row, and the table the file stops inside: formats/stray_lines.py)
    assert sorted(e["code"] for e in report["errors"]) == [
        "paddle_report.cut_row", "paddle_report.table_cut"]
    assert report["format"] == "paddle-report"


def test_uncut_inputs_pass_check():
    for path, name in ((MIGRAPHX_REPORT, "migraphx"), (PADDLE_REPORT, "paddle-report"),
                       (MEMFLOW_SVG, "megengine-memflow-svg")):
        result = run("check", str(path), "--wide")
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines()[0] == f"{path}: {name}, OK"


def test_the_api_check_reads_any_input(tmp_path: Path):
    cut = _cut_after(MIGRAPHX_REPORT, "Summary:", 2, tmp_path)
    report = traceconv.check(cut)
    assert not report.ok and report.errors[0]["code"] == "migraphx.report_truncated"
    # the counts are those of the trace the reader made
    assert report.counts["slices"] == traceconv.load(cut).counts()["slices"]


def test_check_of_a_format_traceconv_only_writes_is_one_error_line(tmp_path: Path):
    path = tmp_path / "t.summary.txt"
    path.write_text("op  calls\n")
    one_error_line(run("check", str(path), "--format", "summary"), "cannot check summary")


def test_chrome_inputs_keep_the_viewer_check():
    report = traceconv.check(SAMPLES / "torch" / "cnn_step5.pt.trace.json")
    assert report.format == "chrome" and [e["code"] for e in report.errors] == [
        "overlapping_slice"]
