"""Which input of a merged trace each process came from stays true when the trace is
written out and read back, or trimmed: it is told by the label merge puts on the
process's name, not by row ranges (Chrome JSON drops the processes without events, so a
read-back numbers them anew; the ranges then named the wrong ranks, and the straggler
table of the 4-rank job doubled, 10 rows to 20)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import traceconv
from traceconv.analysis.activity import input_of_process
from traceconv.analysis.merge import merge
from traceconv.analysis.stragglers import stragglers
from traceconv.analysis.trim import trim

RANKS = [Path(__file__).resolve().parent / "data" / "torch" / f"rank-{k}.pt.trace.json"
         for k in range(4)]
RANK = re.compile(r"^rank (\d+): ")


@pytest.fixture(scope="module")
def job() -> traceconv.Trace:
    return merge([traceconv.load(p) for p in RANKS])


def by_name(trace: traceconv.Trace) -> list[int]:
    """The rank each process's name says (hand rule: the ``rank N:`` prefix)."""
    return [int(RANK.match(p.name)[1]) for p in trace.processes]   # type: ignore[index]


@pytest.mark.parametrize("suffix", [".json", ".pftrace"])
def test_each_process_keeps_its_input_through_a_write_and_read(job, tmp_path, suffix):
    path = tmp_path / f"job{suffix}"
    traceconv.save(job, path)
    back = traceconv.load(path)
    assert input_of_process(back).tolist()[:-1] == by_name(back)
    assert stragglers(back) == stragglers(job)
    assert len(stragglers(job)) == 10


def test_a_trimmed_job_keeps_each_processs_input(job):
    cut = trim(job, tracks="rank [13]")   # two inputs' processes left, numbered anew
    assert sorted(set(by_name(cut))) == [1, 3] and len(cut.processes) < len(job.processes)
    assert input_of_process(cut).tolist()[:-1] == by_name(cut)
