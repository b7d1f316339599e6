"""What the round-three fuzz campaigns found (issue 23), one minimised input per class.

Each input goes through the fuzzer's own contract (:func:`benchmarks.fuzz.worker.run_target`
with the model check on): the read either succeeds with a model that keeps every
invariant (``traceconv.validate``) and every writer then writes or refuses cleanly, or it
is refused with a located error. Before the fixes these were: two ``TypeError``\\s in the
Perfetto reader (a number field with the bytes wire type; a track name that is not UTF-8,
which protobuf hands over as bytes), a ``RecursionError`` in the DOT writer (a shape nested
thousands deep), a hang on an allocator-settings memo DAG, and models with negative
lengths or frees before allocations (MegEngine, Paddle, MIGraphX) or with a MIGraphX
instruction name printed twice or re-used by a trace-eval record of another operator.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import traceconv
from benchmarks.fuzz import worker

FOUND = Path(__file__).parent / "data" / "hostile" / "fuzz_round3"
INPUTS = sorted(FOUND.glob("*.input"))


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_a_fuzz_finding_keeps_the_contract(path: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(worker, "VALIDATE", True)
    target = path.name.split("__")[0]
    # (10 CPU seconds: the campaign's own limit, past which an input counts as a hang)
    outcome = worker.Runner(str(tmp_path), timeout=10).run(target, path.read_bytes())
    assert outcome.status in ("ok", "error"), (outcome.signature, outcome.detail)


def test_every_class_is_here():
    assert len(INPUTS) == 11


def test_a_migraphx_name_printed_twice_gets_its_own_op(tmp_path: Path):
    path = tmp_path / "paste.txt"
    path.write_bytes((FOUND / "migraphx__invalid_owner.input").read_bytes())
    trace = traceconv.load(path, format="migraphx")
    assert trace.diagnostics.count("migraphx.name_repeated") == 1
    assert {"op/main/@3", "op/main/@3#2"} <= set(trace.graph.nodes)


def test_negative_lengths_are_counted(tmp_path: Path):
    path = tmp_path / "meminfo"
    path.write_bytes((FOUND / "megengine-meminfo__invalid_memory.input").read_bytes())
    trace = traceconv.load(path, format="megengine-meminfo")
    assert trace.diagnostics.count("model.negative_length") >= 1
    assert all(block.size >= 0 for block in trace.memory)
