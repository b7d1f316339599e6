"""``advise`` on a merged trace judges each rank on its own and names it. Over the job, the
four CPU ranks of the bundled DDP sample read as one: their collectives' union over their
steps' union, 69.60 ms of 74.37 ms (93.6 %), a finding true for no rank and naming none.
Each rank's share is counted here by hand from its raw JSON: the ``gloo:`` and ``c10d::``
calls (its collectives; a CPU run has no kernel to hide them) inside its
``ProfilerStep#N`` windows, over those windows."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from click.testing import CliRunner

import traceconv
from tests.test_rank_windows import _union
from traceconv.analysis.advise import advise
from traceconv.analysis.merge import merge
from traceconv.analysis.rank_parts import split_inputs
from traceconv.cli import app

RANKS = [Path(__file__).parent / "data" / "torch" / f"rank-{r}.pt.trace.json" for r in range(4)]


def _exposed_by_hand(path: Path) -> tuple[int, int]:
    """(ns of collectives inside the steps, ns of the steps) from the raw events."""
    events = json.loads(path.read_text(), parse_float=Decimal)["traceEvents"]
    spans = [(e["name"], int(e["ts"] * 1000), int((e["ts"] + e["dur"]) * 1000))
             for e in events if e.get("ph") == "X" and "dur" in e]
    steps = _union([(a, b) for name, a, b in spans if name.startswith("ProfilerStep#")])
    calls = _union([(a, b) for name, a, b in spans if name.startswith(("gloo:", "c10d::"))])
    inside = sum(max(0, min(b, d) - max(a, c)) for a, b in calls for c, d in steps)
    return inside, sum(b - a for a, b in steps)


def test_each_rank_of_a_merged_trace_is_judged_and_named():
    merged = merge([traceconv.load(path) for path in RANKS])
    found = {f.trace: f for f in advise(merged).findings if f.rule == "exposed-communication"}
    assert sorted(found) == ["rank 0", "rank 1", "rank 2", "rank 3"]
    for rank, path in enumerate(RANKS):
        exposed, window = _exposed_by_hand(path)
        evidence = found[f"rank {rank}"].evidence
        assert (evidence["exposed_ns"], evidence["share"]) == (exposed, round(exposed / window, 4))


def test_a_merged_file_read_back_is_judged_rank_by_rank(tmp_path: Path):
    """Written out and read back, a merged trace numbers its processes anew: each rank is
    still its own (its label on its processes), as advising the four files apart finds."""
    merged = tmp_path / "job.json"
    assert CliRunner().invoke(app, [*map(str, RANKS), "-o", str(merged)]).exit_code == 0
    result = CliRunner().invoke(app, ["advise", str(merged), "--json"])
    apart = CliRunner().invoke(app, ["advise", *map(str, RANKS), "--json"])
    assert result.exit_code == apart.exit_code == 0, result.output
    shares = {f["trace"]: f["evidence"]["share"] for f in json.loads(result.stdout)["findings"]}
    assert shares == {f"rank {r}": f["evidence"]["share"] for r, f in enumerate(
        json.loads(apart.stdout)["findings"])}


def test_a_rank_taken_out_keeps_its_own_and_counts_the_rest():
    traces = [traceconv.load(path) for path in RANKS[:2]]
    (_, first), (_, second) = split_inputs(merge(traces))
    assert [len(part.slices) for part in (first, second)] == [len(t.slices) for t in traces]
    # what is left out of rank 0 is rank 1, whole, its flows too
    assert first.diagnostics.count("merge.other_inputs") == sum(
        len(getattr(traces[1], table)) for table in ("tracks", "slices", "instants", "counters",
                                                     "flows", "memory", "reservations", "stats"))
    assert (first.metadata.rank, first.metadata.source_file) == (0, "rank-0.pt.trace.json")
