"""StaticMemoryInfo.json and memory_flow.svg as inputs: logical-plan blocks and tensor rects."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import traceconv
from traceconv.errors import InputError
from traceconv.formats.megengine.memflow_svg import SIZE_UNITS, TIME_UNITS, quantity
from traceconv.model import TrackKind
from traceconv.model.memory import live_bytes

MEMINFO = "megengine/convnet_static_mem_info/StaticMemoryInfo.json"


@pytest.fixture(scope="module")
def plan(data):
    return traceconv.load(data / MEMINFO, format="megengine-meminfo")


def test_static_plan_blocks(plan):
    # 41 oprs; 27 static_mem + 20 weight_mem chunks
    assert len(list(plan.iter_slices())) == 41
    assert sum(b.category == "weight" for b in plan.memory) == 20
    statics = [b for b in plan.memory if b.category == "activation"]
    assert len(statics) == 27
    # the static peak equals the highest logical end address (a perfect packing)
    assert live_bytes(statics).peak[1] == plan.metadata.attributes[
        "megengine.static_peak_bytes"] == 1_673_728


def test_overwriting_chunk_starts_one_step_later(plan):
    # chunk 9 overwrites chunk 8 in place: time 22..24, owner opr 22 = conv2.ADD
    block = next(b for b in plan.memory if b.args["chunk"] == "9")
    assert (block.address, block.size) == (0, 524_288)
    assert (block.alloc_ns, block.free_ns) == (23_000, 24_000)
    assert (block.owner_op, block.owner_name) == (None, "conv2.ADD") and block.args["overwrites"] == "8"


def test_static_plan_counter_under_its_process(plan):
    (counter,) = [t for t in plan.tracks if t.kind == TrackKind.COUNTER]
    assert plan.processes[counter.process].name == "MegEngine static plan"
    assert len(plan.processes) == 1


def test_memory_flow_svg(data):
    trace = traceconv.load(data / "megengine/train_memory_flow.svg.gz",
                           format="megengine-memflow-svg")
    assert len(trace.memory) == 677  # tensor rects (the blue background is not one)
    first = trace.memory[0]
    # <rect ... tag:address="0x7f3704ad3540" tag:size="5KB " tag:layout="{10(128),128(1)
    #  Float32}" tag:produced="240ms 271us 397ns " tag:erased="314ms 276us 536ns " tag:group="38225">
    assert (first.address, first.size) == (0x7F3704AD3540, 5120)
    assert (first.alloc_ns, first.free_ns) == (240_271_397, 314_276_536)
    assert (first.shape, first.dtype, first.owner_op) == ((10, 128), "Float32", None)
    assert (first.owner_name, first.args["group"]) == ("op 38225", "38225")
    assert first.name == "step2[19].step[66].tensor.__isub__.SUB:0"
    assert sum(b.owner_name is not None for b in trace.memory) == 489  # rects with tag:group


def test_small_memory_flow_svg(data):
    trace = traceconv.load(data / "megengine/infer_traced_memory_flow.svg")
    assert trace.metadata.source_format == "megengine-memflow-svg"
    assert len(trace.memory) == 49


def test_svg_with_bad_size_is_located(tmp_path):
    path = tmp_path / "memory_flow.svg"
    path.write_text('<svg xmlns:tag="https://megengine.org.cn">\n<rect tag:type="tensor" '
                    'tag:address="0x10" tag:size="5XB "></rect></svg>')
    with pytest.raises(InputError) as err:
        traceconv.load(path, format="megengine-memflow-svg")
    assert err.value.location == "$.rects[0]"


def test_meminfo_with_non_numeric_address_is_located(tmp_path, data):
    text = (data / MEMINFO).read_text().replace('"logic_addr_begin": "0"',
                                                '"logic_addr_begin": "zero"', 1)
    path = tmp_path / "StaticMemoryInfo.json"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        traceconv.load(path, format="megengine-meminfo")
    assert str(err.value.location).endswith(".logic_addr_begin")


def megengine_text(amount: int, units: dict[str, int]) -> str:
    """MegEngine's greedy ``time2str`` / ``size2str`` (``"1KB 704B "``)."""
    text = ""
    for unit, scale in units.items():
        if amount >= scale:
            text += f"{amount // scale}{unit} "
            amount %= scale
    return text


@given(st.integers(0, 10**13))
def test_time2str_roundtrip(ns):
    assert quantity(megengine_text(ns, TIME_UNITS), TIME_UNITS) == ns


@given(st.integers(0, 1 << 40))
def test_size2str_roundtrip(size):
    assert quantity(megengine_text(size, SIZE_UNITS), SIZE_UNITS) == size


def test_graph_json_beside_the_plan(data):
    # graph.json = graph_exec alone: 41 oprs in comp_seq (43 operators), 68 vars, no chunks
    trace = traceconv.load(data / "megengine/convnet_static_mem_info/graph.json")
    assert trace.metadata.source_format == "megengine"
    assert trace.metadata.clock == "synthetic (program order)"
    assert (trace.op_count, trace.tensor_count, len(trace.slices)) == (41, 68, 41)
    first = next(trace.iter_slices())
    assert (first.start, first.dur, first.args["id"]) == (0, 1_000, "117")
    assert trace.graph.nodes["op/134"]["slices"] == [20]  # comp_seq position 20
