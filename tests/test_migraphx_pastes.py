"""MIGraphX fragments as users paste them: one synthetic example per class (M1..M5).

Expected values are read off each example's text.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import traceconv
from traceconv.cli.app import app
from traceconv.formats import migraphx
from traceconv.formats.migraphx.document import parse_document
from traceconv.model import ProcessKind

TIMED = ("@12 = gpu::code_object[code_object=6184,symbol_name=mlir_dot,global=1792,local=256,]"
         "(@9,@10,@11) -> half_type, {8, 128, 512}, {65536, 512, 1}, target_id=0: 0.75ms, 12%")


def test_m1_summary_rows_without_the_summary_line():
    text = ("gpu::code_object::mlir_dot: 3.2ms / 8 = 0.4ms, 70%\n"
            "load: 0.1ms / 4 = 0.025ms, 2%\n")
    assert migraphx.sniff(text.encode()) >= 0.9
    (run,) = parse_document(text).runs
    assert [(r.group, r.total_ms, r.count, r.avg_ms, r.percent) for r in run.report.summary] == [
        ("gpu::code_object::mlir_dot", 3.2, 8, 0.4, 70.0), ("load", 0.1, 4, 0.025, 2.0)]


@pytest.mark.parametrize("lines", [[TIMED], [TIMED, TIMED.replace("@12", "@13")]])
def test_m2_one_or_two_timed_instruction_lines_alone(tmp_path, lines):
    text = "\n".join(lines) + "\n"
    assert migraphx.sniff(text.encode()) >= 0.9
    path = tmp_path / "paste.txt"
    path.write_text(text)
    trace = traceconv.load(path)                       # detected, not only forced
    assert trace.metadata.source_format == "migraphx"
    slices = [s for s in trace.iter_slices() if s.name == "mlir_dot"]
    assert [s.dur for s in slices] == [750_000] * len(lines)


def test_m3_summary_row_wrapped_after_equals_keeps_every_later_row():
    text = ("Summary:\ngpu::code_object::mlir_dot: 3.2ms / 8 =\n 0.4ms, 70%\n"
            "load: 0.1ms / 4 = 0.025ms, 2%\n\nTotal time: 4.5ms\n")
    doc = parse_document(text)
    (run,) = doc.runs
    assert [r.group for r in run.report.summary] == ["gpu::code_object::mlir_dot", "load"]
    assert run.report.summary[0].avg_ms == 0.4 and run.report.trailer.total_ms == 4.5
    assert doc.wrapped == [3] and not doc.unparsed


def test_m4_instruction_wrapped_over_several_lines_where_brackets_balance():
    text = "\n".join([
        "@0 = @param:x -> float_type, {1, 8}, {8, 1}",
        "@1 = hip::hip_allocate_memory[shape=int8_type, {4096}, {1},id=main:scratch]",
        "  -> int8_type, {4096}, {1}",                                  # after the brackets
        "@2 = load[offset=0,end=32](@1) -",
        "> float_type, {1, 8}, {8, 1}",                                 # inside '->'
        "@3 = gpu::code_object[code_object=1,symbol_name=relu,global=8,local=8,](@0,@2) ->",
        "float_type,",                                                  # after the type
        "{1, 8},",
        "{8, 1}",                                                       # over 4 lines
        "Run instruction: @4 = gpu::code_object[code_object=2,symbol_name=add,global=8,",
        "local=8,](@3,@2) -> float_type, {1, 8}, {8, 1}",
        "Time: 0.01ms, 0.02ms",
        "Output: 0.5, 0.25,",
        "0.125, 1",
    ])
    doc = parse_document(text)
    assert not doc.unparsed and doc.wrapped == [3, 5, 7, 8, 9, 11, 14]
    run = doc.runs[0]
    listing = run.listings[0].instructions
    assert [(i.name, i.op, i.shape.lens) for i in listing] == [
        ("@0", "@param", [1, 8]), ("@1", "hip::hip_allocate_memory", [4096]),
        ("@2", "load", [1, 8]), ("@3", "gpu::code_object", [1, 8])]
    (record,) = run.eval_records
    assert record.instruction.inputs == ["@3", "@2"] and record.device_ms == 0.02
    assert record.output == ["Output: 0.5, 0.25,0.125, 1"]   # glued where the wrap cut
    trace = migraphx.build(doc)
    assert not [d for d in trace.diagnostics if d.code == "migraphx.unresolved_input"]
    assert len(trace.memory) >= 1                     # the scratch pool's loads resolve


def test_m5_listing_with_a_perf_trailer_but_no_times_keeps_the_trailer():
    text = ("@0 = @param:x -> float_type, {2}, {1}\n@1 = relu(@0) -> float_type, {2}, {1}\n\n"
            "Batch size: 1\nRate: 897.281 inferences/sec\nTotal time: 1.11448ms\n"
            "Total instructions time: 2.40884ms\n")
    trace = migraphx.build(parse_document(text))
    (program,) = trace.metadata.attributes["programs"]
    assert program["timing"] == "none"
    assert program["trailer"] == {"batch_size": 1, "rate": 897.281,
                                  "rate_unit": "inferences/sec", "total_ms": 1.11448,
                                  "instructions_ms": 2.40884, "percentiles_ms": {}}
    assert trace.diagnostics.count("migraphx.report_without_lines") == 1
    # an untimed listing: its 1 µs placeholders are never device time
    assert all(p.kind != ProcessKind.DEVICE for p in trace.processes)


def test_untimed_listing_summary_shows_no_time(tmp_path):
    """A listing's 1 µs placeholders lay the program out; they are no time of the run's,
    host or device."""
    path = tmp_path / "listing.txt"
    path.write_text("@0 = @param:x -> float_type, {2}, {1}\n@1 = relu(@0) -> float_type, "
                    "{2}, {1}\n@2 = relu(@1) -> float_type, {2}, {1}\n")
    result = CliRunner().invoke(app, ["summary", str(path), "--format", "migraphx", "--json",
                                      "--print-only", "summary"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"total_device_time": None, "total_host_time": None}


def test_cut_inside_a_dynamic_dimension_is_a_truncated_instruction():
    doc = parse_document("seq = @param:seq -> dynamic, int64_type, {[ 1, 4")
    (ins,) = doc.runs[0].listings[0].instructions
    assert ins.truncated and ins.parameter == "seq"


def test_a_line_that_never_closes_joins_at_most_256_lines(tmp_path):
    """(fuzz: a line of 20,000 open brackets took every later line as its continuation, each
    join testing the patterns on the whole text so far: 10 s for 1 MB) a wrapped print is
    joined over at most 256 lines; the lines after it are read as lines of their own."""
    text = "\n".join([TIMED, "@5 = add" + "(" * 20_000, *[f"piece {k}" for k in range(400)],
                      TIMED.replace("@12", "@13")]) + "\n"
    doc = parse_document(text)
    assert len(doc.wrapped) == 256
    # counted, not joined (as foreign lines: "piece k" has no shape of MIGraphX output)
    assert len(doc.unparsed) + doc.foreign >= 400 - 256
    path = tmp_path / "paste.txt"
    path.write_text(text)
    trace = traceconv.load(path, format="migraphx")
    assert [s.dur for s in trace.iter_slices() if s.name == "mlir_dot"] == [750_000] * 2


def test_listings_cut_with_their_trailers_are_timed_by_the_trailers_alone():
    """AMD's UIF guide pastes two perf runs whose listings it elides: the trailers'
    "Total time" lines are the only times (28.5025 and 12.3644 ms), so they are the host
    time; the listings' 1 µs placeholders are none, and no critical path is made of them."""
    import re

    path = Path(__file__).parent / "data" / "migraphx" / "uif_rocm5.4_two_runs_listings_elided.txt"
    totals = [float(t) for t in re.findall(r"^Total time: ([\d.]+)ms", path.read_text(), re.M)]
    result = CliRunner().invoke(app, ["summary", str(path), "--json"])
    assert result.exit_code == 0, result.output
    rows = {op["name"]: op for op in json.loads(result.stdout)["ops"]}
    total = rows["Total time (mean eval + finish)"]
    assert total["calls"] == len(totals) == 2
    assert total["host_total_ns"] == round(sum(totals) * 1e6)
    assert not any(name.startswith(("check_context", "hip::", "load")) for name in rows)
    path_result = CliRunner().invoke(app, ["critical-path", str(path)])
    assert path_result.exit_code == 1 and "no critical path" in path_result.output
