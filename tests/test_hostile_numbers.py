"""Hostile numbers reach analyses only as the model checked them.

* Every analysis the command line offers (the fuzz worker's list: summary, op summary,
  advice, critical path, device views, memory, diff, report...) and the table export run on
  each hostile sample of ``tests/data/hostile``: each answers or refuses with a
  ``TraceconvError``, never another exception (an analysis that read a raw arg into an
  int64 array crashed on a ``[memory]`` size of 2**70).
* A negative count or time in a statistics row is counted by the builder's one rule
  (``model.negative_statistic``) for every statistics reader: a row of a real sample of
  each, its numbers made negative, reads with no negative value left and the rule counted.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

import traceconv
from benchmarks.fuzz import worker
from tests.test_hostile import MINIMISED  # (the reader of each minimised sample)
from traceconv import registry
from traceconv.analysis import frames
from traceconv.analysis.op_summary import op_summary
from traceconv.io import Source
from traceconv.model.repairs import STAT_LIMIT, TIME_MAX

DATA = Path(__file__).parent / "data"
HOSTILE = DATA / "hostile"
SAMPLES = sorted(p for p in HOSTILE.iterdir() if p.is_file() and p.suffix != ".md")


@pytest.mark.slow
@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_every_analysis_answers_or_refuses_on_hostile_numbers(path: Path, tmp_path: Path):
    target = MINIMISED[path.name][0] if path.name in MINIMISED else registry.detect(
        Source(str(path))).name
    outcome = worker.Runner(str(tmp_path), timeout=120).run(target, path.read_bytes())
    assert outcome.status in ("ok", "error"), (outcome.signature, outcome.detail)
    if outcome.status == "ok":
        trace = traceconv.load(path, format=target)
        for kind in ("slices", "instants", "counters", "memory", "ops"):
            frames.columns(trace, kind, args=True)


def test_memory_beyond_int64_is_no_block_and_no_self_memory():
    """One op with an alloc and a free of 2**70 bytes (hand-written): the pair is no block
    the model holds (counted), so the op has no self memory, as ``memory`` says."""
    trace = traceconv.load(HOSTILE / "kineto_memory_bytes_beyond_int64.json")
    assert len(trace.memory) == 0
    assert trace.diagnostics.count("model.memory_block_unreadable") >= 1
    (row,) = [r for r in op_summary(trace) if r.name == "aten::mm"]
    assert row.self_memory_bytes is None and row.host_total_ns == 100_000


def test_ids_beyond_int64_stay_in_the_args_of_the_table():
    """A correlation id of 2**70 is no id the table links (it is not int64), and stays, as
    written, in the row's args."""
    trace = traceconv.load(HOSTILE / "kineto_ids_beyond_int64.json")
    table = frames.columns(trace, "slices", args=True)
    by_name = {name: k for k, name in enumerate(table["name"].labels())}
    op = by_name["aten::mm"]
    assert table["correlation"][op] == -1
    assert table["args.correlation"][op] == 2**70


# A Kineto trace whose ids no int64 holds, written by hand: a pid and a tid that are JSON
# integers of 30 digits, a pid of 1e400 (a double reads it as infinity) and a pid of 5,000
# digits of text. Hand count: 2 integers past int64 (the double and the text are names,
# never numbers: a process's pid is an int).
HUGE = 123456789012345678901234567890
IDS_PAST_INT64 = ('{"schemaVersion": 1, "traceEvents": ['
                  f'{{"ph": "X", "name": "a", "pid": {HUGE}, "tid": 1, "ts": 1, "dur": 2}},'
                  f'{{"ph": "X", "name": "b", "pid": 1, "tid": {HUGE}, "ts": 3, "dur": 2}},'
                  '{"ph": "X", "name": "c", "pid": 1e400, "tid": 2, "ts": 5, "dur": 2},'
                  f'{{"ph": "X", "name": "d", "pid": "{"9" * 5000}", "tid": 3, "ts": 7,'
                  ' "dur": 2}]}')


@pytest.fixture
def ids_past_int64(tmp_path: Path) -> Path:
    path = tmp_path / "ids.pt.trace.json"
    path.write_text(IDS_PAST_INT64)
    return path


