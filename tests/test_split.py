"""``traceconv split``: the pieces hold the whole trace, and the cuts are counted.

Every expected value is computed here from the raw JSON (``json.load``): the windows from
the ``ProfilerStep#N`` events, which slices and flows cross a window's end, which memory
blocks are alive across a cut. The pieces are read back the same way, and through
``traceconv.load`` + ``traceconv.validate``.
"""

from __future__ import annotations

import bisect
import gzip
import json
import re
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from traceconv.cli import app
from traceconv.splitting import route, split

ROOT = Path(__file__).resolve().parent.parent
CNN = ROOT / "samples" / "torch" / "cnn_step5.pt.trace.json"
RESNET = ROOT / "samples" / "torch" / "resnet18_train_cuda.pt.trace.json.gz"
DDP = sorted((ROOT / "samples" / "torch").glob("ddp_gloo_rank?.pt.trace.json.gz"))
MI300 = ROOT / "tests" / "data" / "torch" / "tracelens_mi300_resnet_act_checkpoint.json.gz"
PADDLE = ROOT / "tests" / "data" / "paddle" / "small_2.6.2.paddle_trace.json.gz"
MEGENGINE = ROOT / "tests" / "data" / "megengine" / "train_chrome_timeline.json.gz"
DEVICE_WORK = {"kernel", "gpu_memcpy", "gpu_memset"}
STEP = re.compile(r"^ProfilerStep#\d+$")


def raw(path: Path) -> dict:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        return json.load(f)


def pieces_of(outdir: Path) -> tuple[dict, list[dict]]:
    manifest = json.loads((outdir / "manifest.json").read_text())
    return manifest, [raw(outdir / p["file"]) for p in manifest["pieces"]]


def slice_names(events: list[dict]) -> Counter[str]:
    return Counter(e["name"] for e in events if e.get("ph") == "X")


def step_bounds(events: list[dict]) -> list[float]:
    """Host step starts, sorted (the device copies are gpu_user_annotation)."""
    return sorted({e["ts"] for e in events if e.get("ph") == "X" and STEP.match(e["name"])
                   and e.get("cat") != "gpu_user_annotation"})


def window(bounds: list[float], ts: float) -> int:
    """0: before the first step; k: in step k (1-based)."""
    return bisect.bisect_right(bounds, ts)


def window_end(bounds: list[float], w: int) -> float:
    return bounds[w] if w < len(bounds) else float("inf")


def expected_slice_cuts(events: list[dict], bounds: list[float]) -> Counter[str]:
    return Counter(e["name"] for e in events if e.get("ph") == "X"
                   and e["ts"] + e["dur"] > window_end(bounds, window(bounds, e["ts"])))


def expected_flow_cuts(events: list[dict], bounds: list[float]) -> int:
    starts = {(e.get("cat"), e.get("name"), e["id"]): window(bounds, e["ts"])
              for e in events if e.get("ph") == "s"}
    return sum(1 for e in events if e.get("ph") == "f"
               and starts.get((e.get("cat"), e.get("name"), e["id"]), window(bounds, e["ts"]))
               != window(bounds, e["ts"]))


def expected_carried(events: list[dict], bounds: list[float]) -> Counter[int]:
    """Per window, the memory blocks alive at its start: allocated in an earlier window and
    freed in this one or later (or never), pairing by address in time order."""
    memory = sorted((e for e in events if e.get("name") == "[memory]"), key=lambda e: e["ts"])
    last_alloc: dict[tuple, dict] = {}
    blocks = []   # (allocation ts, free ts or None)
    for e in memory:
        a = e["args"]
        key = (a.get("Device Type"), a.get("Device Id"), a["Addr"])
        if a["Bytes"] > 0:
            if key in last_alloc:
                blocks.append((last_alloc[key]["ts"], None))
            last_alloc[key] = e
        elif key in last_alloc:
            blocks.append((last_alloc.pop(key)["ts"], e["ts"]))
    blocks += [(e["ts"], None) for e in last_alloc.values()]
    carried: Counter[int] = Counter()
    last_window = len(bounds)
    for allocated, freed in blocks:
        first = window(bounds, allocated) + 1
        stop = window(bounds, freed) if freed is not None else last_window
        for w in range(first, stop + 1):
            carried[w] += 1
    return carried


