"""Clock alignment of rank traces on their collectives (the real 4-rank gloo DDP job).

The four ranks ran on one host, so their clocks agree: the recorded times are the truth.
The tests shift ranks' clocks by seconds in the raw JSON (as hosts without clock sync
would) and check that alignment brings every event back to its recorded time.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

import traceconv
from tests.tp_wasm.layout import LINUX_PID_MAX, processes
from traceconv.analysis.align import align
from traceconv.analysis.collectives import find_calls
from traceconv.analysis.merge import merge
from traceconv.cli import app

RANKS = [f"ddp_gloo_rank{r}.pt.trace.json.gz" for r in range(4)]
SHIFT_US = [0, 2_500_000.0, -7_000_000.0, 31_000_000.0]   # seconds of disagreement
TARGET_NS = 200_000


def shifted_copy(src: Path, dst: Path, shift_us: float) -> Path:
    """The trace with every timestamp moved by ``shift_us`` (plain JSON, no traceconv)."""
    doc = orjson.loads(gzip.decompress(src.read_bytes()))
    for event in doc["traceEvents"]:
        if "ts" in event:
            event["ts"] = event["ts"] + shift_us
    dst.write_bytes(orjson.dumps(doc))
    return dst


def gloo_all_reduce_ends_ns(path: Path) -> list[float]:
    """Independent reference: epoch ns of the ends of the host gloo:all_reduce slices, from
    the raw JSON (Kineto: ``baseTimeNanoseconds`` + µs ``ts``)."""
    raw = path.read_bytes()
    doc = orjson.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)
    return sorted(doc["baseTimeNanoseconds"] + (e["ts"] + e["dur"]) * 1000
                  for e in doc["traceEvents"]
                  if e.get("name") == "gloo:all_reduce" and e.get("cat") == "user_annotation")


@pytest.fixture(scope="module")
def skewed(tmp_path_factory, samples: Path) -> list[Path]:
    out = tmp_path_factory.mktemp("skewed")
    return [shifted_copy(samples / "torch" / name, out / name.removesuffix(".gz"), shift)
            for name, shift in zip(RANKS, SHIFT_US, strict=True)]


def test_finds_the_gloo_collectives_of_each_rank(samples: Path):
    calls = find_calls(traceconv.load(samples / "torch" / RANKS[1]))
    assert {key: len(v) for key, v in calls.items()} == {
        ("host", "", "allreduce"): 3, ("host", "", "broadcast"): 2}
    expected = gloo_all_reduce_ends_ns(samples / "torch" / RANKS[1])
    got = [c.end for c in calls[("host", "", "allreduce")]]
    assert len(got) == 3 and all(abs(g - e) <= 1 for g, e in zip(got, expected, strict=True))


def test_shifted_ranks_come_back_within_200_us(skewed: list[Path], samples: Path):
    merged = merge([traceconv.load(p) for p in skewed])   # default: auto
    alignment = merged.metadata.attributes["alignment"]
    assert alignment["applied"] and alignment["collectives"] == 3
    for rank, shift in enumerate(SHIFT_US):
        assert abs(alignment["ranks"][rank]["offset_ns"] + shift * 1000) < TARGET_NS
    # every rank's all_reduce ends land within 200 µs of the recorded (one-clock) ends
    for rank, name in enumerate(RANKS):
        truth = gloo_all_reduce_ends_ns(samples / "torch" / name)
        tracks = {t.id for t in merged.tracks
                  if merged.processes[t.process].name.startswith(f"rank {rank}:")}
        ends = sorted(s.end for s in merged.iter_slices(name="gloo:all_reduce")
                      if s.track in tracks and s.category == "user_annotation")
        assert len(ends) == len(truth) == 3
        assert all(abs(e - t) < TARGET_NS for e, t in zip(ends, truth, strict=True))
    assert merged.diagnostics.count("align.shifted") == 3
    for rank in range(4):
        assert merged.diagnostics[f"align.residual.{rank}"].kind == "note"


def test_inputs_are_not_changed(skewed: list[Path]):
    traces = [traceconv.load(p) for p in skewed]
    before = [t.slices.numpy("start").tolist() for t in traces]
    merge(traces, align="collectives")
    assert [t.slices.numpy("start").tolist() for t in traces] == before


def test_auto_keeps_ranks_that_already_agree(samples: Path):
    traces = [traceconv.load(samples / "torch" / name) for name in RANKS]
    merged = merge(traces)
    alignment = merged.metadata.attributes["alignment"]
    assert not alignment["applied"] and "agree within" in alignment["reason"]
    assert merged.slices.numpy("start")[:len(traces[0].slices)].tolist() == (
        traces[0].slices.numpy("start").tolist())
    assert "align.kept" in merged.diagnostics
    # the ends of one all_reduce disagree by ~60 µs on one host: residuals say so
    assert 0 < max(r["residual_max_ns"] for r in alignment["ranks"]) < 100_000


def test_none_measures_but_never_shifts(skewed: list[Path]):
    result = align([traceconv.load(p) for p in skewed], mode="none")
    assert not result.applied and result.offsets == [0, 0, 0, 0]
    assert abs(result.ranks[3].offset_ns + 31e9) < TARGET_NS   # measured all the same


def test_no_collectives_no_shift(data: Path):
    trace = traceconv.load(data / "torch" / "kineto_after_fix_trace.json")
    result = align([trace, trace], mode="collectives")
    assert not result.applied and result.collectives == 0 and "no collective" in result.reason


def test_cli_info_reports_residual_skew(skewed: list[Path]):
    result = CliRunner().invoke(app, ["info", *map(str, skewed), "--json"])
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout)
    assert data["alignment"]["applied"] and len(data["alignment"]["ranks"]) == 4
    assert {d["code"] for d in data["diagnostics"]} >= {"align.shifted", "align.residual.3"}
    kept = CliRunner().invoke(app, ["info", *map(str, skewed), "--json", "--align", "none"])
    assert not orjson.loads(kept.stdout)["alignment"]["applied"]


def nccl_rank(shift_ns: int, order: list[int]) -> traceconv.Trace:
    """A rank with NCCL kernels on a GPU stream carrying Kineto's collective arguments; the
    calls are recorded in ``order`` (sequence numbers), ending at 1, 2, 3 ms (+ shift)."""
    from traceconv.model import ProcessKind, TrackKind

    trace = traceconv.Trace()
    gpu = trace.add_process("GPU 0", kind=ProcessKind.DEVICE, pid=0)
    stream = trace.add_track("stream 7", process=gpu, kind=TrackKind.STREAM, tid=7)
    for seq in order:
        end = seq * 1_000_000 + shift_ns
        trace.add_slice(stream, end - 200_000, 200_000,
                        "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                        "kernel", {"Collective name": "allreduce", "Process Group Name": "0",
                                   "Seq": seq})
    return trace


def test_nccl_kernels_match_by_sequence_number():
    ranks = [nccl_rank(0, [1, 2, 3]), nccl_rank(5_000_000_000, [1, 2, 3])]
    calls = find_calls(ranks[1])
    assert [c.seq for c in calls[("device", "0", "allreduce")]] == [1, 2, 3]
    assert align(ranks, mode="auto").offsets == [0, -5_000_000_000]


def test_perfetto_shows_each_rank_labelled(tmp_path: Path, samples: Path, trace_processor):
    out = tmp_path / "ddp.pftrace"
    paths = [str(samples / "torch" / name) for name in RANKS]
    assert CliRunner().invoke(app, [*paths, "-o", str(out)]).exit_code == 0
    trace_processor.load(out.read_bytes())
    shown = {name: (pid, set(labels)) for pid, name, labels in processes(trace_processor)}
    for rank in range(4):
        pid, labels = shown[f"rank {rank}: GPU 0"]
        assert pid > LINUX_PID_MAX   # a device has no pid of its own: a made-up one
        assert {f"rank {rank}", "world size 4", "NVIDIA H100 80GB HBM3", "backend gloo"} <= labels
        assert shown[f"rank {rank}: python3 (pid {1180 + rank})"][0] == 1180 + rank