def test_ids_past_int64_are_not_known_and_counted(ids_past_int64: Path):
    """The builder's one rule: such a pid or tid is not known (its name keeps the number),
    counted once each; the table export holds -1 there (an OverflowError converting them to
    int64 before; the 5,000 digits: a malformed event)."""
    trace = traceconv.load(ids_past_int64)
    assert trace.diagnostics.count("model.id_beyond_int64") == 2
    assert {p.name: p.pid for p in trace.processes} == {
        f"pid {HUGE}": None, "pid 1": 1, "pid inf": None, "pid " + "9" * 5000: None}
    assert {t.name: t.tid for t in trace.tracks} == {
        "thread 1": 1, f"thread {HUGE}": None, "thread 2": 2, "thread 3": 3}
    table = trace.to_pandas()[["name", "pid", "tid"]].to_dict("records")
    assert table == [{"name": "a", "pid": -1, "tid": 1}, {"name": "b", "pid": 1, "tid": -1},
                     {"name": "c", "pid": -1, "tid": 2}, {"name": "d", "pid": -1, "tid": 3}]
    assert traceconv.validate(trace) == []


@pytest.mark.parametrize("command", [
    ["check", "{input}"], ["check", "--json", "{input}"], ["check", "--model", "{input}"],
    ["{input}", "-o", "{out}/out.pftrace"], ["{input}", "-o", "{out}/out.json"],
    ["info", "--json", "{input}"], ["overview", "{input}", "-o", "{out}/ov.pftrace"],
    ["split", "{input}", "--by", "time=2us", "-o", "{out}/pieces"]],
    ids=["check", "check_json", "check_model", "pftrace", "chrome", "info", "overview", "split"])
def test_ids_past_int64_read_in_every_command(ids_past_int64: Path, tmp_path: Path, command):
    from click.testing import CliRunner

    from traceconv.cli import app
    args = [part.format(input=ids_past_int64, out=tmp_path) for part in command]
    result = CliRunner().invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "internal error" not in result.output and "Traceback" not in result.output
    assert result.exit_code in (0, 1) and (result.exit_code == 0 or command[0] == "check")


# One real sample of each statistics reader, and the name of a row in it.
STATS_SAMPLES = [
    ("rocprof/dalg24__kokkos__results.stats.csv", "rocprof"),
    ("rocprof/shashankparsi__HIP_Programming__results.hip_stats.csv", "rocprof"),
    ("nsys_stats/nanomoe_stats_console_nsys2026.1.txt", "nsys-stats"),
    ("paddle/gpu_summary.txt", "paddle-summary"),
    ("paddle/gpu_after_report.txt", "paddle-report"),
    ("migraphx/rocm6.4_streams_output_arg_perf.txt", "migraphx"),
    ("trtexec/resnet_a100_fp16.engine.profile.json.gz", "trtexec"),
]
_NUMBER = re.compile(r"(?<![\w.\-])\d+(?:\.\d+)?(?![\w.])")


def _text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()


def _negated_row(text: str, name: str) -> str:
    """``text`` with every number on the first line that names ``name`` and holds a
    number besides the name made negative (the name's own digits kept)."""
    for match in re.finditer(re.escape(name), text):
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        end = len(text) if end < 0 else end
        line = text[start:end]
        spans = [m.span() for m in _NUMBER.finditer(line)
                 if not (match.start() - start <= m.start() < match.end() - start)]
        if spans:
            for lo, _ in reversed(spans):
                line = line[:lo] + "-" + line[lo:]
            return text[:start] + line + text[end:]
    raise AssertionError(f"no line names {name!r} with a number")


def _negative_fields(trace: traceconv.Trace) -> list[str]:
    return [f"{row.name}: {name}" for row in trace.stats
            for name in ("calls", "total_ns", "self_ns", "min_ns", "max_ns", "avg_ns",
                         "cpu_ns", "device_ns")
            if (value := getattr(row, name)) is not None and value < 0]


@pytest.mark.parametrize(("sample", "form"), STATS_SAMPLES, ids=[s for s, _ in STATS_SAMPLES])
def test_negative_statistics_follow_the_one_rule(tmp_path: Path, sample: str, form: str):
    path = DATA / sample
    original = traceconv.load(path, format=form)
    named = [row for row in original.stats if row.total_ns > 0 and len(row.name) > 3]
    assert named, "the sample has a timed row"
    mutated = tmp_path / path.name.removesuffix(".gz")
    mutated.write_text(_negated_row(_text(path), named[0].name))
    try:
        trace = traceconv.load(mutated, format=form)
    except traceconv.TraceconvError as exc:   # a reader may refuse the row: located, named
        assert exc.file
        return
    assert _negative_fields(trace) == []
    before = {d.code: d.count for d in original.diagnostics}
    after = {d.code: d.count for d in trace.diagnostics}
    assert trace.diagnostics.count("model.negative_statistic") > 0 or after != before, after


