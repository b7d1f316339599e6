"""Converting a Chrome / Kineto trace piece by piece gives the trace converting it whole
gives (issue 35: a trace of any size in bounded memory; traceconv/streaming.py).

The expected trace is the whole conversion's, read two ways: by the real trace_processor
(its slice table with each slice's depth and thread, its counters and arguments: what the
Perfetto UI shows) and by traceconv reading the file back (memory blocks with their owners,
flows, diagnostics). Pieces are made small, so that a sample of a few MB is cut in many
places: steps grouped, time windows, device work after its step, blocks alive across cuts,
slices open across cuts. The one thing a piece cannot give back, a flow whose two ends
fall in different pieces, is counted (``stream.flows_cut``) and compared with the flows
missing.
"""

from __future__ import annotations

import collections
import json
import random
import re
from decimal import Decimal
from pathlib import Path

import pytest

import traceconv
from traceconv.splitting import split
from traceconv.streaming import convert_piece_by_piece, goes_piece_by_piece

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = {
    "cnn_step5": "samples/torch/cnn_step5.pt.trace.json",              # CPU, memory, lanes
    "resnet18": "samples/torch/resnet18_train_cuda.pt.trace.json.gz",  # CUDA, launches
    "gpt_compile": "samples/torch/gpt_compile_bf16_cuda.pt.trace.json.gz",
    "streams_nccl": "samples/torch/streams_graph_nccl_cuda.pt.trace.json.gz",
    "ddp_gloo": "samples/torch/ddp_gloo_rank0.pt.trace.json.gz",       # no steps: by time
    # ns times near 1.8e18 (a double is 48 ns off: the cuts are read as the pieces write them)
    "paddle_timeline": "tests/data/paddle/dygraph_CPU_Default.timeline.json.gz",
    "megengine_timeline": "tests/data/megengine/infer_traced_chrome_timeline.json",
}
STREAM_CODES = ("stream.", "chrome.flow_dangling")   # (the cut flows' ends, counted apart)


def both(sample: str | Path, piece_bytes: int, tmp_path: Path
         ) -> tuple[Path, Path, traceconv.Trace]:
    source = str(sample if isinstance(sample, Path) else ROOT / SAMPLES[sample])
    whole, pieces = tmp_path / "whole.pftrace", tmp_path / "pieces.pftrace"
    traceconv.convert(source, whole)
    shared, _ = convert_piece_by_piece(source, str(pieces), piece_bytes=piece_bytes)
    return whole, pieces, shared


def _blocks(trace: traceconv.Trace) -> collections.Counter:
    return collections.Counter(
        (b.device, b.address, b.size, b.alloc_ns, b.free_ns, b.owner_name, b.category)
        for b in trace.memory)


def _slices(trace: traceconv.Trace) -> collections.Counter:
    tracks = trace.tracks
    return collections.Counter((s.start, s.dur, s.name, s.category, tracks[s.track].name)
                               for s in trace.iter_slices())


def _counters(trace: traceconv.Trace) -> collections.Counter:
    return collections.Counter((trace.tracks[c.track].name, c.ts, c.value)
                               for c in trace.iter_counter_samples())


def _flows(trace: traceconv.Trace) -> collections.Counter:
    return collections.Counter((trace.slice(f.source).start, trace.slice(f.source).name,
                                trace.slice(f.target).start, trace.slice(f.target).name)
                               for f in trace.iter_flows())


def _diagnostics(trace: traceconv.Trace) -> dict[str, int]:
    return {d["code"]: d["count"] for d in trace.diagnostics.as_list()
            if not d["code"].startswith(STREAM_CODES)}


@pytest.mark.parametrize("sample", sorted(SAMPLES))
@pytest.mark.parametrize("piece_bytes", [150_000, 600_000])
def test_pieces_read_back_as_the_whole(sample: str, piece_bytes: int, tmp_path: Path):
    whole, pieces, _ = both(sample, piece_bytes, tmp_path)
    a, b = traceconv.load(whole), traceconv.load(pieces)
    assert _slices(b) == _slices(a)
    assert _counters(b) == _counters(a)
    assert len(b.instants) == len(a.instants)
    assert _blocks(b) == _blocks(a)
    assert _diagnostics(b) == _diagnostics(a)
    missing = _flows(a) - _flows(b)
    assert not _flows(b) - _flows(a)
    assert sum(missing.values()) == b.diagnostics.count("stream.flows_cut")


