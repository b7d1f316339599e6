"""Kernels of a replayed HIP graph mapped back to the ops that captured them (issue 38, item 8).

The expected values come from a referee that reads both files with ``json``: the replay's
kernels of each graph launch in time order per stream, and the capture's launch calls
between ``hipStreamBeginCapture`` and ``hipStreamEndCapture`` in time order, each with the
innermost ``cpu_op`` and ``user_annotation`` around it on its thread.
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.analysis.graph_replay import align_in_order, annotate_replay, map_replay
from traceconv.cli import app
from traceconv.model import ProcessKind, Trace

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "graph_replay"
BUNDLED = (DATA / "vllm_decode_graph_execution.json.gz",
           DATA / "vllm_decode_capture_window.json.gz")
CORPUS = ROOT.parent / "shared" / "corpus" / "round4" / "kineto"
FULL = (CORPUS / "tracelens_vllm_decode_full_graph_execution.json.gz",
        CORPUS / "tracelens_vllm_decode_full_graph_capture_rank0.pt.trace.json.gz")


def _events(path: Path) -> list[dict]:
    return json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]


def _innermost(ranges: list[dict], call: dict) -> str | None:
    around = [e for e in ranges if e["tid"] == call["tid"] and e["ts"] <= call["ts"]
              and e["ts"] + e["dur"] >= call["ts"] + call["dur"]]
    around.sort(key=lambda e: (e["ts"], -e["dur"]))
    return around[-1]["name"] if around else None


def referee(replay: Path, capture: Path) -> tuple[dict[int, list[str]], list[dict]]:
    """Replayed kernel names per stream in time order; captured launches in order, each
    ``{"kernel", "op", "annotation"}``."""
    rep = _events(replay)
    graph_ids = {e["args"]["correlation"] for e in rep if e.get("ph") == "X"
                 and re.match(r"(cuda|hip)GraphLaunch", e["name"])}
    per_stream: dict[int, list[str]] = {}
    for e in sorted((e for e in rep if e.get("cat") == "kernel"
                     and e["args"].get("correlation") in graph_ids), key=lambda e: e["ts"]):
        per_stream.setdefault(e["args"]["stream"], []).append(e["name"])
    cap = _events(capture)
    (begin,) = [e for e in cap if e.get("name") == "hipStreamBeginCapture"]
    (end,) = [e for e in cap if e.get("name") == "hipStreamEndCapture"]
    calls = sorted((e for e in cap if e.get("cat") == "cuda_runtime"
                    and "kernel" in e.get("args", {}) and begin["ts"] <= e["ts"] <= end["ts"]),
                   key=lambda e: e["ts"])
    ops, notes = ([e for e in cap if e.get("ph") == "X" and e.get("cat") == category]
                  for category in ("cpu_op", "user_annotation"))
    launches = [{"kernel": e["args"]["kernel"], "op": _innermost(ops, e),
                 "annotation": _innermost(notes, e)} for e in calls]
    return per_stream, launches


def _check_pair(replay: Path, capture: Path) -> None:
    per_stream, launches = referee(replay, capture)
    annotated = annotate_replay(traceconv.load(replay), traceconv.load(capture))
    replayed = sum(len(names) for names in per_stream.values())
    mapped = 0
    for stream, names in per_stream.items():
        rows = sorted((s for s in annotated.iter_slices() if s.category == "kernel"
                       and s.args.get("stream") == stream and "captured_launch" in s.args),
                      key=lambda s: s.start)
        positions = [s.args["captured_launch"] for s in rows]
        assert positions == sorted(set(positions))          # in capture order, each once
        for s in rows:
            launch = launches[s.args["captured_launch"]]
            assert s.name == launch["kernel"]
            assert s.args["captured_op"] == launch["op"]
            assert s.args["captured_annotation"] == launch["annotation"]
        mapped += len(rows)
        assert len(names) == len(rows) + annotated.diagnostics.count("graph_replay.unmatched")
    assert replayed == 421 and mapped / replayed >= 0.95
    assert mapped == 421 == len(launches)       # the decode graph replays its capture whole


def test_bundled_pair_maps_every_replayed_kernel_in_capture_order():
    _check_pair(*BUNDLED)


@pytest.mark.shared
@pytest.mark.slow
def test_full_corpus_pair_maps_every_replayed_kernel_in_capture_order():
    if not FULL[1].is_file():
        pytest.skip("../shared/corpus is not beside this checkout")
    _check_pair(*FULL)


def test_summary_by_annotation_counts_replayed_kernels_under_their_capture():
    per_stream, launches = referee(*BUNDLED)
    result = CliRunner().invoke(app, ["summary", str(BUNDLED[0]), "--graph-capture",
                                      str(BUNDLED[1]), "--by-annotation", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    ops = data["graph_replay"].pop("ops")
    assert {r["op"]: r["kernels"] for r in ops} == Counter(launch["op"] for launch in launches)
    assert data["graph_replay"] == {
        "graph_launches": 1, "replayed_kernels": 421, "mapped": 421, "unmatched": 0,
        "mapped_by_node_id": 0, "mapped_share": 1.0, "other_graph_work": 0,
        "phase": {"decode": 421}}
    rows = {r["annotation"]: r["kernels"] for r in data["annotations"]}
    for annotation, count in Counter(launch["annotation"] for launch in launches).items():
        assert rows[annotation] == count


def test_text_summary_says_how_many_kernels_were_mapped():
    result = CliRunner().invoke(app, ["summary", str(BUNDLED[0]), "--graph-capture",
                                      str(BUNDLED[1]), "-t", "1"])
    assert result.exit_code == 0, result.output
    assert "graph replay: 421 of 421 replayed kernels (1 graph launch)" in result.output
    assert "decode: 421" in result.output
    assert "vllm::moe_forward" in result.output        # the op that captured the MoE kernels


def test_a_replay_without_its_capture_counts_every_kernel_unmatched():
    replay = traceconv.load(BUNDLED[0])
    alone = annotate_replay(replay, replay)       # no capture window in a replay
    assert alone.diagnostics.count("graph_replay.unmatched") == 421
    assert not any("captured_op" in s.args for s in alone.iter_slices())


def _capture_of_two_graphs() -> Trace:
    """Two capture windows on one thread (batch 1 and batch 8), each under its own op."""
    t = Trace()
    main = t.add_track("main", process=t.add_process("host"))
    for at, op, kernels in ((0, "batch1", ("gemm_s", "norm")), (100, "batch8", ("gemm_l", "norm"))):
        t.add_slice(main, at, 1, "cudaStreamBeginCapture", "cuda_runtime")
        t.add_slice(main, at + 2, 50, op, "cpu_op")
        for i, kernel in enumerate(kernels):
            t.add_slice(main, at + 10 + 10 * i, 2, "cudaLaunchKernel", "cuda_runtime",
                        {"kernel": kernel})
        t.add_slice(main, at + 60, 1, "cudaStreamEndCapture", "cuda_runtime")
    return t


def test_each_replay_goes_to_the_capture_window_it_matches():
    replay = Trace()
    main = replay.add_track("main", process=replay.add_process("host"))
    stream = replay.add_track("stream 7", process=replay.add_process(
        "GPU 0", kind=ProcessKind.DEVICE))
    expected = {}
    for at, kernels, op in ((0, ("gemm_l", "norm"), "batch8"), (100, ("gemm_s", "norm"), "batch1"),
                            (200, ("gemm_l", "norm"), "batch8")):
        launch = replay.add_slice(main, at, 5, "cudaGraphLaunch", "cuda_runtime")
        for i, kernel in enumerate(kernels):
            row = replay.add_slice(stream, at + 10 + 10 * i, 5, kernel, "kernel")
            replay.add_flow(launch, row)
            expected[row] = op
        replay.add_flow(launch, replay.add_slice(stream, at + 40, 2, "Memcpy DtoD", "gpu_memcpy"))
    mapping = map_replay(replay, _capture_of_two_graphs())
    assert (mapping.graph_launches, mapping.replayed, mapping.mapped, mapping.other_work) == \
        (3, 6, 6, 3)
    assert {row: c.op for row, c in mapping.pairs.items()} == expected


NAMES = st.lists(st.sampled_from("abcde"), max_size=30)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(NAMES, NAMES)
def test_alignment_keeps_order_and_never_pairs_different_names(replayed, captured):
    matched = align_in_order(replayed, captured)
    pairs = [(i, j) for i, j in enumerate(matched) if j >= 0]
    assert [j for _, j in pairs] == sorted({j for _, j in pairs})
    assert all(replayed[i] == captured[j] for i, j in pairs)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(NAMES, st.integers(0, 30), st.sampled_from("abcdex"))
def test_one_extra_captured_launch_leaves_every_replayed_kernel_matched(names, at, extra):
    captured = names[:at] + [extra] + names[at:]
    matched = align_in_order(names, captured)
    assert -1 not in matched


def test_critical_path_names_the_op_that_captured_each_replayed_kernel():
    _, launches = referee(*BUNDLED)
    ops_of: dict[str, set] = {}
    for launch in launches:
        ops_of.setdefault(launch["kernel"], set()).add(launch["op"])
    result = CliRunner().invoke(app, ["critical-path", str(BUNDLED[0]), "--graph-capture",
                                      str(BUNDLED[1]), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    captured = [e for e in data["path"] if "captured_op" in e]
    assert captured and all(e["kind"] == "kernel" for e in captured)
    assert all(e["captured_op"] in ops_of[e["name"]] for e in captured)
    assert sum(row["links"] for row in data["captured_ops"]) == len(captured) <= 421
    assert sum(row["on_path_ns"] for row in data["captured_ops"]) == \
        sum(e["dur_ns"] for e in captured)


@pytest.mark.parametrize("command", ["summary", "critical-path"])
def test_a_missing_capture_is_one_line_naming_it(command, tmp_path):
    missing = tmp_path / "capture.json"
    result = CliRunner().invoke(app, [command, str(BUNDLED[0]), "--graph-capture", str(missing)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"traceconv: error: {missing}: No such file or directory"]
