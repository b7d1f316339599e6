"""Several runs in one file: taking run N keeps run N in every table of the model, and each
run's totals are its own (expected values: the files' own stated totals and plain regex
sums over their lines)."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from traceconv.analysis.runs import runs, select_run, split_runs
from traceconv.cli import app
from traceconv.model.validate import validate
from traceconv.presentation.summary import summary_data

DATA = Path(__file__).parent / "data"
MIGRAPHX_TWO_RUNS = DATA / "migraphx" / "rocm7.2_perf_test_two_runs.txt"
PADDLE_SUMMARY = Path(__file__).parent.parent / "samples" / "paddle" / "summary_small_2.6.2.txt"
INSTRUCTION = re.compile(r"^(\S+) = ([^\s\[(]+).* -> .*: ([0-9.]+)ms, \d+%$")
STATED = re.compile(r"^Total instructions time: ([0-9.]+)ms$")


def _migraphx_runs_by_hand() -> list[dict]:
    """Per run: the instruction lines' times summed (ns) and the stated total (ns)."""
    found: list[dict] = []
    for line in MIGRAPHX_TWO_RUNS.read_text().splitlines():
        if line.startswith("Running performance report"):
            found.append({"sum": Decimal(0), "timed": 0, "gemm": Decimal(0)})
        elif found and (m := INSTRUCTION.match(line)):
            found[-1]["sum"] += Decimal(m[3]) * 1_000_000
            found[-1]["timed"] += 1
            if m[2] == "gpu::gemm":
                found[-1]["gemm"] += Decimal(m[3]) * 1_000_000
        elif found and (m := STATED.match(line)):
            found[-1]["stated"] = Decimal(m[1]) * 1_000_000
    return found


def test_each_migraphx_run_holds_only_its_own_timings():
    trace = traceconv.load(MIGRAPHX_TWO_RUNS)
    by_hand = _migraphx_runs_by_hand()
    assert len(runs(trace)) == len(by_hand) == 2
    for number, expected in enumerate(by_hand, 1):
        run = select_run(trace, number)
        total_ns = Decimal(str(summary_data(run)["total_device_time"])) * 1_000_000_000
        assert abs(total_ns - expected["sum"]) <= 1          # ns rounding of each line
        assert abs(total_ns - expected["stated"]) <= 10      # the file's own 9.75 / 9.69 us
        label = f"program {number}"
        assert all(p.name.endswith(label) for p in run.processes)
        assert {b.device for b in run.memory} == {f"MIGraphX {label}"}
        assert all(f"/{label}/" in node for node in run.graph.nodes)
        ops = [n for n, kind in run.graph.nodes(data="kind") if kind == "op"]
        assert sum(bool(run.graph.nodes[n].get("slices")) for n in ops) == expected["timed"]
        assert all(s.extra["run"] == label for s in run.stats)
        assert validate(run) == []


def test_summary_json_splits_every_non_timeline_view():
    data = summary_data(traceconv.load(MIGRAPHX_TWO_RUNS))
    assert [r["run"] for r in data["runs"]] == [1, 2]
    assert [sum(s["blocks"] for s in r["allocation_sites"]) for r in data["runs"]] == [3, 3]


def test_run_one_of_a_single_run_trace_is_the_trace():
    trace = traceconv.load(PADDLE_SUMMARY)
    assert runs(trace) == [] and split_runs(trace) == []
    assert select_run(trace, 1) is trace
    with pytest.raises(ValueError, match="run 2 of 1"):
        select_run(trace, 2)


def test_a_paddle_summary_printed_twice_is_two_runs(tmp_path):
    text = PADDLE_SUMMARY.read_text()
    twice = tmp_path / "summary_twice.txt"
    twice.write_text(text + text)
    step = re.search(r"^ProfileStep\s+(\d+)\s+([0-9.]+) / ", text, re.M)
    assert step is not None
    once, both = traceconv.load(PADDLE_SUMMARY), traceconv.load(twice)
    assert runs(both) == ["run 1", "run 2"]
    for label, run in split_runs(both):
        steps = [s for s in run.stats if s.section == "model" and s.name == "ProfileStep"]
        assert [(s.calls, s.cpu_ns) for s in steps] == [
            (int(step[1]), int(Decimal(step[2]) * 1_000_000))]
        assert len(run.stats) == len(once.stats)
        assert summary_data(run)["total_host_time"] == summary_data(once)["total_host_time"]
        assert validate(run) == []
        assert all(p.name.endswith(label) for p in run.processes)


