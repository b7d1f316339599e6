"""Pieces written while the routing pass goes on (``splitting/ready.py``) are the pieces
written at its end, byte for byte, whatever the order of the file.

The reference is the same split with nothing published before the pass ends (the
bound switched off); a window written too early would make the spill refuse the next
event for it (a RuntimeError), or lose it: either fails here. Variants of real traces
(Kineto CPU and CUDA, multi-stream NCCL, Paddle, MegEngine's own step ends) are cut into
runs of events written in a shuffled order (a thread at a time, device work before its
launch, frees before allocations), with slices of the whole run written last as Kineto
does, read in small chunks so that there are many chunks to publish after."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from traceconv.formats.chrome import stream
from traceconv.splitting import ready, split
from traceconv.splitting.windows import DEVICE_WORK

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = {
    "cnn_step5": "samples/torch/cnn_step5.pt.trace.json",
    "resnet18": "samples/torch/resnet18_train_cuda.pt.trace.json.gz",
    "streams_nccl": "samples/torch/streams_graph_nccl_cuda.pt.trace.json.gz",
    "paddle_timeline": "tests/data/paddle/dygraph_CPU_Default.timeline.json.gz",
    "megengine_timeline": "tests/data/megengine/infer_traced_chrome_timeline.json",
}


def load(sample: str) -> dict:
    path = ROOT / SAMPLES[sample]
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)


def variant(doc: dict, rng: random.Random) -> dict:
    """The trace's events in runs, the runs in a shuffled order; sometimes the device work
    late (up to a step after its launch) and written last, in time order; sometimes the
    longer host slices as ``B``/``E`` pairs, their ends written last, in time order;
    sometimes a slice
    spanning the run and an instant at its start written after all."""
    events = [dict(e) for e in doc["traceEvents"]]
    timed = [e for e in events if isinstance(e.get("ts"), int | float)]
    late: list[dict] = []
    if rng.random() < 0.5:
        span = max(e["ts"] for e in timed) - min(e["ts"] for e in timed)
        lag = rng.uniform(0.01, 0.2) * span
        device = [e for e in events if e.get("ph") == "X" and DEVICE_WORK[e.get("cat")]]
        for e in device:
            e["ts"] += rng.uniform(0, lag)
        late += sorted(device, key=lambda e: e["ts"])
        events = [e for e in events if not (e.get("ph") == "X" and DEVICE_WORK[e.get("cat")])]
    if rng.random() < 0.5:
        long = sorted((e for e in events if e.get("ph") == "X" and e.get("dur", 0) > 0
                       and not str(e.get("name", "")).startswith("Profile")
                       and not DEVICE_WORK[e.get("cat")]),
                      key=lambda e: -e["dur"])[:50]
        ends = []
        for e in long:
            e["ph"] = "B"
            ends.append({"ph": "E", "ts": e["ts"] + e.pop("dur"), "pid": e.get("pid"),
                         "tid": e.get("tid")})
        late += sorted(ends, key=lambda e: e["ts"])
    runs = rng.randrange(1, 6)
    size = -(-len(events) // runs)
    parts = [events[k:k + size] for k in range(0, len(events), size)]
    rng.shuffle(parts)
    order = [e for part in parts for e in part] + late
    if timed and rng.random() < 0.7:
        first = min(e["ts"] for e in timed)
        last = max(e["ts"] + e.get("dur", 0) for e in timed)
        order += [{"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans",
                   "tid": "PyTorch Profiler", "ts": first, "dur": last - first},
                  {"ph": "i", "s": "g", "name": "Iteration Start", "pid": "Traces",
                   "tid": "Trace", "ts": first}]
    return dict(doc, traceEvents=order)


def pieces(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def both(source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         **options: object) -> tuple[dict[str, bytes], dict[str, bytes], list[tuple[int, int]]]:
    """The pieces written as they are ready, the pieces written at the end, and the
    windows published before the end, in order, each with the chunk read before it."""
    early: list[tuple[int, int]] = []
    took = ready.ReadyPieces.took

    def noting(self: ready.ReadyPieces, chunk_events: int) -> None:
        before = len(self.published)
        took(self, chunk_events)
        early.extend((self.taken - 1, w) for w in self.published[before:])

    with monkeypatch.context() as patch:
        patch.setattr(ready.ReadyPieces, "took", noting)
        split(source, tmp_path / "ready", **options)
    with monkeypatch.context() as patch:
        patch.setattr(ready.ReadyPieces, "took", lambda self, n: None)
        split(source, tmp_path / "end", **options)
    return pieces(tmp_path / "ready"), pieces(tmp_path / "end"), early


@pytest.mark.parametrize("seed", range(10))
def test_pieces_written_as_they_are_ready_are_those_written_at_the_end(
        seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(seed)
    sample = sorted(SAMPLES)[seed % len(SAMPLES)]
    source = tmp_path / "variant.json"
    source.write_text(json.dumps(variant(load(sample), rng)))
    monkeypatch.setattr(stream, "CHUNK", rng.choice([2048, 8192, 32768]))
    options = {"by": "auto", "clip": rng.random() < 0.3, "context": rng.random() < 0.3,
               "target_size": rng.choice([0, 40_000, 200_000]), "overview": False}
    if rng.random() < 0.3:
        options["by"] = "time=" + rng.choice(["2ms", "20ms", "200ms"])
    ready_pieces, end_pieces, _ = both(source, tmp_path, monkeypatch, **options)
    assert ready_pieces == end_pieces


def test_a_kineto_trace_publishes_its_windows_during_the_last_sweep(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real CPU trace in its own order (a thread after the other, the run's span
    last): the pieces of the steps between the first and the last are written before
    the chunk that holds the span is read, in time order."""
    source = ROOT / SAMPLES["cnn_step5"]
    monkeypatch.setattr(stream, "CHUNK", 4096)
    ready_pieces, end_pieces, early = both(source, tmp_path, monkeypatch, by="step",
                                           overview=False)
    assert ready_pieces == end_pieces
    manifest = json.loads(ready_pieces["manifest.json"])
    indices = [p["index"] for p in manifest["pieces"]]
    last_chunk = max(chunk for chunk, _ in early)
    before_span = [w for chunk, w in early if chunk < last_chunk and w in indices]
    assert before_span == indices[1:-1]


