"""Property tests of the MIGraphX instruction grammar: print random instructions the way
``instruction::print`` does, parse them back, and compare field by field."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traceconv.errors import InputError
from traceconv.formats.migraphx import build
from traceconv.formats.migraphx.document import parse_document
from traceconv.formats.migraphx.instruction import parse_instruction
from traceconv.formats.migraphx.shape import TYPE_SIZES, parse_shape
from traceconv.formats.migraphx_text.instructions import parse_attributes

_LOWER = "abcdefghijklmnopqrstuvwxyz"
WORD = st.builds(str.__add__, st.sampled_from(_LOWER), st.text(_LOWER + "0123456789_", max_size=8))
OP = st.lists(WORD, min_size=1, max_size=3).map("::".join)
TYPES = st.sampled_from(sorted(f"{t}_type" for t in TYPE_SIZES))
INTS = st.lists(st.integers(0, 4096), max_size=4)
NAMES = st.one_of(
    st.integers(0, 999).map(lambda n: f"@{n}"),
    st.tuples(WORD, st.integers(0, 999)).map(lambda p: f"{p[0]}:@{p[1]}"),
    WORD, WORD.map(lambda w: f"{w}:0"), WORD.map(lambda w: f"{w}.1"),
    st.integers(0, 20).map(lambda n: f"main:#output_{n}"),
)


def braces(values: list[int]) -> str:
    return "{" + ", ".join(map(str, values)) + "}"


@st.composite
def static_shapes(draw) -> tuple[str, str, list[int], list[int]]:
    rank = draw(st.integers(0, 4))
    lens = draw(st.lists(st.integers(1, 512), min_size=rank, max_size=rank))
    strides = draw(st.lists(st.integers(0, 4096), min_size=rank, max_size=rank))
    dtype = draw(TYPES)
    return f"{dtype}, {braces(lens)}, {braces(strides)}", dtype, lens, strides


@st.composite
def dynamic_dims(draw) -> tuple[str, int, int, list[int]]:
    low = draw(st.integers(1, 8))
    high = draw(st.integers(low, 16))
    form = draw(st.sampled_from(["old", "new", "range", "fixed"]))
    if form == "old":
        return f"[{low}, {high}, 0]", low, high, []
    if form == "new":
        opts = draw(st.lists(st.integers(low, high), max_size=3))
        return f"[ {low}, {high}, {braces(opts)} ]", low, high, [o for o in opts if o]
    if form == "range":
        return f"[{low}..{high}]", low, high, []
    return str(low), low, low, []


def attribute_values() -> st.SearchStrategy[str]:
    leaves = st.one_of(
        st.integers(-5, 100000).map(str), INTS.map(braces), st.just("nullopt"),
        st.integers(0, 99999).map(lambda n: f"{{binary_object: {n}}}"), WORD,
        static_shapes().map(lambda s: s[0]))
    return st.recursive(leaves, lambda inner: st.tuples(
        WORD, st.dictionaries(WORD, inner, min_size=1, max_size=3)).map(
        lambda p: f"{p[0]}[" + ",".join(f"{k}={v}" for k, v in p[1].items()) + "]"),
        max_leaves=6)


ATTRS = st.dictionaries(WORD, attribute_values(), max_size=5)


@given(ATTRS, st.booleans())
def test_attribute_lists_round_trip(attrs, trailing_comma):
    text = ",".join(f"{k}={v}" for k, v in attrs.items()) + ("," if trailing_comma else "")
    assert parse_attributes(text) == attrs


@given(static_shapes())
def test_static_shapes_round_trip(shape):
    text, dtype, lens, strides = shape
    parsed = parse_shape(text)
    assert (parsed.type, parsed.lens, parsed.strides) == (dtype, lens, strides)
    space = 0 if 0 in lens else 1 + sum((n - 1) * s for n, s in zip(lens, strides, strict=True))
    assert parsed.bytes == TYPE_SIZES[dtype.removesuffix("_type")] * space


@given(st.lists(dynamic_dims(), min_size=1, max_size=4), TYPES)
def test_dynamic_shapes_in_all_three_forms(dims, dtype):
    parsed = parse_shape(f"dynamic, {dtype}, {{{', '.join(d[0] for d in dims)}}}")
    assert parsed.type == dtype and parsed.lens is None and parsed.bytes is None
    assert [(d.min, d.max, d.optimals) for d in parsed.dynamic_dims] == [
        (low, high, opts) for _, low, high, opts in dims]


@given(st.lists(static_shapes(), min_size=1, max_size=4))
def test_tuple_shapes_split_at_type_tokens(subs):
    parsed = parse_shape("[" + ", ".join(s[0] for s in subs) + "]")
    assert [(s.type, s.lens, s.strides) for s in parsed.sub_shapes] == [
        (dtype, lens, strides) for _, dtype, lens, strides in subs]


@pytest.mark.slow
@settings(max_examples=300)
@given(NAMES, OP, ATTRS, st.lists(NAMES, max_size=5), st.lists(WORD, max_size=3),
       static_shapes(), st.one_of(st.none(), st.integers(0, 3)),
       st.lists(st.builds("{}{}".format, WORD.map(str.title), st.integers(0, 999)), max_size=3))
def test_instruction_lines_round_trip(name, op, attrs, inputs, modules, shape, target, symbols):
    line = f"{name} = {op}"
    if attrs:
        line += "[" + ",".join(f"{k}={v}" for k, v in attrs.items()) + "]"
    if inputs:
        line += "(" + ",".join(inputs) + ")"
    if modules:
        line += ", [" + ", ".join(modules) + "]"
    line += f" -> {shape[0]}"
    if target is not None:
        line += f", target_id={target}"
    if symbols:
        line += " # " + ", ".join(symbols)
    ins = parse_instruction(line)
    assert (ins.name, ins.op, ins.attributes, ins.inputs, ins.module_inputs) == (
        name, op, attrs, inputs, modules)
    assert (ins.shape.type, ins.shape.lens, ins.target_id, ins.debug_symbols) == (
        shape[1], shape[2], target, symbols)
    assert not ins.truncated
    # the perf tail and a glued @return never confuse the document parser
    doc = parse_document(f"Running performance report ... \n@9 = @return(@8){line}: 0.25ms, 3%")
    assert doc.runs[0].report.lines[1].instruction.inputs == inputs
    assert doc.runs[0].report.lines[1].ms == 0.25


@given(st.text(max_size=300))
def test_any_text_parses_without_exceptions(text):
    doc = parse_document(text)
    placed = sum(len(r.eval_records) + len(r.report.lines if r.report else [])
                 + sum(len(listing.instructions) for listing in r.listings) for r in doc.runs)
    assert placed + len(doc.unparsed) <= len(text.splitlines())


@given(st.lists(st.sampled_from([
    "@3 = load[offset=0,end=512](@1) -> float_type, {1, 128}, {128, 1}: 0.000232ms, 1%",
    "Summary:", "load: 0.0016288ms, 1%", "", "Rate: 2866.1/sec", "...",
    "Run instruction: @3 = load[offset=0,end=512](@1) -> float_type, {1, 128}, {128, 1}",
    "Time: 0.1ms, 0.2ms", 'module: "main"', "Running performance report ... ",
    "@5 = gpu::gemm[alpha=1,beta=0](@4,@2,", "@3) -> float_type, {1, 128}, {128, 1}",
]), max_size=25))
def test_shuffled_report_pieces_never_raise(lines):
    parse_document("\n".join(lines))


_FIXTURES = Path(__file__).resolve().parent / "data" / "migraphx"
_PASTES = [(_FIXTURES / name).read_text().splitlines() for name in (
    "srcdoc_AMDMIGraphX_driver_perf_simple_graph.txt", "rocm4.5_if_submodules_perf.txt",
    "trace_eval_rocm5.7_level2_two_passes.txt", "rocm6.4_streams_output_arg_perf.txt",
    "develop2026_debug_symbols_logger.txt")]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(_PASTES), st.data())
def test_cut_and_elided_pastes_build_or_fail_cleanly(lines, data):
    """What users paste: lines dropped, the end cut mid-line; the reader never crashes."""
    keep = data.draw(st.lists(st.booleans(), min_size=len(lines), max_size=len(lines)))
    kept = [ln for ln, k in zip(lines, keep, strict=True) if k]
    text = "\n".join(kept)
    text = text[:data.draw(st.integers(0, len(text)))]
    try:
        trace = build(parse_document(text))
    except InputError:
        return
    assert trace.op_count == trace.graph.number_of_nodes() - trace.tensor_count
    for block in trace.memory:
        assert block.size >= 0
        assert block.alloc_ns is None or block.free_ns is None or block.alloc_ns <= block.free_ns
