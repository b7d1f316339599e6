"""MIGraphX reader: every sample and dialect fixture, checked against the printed documents."""

from __future__ import annotations

import gzip
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest

import traceconv
from traceconv.errors import InputError
from traceconv.formats import migraphx
from traceconv.formats.migraphx.document import parse_document
from traceconv.io import Source

DATA = Path(__file__).resolve().parent / "data" / "migraphx"
SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "migraphx"
PERF_DOC = DATA / "srcdoc_AMDMIGraphX_driver_perf_simple_graph.txt"
SYNTH = {v: DATA / f"synthetic_resnet_perf_dialect_{v}.txt.gz" for v in
         ("4.2", "5.4", "6.1", "7.2")}


def load(name: str | Path) -> traceconv.Trace:
    return traceconv.load(DATA / name if isinstance(name, str) else name, format="migraphx")


def text_of(path: Path) -> str:
    raw = path.read_bytes()
    return (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode()


# (file, instructions (ops), tensors, memory blocks, scratch regions, summary rows),
# instruction and load counts checked against the documents by hand / grep.
EXPECTED = [
    ("srcdoc_AMDMIGraphX_driver_perf_simple_graph.txt", 20, 20, 10, 4, 11),
    ("srcdoc_AMDMIGraphX_driver_compile_fp16_simple_graph.txt", 24, 24, 12, 6, 0),
    ("srcdoc_AMDMIGraphX_driver_read_simple_graph.txt", 20, 20, 6, 0, 0),
    ("srcdoc_AMDMIGraphX_driver_run_simple_graph.txt", 42, 40, 20, 8, 0),
    ("srcdoc_AMDMIGraphX_driver_verify_simple_graph.txt", 81, 81, 27, 4, 0),
    ("synthetic_resnet_perf_dialect_4.2.txt.gz", 301, 301, 177, 71, 8),
    ("synthetic_resnet_perf_dialect_5.4.txt.gz", 302, 301, 177, 71, 14),
    ("synthetic_resnet_perf_dialect_6.1.txt.gz", 302, 301, 177, 71, 14),
    ("synthetic_resnet_perf_dialect_7.2.txt.gz", 302, 301, 177, 71, 14),
    ("rocm7.2_perf_test_two_runs.txt", 12, 10, 6, 0, 6),
    ("rocm6.4_streams_output_arg_perf.txt", 18, 17, 4, 2, 11),
    ("rocm4.5_if_submodules_perf.txt", 16, 13, 6, 3, 8),
    ("rocm4.1_module_main_header_trace_eval.txt", 8, 8, 4, 1, 0),
    ("rocm5.4_dynamic_shapes_read.txt", 8, 7, 2, 0, 0),
    ("develop2026_debug_symbols_logger.txt", 15, 14, 7, 2, 0),
    ("dcu_fork_perf_collapsed.txt", 8, 7, 3, 1, 7),
    ("trace_eval_2019_ouput_typo.txt", 9, 9, 4, 2, 0),
    ("trace_eval_rocm5.7_level2_two_passes.txt", 7, 7, 3, 2, 0),
    ("cut_paste_resnet50_fragment.txt", 8, 8, 3, 3, 0),
    ("summary_only_rocm5.7_bert_fragment.txt", 0, 0, 0, 0, 8),
    ("trailer_only_rocm6.4_percentiles.txt", 0, 0, 0, 0, 0),
]


@pytest.mark.parametrize(("name", "ops", "tensors", "blocks", "regions", "summary"), EXPECTED)
def test_every_sample_reads(name, ops, tensors, blocks, regions, summary):
    trace = load(name)
    assert trace.metadata.source_format == "migraphx"
    assert (trace.op_count, trace.tensor_count, len(trace.memory)) == (ops, tensors, blocks)
    assert sum(b.pool == "scratch" for b in trace.memory) == regions
    assert sum(s.section == "summary" for s in trace.stats) == summary
    assert "migraphx.unparsed_line" not in trace.diagnostics


def _printed_edges(text: str) -> int:
    """Inputs + results counted straight from the perf lines of a single-module report."""
    report = text[text.index("Running performance report"):text.index("Summary:")]
    lines = [ln for ln in report.splitlines() if " = " in ln]
    inputs = 0
    for line in lines:
        head = line.split(" -> ")[0]
        if head.endswith(")"):
            inputs += len(head[head.rindex("(") + 1:-1].split(","))
    results = sum("@return" not in ln for ln in lines)
    return inputs + results


@pytest.mark.parametrize("path", [PERF_DOC, *SYNTH.values()], ids=lambda p: p.name[:40])
def test_graph_edges_follow_the_inputs(path):
    trace = load(path)
    assert trace.graph.number_of_edges() == _printed_edges(text_of(path))
    assert "migraphx.unresolved_input" not in trace.diagnostics


def test_perf_doc_graph_and_timeline():
    trace = load(PERF_DOC)
    assert trace.graph.number_of_edges() == 41  # 21 inputs + 20 results, counted by hand
    gemm = trace.graph.nodes["op/main/@5"]
    assert (gemm["type"], gemm["name"], gemm["attributes"]) == (
        "gpu::gemm", "gpu::gemm", {"alpha": "1", "beta": "0"})
    assert sorted(trace.graph.predecessors("op/main/@5")) == [
        "tensor/main/@2", "tensor/main/@3", "tensor/main/@4"]
    tensor = trace.graph.nodes["tensor/main/@5"]
    assert (tensor["shape"], tensor["dtype"], tensor["bytes"]) == ((1, 128), "float", 512)
    assert tensor["alias_of"] == "tensor/main/@3"  # gemm writes its output argument
    # 20 back-to-back instruction slices summing to "Total instructions time: 0.414369ms"
    track = trace.tracks[0]
    assert "no timestamps" in track.name
    slices = list(trace.iter_slices(track=track.id))
    assert len(slices) == 20
    assert all(a.end == b.start for a, b in zip(slices, slices[1:], strict=False))
    assert abs(slices[-1].end - 414_369) <= 20
    assert slices[6].name == "gpu::gemm" and slices[6].dur == 212_592  # 0.212592ms
    assert gemm["slices"] == [slices[6].index]
    host = {s.name: s for s in trace.iter_slices() if s.category == "migraphx.host"}
    assert host["Total time (mean eval + finish)"].dur == 348_906
    assert host["host overhead (dry run)"].dur == 3_481
    trailer = trace.metadata.attributes["programs"][0]["trailer"]
    assert trailer["rate"] == 2866.1 and trailer["overhead_calculated_percent"] == -19
    assert trace.metadata.clock.startswith("measured durations laid back to back")
    assert load("srcdoc_AMDMIGraphX_driver_read_simple_graph.txt").metadata.clock.startswith(
        "synthetic (program order")


def test_perf_doc_scratch_layout_matches_the_worked_example():
    """../shared/formats/migraphx.md §4.1: @3 [0,512) lives from its load to @11."""
    trace = load(PERF_DOC)
    starts = {s.args["instruction"]: (s.start, s.end) for s in trace.iter_slices()
              if s.args and "instruction" in s.args}
    regions = {b.name: b for b in trace.memory if b.pool == "scratch"}
    assert {n: (b.address, b.size) for n, b in regions.items()} == {
        "@3": (0, 512), "@10": (512, 512), "@12": (0, 40), "@15": (40, 40)}
    assert regions["@3"].alloc_ns == starts["@3"][0]
    assert regions["@3"].free_ns == starts["@11"][1]   # gemm @5 writes it, add_relu @11 reads
    assert regions["@12"].alloc_ns >= regions["@3"].free_ns  # same bytes, reused later
    assert regions["@15"].free_ns == starts["@17"][1]
    assert {b.category for b in regions.values()} == {"activation"}
    weights = [b for b in trace.memory if b.pool == "literals"]
    assert sum(b.size for b in weights) == 4 * (784 * 128 + 128 * 10 + 10 + 128)
    assert all(b.alloc_ns is None and b.free_ns is None for b in weights)
    params = {b.name: b.category for b in trace.memory if b.pool == "parameters"}
    assert params == {"x": "input", "output": "output"}
    live = [t for t in trace.tracks if t.unit == "bytes"]
    assert {t.name for t in live} == {"MIGraphX scratch live bytes",
                                      "MIGraphX literals live bytes",
                                      "MIGraphX parameters live bytes"}


@pytest.mark.parametrize("version", list(SYNTH))
def test_synthetic_scratch_reuse_without_collisions(version):
    trace = load(SYNTH[version])
    regions = [b for b in trace.memory if b.pool == "scratch"]
    assert len(regions) == 71
    pool = 3010560 * 4 if version in ("4.2", "5.4") else 12042240
    assert all(b.end_address <= pool for b in regions)
    assert {b.args["buffer_bytes"] for b in regions} == {pool}
    reuse = collisions = 0
    for i, a in enumerate(regions):
        for b in regions[i + 1:]:
            if a.address < b.end_address and b.address < a.end_address:
                if a.free_ns <= b.alloc_ns or b.free_ns <= a.alloc_ns:
                    reuse += 1
                else:
                    collisions += 1
    assert collisions == 0
    assert reuse > 100  # the colouring reuses bytes all through the network
    assert "migraphx.load_size_mismatch" not in trace.diagnostics


@pytest.mark.parametrize("path", [PERF_DOC, *SYNTH.values(),
                                  DATA / "rocm7.2_perf_test_two_runs.txt",
                                  DATA / "rocm6.4_streams_output_arg_perf.txt",
                                  DATA / "rocm4.5_if_submodules_perf.txt",
                                  DATA / "dcu_fork_perf_collapsed.txt"],
                         ids=lambda p: p.name[:40])
def test_recomputed_summary_equals_the_printed_one(path):
    trace = load(path)
    printed = [s for s in trace.stats if s.section == "summary"]
    recomputed = {(s.extra.get("run"), s.name): s for s in trace.stats
                  if s.section == "recomputed"}
    assert printed and len(printed) == len(recomputed)
    for row in printed:
        mine = recomputed[(row.extra.get("run"), row.name)]
        assert abs(mine.total_ns - row.total_ns) <= max(2, row.total_ns * 1e-5)
        assert mine.ratio == pytest.approx(row.ratio, rel=1e-4)
        assert row.calls == mine.calls  # printed since ROCm 5.3, counted from the lines before
    # the printed order (by total, count, name, descending) is reproduced too
    runs = {s.extra.get("run") for s in printed}
    for run in runs:
        assert [s.name for s in printed if s.extra.get("run") == run] == \
            [s.name for s in trace.stats if s.section == "recomputed"
             and s.extra.get("run") == run]


def test_trailer_numbers_agree_with_the_lines():
    """Total instructions time = Σ ms; Overhead's second value = total − instructions."""
    for path in [PERF_DOC, *SYNTH.values()]:
        doc = parse_document(text_of(path))
        report = doc.runs[-1].report
        total = sum(ln.ms for ln in report.lines if ln.ms is not None)
        trailer = report.trailer
        assert total == pytest.approx(trailer.instructions_ms, rel=1e-5)
        assert trailer.total_ms - trailer.instructions_ms == pytest.approx(
            trailer.overhead_calculated_ms, abs=2e-6)


def test_two_runs_in_one_file():
    trace = load("rocm7.2_perf_test_two_runs.txt")
    programs = trace.metadata.attributes["programs"]
    assert [p["label"] for p in programs] == ["program 1", "program 2"]
    assert programs[0]["version"] == "2.15.0.20250912-17-195-g1afd1b89c"
    assert programs[0]["complete_s"] == 1.8 and programs[1]["complete_s"] == 1.81
    assert programs[0]["environment"] == {"MIGRAPHX_ENABLE_HIPBLASLT_GEMM": "1"}
    first = programs[0]["trailer"]
    assert first["rate"] == 83845.5 and first["instructions_ms"] == 0.00974602
    assert first["percentiles_ms"] == {"90%": 0.0122845, "95%": 0.0128808, "99%": 0.0166974}
    assert trace.metadata.source_version == "2.15.0.20250912-17-195-g1afd1b89c"
    assert "op/program 2/main/@4" in trace.graph
    gemm = [s for s in trace.stats if s.name == "gpu::gemm" and s.section == "summary"]
    assert [(s.extra["run"], s.total_ns) for s in gemm] == [("program 1", 8807),
                                                            ("program 2", 8724)]


def test_streams_and_output_arg():
    trace = load("rocm6.4_streams_output_arg_perf.txt")
    names = [t.name for t in trace.tracks if t.kind.value == "stream"]
    assert len(names) == 2 and names[1].startswith("stream 1:")
    on_stream1 = [s.name for s in trace.iter_slices(track=1)]
    assert on_stream1 == ["gpu::set_stream", "gpu::wait_event", "load", "tanh_kernel",
                          "gpu::record_event"]
    add = trace.graph.nodes["tensor/main/@16"]
    assert add["alias_of"] == "tensor/main/main:#output_0"  # output_arg=2
    relu = trace.graph.nodes["tensor/main/@5"]
    assert relu["alias_of"] == "tensor/main/@4"
    regions = {b.name: b for b in trace.memory if b.pool == "scratch"}
    # sigmoid @13 writes @4 again (output_arg=1) and add @16 reads it last
    assert regions["@4"].free_ns == next(trace.iter_slices(name="add_kernel")).end
    assert regions["@9"].free_ns == next(trace.iter_slices(name="add_kernel")).end


def test_if_submodules_glued_return_and_nan():
    trace = load("rocm4.5_if_submodules_perf.txt")
    assert trace.diagnostics.count("migraphx.never_timed") == 2
    assert trace.diagnostics.count("migraphx.unclosed_attributes") == 3
    graph = trace.graph
    assert {graph.nodes[n]["module"] for n in graph if graph.nodes[n]["kind"] == "op"} == {
        "main", "If_4_if", "If_4_else"}
    kernel = graph.nodes["op/If_4_if/If_4_if:@2"]
    assert kernel["attributes"]["symbol_name"] == "add_kernel"
    # the if consumes what both bodies return, and the bodies read main:@3
    preds = set(graph.predecessors("op/main/main:@4"))
    assert {"tensor/If_4_if/If_4_if:@2", "tensor/If_4_else/If_4_else:@1",
            "tensor/main/x", "tensor/main/main:@3"} - {"tensor/main/x"} <= preds
    assert graph.nodes["op/main/main:@4"]["module_inputs"] == ["If_4_if", "If_4_else"]
    stat = {s.name: s for s in trace.stats if s.section == "summary"}
    code = stat["gpu::code_object"]  # ROCm 4.5 prints no counts: they come from the lines
    assert (code.calls, code.ratio, code.extra["count_printed"]) == (2, 32, False)


def test_trace_eval_level2_two_passes():
    trace = load("trace_eval_rocm5.7_level2_two_passes.txt")
    passes = list(trace.iter_slices(name="eval pass 1")) + list(
        trace.iter_slices(name="eval pass 2"))
    assert len(passes) == 2 and passes[0].end == passes[1].start
    relu = trace.graph.nodes["op/main/@4"]
    assert len(relu["slices"]) == 2
    first = trace.slice(relu["slices"][0])
    assert first.dur == 31_100 and first.args["t1_ms"] == 0.0121
    assert first.args["output"].startswith("Output has normal, zero\nOutput: 0, 0.412")
    assert trace.graph.nodes["tensor/main/@4"]["alias_of"] == "tensor/main/@3"


def test_trace_eval_2019_typo_and_scratch_parameter():
    trace = load("trace_eval_2019_ouput_typo.txt")
    softmax = trace.slice(trace.graph.nodes["op/main/@5"]["slices"][0])
    assert softmax.args["output"].startswith("Ouput: 0.00181")
    regions = {b.name: (b.address, b.size, b.args["buffer"]) for b in trace.memory
               if b.pool == "scratch"}
    assert regions == {"@1": (0, 64, "scratch"), "@3": (64, 64, "scratch")}


def test_rocm41_header_and_instruction_not_part_of_program():
    trace = load("rocm4.1_module_main_header_trace_eval.txt")
    doc = parse_document((DATA / "rocm4.1_module_main_header_trace_eval.txt").read_text())
    assert doc.runs[0].listings[0].header == "Module main:"
    assert trace.diagnostics.count("migraphx.eval_unknown_instruction") == 8
    assert len(list(trace.iter_slices(name="Instruction not part of program"))) == 8


def test_dynamic_and_tuple_shapes():
    trace = load("rocm5.4_dynamic_shapes_read.txt")
    doc = parse_document((DATA / "rocm5.4_dynamic_shapes_read.txt").read_text())
    topk = doc.runs[0].listings[0].modules["main"][4]
    assert topk.op == "topk" and len(topk.shape.sub_shapes) == 2
    assert topk.shape.sub_shapes[1].dynamic_dims[2].model_dump() == {
        "min": 2, "max": 2, "optimals": []}
    x = trace.graph.nodes["tensor/main/x"]
    assert x["dtype"] == "float" and x["bytes"] is None and "shape" not in x
    assert trace.graph.nodes["op/main/main:@7"]["type"] == "@return"
    assert sorted(trace.graph.predecessors("op/main/main:@7")) == [
        "tensor/main/main:@5", "tensor/main/main:@6"]


def test_develop_debug_symbols_logger_and_dynamic_dims():
    path = DATA / "develop2026_debug_symbols_logger.txt"
    trace = load(path)
    doc = parse_document(path.read_text())
    run = doc.runs[0]
    assert run.model_file == "mnist-8.onnx" and "Compilation time: 491ms" in run.messages
    body = run.listings[0].modules["main"]
    assert body[0].op == "@comment" and body[0].comment == "compiled for gfx942"
    seq = next(i for i in body if i.name == "seq")
    assert seq.shape.dynamic_dims[0].model_dump() == {"min": 1, "max": 4, "optimals": [2, 4]}
    inp = next(i for i in body if i.name == "Input3")
    assert [(d.min, d.max) for d in inp.shape.dynamic_dims] == [(1, 4), (1, 1), (28, 28),
                                                                 (28, 28)]
    conv = trace.graph.nodes["op/main/@8"]
    assert conv["debug_symbols"] == ["Convolution28", "Plus30", "ReLU32"]
    assert trace.graph.nodes["tensor/main/@13"]["alias_of"] == "tensor/main/main:#output_:00012"
    regions = {b.name: (b.address, b.size) for b in trace.memory if b.pool == "scratch"}
    assert regions == {"@7": (6272, 25088), "@9": (0, 6272)}


def test_dcu_fork_collapsed_spacing_uncapped_percent():
    trace = load("dcu_fork_perf_collapsed.txt")
    conv = next(trace.iter_slices(name="gpu::convolution"))
    assert conv.dur == 42_487_200 and conv.args["percent"] == 99.9639
    summary = {s.name: s for s in trace.stats if s.section == "summary"}
    assert summary["gpu::convolution"].ratio == 99.9639  # full-width comma parsed
    assert trace.metadata.attributes["programs"][0]["trailer"]["batch_size"] == 32
    assert trace.graph.nodes["tensor/main/main:@6"]["alias_of"] == "tensor/main/main:@4"


def test_cut_paste_reads_what_is_there():
    trace = load("cut_paste_resnet50_fragment.txt")
    diags = trace.diagnostics
    assert diags.count("migraphx.elided") == 1
    assert diags.count("migraphx.wrapped_line") == 1
    assert diags.count("migraphx.truncated_instruction") == 1
    assert diags.count("migraphx.report_truncated") == 1
    assert diags.count("migraphx.unresolved_input") == 6   # @236 @238 @239 @240 @241 @242
    joined = trace.graph.nodes["op/main/@246"]
    assert joined["attributes"]["local"] == "256"


def test_summary_or_trailer_alone_reads():
    trace = load("summary_only_rocm5.7_bert_fragment.txt")
    assert len(trace.slices) == 0  # stats only: what `traceconv summary` prints
    rows = [(s.name, s.calls, s.total_ns, s.avg_ns, s.ratio) for s in trace.stats]
    assert rows[0] == ("gpu::code_object::mlir_dot_add", 72, 4_612_470, 64_062, 38.0)
    assert rows[-1] == ("@param", 4, 2_315, 579, 1.0)
    assert trace.metadata.attributes["programs"][0]["trailer"]["rate"] == 3.38012
    trace = load("trailer_only_rocm6.4_percentiles.txt")
    host = {s.name: s.dur for s in trace.iter_slices()}
    assert host == {"Total time (mean eval + finish)": 1_114_480,
                    "host overhead (dry run)": 54_246}
    trailer = trace.metadata.attributes["programs"][0]["trailer"]
    assert (trailer["overhead_calculated_ms"], trailer["overhead_calculated_percent"]) == (
        -1.29436, -116)
    assert trailer["median_ms"] == 1.11396 and trailer["percentiles_ms"]["99%"] == 1.42208


def test_unrecognised_file_is_one_located_error(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\nthis is not MIGraphX\n")
    with pytest.raises(InputError) as info:
        traceconv.load(bad, format="migraphx")
    assert str(info.value).endswith("notes.txt:1: no MIGraphX program listing, perf report "
                                    "or trace-eval record found")
    run = subprocess.run([sys.executable, "-m", "traceconv", "info", "--format", "migraphx",
                          str(bad)], capture_output=True, text=True)
    assert run.returncode == 1 and run.stderr.count("\n") == 1 and "Traceback" not in run.stderr


@pytest.mark.parametrize("path", sorted(p for p in DATA.iterdir() if p.name != "PROVENANCE.md"),
                         ids=lambda p: p.name[:40])
def test_sniff_recognises_every_dialect(path):
    head = text_of(path).encode()[:65536]
    assert migraphx.sniff(head, Source(path)) >= 0.9


@pytest.mark.parametrize("head", [
    b'{"traceEvents": [{"name": "aten::add", "ph": "X"}]}',
    b"-------------------   Overview Summary   -------------------\nTime unit: ms\n"
    b"Event Type   Calls   CPU Time   Ratio (%)\nProfileStep   8   4945.15   100.00\n",
    b"name = value\nkey = other\n",
    b"",
])
def test_sniff_rejects_other_text(head):
    assert migraphx.sniff(head) == 0.0


def test_showcase_samples_read():
    assert load(SAMPLES / "perf_simple_graph_rocm4.txt").op_count == 20
    assert load(SAMPLES / "synthetic_resnet_perf_rocm7.2.txt").op_count == 302


def test_nan_and_numbers():
    assert math.isnan(parse_document("@0 = add(x,y) -> float_type, {2}, {1}: -nanms, -nan%")
                      .runs[0].report.lines[0].ms)
    assert re.fullmatch(migraphx.document.NUM, "5e-05")


def test_root_relative_names_of_rocm62_reports():
    """6.2+: the module the hash map yields first prints bare; main then prints main:@N."""
    text = "\n".join([
        "Running performance report ... ",
        "@0 = hip::hip_copy_literal[id=main:pointwise0:@literal:0] -> float_type, {2}, {1}: "
        "0.001ms, 9%",
        "@1 = @return(@0)main:@0 = check_context::migraphx::gpu::context -> float_type, {}, "
        "{}: 0.002ms, 17%",
        "main:x = @param:x -> float_type, {2}, {1}: 0.003ms, 25%",
        "main:@2 = gpu::code_object[code_object=1,symbol_name=k,global=2,local=2,](main:x,@0)"
        " -> float_type, {2}, {1}: 0.006ms, 50%",
        "main:@3 = @return(main:@2)",
    ])
    trace = migraphx.build(parse_document(text))
    modules = {d["instruction"]: d["module"] for n, d in trace.graph.nodes(data=True)
               if d["kind"] == "op"}
    assert modules == {"@0": "root", "@1": "root", "main:@0": "main", "main:x": "main",
                       "main:@2": "main", "main:@3": "main"}
    assert sorted(trace.graph.predecessors("op/main/main:@2")) == [
        "tensor/main/main:x", "tensor/root/@0"]


def test_trace_eval_inside_a_perf_run_times_the_same_ops():
    perf = PERF_DOC.read_text()
    head, report = perf.split("Running performance report ... \n")
    records = "".join(f"Run instruction: {ln}\nTime: 0.01ms, 0.02ms\n"
                      for ln in head.splitlines() if " = " in ln and not ln.startswith("#"))
    trace = migraphx.build(parse_document(head + "Running performance report ... \n"
                                          + records + report))
    gemm = trace.graph.nodes["op/main/@5"]
    perf_row, eval_row = (trace.slice(r) for r in gemm["slices"])
    assert (perf_row.dur, eval_row.dur) == (212_592, 20_000)
    assert trace.tracks[eval_row.track].name.startswith("trace eval")



def test_a_trace_eval_record_of_another_kernel_is_not_that_ops_run():
    """(fuzz) ``@6`` listed as one kernel and evaluated as another (a spliced or cut paste):
    the record is counted unmatched, not given to the op (whose slices carry its name)."""
    listing = ("@6 = gpu::code_object[code_object=1,symbol_name=mlir_dot,global=2,local=2,]"
               "(x) -> float_type, {4}, {1}\n")
    record = listing.replace("mlir_dot", "softmax_kernel")
    trace = migraphx.build(parse_document(
        listing + f"Run instruction: {record}Time: 0.01ms, 0.02ms\n"))
    assert traceconv.validate(trace) == []
    assert trace.graph.nodes["op/main/@6"]["slices"] == []
    assert trace.diagnostics.count("migraphx.eval_unmatched") == 1
    assert [s.name for s in trace.iter_slices() if s.category != "migraphx.eval"] == [
        "softmax_kernel"]

def test_detailed_summary_groups_are_recomputed():
    """6.2 --detailed: group<type(input lens)>, lens:strides when not packed."""
    text = "\n".join([
        "Running performance report ... ",
        "x = @param:x -> float_type, {4, 8}, {8, 1}: 0.001ms, 1%",
        "@1 = transpose[permutation={1, 0}](x) -> float_type, {8, 4}, {1, 8}: 0.001ms, 1%",
        "@2 = gpu::code_object[code_object=1,symbol_name=k,global=2,local=2,](@1,x) -> "
        "float_type, {4, 8}, {8, 1}: 0.098ms, 98%",
        "",
        "Summary:",
        "gpu::code_object::k<float_type(8x4:1x8, 4x8)>: 0.098ms / 1 = 0.098ms, 98%",
        "transpose<float_type(4x8)>: 0.001ms / 1 = 0.001ms, 1%",
        "@param<float_type()>: 0.001ms / 1 = 0.001ms, 1%",
    ])
    trace = migraphx.build(parse_document(text))
    recomputed = [s.name for s in trace.stats if s.section == "recomputed"]
    assert recomputed == [s.name for s in trace.stats if s.section == "summary"]


def test_shared_corpus_reads_cleanly(shared_samples):
    files = sorted((shared_samples / "migraphx").rglob("*.txt"))
    assert files
    for path in files:
        trace = traceconv.load(path)
        assert trace.metadata.source_format == "migraphx", path
        assert trace.op_count > 0, path
        assert "migraphx.unparsed_line" not in trace.diagnostics, path


def test_trace_compile_pass_dumps_are_programs_of_their_own():
    text = "\n".join([
        'module: "main"', "x = @param:x -> float_type, {2}, {1}",
        "@1 = relu(x) -> float_type, {2}, {1}", "",
        "Pass: eliminate_identity", "x = @param:x -> float_type, {2}, {1}",
        "@1 = relu(x) -> float_type, {2}, {1}", "",
        "Pass: dead_code_elimination", "x = @param:x -> float_type, {2}, {1}",
        "@1 = relu(x) -> float_type, {2}, {1}", ""])
    doc = parse_document(text)
    assert [lst.pass_name for lst in doc.runs[0].listings] == [
        None, "eliminate_identity", "dead_code_elimination"]
    assert migraphx.build(doc).op_count == 6


def test_sniff_says_no_to_the_other_text_and_json_inputs():
    others = [p for p in (DATA.parent).rglob("*") if p.is_file() and DATA not in p.parents
              and p.suffix in (".txt", ".log", ".json")]
    assert others
    for path in others:
        assert migraphx.sniff(path.read_bytes()[:65536]) == 0.0, path
