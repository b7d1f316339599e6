"""Sizes and counts past int64, one rule whatever the reader.

A count or size a file states past int64 (2**63, 2**64, 1e400) is moved or refused and
counted, as a time is; a sum of sizes that int64 cannot hold (two live blocks of 2**62
bytes, a thousand of 2**53) is put at the int64 edge and said, never wrapped around to a
negative level (a wrong peak). Each class of reader is read here with seeded random sizes:
a JSON allocator log (Kineto ``[memory]`` events), a pickled allocator snapshot (torch), a
JSON of byte counts alone (torch memory timeline), and text reports (Paddle's summary and
report, nsys stats) whose count and size cells are replaced by hostile values. Every
expectation is counted by hand here: exact Python sums of the sizes written, then the rule
(at most 2**63 - 1; a statistic: at most 2**62).
"""

from __future__ import annotations

import json
import pickle
import random
import re
from pathlib import Path

import numpy as np
import pytest

import traceconv
from traceconv.analysis import memory_report
from traceconv.analysis.allocation_sites import top_allocation_sites
from traceconv.numbers import int64_running_sums

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
DATA = Path(__file__).resolve().parent / "data"
INT64_MAX = 2**63 - 1
STATISTICS_EDGE = 2**62   # the statistics' range (docs/diagnostics.md)
SIZES = (2**62, 2**63 - 1, 2**53 - 1, 2**61 + 3, 4096, 1)   # each fits int64
SEEDS = range(6)


