"""Text reports at scale: reading a larger log needs proportionally more memory, not more
per line (issue 26: a 50 MB MIGraphX perf log once took 35 bytes of memory per byte).

Peaks are Python allocations (tracemalloc) while reading logs grown from the bundled
samples 4× and 16× (``benchmarks/text_logs.py``); no time is measured. The benchmark with
the 50 MB row and the RSS figures is ``benchmarks/bench_text.py``.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest

import traceconv
from benchmarks import text_logs
from traceconv.formats import migraphx
from traceconv.formats.migraphx.document import parse_document
from traceconv.model.builder import VALIDATE_ENV
from traceconv.model.graph import OP, TENSOR, count_kind
from traceconv.model.lazy_graph import is_unfilled

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def as_users_read(monkeypatch):
    """Reads here measure what a user's read costs: without the suite's full validation at
    build, which walks (and so makes) the lazy op graph; the other MIGraphX tests validate
    it."""
    monkeypatch.delenv(VALIDATE_ENV, raising=False)
FAMILIES = {
    "migraphx perf log": (text_logs.migraphx_perf_log, "migraphx"),
    "migraphx program printout": (text_logs.migraphx_listing, "migraphx"),
    "migraphx trace eval": (text_logs.migraphx_trace_eval, "migraphx"),
    "paddle reports": (text_logs.paddle_report_log, "paddle-report"),
    "paddle summaries": (text_logs.paddle_summary_log, "paddle-summary"),
}
# Python allocations per input byte at the peak, with room: the MIGraphX reader needs about
# 7 for a perf log and 14.6 for a program printout (it needed 33 before issue 26), of which
# 12.4 is what the trace keeps (the instructions its op graph is made from on first use);
# Paddle's about 20 and 15.
BYTES_PER_BYTE = {"migraphx": 16, "paddle-report": 30, "paddle-summary": 25}


# A read of the same file first: imports, first-use caches and process-wide tables (interned
# names, the bounded shape cache) are grown once, and what earlier tests left in this
# process cannot move the peak.
_MEASURE = """
import sys, traceconv
from traced_peak import traced_peak
path, format = sys.argv[1:]
traceconv.load(path, format=format)
print(traced_peak(lambda: traceconv.load(path, format=format))[1])
"""


def peak_while_reading(path: Path, format: str) -> int:
    """The peak of Python allocations of one read of ``path``, in a process of its own."""
    env = {k: v for k, v in os.environ.items() if k != VALIDATE_ENV}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), str(ROOT / "tests"), env.get("PYTHONPATH", "")])
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(path), format], env=env,
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("family", FAMILIES)
def test_memory_grows_linearly_with_the_log(family, tmp_path):
    generate, format = FAMILIES[family]
    paths = {times: tmp_path / f"x{times}.txt" for times in (4, 16)}
    for times, path in paths.items():
        path.write_text(generate(times))
    peaks = {times: peak_while_reading(path, format) for times, path in paths.items()}
    sizes = {times: path.stat().st_size for times, path in paths.items()}
    # 4× the input: at most 4× the memory, with 15% for what does not grow in steps
    assert peaks[16] <= 4.6 * peaks[4], peaks
    assert peaks[16] <= BYTES_PER_BYTE[format] * sizes[16], (peaks, sizes)


def test_the_graph_is_made_when_first_used_and_is_the_same(tmp_path):
    """``info`` counts ops and tensors without making the graph; the graph made later is a
    DiGraph with those counts, frozen like the rest of the trace; a pickle of a graph
    not made yet holds the made graph."""
    path = tmp_path / "perf.txt"
    path.write_text(text_logs.migraphx_perf_log(2))
    trace = traceconv.load(path)
    graph = trace.graph
    counts = trace.counts()
    assert is_unfilled(graph)   # counting did not make it
    assert (count_kind(graph, OP), count_kind(graph, TENSOR)) == (
        counts["ops"], counts["tensors"])
    assert graph.number_of_nodes() == counts["ops"] + counts["tensors"]
    # (a frozen trace's graph is of networkx's class made read-only: no lazy one any more)
    assert type(graph).__bases__ == (nx.DiGraph,) and nx.is_frozen(graph)
    assert (count_kind(graph, OP), count_kind(graph, TENSOR)) == (
        counts["ops"], counts["tensors"])
    # an independent count: ops are the timed lines and the @return; tensors all but it
    timed = sum(1 for line in path.read_text().splitlines() if line.endswith("%")
                and " = " in line and "ms / " not in line)   # (Summary rows: "/ n = avg")
    assert counts["ops"] == timed + 1 and counts["tensors"] == timed
    unmade = migraphx.build(parse_document(path.read_text())).graph
    assert type(unmade).__name__ == "LazyDiGraph"
    again = pickle.loads(pickle.dumps(unmade))
    assert type(again) is nx.DiGraph and list(again.edges) == list(graph.edges)


@pytest.mark.parametrize("path", sorted(p for p in (ROOT / "tests" / "data" / "migraphx").glob("*")
                                        if p.name != "PROVENANCE.md")
                         + sorted((ROOT / "samples" / "migraphx").glob("*")),
                         ids=lambda p: p.name[:40])
def test_counts_before_the_graph_is_made_are_its_counts(path):
    trace = traceconv.load(path, format="migraphx")
    before = trace.counts()
    nodes = list(trace.graph.nodes(data="kind"))   # makes it
    assert (before["ops"], before["tensors"]) == (
        sum(k == OP for _, k in nodes), sum(k == TENSOR for _, k in nodes))
