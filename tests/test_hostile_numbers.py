"""Hostile numbers reach analyses only as the model checked them.

* Every analysis the command line offers (the fuzz worker's list: summary, op summary,
  advice, critical path, device views, memory, diff, report...) and the table export run on
  each hostile sample of ``tests/data/hostile``: each answers or refuses with a
  ``TraceconvError``, never another exception (an analysis that read a raw arg into an
  int64 array crashed on a ``[memory]`` size of 2**70).
"""

from __future__ import annotations

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