def steps(first: int, length: int) -> list[dict]:
    """Three step markers of ``length`` from ``first``."""
    return [{"ph": "X", "name": f"ProfilerStep#{k}", "cat": "user_annotation",
             "ts": first + length * k, "dur": length - 1, "pid": 1, "tid": 1}
            for k in range(3)]


def small_chunks(source: Path, events: list[dict], tmp_path: Path,
                 monkeypatch: pytest.MonkeyPatch
                 ) -> tuple[dict[str, bytes], dict[str, bytes], list[tuple[int, int]]]:
    """:func:`both` of ``events`` written to ``source``, by step, read in 512-byte chunks."""
    source.write_text(json.dumps({"traceEvents": events}))
    monkeypatch.setattr(stream, "CHUNK", 512)
    return both(source, tmp_path, monkeypatch, by="step", overview=False)


def test_the_end_of_a_slice_written_late_holds_its_start_s_piece(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ``E`` goes to the piece of its ``B``: written after the events of the next step,
    it holds the piece its ``B`` is in, not the one its own time is in."""
    def filler(start: int) -> list[dict]:
        return [{"ph": "X", "name": f"op{t}", "ts": t, "dur": 1, "pid": 1, "tid": 1}
                for t in range(start, start + 100, 2)]

    events = [*steps(0, 100), {"ph": "B", "name": "long", "ts": 50, "pid": 1, "tid": 2},
              *filler(0), *filler(100),
              {"ph": "E", "ts": 150, "pid": 1, "tid": 2}, *filler(200)]
    ready_pieces, end_pieces, early = small_chunks(tmp_path / "late_end.json", events,
                                                   tmp_path, monkeypatch)
    assert ready_pieces == end_pieces
    first = json.loads(ready_pieces["late_end-0-step0.json"])["traceEvents"]
    assert [e["ph"] for e in first if e.get("name") == "long" or e["ph"] == "E"] == ["B", "E"]
    assert early and early[0][1] == 0   # (written before the pass ended)


def test_chunks_not_those_of_the_first_pass_publish_nothing_more_before_the_end(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bounds are per chunk of the first pass: read in other chunks, the routing pass
    writes no piece before its end (and the pieces are the same)."""
    import traceconv.splitting as splitting

    survey = splitting.survey_trace

    def small_chunks(*args: object, **kwargs: object) -> object:
        with monkeypatch.context() as patch:
            patch.setattr(stream, "CHUNK", 1024)
            return survey(*args, **kwargs)   # type: ignore[arg-type]

    monkeypatch.setattr(splitting, "survey_trace", small_chunks)
    monkeypatch.setattr(stream, "CHUNK", 4096)
    ready_pieces, end_pieces, early = both(ROOT / SAMPLES["cnn_step5"], tmp_path,
                                           monkeypatch, by="step", overview=False)
    assert ready_pieces == end_pieces and early == []


@pytest.mark.parametrize("late", [-1, 0])
def test_an_event_just_before_a_window_whose_time_reads_as_its_start_holds_the_window_before(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, late: int) -> None:
    """Times past 2^53 (Paddle's nanosecond epochs) are the same double a few ns apart:
    an event 1 ns before a step's start, written after everything, still goes to the
    window before, and that window is not let go before it (empty until then, it would
    have been dropped); at the start itself it goes to the step."""
    edge = 2**60 + 256   # edge - 1 reads as the same double
    filler = [{"ph": "X", "name": f"op{k}", "ts": edge + 7 * k, "dur": 1, "pid": 1, "tid": 1}
              for k in range(400)]
    events = [*steps(edge, 1000), *filler,
              {"ph": "X", "name": "late", "ts": edge + late, "dur": 1, "pid": 1, "tid": 1}]
    ready_pieces, end_pieces, _ = small_chunks(tmp_path / "epoch.json", events, tmp_path,
                                               monkeypatch)
    assert ready_pieces == end_pieces
    holding = [name for name, text in ready_pieces.items() if b'"late"' in text]
    assert holding == ["epoch-0-before.json" if late else "epoch-0-step0.json"]