def test_the_memory_blocks_alive_across_cuts_are_joined(tmp_path: Path):
    """resnet18's CUDA caching allocator frees on another thread than it allocates: in
    file order a free comes before its allocation. Every block alive at a cut is one
    block, as in the whole trace (before the pairing in time order, 37 blocks were cut in
    two or copied where the whole trace had freed them)."""
    _, pieces, shared = both("resnet18", 150_000, tmp_path)
    assert shared.diagnostics.count("stream.memory_blocks_joined") > 0
    assert len(traceconv.load(pieces).memory) == len(traceconv.load(
        str(ROOT / SAMPLES["resnet18"])).memory)


def _half_ns_tie(value: float) -> bool:
    """Whether ``value`` µs, as written (its shortest digits), ends half a ns past one that
    the double itself lies below or above: its digits round one way, its value the other."""
    digits = Decimal(repr(value)) * 1000
    whole = int(value)
    return digits % 1 == Decimal("0.5") and round(digits) != whole * 1000 + round(
        (value - whole) * 1000)


def test_times_written_below_the_ns_are_cut_where_they_are_read(tmp_path: Path):
    """A time written with digits below the ns (``4482851316030.7295`` µs: half a ns, as a
    trace shifted in time by adding floats gets them) is read to the ns by the reader's
    rule (729); a cut made at one must be read so too (not 730), or a piece's copies of the
    blocks and slices alive at its start are not recognised and are written again (30
    blocks and 6 slices at one cut of the 10 M-event benchmark trace). The sample is moved
    in time until a step, where a piece starts, begins at such a time."""
    doc = json.loads((ROOT / SAMPLES["cnn_step5"]).read_text())
    steps = [e["ts"] for e in doc["traceEvents"] if str(e.get("name")).startswith("Profiler")]
    shift = next(j / 10_000 for j in range(1, 1_000_000)
                 if any(_half_ns_tie(ts + j / 10_000) for ts in steps[1:]))
    for event in doc["traceEvents"]:
        if type(event.get("ts")) is float:
            event["ts"] += shift
    source = tmp_path / "shifted.json"
    source.write_text(json.dumps(doc))
    whole, pieces, _ = both(source, 150_000, tmp_path)
    a, b = traceconv.load(whole), traceconv.load(pieces)
    assert (_slices(b), _blocks(b), _counters(b)) == (_slices(a), _blocks(a), _counters(a))
    assert len(b.instants) == len(a.instants)


def test_split_gives_each_cut_the_ns_its_piece_reads(tmp_path: Path):
    """The manifest's ns of a cut is what the reader reads of the number split writes, for
    times of every kind: Kineto's µs with 3 to 5 decimals, epoch µs past a double's ns
    (read from their digits), whole µs. Expected: traceconv reading a file of events at
    those times, written as split writes them (``orjson``)."""
    import orjson

    from traceconv.splitting.events import ns_time

    rng = random.Random(35)
    times = [4482851316030.7295, 1712195495505582.988, 1.5, 7.0]
    times += [round(rng.uniform(1e12, 9e12), rng.choice((3, 4, 5))) for _ in range(300)]
    times += [round(rng.uniform(1e15, 1.8e15), 3) for _ in range(100)]
    events = [{"ph": "X", "name": f"e{i}", "pid": 1, "tid": 1, "ts": ts, "dur": 1}
              for i, ts in enumerate(times)]
    path = tmp_path / "times.json"
    path.write_bytes(orjson.dumps({"traceEvents": events}))
    read = {s.name: s.start for s in traceconv.load(path).iter_slices()}
    assert [ns_time(ts, 1000) for ts in times] == [read[f"e{i}"] for i in range(len(times))]


@pytest.mark.parametrize("seed", range(4))
def test_any_piece_size_gives_the_whole(seed: int, tmp_path: Path):
    piece_bytes = random.Random(seed).randrange(60_000, 1_200_000)
    whole, pieces, _ = both("cnn_step5", piece_bytes, tmp_path)
    a, b = traceconv.load(whole), traceconv.load(pieces)
    assert (_slices(b), _blocks(b), _counters(b)) == (_slices(a), _blocks(a), _counters(a))


QUERIES = (
    "select s.ts, s.dur, s.name, s.category, s.depth, coalesce(th.name, t.name) "
    "from slice s join track t on s.track_id = t.id left join thread_track tt "
    "on tt.id = s.track_id left join thread th using (utid)",
    "select c.ts, c.value, t.name from counter c join counter_track t on c.track_id = t.id",
    "select count(*) from args",
)