@pytest.fixture(scope="module")
def cnn_steps(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cnn_steps")
    split(CNN, out, by="step", then="perfetto", target_size=0)   # one piece per step
    return out


def test_step_pieces_hold_every_slice_and_count_the_cuts(cnn_steps):
    whole = raw(CNN)["traceEvents"]
    manifest, pieces = pieces_of(cnn_steps)
    bounds = step_bounds(whole)
    assert len(bounds) == 3   # ProfilerStep#2..#4
    assert [p["label"] for p in manifest["pieces"]] == ["before", "step2", "step3", "step4"]
    in_pieces = sum((slice_names(p["traceEvents"]) for p in pieces), Counter())
    # kept whole where they start: every slice is in exactly one piece, the cut ones counted
    assert in_pieces == slice_names(whole)
    cuts = expected_slice_cuts(whole, bounds)
    assert manifest["cuts"]["slices_by_name"] == dict(cuts)
    assert manifest["cuts"]["slices"] == sum(cuts.values()) > 0
    assert manifest["cuts"]["flows"] == expected_flow_cuts(whole, bounds)
    # each piece's events start in its window (the carried memory copies at its start)
    for k, piece in enumerate(pieces):
        for e in piece["traceEvents"]:
            if e.get("ph") not in ("M", None):
                assert window(bounds, e["ts"]) == k


def test_every_piece_repeats_the_envelope_and_the_names(cnn_steps):
    source = raw(CNN)
    names = [e for e in source["traceEvents"] if e.get("ph") == "M"]
    _, pieces = pieces_of(cnn_steps)
    for piece in pieces:
        assert [e for e in piece["traceEvents"] if e.get("ph") == "M"] == names
        envelope = {k: v for k, v in piece.items() if k not in ("traceEvents", "traceconvSplit")}
        assert envelope == {k: v for k, v in source.items() if k != "traceEvents"}


def test_memory_blocks_alive_across_a_cut_are_carried(cnn_steps):
    whole = raw(CNN)["traceEvents"]
    manifest, pieces = pieces_of(cnn_steps)
    carried = expected_carried(whole, step_bounds(whole))
    assert sum(carried.values()) > 0
    for k, (entry, piece) in enumerate(zip(manifest["pieces"], pieces, strict=True)):
        copies = [e for e in piece["traceEvents"]
                  if e.get("args", {}).get("Pre-existing") is True]
        assert len(copies) == entry["memory_blocks_pre_existing"] == carried[k]
        assert all(e["ts"] == entry["start"] and e["args"]["Allocated at"] < e["ts"]
                   and "Total Allocated" not in e["args"] for e in copies)


def test_pieces_load_validate_and_sum_to_the_whole(cnn_steps):
    manifest, _ = pieces_of(cnn_steps)
    whole = traceconv.load(CNN)
    loaded = [traceconv.load(cnn_steps / p["file"]) for p in manifest["pieces"]]
    assert all(traceconv.validate(t) == [] for t in loaded)

    def names(trace):
        return Counter(s.name for s in trace.iter_slices())

    assert sum((names(t) for t in loaded), Counter()) == names(whole)
    assert sum(t.counts()["flows"] for t in loaded) + manifest["cuts"]["flows"] \
        == whole.counts()["flows"]


def test_then_perfetto_is_converting_each_piece_alone(cnn_steps, tmp_path):
    manifest, _ = pieces_of(cnn_steps)
    assert manifest["converted"]["failed"] == []
    piece = manifest["pieces"][2]
    alone = tmp_path / "alone.pftrace"
    traceconv.convert(cnn_steps / piece["file"], alone)
    assert (cnn_steps / piece["converted"]).read_bytes() == alone.read_bytes()


@pytest.mark.parametrize("engine, module", [("dask", "dask.distributed"), ("ray", "ray")])
def test_then_perfetto_on_a_cluster_gives_the_same_bytes(cnn_steps, tmp_path, engine, module):
    pytest.importorskip(module)
    manifest = split(CNN, tmp_path, by="step", then="perfetto", engine=engine, jobs=1,
                     target_size=0)
    assert manifest["converted"] == {"to": "perfetto", "engine": engine, "failed": []}
    for piece in manifest["pieces"]:
        assert (tmp_path / piece["converted"]).read_bytes() \
            == (cnn_steps / piece["converted"]).read_bytes()


@pytest.mark.integration
def test_pftrace_pieces_load_in_trace_processor(cnn_steps, trace_processor):
    manifest, pieces = pieces_of(cnn_steps)
    total = 0
    for entry, piece in zip(manifest["pieces"], pieces, strict=True):
        trace_processor.load((cnn_steps / entry["converted"]).read_bytes())
        slices = trace_processor.query("select count(*) n from slice where dur >= 0 "
                                       "and name not like '[memory]'")[0].n
        assert trace_processor.bad_stats() == []
        assert slices >= len([e for e in piece["traceEvents"] if e.get("ph") == "X"])
        total += slices
    assert total >= len([e for e in raw(CNN)["traceEvents"] if e.get("ph") == "X"])


@pytest.mark.slow
def test_device_work_goes_to_the_step_that_launched_it(tmp_path):
    """A kernel launched in step N belongs to step N's piece even when it runs after step
    N+1 starts; the end of its launch flow goes with it, so no launch flow is cut."""
    whole = raw(MI300)["traceEvents"]
    bounds = step_bounds(whole)
    launched_at = {e["args"]["correlation"]: e["ts"] for e in whole
                   if e.get("ph") == "X" and e.get("cat") not in DEVICE_WORK
                   and "correlation" in e.get("args", {})}

    def expected(e: dict) -> int:
        if e.get("cat") in DEVICE_WORK and e["args"].get("correlation") in launched_at:
            return window(bounds, launched_at[e["args"]["correlation"]])
        if e.get("cat") == "ac2g" and e["ph"] == "f" and e["id"] in launched_at:
            return window(bounds, launched_at[e["id"]])
        return window(bounds, e["ts"])

    moved = sum(1 for e in whole if e.get("ph") == "X" and e.get("cat") in DEVICE_WORK
                and expected(e) != window(bounds, e["ts"]))
    assert moved > 1000   # the class: device work running on into the next step
    manifest = split(MI300, tmp_path, by="step")
    _, pieces = pieces_of(tmp_path)
    for k, piece in enumerate(pieces):
        for e in piece["traceEvents"]:
            if e.get("ph") != "M" and "Pre-existing" not in e.get("args", {}):
                assert expected(e) == k, e
    assert manifest["cuts"]["device_work_by_launch"] == moved
    assert manifest["cuts"]["flows"] == 0 < len(launched_at)
    assert sum((slice_names(p["traceEvents"]) for p in pieces), Counter()) == slice_names(whole)
    # what stays counted as cut: slices placed by their start that cross its window's end
    # (device work placed by its launch never is)
    cuts = Counter(e["name"] for e in whole if e.get("ph") == "X"
                   and not (e.get("cat") in DEVICE_WORK
                            and e["args"].get("correlation") in launched_at)
                   and e["ts"] + e["dur"] > window_end(bounds, window(bounds, e["ts"])))
    assert manifest["cuts"]["slices_by_name"] == dict(cuts)
    loaded = [traceconv.load(tmp_path / p["file"]) for p in manifest["pieces"]]
    assert all(traceconv.validate(t) == [] for t in loaded)
    assert sum(len(t.slices) for t in loaded) == len(traceconv.load(MI300).slices)


@pytest.mark.slow
def test_launches_past_the_limit_are_counted(tmp_path, monkeypatch):
    """The launch table is bounded: past it, device work is placed by its own start."""
    from traceconv.splitting import windows

    monkeypatch.setattr(windows, "MAX_LAUNCHES", 100)
    whole = raw(MI300)["traceEvents"]
    launches = sum(1 for e in whole if e.get("ph") == "X" and e.get("cat") not in DEVICE_WORK
                   and isinstance(e.get("args", {}).get("correlation"), int))
    manifest = split(MI300, tmp_path, by="step")
    assert manifest["cuts"]["launches_over_limit"] == launches - 100 > 0
    _, pieces = pieces_of(tmp_path)
    assert sum((slice_names(p["traceEvents"]) for p in pieces), Counter()) == slice_names(whole)


def test_paddle_steps_carry_their_duration_in_the_name(tmp_path):
    """Paddle's Chrome export names a step "ProfileStep#3[12.170 ms]"."""
    whole = raw(PADDLE)["traceEvents"]
    marker = re.compile(r"^ProfileStep#(\d+)\[\d+\.\d{3} (?:ms|us)\]$")
    steps = sorted((e["ts"], int(marker.match(e["name"]).group(1))) for e in whole
                   if e.get("ph") == "X" and marker.match(e.get("name", "")))
    assert len(steps) == 8
    manifest = split(PADDLE, tmp_path)   # by step: the default
    _, pieces = pieces_of(tmp_path)
    assert [p["label"] for p in manifest["pieces"]] == [f"step{n}" for _, n in steps]
    bounds = [ts for ts, _ in steps][1:]
    for k, piece in enumerate(pieces):
        assert all(window(bounds, e["ts"]) == k for e in piece["traceEvents"]
                   if e.get("ph") == "X")
    assert sum((slice_names(p["traceEvents"]) for p in pieces), Counter()) == slice_names(whole)
    loaded = [traceconv.load(tmp_path / p["file"]) for p in manifest["pieces"]]
    assert all(traceconv.validate(t) == [] for t in loaded)
    assert sum(len(t.slices) for t in loaded) == len(traceconv.load(PADDLE).slices)


def test_megengine_steps_end_at_each_threads_stop_step(tmp_path):
    """MegEngine's profiler.step() writes a StopStep instant on every host thread: a step
    ends there, for that thread (the worker lags the interpreter); the other lanes end
    their steps where the last-marking thread does."""
    whole = raw(MEGENGINE)["traceEvents"]
    stops: dict[tuple, list[float]] = {}
    for e in whole:
        if e.get("ph") == "i" and e.get("name") == "StopStep":
            stops.setdefault((e["pid"], e["tid"]), []).append(e["ts"])
    assert len(stops) == 2 and {len(t) for t in stops.values()} == {3}
    reference = max(stops.values(), key=lambda t: t[-1])

    def expected(e: dict) -> int:   # a StopStep at ts closes the step it ends
        ends = stops.get((e["pid"], e["tid"]), reference)
        return min(sum(1 for end in ends if end < e["ts"]), 3)

    manifest = split(MEGENGINE, tmp_path)
    _, pieces = pieces_of(tmp_path)
    assert [p["label"] for p in manifest["pieces"]] == ["step0", "step1", "step2", "after"]
    assert [p["end"] for p in manifest["pieces"]] == [*reference, None]
    for k, piece in enumerate(pieces):
        assert all(expected(e) == k for e in piece["traceEvents"] if e.get("ph") != "M")
    assert sum(len(p["traceEvents"]) for p in pieces) \
        == len(whole) + 3 * sum(1 for e in whole if e.get("ph") == "M")
    loaded = [traceconv.load(tmp_path / p["file"]) for p in manifest["pieces"]]
    assert all(traceconv.validate(t) == [] for t in loaded)
    whole_trace = traceconv.load(MEGENGINE)
    for part in ("slices", "instants", "counters"):
        assert sum(len(getattr(t, part)) for t in loaded) == len(getattr(whole_trace, part))


@pytest.mark.slow
def test_time_windows_clipped(tmp_path):
    whole = raw(RESNET)["traceEvents"]
    manifest = split(RESNET, tmp_path, by="time=20ms", clip=True)
    _, pieces = pieces_of(tmp_path)
    assert manifest["time_unit_ns"] == 1000
    first = min(e["ts"] for e in whole if e.get("ph") != "M" and "ts" in e)
    bounds = [first + 20_000 * k for k in range(1, len(pieces))]

    def continuation(e: dict) -> bool:
        return "Continued from" in e.get("args", {})

    own = [[e for e in p["traceEvents"] if not continuation(e)] for p in pieces]
    assert sum(map(slice_names, own), Counter()) == slice_names(whole)
    assert manifest["cuts"]["slices_by_name"] == dict(expected_slice_cuts(whole, bounds))
    # the rest of each clipped slice: one copy in every later window it overlaps
    expected = Counter()
    for e in whole:
        if e.get("ph") == "X":
            start, end = e["ts"], e["ts"] + e["dur"]
            for k in range(window(bounds, start) + 1, len(pieces)):
                if end > bounds[k - 1]:
                    expected[(e["name"], start, k)] += 1
    found = Counter((e["name"], e["args"]["Continued from"], k)
                    for k, piece in enumerate(pieces)
                    for e in piece["traceEvents"] if continuation(e))
    assert found == expected and manifest["cuts"]["slice_continuations"] == sum(expected.values())
    for k, piece in enumerate(pieces):   # clipped: nothing ends past its window
        end = window_end(bounds, k)
        assert all(e["ts"] + e["dur"] <= end for e in piece["traceEvents"] if e.get("ph") == "X")
        assert all(e["ts"] == bounds[k - 1] for e in piece["traceEvents"] if continuation(e))
    for path in tmp_path.glob("*.json"):
        if path.name != "manifest.json":
            assert traceconv.validate(traceconv.load(path)) == []


def test_by_rank_of_a_merged_trace(tmp_path):
    merged = tmp_path / "merged.json"
    traceconv.save(traceconv.merge([traceconv.load(p) for p in DDP]), merged)
    whole = raw(merged)["traceEvents"]
    rank_of = {e["pid"]: int(e["args"]["name"].split(":")[0].split()[1]) for e in whole
               if e.get("ph") == "M" and e["name"] == "process_name"}
    out = tmp_path / "ranks"
    manifest = split(merged, out, by="rank")
    _, pieces = pieces_of(out)
    assert [p["label"] for p in manifest["pieces"]] == ["rank0", "rank1", "rank2", "rank3"]
    for entry, piece in zip(manifest["pieces"], pieces, strict=True):
        assert {rank_of[e["pid"]] for e in piece["traceEvents"]} == {entry["rank"]}
    assert sum(len(p["traceEvents"]) for p in pieces) == len(whole)
    assert sum((slice_names(p["traceEvents"]) for p in pieces), Counter()) == slice_names(whole)


def test_cli_split_and_errors(tmp_path):
    runner = CliRunner()
    done = runner.invoke(app, ["split", str(CNN), "--by", "step", "-o", str(tmp_path / "s")])
    assert done.exit_code == 0, done.output
    assert "wrote 4 pieces" in done.output
    no_steps = runner.invoke(app, ["split", str(DDP[0]), "--by", "step", "-o", str(tmp_path)])
    assert no_steps.exit_code == 1
    assert "no step markers" in no_steps.output and str(DDP[0]) in no_steps.output
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "ts": 1,}]}')
    broken = runner.invoke(app, ["split", str(bad), "--by", "step", "-o", str(tmp_path / "b")])
    assert broken.exit_code == 1 and "bad.json:1:" in broken.output
    assert "Traceback" not in broken.output
    own = tmp_path / "own" / "manifest.json"
    own.parent.mkdir()
    own.write_bytes(CNN.read_bytes())
    refused = runner.invoke(app, ["split", str(own), "--by", "step", "-o", str(own.parent)])
    assert refused.exit_code == 1
    assert f"{own}: the output would replace the input {own}" in refused.output
    assert own.read_bytes() == CNN.read_bytes()


