"""``MemoryBlock.owner_op`` is a node of the op graph (or None), ``owner_name`` that op's name.

Every bundled sample with memory blocks is read; where the reader builds no op graph, the
names are checked against the raw file for one Kineto profile (the innermost ``cpu_op``
around each ``[memory]`` alloc on its thread, else the innermost slice there), found here
with the json module.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import traceconv
from tests.conftest import SAMPLES, bundled_files
from traceconv.model.graph import OP

NOT_TRACES = {"broken.json"}  # hand-made bad input for the error-message examples
MEMORY_SAMPLES = sorted(
    p for p in bundled_files(SAMPLES) if p.suffix != ".md" and p.name not in NOT_TRACES)


@pytest.mark.slow
@pytest.mark.parametrize("path", MEMORY_SAMPLES, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_owner_op_is_a_graph_node_named_owner_name(path: Path):
    trace = traceconv.load(path, joining=True)   # (a settings sample alone too)
    for block in trace.memory:
        if block.owner_op is None:
            continue
        node = trace.graph.nodes.get(block.owner_op)
        assert node is not None and node["kind"] == OP, block
        assert block.owner_name == node["name"], block


@pytest.mark.slow
def test_samples_with_owners_cover_every_kind_of_reader():
    # readers with an op graph (MegEngine, MIGraphX, Paddle's protobuf) fill both fields;
    # those without (Kineto, Paddle's legacy profile) fill owner_name only
    with_graph, without = set(), set()
    for path in MEMORY_SAMPLES:
        trace = traceconv.load(path, joining=True)
        if any(b.owner_op is not None for b in trace.memory):
            with_graph.add(trace.metadata.framework)
        elif any(b.owner_name is not None for b in trace.memory):
            assert not any(kind == OP for _, kind in trace.graph.nodes(data="kind"))
            without.add(trace.metadata.framework)
    assert with_graph == {"MegEngine", "MIGraphX", "PaddlePaddle"}
    assert without == {"PyTorch", "PaddlePaddle"}


def _innermost(candidates: list[dict]) -> dict | None:
    return max(candidates, key=lambda e: (e["ts"], -e["dur"]), default=None)


def test_kineto_owner_name_is_the_enclosing_op_of_the_raw_file():
    path = SAMPLES / "torch" / "cnn_step5.pt.trace.json"
    events = json.loads(path.read_text())["traceEvents"]
    slices = [e for e in events if e.get("ph") == "X"]
    expected = []
    for e in sorted((e for e in events if e.get("name") == "[memory]"
                     and e["args"]["Bytes"] > 0), key=lambda e: e["ts"]):
        around = [s for s in slices if (s["pid"], s["tid"]) == (e["pid"], e["tid"])
                  and s["ts"] <= e["ts"] <= s["ts"] + s["dur"]]
        owner = (_innermost([s for s in around if s.get("cat") == "cpu_op"])
                 or _innermost(around))
        expected.append(None if owner is None else owner["name"])
    trace = traceconv.load(path)
    blocks = sorted((b for b in trace.memory if b.alloc_ns is not None),
                    key=lambda b: b.alloc_ns)
    assert len(blocks) == len(expected) == 291
    assert [b.owner_name for b in blocks] == expected
    assert all(b.owner_op is None for b in trace.memory)  # Kineto has no op graph
    pytest.importorskip("pandas")
    frame = trace.to_pandas("memory")
    assert frame["owner_name"].astype(str).tolist() == [b.owner_name or "" for b in trace.memory]