@pytest.mark.parametrize("sample", ["cnn_step5", "resnet18", "gpt_compile"])
def test_trace_processor_shows_the_whole(sample: str, tmp_path: Path, trace_processor):
    whole, pieces, _ = both(sample, 150_000, tmp_path)
    seen = []
    for path in (whole, pieces):
        trace_processor.load(path.read_bytes())
        assert trace_processor.bad_stats() == []
        seen.append([collections.Counter(tuple(r.__dict__.values())
                                         for r in trace_processor.query(q)) for q in QUERIES])
    assert seen[1] == seen[0]


def test_a_split_pairs_memory_in_time_order_not_file_order(tmp_path: Path):
    """Thread 2's frees are written after thread 1's allocations (Kineto writes a thread at a
    time); by time, the block at 0x40 allocated at 1 is freed at 15, after the cut at 10, and
    allocated again at 20. The piece after the cut must hold a copy of the first block, or
    read alone it has a free without allocation (a copy of the second, which the split made
    before, is a block the whole trace does not have at that time)."""
    def memory(ts: int, size: int, tid: int) -> dict:
        return {"ph": "i", "s": "t", "name": "[memory]", "cat": "cpu_instant_event",
                "pid": 1, "tid": tid, "ts": ts,
                "args": {"Bytes": size, "Addr": 64, "Device Type": 0, "Device Id": -1}}

    events = [{"ph": "X", "name": "ProfilerStep#1", "cat": "user_annotation", "pid": 1,
               "tid": 1, "ts": 0, "dur": 10},
              {"ph": "X", "name": "ProfilerStep#2", "cat": "user_annotation", "pid": 1,
               "tid": 1, "ts": 10, "dur": 20},
              memory(1, 8, 1), memory(20, 8, 1), memory(15, -8, 2), memory(25, -8, 2)]
    source = tmp_path / "t.json"
    source.write_text(json.dumps({"traceEvents": events}))
    manifest = split(source, tmp_path / "pieces", by="step")
    second = json.loads((tmp_path / "pieces" / manifest["pieces"][1]["file"]).read_text())
    copies = [e for e in second["traceEvents"] if e.get("args", {}).get("Pre-existing")]
    assert [(e["ts"], e["args"]["Allocated at"]) for e in copies] == [(10, 1)]
    piece = traceconv.load(tmp_path / "pieces" / manifest["pieces"][1]["file"])
    assert piece.diagnostics.count("kineto.free_without_alloc") == 0