def _copies(source: dict, times: int, path: Path) -> int:
    """``source``'s events ``times`` times, one copy after the other in time."""
    events = source["traceEvents"]
    stamps = [e["ts"] for e in events if "ts" in e]
    span = max(stamps) - min(stamps) + 1_000_000
    with open(path, "w") as out:
        out.write('{"traceEvents": [')
        out.write(",".join(json.dumps(e) for e in events if e.get("ph") == "M"))
        for k in range(times):
            for e in events:
                if e.get("ph") != "M":
                    out.write("," + json.dumps(dict(e, ts=e["ts"] + k * span)
                                               if "ts" in e else e))
        out.write("]}")
    return path.stat().st_size


@pytest.mark.slow
def test_memory_stays_bounded_as_the_input_grows(tmp_path, monkeypatch):
    """Peak Python allocations while splitting 4× and 16× the sample: the larger input
    (14 MB) must not need more than the smaller one plus a margin, and far less than its
    size (allocation counts, not wall-clock)."""
    monkeypatch.setattr(route, "BUFFERED", 256 << 10)
    source = raw(CNN)
    peaks, sizes = {}, {}
    for times in (4, 16):
        path = tmp_path / f"x{times}.json"
        size = _copies(source, times, path)
        tracemalloc.start()
        split(path, tmp_path / f"out{times}", by="step")
        peaks[times] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        sizes[times] = size
    assert peaks[16] < sizes[16] / 2
    assert peaks[16] < 1.5 * peaks[4]


