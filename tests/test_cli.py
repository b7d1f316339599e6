"""The command-line contract of DESIGN.md: convert, info --json, formats, errors."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from traceconv.cli import app

CNN = Path(__file__).parent.parent / "samples" / "torch" / "cnn_step5.pt.trace.json"
INFO_KEYS = {"tracks", "slices", "instants", "counter_samples", "flows", "ops", "tensors",
             "memory_blocks", "stat_rows", "span_ns"}


def run(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def test_info_json_contract():
    result = run("info", str(CNN), "--json")
    assert result.exit_code == 0
    info = orjson.loads(result.stdout)
    assert info.keys() >= INFO_KEYS and all(isinstance(info[k], int) for k in INFO_KEYS)
    assert info["format"] == "chrome"
    assert (info["slices"], info["instants"], info["flows"], info["memory_blocks"]) == (
        2725, 570, 48, 291)
    assert info["span_ns"] > 0
    # (by hand from the [memory] events: 14 allocations alive at the end, none on an
    # address still open, no free of nothing; a clean read has nothing to report)
    assert info["diagnostics"] == []


def test_convert_default_name_and_gzip(tmp_path: Path):
    src = tmp_path / "cnn.pt.trace.json"
    shutil.copy(CNN, src)
    assert run(str(src), "--to", "perfetto").exit_code == 0
    assert (tmp_path / "cnn.pftrace").stat().st_size > 100_000
    result = run("convert", str(src), "-o", str(tmp_path / "back.json.gz"))
    assert result.exit_code == 0
    back = orjson.loads(gzip.decompress((tmp_path / "back.json.gz").read_bytes()))
    phases = [e["ph"] for e in back["traceEvents"]]
    assert phases.count("X") == 2725 and phases.count("i") == 570
    assert phases.count("s") == phases.count("f") == 48
    # ts are µs relative to a base near the data (exact to the ns), absolute times kept
    base = back["baseTimeNanoseconds"]
    step = next(e for e in back["traceEvents"] if e.get("name") == "ProfilerStep#2")
    source = next(e for e in orjson.loads(CNN.read_bytes())["traceEvents"]
                  if e.get("name") == "ProfilerStep#2")
    assert base % 1_000_000 == 0 and step["ts"] < 1e6
    assert base + round(step["ts"] * 1000) == 1790857026000000000 + round(source["ts"] * 1000)


def test_convert_to_stdout():
    result = run(str(CNN), "--to", "chrome", "-o", "-")
    assert result.exit_code == 0
    assert orjson.loads(result.stdout_bytes)["traceEvents"]


def test_merge_several_inputs(tmp_path: Path, data: Path):
    ranks = [str(data / "torch" / f"rank-{r}.pt.trace.json") for r in range(2)]
    out = tmp_path / "ranks.json"
    assert run(*ranks, "-o", str(out)).exit_code == 0
    names = {e["args"]["name"] for e in orjson.loads(out.read_bytes())["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    assert {n.split(":")[0] for n in names} == {"rank 0", "rank 1"}


def test_formats_lists_readers_and_writers():
    result = run("formats")
    assert result.exit_code == 0
    for name in ("chrome", "perfetto", "megengine", "migraphx", "svg"):
        assert name in result.stdout


@pytest.mark.parametrize(("content", "where"), [
    (b'{"traceEvents": [\n{"ph": "X", "ts": }]}', ":2:"),
    (b"\x00\x01 not a trace", "cannot tell the format"),
])
def test_bad_input_one_line_exit_1_no_output(tmp_path: Path, content: bytes, where: str):
    src = tmp_path / "bad.json"
    src.write_bytes(content)
    out = tmp_path / "out.pftrace"
    result = run(str(src), "-o", str(out))
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("traceconv: error: ") and where in lines[0]
    assert str(src) in lines[0]
    assert not out.exists() and not list(tmp_path.glob(".traceconv-*"))


def test_missing_file_and_usage_errors(tmp_path: Path):
    result = run("info", str(tmp_path / "nope.json"))
    assert result.exit_code == 1 and "No such file" in result.stderr
    assert CliRunner().invoke(app, ["convert"]).exit_code == 2
    result = run(str(CNN))
    assert result.exit_code == 1 and "--to" in result.stderr


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.dictionaries(
    st.sampled_from(["ph", "ts", "dur", "pid", "tid", "name", "cat", "id", "s", "bp", "args"]),
    st.one_of(st.sampled_from(list("XBEiCbesftMNQ")), st.integers(-5, 10**6),
              st.floats(allow_nan=False, allow_infinity=False, width=32), st.text(max_size=5),
              st.none(), st.dictionaries(st.text(max_size=3), st.integers(-10, 10), max_size=2))),
    max_size=40))
def test_malformed_events_never_crash(tmp_path: Path, events: list[dict]):
    """Random events: conversion exits 0 with counted diagnostics, or 1 with one line."""
    src = tmp_path / "fuzz.json"
    src.write_bytes(orjson.dumps({"traceEvents": events}))
    result = CliRunner().invoke(app, ["info", str(src), "--json", "--format", "chrome"])
    assert result.exit_code in (0, 1), result.output
    if result.exit_code == 0:
        assert orjson.loads(result.stdout)["slices"] <= len(events)
    result = CliRunner().invoke(app, [str(src), "--format", "chrome", "-o",
                                      str(tmp_path / "fuzz.pftrace")])
    # (no events at all, or none that reads: one error line, exit 1 — an empty export is
    # not a trace)
    assert result.exit_code in ((0, 1) if events else (1,)), result.output
    if result.exit_code == 1:
        (line,) = result.output.strip().splitlines()
        assert ("nothing read" if events else "no trace events") in line


def test_chrome_round_trip_keeps_every_event(tmp_path: Path):
    """Chrome → model → Chrome → model: the same counts, no counter track twice."""
    out = tmp_path / "round.json"
    assert run(str(CNN), "-o", str(out)).exit_code == 0
    first = orjson.loads(run("info", str(CNN), "--json").stdout)
    again = orjson.loads(run("info", str(out), "--json").stdout)
    for key in ("slices", "instants", "counter_samples", "flows", "memory_blocks", "span_ns"):
        assert again[key] == first[key], key


@pytest.mark.parametrize(("command", "why", "empty"), [
    ("memory", "no memory blocks in this trace (its reader found no allocations); see "
               "`traceconv info`", ("devices", [])),
    ("critical-path", "no critical path: the input holds statistics, not a timeline "
                      "(see `traceconv info`)", ("path", []))])
def test_nothing_to_show_is_one_line_not_an_empty_table(command, why, empty):
    """A summary table holds per-op statistics only: a command with nothing to show says
    why (as memflow does), naming the file, and fails alike with --json, whose object
    still comes, the reason beside what is empty."""
    table = "samples/paddle/summary_small_2.6.2.txt"
    result = CliRunner().invoke(app, [command, table])
    assert result.exit_code == 1
    assert result.output.strip() == f"traceconv: error: {table}: {why}"
    as_json = CliRunner().invoke(app, [command, table, "--json"])
    assert as_json.exit_code == 1
    assert as_json.stderr.strip() == f"traceconv: error: {table}: {why}"
    data = orjson.loads(as_json.stdout)
    assert data[empty[0]] == empty[1] and data["why_empty"] == why


def test_critical_path_without_a_path_highlights_nothing(tmp_path: Path):
    """(--highlight of no path: no trace written, as the text run writes none)"""
    table = "samples/paddle/summary_small_2.6.2.txt"
    target = tmp_path / "path.pftrace"
    result = CliRunner().invoke(app, ["critical-path", table, "--json", "--highlight",
                                      "-o", str(target)])
    assert result.exit_code == 1 and not target.exists()


def test_device_views_with_no_rows_say_so():
    """No device work (a summary table): each view asked for is one line saying what is
    missing, not a table of headers."""
    result = CliRunner().invoke(app, ["summary", "samples/paddle/summary_small_2.6.2.txt",
                                      "--streams", "--by-annotation", "--sequences", "3"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "idle per stream (over the run: first work to last): no device stream in this " \
        "trace" in " ".join(line.strip() for line in lines)
    assert "GPU time per annotation: no kernel runs under an annotation" in lines
    assert "most frequent kernel sequences: no kernel sequence repeats" in lines
    assert not any(line.startswith("name ") for line in lines)   # (no header of a table)
