"""A MIGraphX report's two tables of one run, the per-instruction lines and the Summary,
when a paste keeps only part of one; and Summary rows that state no calls.

Inputs (tests/data/migraphx/PROVENANCE.md): the DTK resnet50 tutorial's paste (2 instruction
lines, ``...``, a Summary with one ``...`` and full-width commas, a trailer), the Summary of
ROCm/AMDMIGraphX PR #1234 (no per-op counts, before ROCm 5.3) and that of PR #1287 (the
same Bert model, with counts). Every expected number is read off the files with plain
``re``, the ``Summary`` rows as the driver prints them: ``group: T ms[ / N = A ms], P%``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

import traceconv
from traceconv.cli.app import app

DATA = Path(__file__).parent / "data" / "migraphx"
DTK = DATA / "migraphx_dtk_resnet50_perf_summary_fullwidth_excerpt.md"
NO_COUNTS = DATA / "migraphx_pr1234_summary_no_counts.txt"
COUNTS = DATA / "migraphx_pr1287_summary_counts.txt"
NOTES = DATA / "migraphx_rocm7.0.2_perf_test_notes.md"
_ROW = re.compile(r"^(\S[^:\n]*(?:::[^:\n]*)*): ([\d.]+)ms(?: / (\d+) = [\d.]+ms)?\s*[,，]\s*"
                  r"[\d.]+%\s*$", re.M)


def summary_rows(path: Path) -> dict[str, tuple[float, int | None]]:
    """{group: (total ms, count or None)} of the file's Summary rows, a row the paste
    wrapped after ``=`` joined to its next line."""
    text = re.sub(r"=\n", "= ", path.read_text())
    return {m[1]: (float(m[2]), int(m[3]) if m[3] else None) for m in _ROW.finditer(text)}


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def chrome_slices(path: Path, tmp_path: Path) -> list[tuple[str, float]]:
    """(name, dur µs) of the complete events ``convert --to chrome`` writes, read as JSON."""
    out = tmp_path / "out.json"
    cli("convert", str(path), "--to", "chrome", "-o", str(out))
    events = json.loads(out.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    return [(e["name"], e["dur"]) for e in events if e.get("ph") == "X"]


def test_a_summary_beside_an_elided_listing_measures_the_run():
    """2 instruction lines, then ``...``, then the Summary: the Summary's 11 rows are the
    totals (39.695 ms, not the lines' 4.387 µs), and the note says so, with the totals the
    trailer states."""
    rows = summary_rows(DTK)
    assert len(rows) == 11 and rows["gpu::convolution"] == (22.6576, 49)
    data = json.loads(cli("summary", str(DTK), "--json"))
    assert abs(data["total_device_time"] - sum(t for t, _ in rows.values()) / 1e3) < 1e-9
    got = {r["name"]: (r["device_self_time"], r.get("calls")) for r in data["rows"]}
    # (the model keeps whole nanoseconds)
    assert got == {name: (round(ms * 1e6) / 1e9, count) for name, (ms, count) in rows.items()}
    assert "statistics table, not the timeline" in data["totals_note"]
    # (the trailer: "Total instructions time: 37.1238ms", "Total time: 32.7937ms")
    assert data["stated_totals_ns"] == {"instructions": 37_123_800, "end to end": 32_793_700}
    trace = traceconv.load(DTK)
    partial = [d for d in trace.diagnostics if d.code == "model.timeline_partial"]
    assert [d.count for d in partial] == [2]   # the 2 timed lines, kept on the timeline


def test_a_summary_beside_an_elided_listing_is_drawn(tmp_path):
    """Every Summary row is a slice as long as its total, beside the 2 timed lines."""
    drawn = chrome_slices(DTK, tmp_path)
    names = [name for name, _ in drawn]
    for name, (ms, _) in summary_rows(DTK).items():
        assert (name, round(ms * 1e3, 3)) in drawn
    assert names.count("hip::hip_allocate_memory") >= 2   # (a timed line and a Summary row)


def test_a_summary_beside_an_elided_listing_tops_the_report(tmp_path):
    out = tmp_path / "report.html"
    cli("report", str(DTK), "-o", str(out))
    assert "gpu::convolution" in out.read_text()   # (the Summary's first row, 22.6576 ms)


def test_a_whole_listing_keeps_its_timeline():
    """Without an elision the lines are the program: no partial mark, no table chosen."""
    trace = traceconv.load(NOTES)
    assert "model.timeline_partial" not in {d.code for d in trace.diagnostics}


def test_calls_a_summary_does_not_state_are_unknown():
    """PR #1234's Summary prints no counts: every row's calls are unknown, never 0."""
    rows = summary_rows(NO_COUNTS)
    assert len(rows) == 21 and {count for _, count in rows.values()} == {None}
    trace = traceconv.load(NO_COUNTS)
    assert [s.calls for s in trace.stats] == [None] * 21
    data = json.loads(cli("summary", str(NO_COUNTS), "--json"))
    assert len(data["rows"]) == 21 and not any("calls" in r for r in data["rows"])


def test_a_summary_without_counts_converts_like_one_with_them(tmp_path):
    """Both Summaries become 21 slices of their rows' totals; counts decide nothing."""
    for path in (NO_COUNTS, COUNTS):
        rows = summary_rows(path)
        drawn = chrome_slices(path, tmp_path)
        assert len(drawn) == len(rows) == 21
        assert sorted(drawn) == sorted((name, round(ms * 1e3, 3))
                                       for name, (ms, _) in rows.items())


def test_diff_claims_no_change_of_calls_against_unknown():
    """PR #1234 (no counts) against PR #1287 (counts): no op of both has a Δ calls; an op
    of PR #1287 alone has its own count (12 for contiguous_kernel, from the file)."""
    before, after = summary_rows(NO_COUNTS), summary_rows(COUNTS)
    data = json.loads(cli("diff", str(NO_COUNTS), str(COUNTS), "--json"))
    deltas = {row["name"]: row["delta"]["calls"] for row in data["rows"]}
    assert all(deltas[name] is None for name in before)
    only_after = set(after) - set(before)
    assert only_after == {"gpu::code_object::contiguous_kernel"}
    assert deltas["gpu::code_object::contiguous_kernel"] == after[
        "gpu::code_object::contiguous_kernel"][1] == 12
    text = cli("diff", str(NO_COUNTS), str(COUNTS), "--top", "0", "--wide")
    assert "+73" not in text   # (gpu::gemm's 73 calls, once claimed as a change from 0)


def test_an_elided_listing_counts_no_calls_for_a_summary_without_them(tmp_path):
    """Before ROCm 5.3 a whole listing's lines give the Summary its counts; after ``...``
    the lines are not all the calls, so the count stays unknown."""
    line = ("@1 = gpu::code_object[code_object=1,symbol_name=add_kernel,](@0,@0) "
            "-> float_type, {2}, {1}: 0.5ms, 50%\n")
    summary = "Summary:\ngpu::code_object::add_kernel: 3.5ms, 100%\n"
    whole, elided = tmp_path / "whole.txt", tmp_path / "elided.txt"
    whole.write_text(line + summary)
    elided.write_text(line + "...\n" + summary)
    counted = {s.section: s.calls for s in traceconv.load(whole).stats}
    assert counted["summary"] == 1
    unknown = {s.section: s.calls for s in traceconv.load(elided).stats}
    assert unknown["summary"] is None


def test_bookkeeping_instructions_are_no_kernels():
    """``@param`` is on the notes' critical path: other work, not a kernel; ``mlir_dot``
    (a ``gpu::code_object``) is the kernel."""
    data = json.loads(cli("critical-path", str(NOTES), "--json"))
    kinds = {e["name"]: e["kind"] for e in data["path"]}
    assert kinds["@param"] == "other" and kinds["mlir_dot"] == "kernel"


def test_memory_of_a_compiled_program_is_not_called_a_snapshot():
    text = cli("memory", str(NOTES))
    assert "snapshot" not in text and "history" not in text
    assert "no allocation time" in text


def test_trace_processor_reads_both_summaries_alike(tmp_path, trace_processor):
    """The real trace_processor finds the 21 rows of each Summary as 21 slices whose
    durations add up to the rows' totals (to whole ns), counts or not."""
    for path in (NO_COUNTS, COUNTS):
        out = tmp_path / f"{path.stem}.pftrace"
        cli("convert", str(path), "-o", str(out))
        trace_processor.load(out.read_bytes())
        rows = trace_processor.query("select count(*) as n, sum(dur) as total from slice")
        expected = sum(round(ms * 1e6) for ms, _ in summary_rows(path).values())
        assert (rows[0].n, rows[0].total) == (21, expected)