@pytest.mark.parametrize("chunk", [None, 256])
def test_phases_and_categories_that_are_lists_or_objects_are_routed_by_time(
        tmp_path, monkeypatch, chunk):
    """A phase or category written as a list or an object (no producer does; a hostile
    file) made split and overview stop with an internal error (unhashable, looked up in a
    set of phases). Such an event is one of an unknown phase: routed by its time, kept in
    its piece, where the reader drops it as the reader of the whole file does. (With
    256-byte chunks the later pieces are typed records; the first is plain values.)"""
    from traceconv.formats.chrome import stream

    if chunk:
        monkeypatch.setattr(stream, "CHUNK", chunk)
    events = [{"ph": "X", "name": f"ProfilerStep#{k}", "ts": 100 * k, "dur": 90, "pid": 1,
               "tid": 1, "cat": "cpu_op"} for k in (1, 2)]
    events += [{"ph": ["X"], "name": "a", "ts": 150, "dur": 1, "pid": 1, "tid": 1},
               {"ph": {"p": "i"}, "name": "b", "ts": 250, "pid": 1, "tid": 1},
               {"ph": "X", "name": "c", "ts": 160, "dur": 1, "pid": 1, "tid": 1,
                "cat": ["kernel"], "args": {"correlation": 1}},
               {"ph": "i", "name": "d", "ts": 260, "pid": 1, "tid": 1, "cat": {"c": 1}}]
    source = tmp_path / "hostile.json"
    source.write_text(json.dumps({"traceEvents": events}))
    manifest = split(source, tmp_path / "out", by="step")
    pieces = {p["label"]: json.loads((tmp_path / "out" / p["file"]).read_text())
              for p in manifest["pieces"]}
    names = {label: sorted(e["name"] for e in piece["traceEvents"])
             for label, piece in pieces.items()}
    assert names == {"step1": ["ProfilerStep#1", "a", "c"],
                     "step2": ["ProfilerStep#2", "b", "d"]}
    dropped = Counter()
    for label in pieces:
        dropped.update({d["code"]: d["count"] for d in traceconv.load(
            tmp_path / "out" / next(p["file"] for p in manifest["pieces"]
                                   if p["label"] == label)).diagnostics.as_list()
            if d["code"].startswith("chrome.unsupported_phase")})
    whole = {d["code"]: d["count"] for d in traceconv.load(source).diagnostics.as_list()
             if d["code"].startswith("chrome.unsupported_phase")}
    assert dropped == whole and sum(whole.values()) == 2
    assert (tmp_path / "out" / "overview.pftrace").stat().st_size > 0


