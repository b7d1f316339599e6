"""Links between the model's tables stay true through every transformation.

A tensor finds its memory block through the block's ``owner_tensor`` and its own
``alias_of`` (both node ids, renumbered by ``copy_into``), never through a row number kept
in an attribute. Expected values are read by hand from the MIGraphX two-run sample: each
run compiles ``@4 = gpu::gemm(a, b, main:#output_0)`` over three ``@param`` buffers
(lines 8-11 and 43-46), the gemm writing its output argument ``main:#output_0``.
"""

from __future__ import annotations

import traceconv
from tests.conftest import DATA
from traceconv.analysis.runs import select_run
from traceconv.analysis.trim import trim
from traceconv.model import MemoryBlock, Trace
from traceconv.model.graph import add_op, add_tensor
from traceconv.model.memory import tensor_blocks
from traceconv.model.validate import validate

TWO_RUNS = DATA / "migraphx" / "rocm7.2_perf_test_two_runs.txt"
# tensor (by its instruction) -> the parameter buffer that stores it, by hand from the file
BY_HAND = {"a": "a", "b": "b", "main:#output_0": "main:#output_0", "@4": "main:#output_0"}


def _blocks_by_tensor(trace: Trace) -> dict[str, tuple[str, str | None]]:
    """Tensor node id -> (its block's name, the block's owner tensor)."""
    return {tensor: (trace.memory[row].name, trace.memory[row].owner_tensor)
            for tensor, row in tensor_blocks(trace).items()}


def _expected(prefix: str) -> dict[str, tuple[str, str]]:
    return {f"{prefix}tensor/{run}/main/{tensor}":
            (buffer, f"{prefix}tensor/{run}/main/{buffer}")
            for run in ("program 1", "program 2") for tensor, buffer in BY_HAND.items()}


def test_reader_links_each_tensor_to_its_buffer():
    trace = traceconv.load(TWO_RUNS)
    assert _blocks_by_tensor(trace) == _expected("")
    assert validate(trace) == []


def test_select_run_keeps_the_second_runs_tensors_on_its_own_blocks():
    """Run 2's blocks become rows 0-2; its tensors still name them (a row number kept in
    a node attribute pointed at rows 3-5 of the 3-row table)."""
    second = select_run(traceconv.load(TWO_RUNS), 2)
    assert len(second.memory) == 3
    assert _blocks_by_tensor(second) == {
        tensor: value for tensor, value in _expected("").items() if "program 2" in tensor}
    assert validate(second) == []


def test_combine_renumbers_alias_links_with_the_node_ids():
    trace = traceconv.load(TWO_RUNS)
    both = traceconv.combine([trace, trace])
    first, second = (f"{TWO_RUNS.name}/", f"{TWO_RUNS.name} #2/")
    assert _blocks_by_tensor(both) == {**_expected(first), **_expected(second)}
    aliases = {node: target for node, target in both.graph.nodes(data="alias_of") if target}
    assert aliases == {f"{p}tensor/{run}/main/@4": f"{p}tensor/{run}/main/main:#output_0"
                       for p in (first, second) for run in ("program 1", "program 2")}
    assert validate(both) == []


def test_trim_to_one_runs_tracks_keeps_every_link():
    trimmed = trim(traceconv.load(TWO_RUNS), tracks="program 2")
    assert _blocks_by_tensor(trimmed) == _expected("")
    assert validate(trimmed) == []


def _tensor_pair() -> Trace:
    trace = Trace()
    op = add_op(trace.graph, 1, "gemm")
    for tensor in (1, 2):
        trace.graph.add_edge(op, add_tensor(trace.graph, tensor, f"t{tensor}"))
    trace.memory.append(MemoryBlock(0, 64, owner_tensor="tensor/1"))
    return trace


def test_validator_refuses_an_alias_that_names_no_tensor():
    trace = _tensor_pair()
    trace.graph.nodes["tensor/2"]["alias_of"] = "tensor/1"
    assert validate(trace) == []
    trace.graph.nodes["tensor/2"]["alias_of"] = "op/1"          # an op, not a tensor
    assert [(p.invariant, p.example) for p in validate(trace)] == [
        ("graph_ref", "tensor/2.alias_of = op/1")]
    trace.graph.nodes["tensor/2"]["alias_of"] = "tensor/9"      # no such node
    assert [p.invariant for p in validate(trace)] == ["graph_ref"]