def _levels(changes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """(time, exact live bytes after every change at that time), by hand: Python ints."""
    level, out = 0, []
    for time, delta in sorted(changes, key=lambda change: change[0]):
        level += delta
        if out and out[-1][0] == time:
            out[-1] = (time, level)
        else:
            out.append((time, level))
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_running_sums_stop_at_the_int64_edge(seed: int):
    rng = random.Random(seed)
    steps = [rng.choice((1, -1)) * rng.choice(SIZES) for _ in range(rng.randint(1, 300))]
    sums, moved = int64_running_sums(np.array(steps, np.int64))
    exact, expected = 0, []
    for step in steps:
        exact += step
        expected.append(exact)
    assert sums.tolist() == [min(max(s, -2**63), INT64_MAX) for s in expected]
    beyond = [not -2**63 <= s <= INT64_MAX for s in expected]
    assert (moved.tolist() if moved is not None else [False] * len(steps)) == beyond


def _kineto(path: Path, blocks: list[tuple[int, int, int | None]]) -> Path:
    """A Kineto trace of ``[memory]`` events: (size, alloc µs, free µs or None) per block."""
    def memory(ts: int, size: int, address: int) -> dict:
        return {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts,
                "cat": "cpu_instant_event",
                "args": {"Bytes": size, "Addr": address, "Device Type": 1, "Device Id": 0}}
    events = [{"ph": "X", "name": "aten::empty", "cat": "cpu_op", "pid": 1, "tid": 1,
               "ts": 0, "dur": 1}]
    for k, (size, alloc, free) in enumerate(blocks):
        events.append(memory(alloc, size, 4096 * (k + 1)))
        if free is not None:
            events.append(memory(free, -size, 4096 * (k + 1)))
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return path


def _random_blocks(rng: random.Random) -> list[tuple[int, int, int | None]]:
    blocks = []
    for k in range(rng.randint(2, 40)):
        alloc = 10 + 2 * k   # (one alloc per instant: the order of changes is the file's)
        blocks.append((rng.choice(SIZES), alloc,
                       None if rng.random() < 0.5 else alloc + 1 + 2 * rng.randint(0, 20)))
    return blocks


@pytest.mark.parametrize("seed", SEEDS)
def test_a_json_allocator_logs_live_bytes_stop_at_the_edge(seed: int, tmp_path: Path):
    blocks = _random_blocks(random.Random(seed))
    trace = traceconv.load(_kineto(tmp_path / "t.json", blocks))
    levels = _levels([(alloc * 1000, size) for size, alloc, _ in blocks]
                     + [(free * 1000, -size) for size, _, free in blocks if free is not None])
    (track,) = [t.id for t in trace.tracks if t.name.endswith("live bytes")]
    rows = trace.counters.numpy_view("track") == track
    assert trace.counters.numpy_view("value")[rows].tolist() == [
        float(min(level, INT64_MAX)) for _, level in levels]
    beyond = sum(level > INT64_MAX for _, level in levels)
    assert trace.diagnostics.count("model.live_bytes_beyond_int64") == beyond
    # the moment: the first peak of the levels as held; allocated at it, held and said
    device, = memory_report(trace)["devices"]
    held = [min(level, INT64_MAX) for _, level in levels]
    at = held.index(max(held))
    assert (device["moment"]["time"], device["allocated_bytes"]) == (levels[at][0], held[at])
    assert ("byte_totals_beyond_int64" in device["unknown"]) == (levels[at][1] > INT64_MAX)
    site, = top_allocation_sites(trace.memory)
    total = sum(size for size, _, _ in blocks)
    assert (site.peak_bytes, site.bytes) == (max(held), min(total, INT64_MAX))
    assert site.beyond_int64 == (max(level for _, level in levels) > INT64_MAX) + (
        total > INT64_MAX)


def test_a_thousand_blocks_of_2_53_bytes_never_wrap_around(tmp_path: Path):
    # (each size far from int64: only their sum passes it; before, the levels wrapped to
    # -8.5e18 bytes and the peak was the last level before the wrap)
    blocks = [(2**53 - 1, 10 + k, None) for k in range(1100)]
    trace = traceconv.load(_kineto(tmp_path / "t.json", blocks))
    device, = memory_report(trace)["devices"]
    first_past = next(k for k in range(1100) if (k + 1) * (2**53 - 1) > INT64_MAX)
    assert device["allocated_bytes"] == INT64_MAX
    assert device["moment"]["time"] == (10 + first_past) * 1000
    assert device["unknown"]["byte_totals_beyond_int64"] == 2   # (allocated, its one site)
    values = trace.counters.numpy_view("value")
    assert values.min() > 0 and values.max() == float(INT64_MAX)
    assert trace.diagnostics.count("model.live_bytes_beyond_int64") == 1100 - first_past


@pytest.mark.parametrize("seed", SEEDS)
def test_a_pickled_snapshots_counters_stop_at_the_edge(seed: int, tmp_path: Path):
    rng = random.Random(seed)
    sizes = [rng.choice(SIZES) for _ in range(rng.randint(2, 30))]
    entries = [{"action": "alloc", "addr": 4096 * (k + 1), "size": size, "time_us": 10 + k}
               for k, size in enumerate(sizes)]
    path = tmp_path / "snapshot.pickle"
    path.write_bytes(pickle.dumps({"device_traces": [entries], "segments": []}))
    trace = traceconv.load(path, format="torch-snapshot")
    levels = _levels([(1000 * (10 + k), size) for k, size in enumerate(sizes)])
    (track,) = [t.id for t in trace.tracks if t.name.endswith("allocated bytes")]
    rows = trace.counters.numpy_view("track") == track
    values = trace.counters.numpy_view("value")[rows].tolist()
    assert values[-len(levels):] == [float(min(level, INT64_MAX)) for _, level in levels]
    assert trace.diagnostics.count("model.live_bytes_beyond_int64") == sum(
        level > INT64_MAX for _, level in levels)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_memory_timelines_byte_counts_stop_at_the_edge(seed: int, tmp_path: Path):
    # raw rows [t_ns, action 2 (create), bytes, category 4]: blocks placed one after the
    # other on a logical heap; one whose offset passes int64 is left out (counted)
    rng = random.Random(seed)
    sizes = [rng.choice(SIZES) for _ in range(rng.randint(2, 12))]
    path = tmp_path / "m.raw.json"
    path.write_text(json.dumps([[10 + k, 2, size, 4] for k, size in enumerate(sizes)]))
    trace = traceconv.load(path, format="torch-memory")
    kept = []
    for size in sizes:   # by hand: an offset is the sizes placed before it
        if sum(kept) <= INT64_MAX:
            kept.append(size)
    assert trace.diagnostics.count("model.memory_block_unreadable") == len(sizes) - len(kept)
    level = sum(kept)
    device, = memory_report(trace)["devices"]
    assert device["allocated_bytes"] == min(level, INT64_MAX)
    assert ("byte_totals_beyond_int64" in device["unknown"]) == (level > INT64_MAX)


HOSTILE = {   # a printed count or size -> what the rule makes of it, hand-counted
    "4611686018427387904": ("kept", None),                     # 2**62: the edge itself
    "9223372036854775807": ("moved", "model.statistic_beyond_range"),
    "9223372036854775808": ("moved", "model.statistic_beyond_range"),
    "18446744073709551616": ("moved", "model.statistic_beyond_range"),
    "1" + "0" * 400: ("moved", "model.statistic_beyond_range"),
    "1e400": ("moved", "model.statistic_beyond_range"),
    "-1": ("unknown", "model.negative_statistic"),
    "nan": ("unknown", "{reader}.never_sized"),
}
# text readers: (reader, sample, the cell's line and column as a pattern, where the figure
# lands in the row read: a field or extra key)
CELLS = [
    ("paddle-summary", SAMPLES / "paddle" / "summary_small_2.6.2.txt",
     r"(MatmulGradNode\s+Allocated\s+32\s+16\s+)2396160(\s)", "allocation_size"),
    ("paddle-summary", SAMPLES / "paddle" / "summary_small_2.6.2.txt",
     r"(MatmulGradNode\s+Allocated\s+)32(\s)", "allocation_count"),
    ("paddle-summary", SAMPLES / "paddle" / "summary_small_2.6.2.txt",
     r"(  Forward\s+)16(\s)", "calls"),
    ("nsys-stats", DATA / "nsys_stats" / "cuda_api_sum.csv",
     r"(65.1,1417580893,)293(,)", "calls"),
    ("paddle-report", SAMPLES / "paddle" / "report_gpu_before.txt",
     r"(  conv2d {36})200(\s)", "calls"),
]
# a Paddle report's Event Summary row is one by its grammar, whose calls are digits: a row
# with other text there is no row, counted among the lines not read (none of the rule's)
NOT_A_ROW = {"paddle-report": "paddle_report.foreign_lines"}


def _figure(stat, where: str):
    return getattr(stat, where) if where == "calls" else stat.extra.get(where)


@pytest.mark.parametrize("printed", sorted(HOSTILE), ids=lambda p: p[:12])
@pytest.mark.parametrize("reader, sample, cell, where", CELLS,
                         ids=[f"{c[0]}-{c[3]}" for c in CELLS])
def test_a_text_reports_count_or_size_meets_the_one_rule(printed: str, reader: str,
                                                         sample: Path, cell: str, where: str,
                                                         tmp_path: Path):
    fate, code = HOSTILE[printed]
    text, n = re.subn(cell, lambda m: m.group(1) + printed + m.group(2), sample.read_text(),
                      count=1)
    assert n == 1
    path = tmp_path / sample.name
    path.write_text(text)
    before, after = (traceconv.load(p, format=reader) for p in (sample, path))
    added = {d.code: d.count - before.diagnostics.count(d.code) for d in after.diagnostics
             if d.count > before.diagnostics.count(d.code)}
    if reader in NOT_A_ROW and not printed.isdecimal():
        assert len(after.stats) == len(before.stats) - 1
        assert added == {NOT_A_ROW[reader]: 1}
        return
    # the row kept, the only one whose figure changed
    assert len(after.stats) == len(before.stats)
    changed = [b for a, b in zip(before.stats, after.stats, strict=True)
               if _figure(a, where) != _figure(b, where)]
    figure = _figure(changed[0], where) if changed else int(printed)
    assert len(changed) <= 1
    # (a Paddle Memory Summary's Allocation Count is its row's calls too: two figures, one
    # row; never_sized counts rows)
    twice = 2 if where == "allocation_count" and (code or "").startswith("model.") else 1
    if fate == "kept":
        assert figure == int(printed) and added == {}
    elif fate == "moved":
        assert figure == STATISTICS_EDGE and added == {code: twice}
    else:
        assert figure is None
        assert added == {code.format(reader=reader.replace("-", "_")): twice}


def test_a_paddle_perf_rows_nan_is_never_timed(tmp_path: Path):
    # the Perf Summary's cells went through their own parse, which left nan (and inf) out
    # silently; now the one rule: nan never timed and counted, inf past range (moved)
    sample = DATA / "paddle" / "paddlepaddle_docs_profiling_model.md"
    text = sample.read_text()
    assert text.count("|     0.01236     |") == 1 and "|       inf       |" in text
    path = tmp_path / "perf.md"
    path.write_text(text.replace("|     0.01236     |", "|       nan       |"))
    before, after = (traceconv.load(p, format="paddle-summary") for p in (sample, path))
    cost = [s for s in after.stats if s.section == "perf" and s.name == "reader_cost"][0]
    assert (cost.avg_ns, cost.max_ns, cost.min_ns) == (None, 12_770_000, STATISTICS_EDGE)
    assert after.diagnostics.count("paddle_summary.never_timed") == 1
    assert before.diagnostics.count("paddle_summary.never_timed") == 0
    # (the inf min of the page as written: moved, counted; the same in both)
    assert after.diagnostics.count("model.statistic_beyond_range") == 1


def test_an_allocators_stated_total_at_int64s_edge_stays_in_int64(tmp_path: Path):
    # Kineto states Total Allocated / Reserved beside each event; a counter holds a double,
    # where 2**63 - 1 is 2**63: the report gave 9,223,372,036,854,775,808, one past int64
    path = _kineto(tmp_path / "t.json", [(100, 10, None)])
    trace_json = json.loads(path.read_text())
    trace_json["traceEvents"][1]["args"].update({"Total Allocated": INT64_MAX,
                                                 "Total Reserved": INT64_MAX})
    path.write_text(json.dumps(trace_json))
    device, = memory_report(traceconv.load(path))["devices"]
    assert device["allocated_bytes"] == 100
    assert device["allocated_by_allocator_bytes"] == device["reserved_bytes"] == INT64_MAX
