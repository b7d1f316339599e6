"""``traceconv overview`` (and split's ``overview.pftrace``) against a plain JSON scan.

The expected values are computed here from ``json.load`` of the input: each thread's busy
time per bucket (the union of its slices, by sorting), its longest slices, its
collectives, the memory high-water mark per device; the overview is read back from the
``.pftrace`` it wrote (``traceconv.load``).
"""

from __future__ import annotations

import gzip
import json
import math
import random
import re
from collections import defaultdict
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import traceconv
from traceconv.cli import app
from traceconv.splitting import make_overview, split

ROOT = Path(__file__).resolve().parent.parent
CNN = ROOT / "samples" / "torch" / "cnn_step5.pt.trace.json"
DDP = ROOT / "samples" / "torch" / "ddp_gloo_rank0.pt.trace.json.gz"
COLLECTIVE = re.compile(r"nccl|rccl|gloo|c10d::|hccl|record_param_comms|all[_-]?reduce|"
                        r"all[_-]?gather|reduce[_-]?scatter|all[_-]?to[_-]?all|c_broadcast",
                        re.IGNORECASE)
TOP, BUCKETS = 10, 200


def events(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        return json.load(f)["traceEvents"]


def thread_names(evs: list[dict]) -> defaultdict[tuple, str]:
    """Thread names by (pid, tid); an unnamed thread is "thread TID"."""
    names = defaultdict(str, {(e["pid"], e["tid"]): e["args"]["name"] for e in evs
                              if e.get("ph") == "M" and e.get("name") == "thread_name"})
    for e in evs:
        if e.get("ph") == "X" and (e["pid"], e["tid"]) not in names:
            names[(e["pid"], e["tid"])] = f"thread {e['tid']}"
    return names


def span(evs: list[dict]) -> tuple[float, float]:
    timed = [e for e in evs if e.get("ph") != "M" and isinstance(e.get("ts"), int | float)]
    first = min(e["ts"] for e in timed)
    last = max(e["ts"] + e["dur"] if e.get("ph") == "X" else e["ts"] for e in timed)
    return first, last


def busy_by_bucket(intervals: list[tuple[float, float]], first: float, width: float,
                   buckets: int) -> list[float]:
    """Union of the intervals (sorted, merged by hand), spread over the buckets."""
    merged: list[list[float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    busy = [0.0] * buckets
    for start, end in merged:
        for b in range(buckets):
            low = first + b * width
            high = first + (b + 1) * width if b < buckets - 1 else math.inf
            busy[b] += max(0.0, min(end, high) - max(start, low))
    return busy


@pytest.fixture(scope="module")
def cnn_overview(tmp_path_factory) -> traceconv.Trace:
    out = tmp_path_factory.mktemp("overview") / "ov.pftrace"
    make_overview(CNN, out, top=TOP, buckets=BUCKETS)
    return traceconv.load(out)


def counter(trace: traceconv.Trace, name: str) -> np.ndarray:
    track = next(t.id for t in trace.tracks if t.name == name)
    rows = trace.counters.numpy("track") == track
    return trace.counters.numpy("value")[rows]


def shown_slices(trace: traceconv.Trace, name: str) -> list:
    track = next(t.id for t in trace.tracks if t.name == name and t.kind == "thread")
    return list(trace.iter_slices(track=track))


def test_utilisation_is_busy_time_over_bucket_time(cnn_overview):
    evs = events(CNN)
    first, last = span(evs)
    width = (last - first) / BUCKETS
    by_thread = defaultdict(list)
    for e in evs:
        if e.get("ph") == "X":
            by_thread[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    names = thread_names(evs)
    assert len(by_thread) >= 2
    for thread, intervals in by_thread.items():
        expected = [100 * min(b / width, 1.0)
                    for b in busy_by_bucket(intervals, first, width, BUCKETS)]
        got = counter(cnn_overview, f"{names[thread]}: utilisation")
        assert len(got) == BUCKETS
        assert got == pytest.approx(expected, abs=1e-6)
        assert max(expected) > 50   # (a thread that works)


def test_longest_slices_of_each_track_and_hidden_counts(cnn_overview):
    evs = events(CNN)
    names = thread_names(evs)
    by_thread = defaultdict(list)
    for e in evs:
        if e.get("ph") == "X":
            by_thread[(e["pid"], e["tid"])].append(e)
    for thread, slices in by_thread.items():
        plain = [e for e in slices if not COLLECTIVE.search(e["name"])]
        longest = sorted((round(e["dur"] * 1000) for e in plain), reverse=True)[:TOP]
        shown = shown_slices(cnn_overview, names[thread])
        assert sorted((s.dur for s in shown), reverse=True) == longest
        hidden = counter(cnn_overview, f"{names[thread]}: hidden slices")
        assert hidden.sum() == len(slices) - len(shown)


@pytest.mark.parametrize("top", [0, 1, 7])
def test_the_longest_slices_whatever_the_top(tmp_path, top):
    """Each track shows its ``top`` longest slices, of equal ones the earliest (a plain
    sort of the file's slices by (-dur, ts)), whatever ``top`` is."""
    evs = events(CNN)
    names = thread_names(evs)
    made = make_overview(CNN, tmp_path / "ov.pftrace", top=top, buckets=20)
    by_thread = defaultdict(list)
    for e in evs:
        if e.get("ph") == "X" and not COLLECTIVE.search(e["name"]):
            by_thread[(e["pid"], e["tid"])].append(e)
    for thread, slices in by_thread.items():
        expected = sorted(slices, key=lambda e: (-e["dur"], e["ts"]))[:top]
        shown = shown_slices(made, names[thread]) if top else []
        # (a start as written, to the ns: 4482738043834.738 µs; a length rounded as the
        # reader rounds it)
        assert sorted((s.dur, s.start) for s in shown) == sorted(
            (round(e["dur"] * 1000), int(Decimal(repr(e["ts"])) * 1000)) for e in expected)


def test_events_out_of_order_give_the_same_overview(tmp_path, cnn_overview):
    document = json.loads(CNN.read_text())
    random.Random(3).shuffle(document["traceEvents"])
    shuffled = tmp_path / "shuffled.json"
    shuffled.write_text(json.dumps(document))
    made = make_overview(shuffled, tmp_path / "ov.pftrace", top=TOP, buckets=BUCKETS)
    assert made.diagnostics.count("overview.slices_out_of_order") == 0
    again = traceconv.load(tmp_path / "ov.pftrace")
    for name in [t.name for t in cnn_overview.tracks if t.name.endswith(": utilisation")]:
        assert counter(again, name) == pytest.approx(counter(cnn_overview, name), abs=1e-9)


def test_steps_and_memory_high_water(cnn_overview):
    evs = events(CNN)
    steps = [t.id for t in cnn_overview.tracks if t.name == "steps"]
    labels = [s.name for s in cnn_overview.iter_slices(track=steps[0])]
    assert labels == ["before", "step2", "step3", "step4"]
    totals = defaultdict(float)
    for e in evs:
        if e.get("name") == "[memory]" and "Total Allocated" in e.get("args", {}):
            device = f"{e['args']['Device Type']} {e['args']['Device Id']}"
            totals[device] = max(totals[device], e["args"]["Total Allocated"])
    assert totals
    for device, high in totals.items():
        assert counter(cnn_overview, f"memory high-water: {device}").max() == high


def test_collectives_are_all_shown(tmp_path):
    evs = events(DDP)
    out = tmp_path / "ov.pftrace"
    make_overview(DDP, out, top=1, buckets=50)
    trace = traceconv.load(out)
    expected = sorted(e["name"] for e in evs if e.get("ph") == "X"
                      and COLLECTIVE.search(e["name"]))
    shown = sorted(s.name for s in trace.iter_slices() if COLLECTIVE.search(s.name))
    assert expected and shown == expected


def test_split_writes_the_overview_naming_each_piece(tmp_path):
    manifest = split(CNN, tmp_path, by="step")
    assert manifest["overview"] == "overview.pftrace"
    trace = traceconv.load(tmp_path / "overview.pftrace")
    track = next(t.id for t in trace.tracks if t.name == "pieces")
    pieces = list(trace.iter_slices(track=track))
    assert [s.args["piece"] for s in pieces] == [p["file"] for p in manifest["pieces"]]
    assert (tmp_path / "overview.pftrace").stat().st_size < 50_000_000


def test_cli_overview_and_bad_input(tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["overview", str(CNN), "-o", str(tmp_path / "ov.pftrace"),
                                 "--top", "3"])
    assert result.exit_code == 0, result.output
    assert "slices shown" in result.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "ts": 1,')
    result = runner.invoke(app, ["overview", str(bad), "-o", str(tmp_path / "b.pftrace")])
    assert result.exit_code == 1
    assert len(result.output.strip().splitlines()) == 1 and "bad.json" in result.output


@pytest.mark.slow
def test_the_overview_names_the_converted_pieces_that_stay(tmp_path):
    manifest = split(CNN, tmp_path, by="step", to="perfetto", target_size=0)
    trace = traceconv.load(tmp_path / "overview.pftrace")
    track = next(t.id for t in trace.tracks if t.name == "pieces")
    named = [s.args["piece"] for s in trace.iter_slices(track=track)]
    assert named == [p["file"] for p in manifest["pieces"]]
    assert all(name.endswith(".pftrace") and (tmp_path / name).exists() for name in named)


@pytest.mark.integration
def test_the_overview_loads_in_trace_processor(tmp_path, trace_processor):
    out = tmp_path / "ov.pftrace"
    made = make_overview(CNN, out, top=TOP, buckets=BUCKETS)
    trace_processor.load(out.read_bytes())
    assert trace_processor.bad_stats() == []
    slices = trace_processor.query("select count(*) n from slice")[0].n
    samples = trace_processor.query("select count(*) n from counter")[0].n
    assert (slices, samples) == (len(made.slices), len(made.counters))


def test_hostile_times_are_left_out_of_the_overview(tmp_path):
    events_in = [{"ph": "X", "name": "ok", "ts": 10, "dur": 5, "pid": 1, "tid": 1},
                 {"ph": "X", "name": "huge", "ts": 10**400, "dur": 5, "pid": 1, "tid": 1},
                 {"ph": "X", "name": "text", "ts": "10", "dur": 5, "pid": 1, "tid": 1},
                 {"ph": "X", "name": "negative", "ts": 12, "dur": -3, "pid": 1, "tid": 1},
                 {"ph": "i", "name": "[memory]", "ts": 11, "pid": 1, "tid": 1,
                  "args": {"Total Allocated": 10**400, "Device Id": 0}}]
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"traceEvents": events_in}))
    made = make_overview(path, tmp_path / "ov.pftrace", top=5, buckets=10)
    assert [s.name for s in made.iter_slices() if s.category != "piece"] == ["ok"]
