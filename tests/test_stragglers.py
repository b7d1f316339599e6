"""The straggler table and the per-rank process groups of a merged multi-rank trace."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
from click.testing import CliRunner

import traceconv
from traceconv.analysis.stragglers import stragglers
from traceconv.cli import app

RANKS = [f"ddp_gloo_rank{r}.pt.trace.json.gz" for r in range(4)]


def raw_starts(path: Path, name: str) -> list[float]:
    """Independent reference: start times (µs) of the host ``name`` slices in the raw JSON."""
    doc = orjson.loads(gzip.decompress(path.read_bytes()))
    return sorted(e["ts"] for e in doc["traceEvents"]
                  if e.get("name") == name and e.get("cat") == "user_annotation")


def test_last_rank_per_collective_matches_the_raw_starts(samples: Path):
    paths = [samples / "torch" / name for name in RANKS]
    merged = traceconv.merge([traceconv.load(p) for p in paths], align="none")
    rows = [r for r in stragglers(merged) if r.collective == "gloo:all_reduce"]
    starts = [raw_starts(p, "gloo:all_reduce") for p in paths]   # one clock: comparable
    assert [r.index for r in rows] == [0, 1, 2]
    for row in rows:
        arrivals = sorted((s[row.index], rank) for rank, s in enumerate(starts))
        assert row.last_rank == f"rank {arrivals[-1][1]}"
        assert abs(row.late_by_ns - (arrivals[-1][0] - arrivals[-2][0]) * 1000) <= 2
        assert abs(row.spread_ns - (arrivals[-1][0] - arrivals[0][0]) * 1000) <= 2
        assert row.ranks == 4


def test_one_input_has_no_straggler_table(samples: Path):
    assert stragglers(traceconv.load(samples / "torch" / RANKS[0])) == []


def test_each_rank_is_one_labelled_group(samples: Path):
    merged = traceconv.merge([traceconv.load(samples / "torch" / n) for n in RANKS])
    order = sorted(merged.processes, key=lambda p: p.sort_index)
    ranks_in_order = [p.name.split(":")[0] for p in order]
    assert ranks_in_order == sorted(ranks_in_order)   # each rank's processes together
    gpu = next(p for p in merged.processes if p.name == "rank 2: GPU 0")
    assert gpu.labels[:2] == ["rank 2", "world size 4"] and gpu.kind.value == "device"


def test_summary_json_has_stragglers(samples: Path):
    paths = [str(samples / "torch" / n) for n in RANKS]
    result = CliRunner().invoke(app, ["summary", *paths, "--json"])
    assert result.exit_code == 0, result.output
    rows = orjson.loads(result.stdout)["stragglers"]
    assert len(rows) == 5 and {r["collective"] for r in rows} == {"gloo:all_reduce",
                                                                  "gloo:broadcast"}