# A time cell of a real sample of each text reader that prints times: the sample, its
# reader, a text that only that cell's line holds, and the cell as printed.
TEXT_TIME_CELLS = [
    ("nsys_stats/nanomoe_stats_console_nsys2026.1.txt", "nsys-stats", "cudaMemcpyAsync",
     "2613668540"),
    ("paddle/gpu_summary.txt", "paddle-summary", "3.20 / 0.20", "3.20"),
    ("paddle/gpu_after_report.txt", "paddle-report", "58.08", "58.08"),
    ("migraphx/rocm6.4_streams_output_arg_perf.txt", "migraphx", "@0 = check_context",
     "0.00041"),
    ("migraphx/rocm6.4_streams_output_arg_perf.txt", "migraphx",
     "gpu::code_object::add_kernel: ", "0.0291"),
]


# what the builder moves, by hand, for each cell above: (times, statistics)
MOVED = {
    # the row's Total Time, and its cpu_ns (an API row's total is host time)
    "cudaMemcpyAsync": (0, 2),
    # the CPU total: total_ns, cpu_ns and self_ns (a row without children: its total), and
    # the end of the row's slice in the aggregate breakdown
    "3.20 / 0.20": (1, 3),
    # conv2d's Total: total_ns and self_ns (its total less its children's)
    "58.08": (0, 2),
    # the first instruction: its slice's end and the start and end of the 16 after it (33),
    # and its recomputed group's total, average and device time
    "@0 = check_context": (33, 3),
    # a Summary row's total: total_ns and device_ns (its printed average stays)
    "gpu::code_object::add_kernel: ": (0, 2),
}


def _beyond_cell(text: str, marker: str, cell: str, value: str) -> str:
    """``text`` with ``cell`` on the line that holds ``marker`` made ``value``."""
    lines = text.split("\n")
    (number,) = [k for k, line in enumerate(lines, 1) if marker in line]
    assert cell in lines[number - 1]
    lines[number - 1] = lines[number - 1].replace(cell, value, 1)
    return "\n".join(lines)


@pytest.mark.parametrize("value", ["1e308", "1e400"])   # (past int64 ns; past every float)
@pytest.mark.parametrize(("sample", "form", "marker", "cell"), TEXT_TIME_CELLS,
                         ids=[f"{form}:{marker.strip()}" for _, form, marker, _ in
                              TEXT_TIME_CELLS])
def test_a_time_past_int64_follows_the_builders_rule_in_every_text_reader(
        tmp_path: Path, sample: str, form: str, marker: str, cell: str, value: str):
    """The census of the text readers, one expectation for all: a time cell of ``1e308``
    (in ms, µs or ns, a time no trace holds) or ``1e400`` (infinity once read) keeps its
    row, every row of the sample read as before (nothing refused, nothing newly left out),
    and the builder moves the time to the edge of its range and counts it; nsys stats
    dropped the row, Paddle refused the file, MIGraphX read infinity as never timed."""
    mutated = tmp_path / Path(sample).name
    mutated.write_text(_beyond_cell(_text(DATA / sample), marker, cell, value))
    original = traceconv.load(DATA / sample, format=form)
    trace = traceconv.load(mutated, format=form)
    assert sorted(s.name for s in trace.stats) == sorted(s.name for s in original.stats)
    assert max(s.total_ns for s in trace.stats) <= STAT_LIMIT
    before = {d.code: d.count for d in original.diagnostics}
    new = {d.code for d in trace.diagnostics if d.count != before.get(d.code)}
    assert (trace.diagnostics.count("model.time_beyond_range"),
            trace.diagnostics.count("model.statistic_beyond_range")) == MOVED[marker]
    assert not [d.code for d in trace.diagnostics if d.code in new and d.kind == "dropped"]


# the diagnostics prefix of each text reader
PREFIX = {"nsys-stats": "nsys_stats", "paddle-summary": "paddle_summary",
          "paddle-report": "paddle_report", "migraphx": "migraphx"}


@pytest.mark.parametrize(("sample", "form", "marker", "cell"), TEXT_TIME_CELLS,
                         ids=[f"{form}:{marker.strip()}" for _, form, marker, _ in
                              TEXT_TIME_CELLS])