FUZZED = sorted((ROOT / "tests" / "data" / "hostile" / "split").glob("*.json"))


@pytest.mark.parametrize("path", FUZZED, ids=lambda p: p.stem)
@pytest.mark.parametrize("by, clip", [("time=10ms", True), ("step", False)])
def test_fuzzed_inputs_split_or_end_in_one_line(tmp_path, path, by, clip):
    """The split target's first campaigns (seeds 777, 778): times past a double (an int of
    400 digits, 1e308 + 1e308 as an end, a window start that overflows once in ns), bytes
    that are not UTF-8 in a part the routing fields skip, and a piece of the event array
    with no event stopped split with an internal error. Such a time is no time for the span and the windows (as the reader drops the
    event), one past a double once in ns is held at the edge the model counts, and an
    event that is not JSON is the file's error, located."""
    result = CliRunner().invoke(app, ["split", str(path), "--by", by, "-o",
                                      str(tmp_path / "out"), *(["--clip"] if clip else [])])
    assert result.exit_code in (0, 1), result.output
    if result.exit_code:
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0] and "internal error" not in lines[0]
    else:
        manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
        assert len(manifest["pieces"]) + manifest["empty_windows"] == manifest["windows"]
        assert (tmp_path / "out" / "overview.pftrace").exists()