def test_taking_a_run_leaves_the_file_unchanged():
    trace = traceconv.load(MIGRAPHX_TWO_RUNS)
    counts = (len(trace.slices), len(trace.stats), len(trace.memory),
              trace.graph.number_of_nodes())
    select_run(trace, 2)
    assert counts == (len(trace.slices), len(trace.stats), len(trace.memory),
                      trace.graph.number_of_nodes())


def _ns_text(ns: Decimal) -> str:
    return f"{int(ns.to_integral_value()):,}"


def test_report_shows_each_run_apart():
    by_hand = _migraphx_runs_by_hand()
    page = CliRunner().invoke(app, ["report", str(MIGRAPHX_TWO_RUNS), "-o", "-"]).output
    headings = re.findall(r"<h2>(.*?)</h2>", page)
    for number, expected in enumerate(by_hand, 1):
        start = headings.index(f"Top ops and kernels, run {number} of 2 (program {number})")
        section = page.split("<h2>")[start + 1]
        gemm = re.search(r"<td[^>]*>gpu::gemm</td><td[^>]*>kernel</td><td[^>]*>1</td>"
                         r"<td[^>]*>([0-9,]+)</td>", section)
        assert gemm is not None and gemm[1] == _ns_text(expected["gemm"])


def test_critical_path_walks_each_run_apart():
    result = CliRunner().invoke(app, ["critical-path", str(MIGRAPHX_TWO_RUNS), "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)["runs"]
    assert [r["span_ns"] for r in found] == [int(r["sum"]) for r in _migraphx_runs_by_hand()]


def test_summary_prints_each_runs_allocation_sites():
    result = CliRunner().invoke(app, ["summary", str(MIGRAPHX_TWO_RUNS)])
    assert result.exit_code == 0, result.output
    # each run: parameters a (4x5) and b (5x3) and the 4x3 output, float32 (by hand)
    for number in (1, 2):
        block = result.output.split(f"top allocation sites, run {number} of 2")[1]
        assert re.search(r"@param\s+140\s", block) and re.search(r"gpu::gemm\s+48\s", block)


PADDLE_TWO_REPORTS = DATA / "paddle" / "legacy_twice_combined_log.txt"
EVENT_ROW = re.compile(r"^ *\S+( +[0-9.e+-]+){6} *$")


def _paddle_windows(count: int) -> str:
    """The log's first report printed ``count`` times, window k's ``feed`` row called
    100 + k times (so each window's rows can be told apart)."""
    lines = PADDLE_TWO_REPORTS.read_text().splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if "Profiling Report" in line)
    end = next(i for i, line in enumerate(lines) if line.startswith("Epoch") and i > start)
    block = "".join(lines[start:end])
    feed = re.search(r"\n +feed +(8 +)", block)
    assert feed is not None
    return "".join(lines[:start]) + "".join(
        block.replace(feed[0], feed[0].replace(feed[1], f"{100 + k:<{len(feed[1])}}"))
        for k in range(count))


def test_each_paddle_window_holds_only_its_own_breakdown(tmp_path):
    """Each window's report is drawn as its own breakdown process, which goes with its
    run (a process label, not its name): split into N runs, run k holds one process,
    window k's, with as many slices as its Event Summary has rows; and splitting N runs
    stays linear (each run's tables hold one window, not all N)."""
    count = 7
    path = tmp_path / "seven_windows.txt"
    path.write_text(_paddle_windows(count))
    block_rows = sum(bool(EVENT_ROW.match(line)) for line in
                     path.read_text().split("Memory Profiling Report")[0].splitlines())
    assert block_rows == 22   # the Event Summary's lines, counted by eye in the file
    trace = traceconv.load(path)
    apart = split_runs(trace)
    assert len(apart) == count
    for k, (_, run) in enumerate(apart):
        assert [p.name for p in run.processes] == [
            f"Paddle report {k + 1} (window {k + 1}, Place: CPU, per thread): "
            "aggregate breakdown (not a timeline)"]
        assert len(run.slices) == block_rows
        feeds = [s for s in run.iter_slices() if s.name == "feed"]
        assert [s.args["calls"] for s in feeds] == [100 + k]
        assert {s.calls for s in run.stats if s.name == "feed"} == {100 + k}
        assert validate(run) == []
