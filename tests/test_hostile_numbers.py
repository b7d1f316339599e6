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