# traces of no timed event: none at all, metadata only, an X event without its "ts"
UNTIMED = {
    "empty": {"traceEvents": []},
    "metadata_only": {"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1,
                                       "args": {"name": "python"}}]},
    "no_ts": {"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "dur": 3}]},
}
UNTIMED_COMMANDS = {
    "overview": ["overview", "{input}", "-o", "{out}/ov.pftrace"],
    "split_time": ["split", "{input}", "--by", "time=1ms", "-o", "{out}/pieces"],
    "split_step": ["split", "{input}", "--by", "step", "-o", "{out}/pieces"],
    "split_rank": ["split", "{input}", "--by", "rank", "-o", "{out}/pieces"],
    "split_size": ["split", "{input}", "--target-size", "1MB", "-o", "{out}/pieces"],
}


@pytest.mark.parametrize("command", UNTIMED_COMMANDS)
@pytest.mark.parametrize("name", UNTIMED)
def test_a_trace_of_no_timed_event_is_refused_leaving_nothing(tmp_path, name, command):
    """Nothing to show or cut: one line naming the file and ``$``, exit 1, and no output
    (split made its folder first and left it behind, empty; overview wrote an empty one)."""
    source = tmp_path / f"{name}.json"
    source.write_text(json.dumps(UNTIMED[name]))
    out = tmp_path / "new" / "out"
    args = [part.format(input=source, out=out) for part in UNTIMED_COMMANDS[command]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"traceconv: error: {source}:$: no timed event: every event is metadata or has no "
        "usable 'ts', nothing to show or cut"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [source.name]   # (no "new")


def test_a_refused_split_leaves_the_folder_it_found_as_it_was(tmp_path):
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "notes.txt").write_text("mine")
    result = CliRunner().invoke(app, ["split", str(DDP[0]), "--by", "step", "-o", str(kept)])
    assert result.exit_code == 1 and "no step markers" in result.output
    assert [p.name for p in kept.iterdir()] == ["notes.txt"]