def test_a_nan_time_is_never_timed_in_every_text_reader(
        tmp_path: Path, sample: str, form: str, marker: str, cell: str):
    """The same census with ``nan``: the file is read (nsys stats dropped the row, Paddle's
    summary refused the file) and the one cell counted never timed, once, under the
    reader's ``never_timed``; no time is moved."""
    mutated = tmp_path / Path(sample).name
    mutated.write_text(_beyond_cell(_text(DATA / sample), marker, cell, "nan"))
    trace = traceconv.load(mutated, format=form)
    assert trace.diagnostics.count(f"{PREFIX[form]}.never_timed") == 1
    assert not {d.code for d in trace.diagnostics} & {"model.time_beyond_range",
                                                      "model.statistic_beyond_range"}


def test_a_migraphx_mean_past_int64_follows_the_builders_rule(tmp_path: Path):
    """A perf line whose mean is ``1e308ms`` (hand-made, three lines): its slice and the
    one after it are moved to the end of the time range (their starts and ends, 4 times;
    the first slice's start, 0, is in range: 3 moved) and counted, and so are the Summary
    total and the recomputed statistics past 2**62; the report is read whole."""
    path = tmp_path / "perf.txt"
    path.write_text("@0 = @literal{1} -> float_type, {1}, {0}: 0.5ms, 1%\n"
                    "@1 = @literal{2} -> float_type, {1}, {0}: 1e308ms, 99%\n"
                    "@2 = @literal{3} -> float_type, {1}, {0}: 0.5ms, 1%\n")
    trace = traceconv.load(path)
    starts = [trace.slice(k).start for k in range(len(trace.slices))]
    ends = [trace.slice(k).end for k in range(len(trace.slices))]
    assert (starts, ends) == ([0, 500_000, TIME_MAX], [500_000, TIME_MAX, TIME_MAX])
    assert trace.diagnostics.count("model.time_beyond_range") == 3
    (stat,) = [s for s in trace.stats if s.section == "recomputed"]
    assert (stat.calls, stat.total_ns) == (3, STAT_LIMIT)
    assert trace.diagnostics.count("model.statistic_beyond_range") == 3  # total, avg, device


def test_migraphx_times_whose_sum_passes_the_largest_float_are_a_statistic_past_range(
        tmp_path: Path):
    """Two perf lines of ``1e308ms`` (hand-made): each is a float, their sum (2e308) is
    none; the recomputed row's total is past 2**62 ns all the same, moved and counted."""
    path = tmp_path / "perf.txt"
    path.write_text("@0 = @literal{1} -> float_type, {1}, {0}: 1e308ms, 50%\n"
                    "@1 = @literal{2} -> float_type, {1}, {0}: 1e308ms, 50%\n")
    trace = traceconv.load(path)
    (stat,) = [s for s in trace.stats if s.section == "recomputed"]
    assert (stat.calls, stat.total_ns, stat.avg_ns) == (2, STAT_LIMIT, STAT_LIMIT)
    assert trace.diagnostics.count("model.statistic_beyond_range") == 3  # total, avg, device


@pytest.mark.parametrize(("line_start", "number"), [
    ("Total time: ", "120.5"), ("  Computation time", "80.25"), ("GpuMemcpy ", "6.0"),
    ("  conv2d ", "60.5"), ("    conv2d/compute", "0.55")])
def test_every_paddle_report_time_line_follows_the_builders_rule(
        tmp_path: Path, line_start: str, number: str):
    """The overhead, memcpy and event lines of an old Paddle report (refused at their line
    before): a time of ``1e308`` ms is read, the report's rows all kept, the time moved to
    the statistics' edge and counted."""
    sample = Path(__file__).parent.parent / "samples" / "paddle" / "report_gpu_before.txt"
    lines = sample.read_text().splitlines(keepends=True)
    at = next(i for i, text in enumerate(lines) if text.startswith(line_start))
    lines[at] = re.sub(rf"(?<=\s){re.escape(number)}(?=\s)", "1e308", lines[at], count=1)
    path = tmp_path / "report.txt"
    path.write_text("".join(lines))
    original, trace = (traceconv.load(p, format="paddle-report") for p in (sample, path))
    assert [s.name for s in trace.stats] == [s.name for s in original.stats]
    assert STAT_LIMIT in {getattr(s, f) for s in trace.stats
                          for f in ("total_ns", "max_ns")}   # (0.55: a Max. cell)
    assert trace.diagnostics.count("model.statistic_beyond_range") >= 1