def test_a_split_counts_a_flow_whose_finish_comes_first_in_the_file(tmp_path: Path):
    """A kernel's ``f`` (written with the device's events) before its launch's ``s``: the
    flow is cut when they fall in different windows, whatever the file order."""
    events = [{"ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": 7, "pid": 1,
               "tid": 1, "ts": 15},
              {"ph": "X", "name": "k", "cat": "user_annotation", "pid": 1, "tid": 1, "ts": 15,
               "dur": 1},
              {"ph": "X", "name": "launch", "cat": "user_annotation", "pid": 1, "tid": 1,
               "ts": 2, "dur": 1},
              {"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 7, "pid": 1, "tid": 1, "ts": 2}]
    source = tmp_path / "t.json"
    source.write_text(json.dumps({"traceEvents": events}))
    manifest = split(source, tmp_path / "pieces", by="time=10us")
    assert manifest["cuts"]["flows"] == 1


def test_the_manifest_times_are_the_times_the_pieces_read(tmp_path: Path):
    """Kineto's µs with three decimals near 4.5e12: ``round(ts * 1000)`` can land one ns off
    the reader's exact decimals; a piece's start in the manifest is its marker's start."""
    manifest = split(ROOT / SAMPLES["cnn_step5"], tmp_path / "pieces", by="step")
    for entry in manifest["pieces"][1:]:
        piece = traceconv.load(tmp_path / "pieces" / entry["file"])
        base = piece.metadata.clock_base_ns or 0
        steps = [s.start for s in piece.iter_slices() if s.name.startswith("ProfilerStep#")
                 and not (s.args or {}).get("traceconv context from")]
        assert min(steps) - base == entry["start_ns"]


def test_the_command_line_goes_piece_by_piece_when_asked(tmp_path: Path):
    from click.testing import CliRunner

    from traceconv.cli import app

    source = str(ROOT / SAMPLES["cnn_step5"])
    out = tmp_path / "out.pftrace"
    result = CliRunner().invoke(app, [source, "-o", str(out), "--piece-by-piece"])
    assert result.exit_code == 0, result.output
    assert "converted piece by piece" in result.output
    assert _slices(traceconv.load(out)) == _slices(traceconv.load(source))
    refused = CliRunner().invoke(app, [source, "--to", "chrome", "-o",
                                       str(tmp_path / "x.json"), "--piece-by-piece"])
    assert refused.exit_code == 2
    assert "--piece-by-piece converts one Chrome / Kineto JSON file" in refused.output


def test_a_refusal_piece_by_piece_is_one_line_and_no_output(tmp_path: Path):
    """A trace cut short in its last event: the split reads it to its end before any
    piece is written, so the run ends in the reader's one line (the place: line:col)."""
    from click.testing import CliRunner

    from traceconv.cli import app

    text = (ROOT / SAMPLES["cnn_step5"]).read_bytes()
    cut = tmp_path / "cut.json"
    cut.write_bytes(text[: len(text) * 9 // 10])
    out = tmp_path / "out.pftrace"
    result = CliRunner().invoke(app, [str(cut), "-o", str(out), "--piece-by-piece"])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert len(lines) == 1 and re.match(rf"traceconv: error: {re.escape(str(cut))}:\d+:\d+: ",
                                        lines[0]), lines
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["cut.json"]


def test_the_switch_is_automatic_past_the_limit(monkeypatch):
    import traceconv.streaming as streaming

    source = str(ROOT / SAMPLES["cnn_step5"])
    assert not goes_piece_by_piece(source, None, "perfetto", None)
    monkeypatch.setattr(streaming, "WHOLE_LIMIT", 1 << 20)
    assert goes_piece_by_piece(source, None, "perfetto", None)
    assert not goes_piece_by_piece(source, None, "chrome", None)
    assert not goes_piece_by_piece(source, None, "perfetto", False)


def test_the_switch_follows_the_memory_available(monkeypatch):
    """Whole when it fits; piece by piece when only a piece fits; else the whole read's own
    refusal (the first step finds it); ``memory_check=False`` tries the whole anyway."""
    import traceconv.memory_check as memory_check
    import traceconv.streaming as streaming

    source = str(ROOT / SAMPLES["cnn_step5"])
    size = Path(source).stat().st_size
    # by hand: the spilled estimate is 0.33 bytes per byte of JSON and 100 MiB
    whole_needs = int(size * 0.33) + (100 << 20)
    monkeypatch.setattr(streaming, "PIECE_BYTES", size // 4)
    piece_needs = int(size // 4 * 0.33) + (100 << 20)
    for available, expected in ((whole_needs, False), (whole_needs - 1, True),
                                (piece_needs, True), (piece_needs - 1, False)):
        monkeypatch.setattr(memory_check, "available_memory", lambda a=available: a)
        assert goes_piece_by_piece(source, None, "perfetto", None) is expected, available
        assert not goes_piece_by_piece(source, None, "perfetto", None, memory_check=False)


def test_the_progress_tells_each_pass_to_its_end(tmp_path: Path):
    """Three passes, in order, each told up to its total: the input's size (``os``) for the
    two reads of the input; the terminal's bar fits 80 columns."""
    import io

    from rich.console import Console

    from traceconv.cli.progress import PASS_ORDER, PassMeter

    source = str(ROOT / SAMPLES["cnn_step5"])
    screen = io.StringIO()
    meter = PassMeter(source, len(PASS_ORDER), Console(file=screen, force_terminal=True,
                                                       width=80))
    told: list[tuple[str, int, int]] = []

    def progress(stage: str, done: int, total: int) -> None:
        told.append((stage, done, total))
        meter(stage, done, total)

    convert_piece_by_piece(source, str(tmp_path / "out.pftrace"), piece_bytes=300_000,
                           progress=progress)
    meter.stop()
    stages = [stage for stage, _, _ in told]
    assert sorted(set(stages), key=stages.index) == list(PASS_ORDER)
    assert stages == sorted(stages, key=PASS_ORDER.index)
    size = Path(source).stat().st_size
    for stage in PASS_ORDER:
        dones = [done for s, done, _ in told if s == stage]
        totals = {total for s, _, total in told if s == stage}
        assert dones == sorted(dones) and len(totals) == 1 and dones[-1] == totals.pop()
    assert told[0][2] == size and [t for t in told if t[0] == "cutting"][-1][2] == size
    drawn = screen.getvalue().replace("\r", "\n").split("\n")
    assert "pass 3/3: writing" in screen.getvalue()
    assert max(len(line) for line in (re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", x)
                                      for x in drawn)) <= 80
