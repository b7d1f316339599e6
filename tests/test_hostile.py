"""Hostile and broken input (issue 15): each class of failure from minimal synthetic files.

The contract: one located line on stderr, exit status 1, no traceback, no partial output;
bounded time and memory; data never drives the terminal.
"""

from __future__ import annotations

import errno
import gzip
import os
import re
import signal
import subprocess
import sys
import zlib
from pathlib import Path

import orjson
import pytest
from cli_errors import one_error_line, run

import traceconv
from traceconv.errors import InputError, OutputError
from traceconv.io import Source
from traceconv.model.repairs import STAT_LIMIT
from traceconv.output_files import atomic_output

HOSTILE = Path(__file__).parent / "data" / "hostile"
CNN = Path(__file__).parent.parent / "samples" / "torch" / "cnn_step5.pt.trace.json"


def chrome(tmp_path: Path, events: list, name: str = "t.json") -> Path:
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(orjson.dumps({"traceEvents": events}))
    return path


# -- 1. cycles ------------------------------------------------------------------------------

def test_paddle_parent_cycle_ends_and_is_counted():
    # 33 bytes: two host nodes, each the other's parent, one allocator record on the first
    trace = traceconv.load(HOSTILE / "parent_cycle.paddle_trace.pb")
    assert trace.counts()["slices"] == 2
    codes = {d["code"]: d["count"] for d in trace.diagnostics.as_list()}
    assert codes == {"paddle_pb.parent_cycle": 1}


# -- 3. decompressed size -------------------------------------------------------------------

def test_gzip_bomb_stops_at_the_limit(tmp_path: Path):
    bomb = tmp_path / "bomb.txt.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as out:
        for _ in range(64):
            out.write(b"x" * (1 << 20))      # 64 MiB of text in ~64 KiB
    assert bomb.stat().st_size < 1 << 20
    result = run("info", str(bomb), "--format", "migraphx", "--max-bytes", "8M")
    one_error_line(result, str(bomb), "8 MiB limit", "--max-bytes")
    with pytest.raises(InputError, match="8 MiB limit"):
        traceconv.load(bomb, format="migraphx", max_bytes=8 << 20)


def test_plain_input_over_the_limit_is_refused_before_reading(tmp_path: Path):
    result = run("info", str(CNN), "--max-bytes", "1K")
    one_error_line(result, "1 KiB limit")
    assert run("info", str(CNN), "--max-bytes", "lots").exit_code == 2   # a usage error


# -- 5. markup and control characters from data ---------------------------------------------

HOSTILE_NAME = "op[/x]\x1b[2J\x07"


def test_markup_and_escapes_in_names_paths_and_examples(tmp_path: Path):
    # the unknown phase puts the hostile text into a diagnostic code and example too
    path = chrome(tmp_path, [{"ph": "X", "name": HOSTILE_NAME, "ts": 0, "dur": 5, "pid": 1,
                              "tid": 1},
                             {"ph": "[/x]\x1b", "name": "n", "ts": 0, "pid": 1, "tid": 1}],
                  name="a[/x].json")   # a folder "a[" and a file "x].json"
    info = run("info", str(path))
    assert info.exit_code == 0, info.output
    assert "a[/x].json" in info.stdout.replace("\n", "") and "\x1b" not in info.stdout
    summary = run("summary", str(path), "-t", "0")
    assert summary.exit_code == 0, summary.output
    assert "op[/x]\\x1b[2J\\x07" in summary.stdout
    assert "\x1b" not in summary.stdout and "\x07" not in summary.stdout
    out = tmp_path / "s.summary.txt"
    assert run("convert", str(path), "--to", "summary", "-o", str(out)).exit_code == 0
    assert "op[/x]\\x1b" in out.read_text() and "\x1b" not in out.read_text()


def test_error_lines_never_carry_control_characters(tmp_path: Path):
    path = tmp_path / "bell\x07.json"
    path.write_bytes(b'{"traceEvents": [}')
    line = one_error_line(run("info", str(path)), "bell\\x07.json")
    assert "\x07" not in line


# -- 6. output errors -----------------------------------------------------------------------

def test_output_in_a_missing_directory(tmp_path: Path):
    target = tmp_path / "missing" / "out.pftrace"
    one_error_line(run(str(CNN), "-o", str(target)), str(target), "no such directory")


def test_output_that_is_a_directory(tmp_path: Path):
    target = tmp_path / "out.pftrace"
    target.mkdir()
    one_error_line(run(str(CNN), "-o", str(target)), str(target), "is a directory")
    assert os.listdir(target) == []


def test_output_in_a_read_only_directory(tmp_path: Path, monkeypatch):
    # (root ignores directory permissions, so the refusal is simulated where it happens)
    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp_path / ".x.part"))

    monkeypatch.setattr("tempfile.mkstemp", refuse)
    target = tmp_path / "out.pftrace"
    line = one_error_line(run(str(CNN), "-o", str(target)), str(target), "permission denied")
    assert ".part" not in line


def test_full_disk_names_the_output_and_leaves_nothing(tmp_path: Path):
    target = tmp_path / "out.json"
    with pytest.raises(OutputError) as caught, atomic_output(target, inputs=()) as out:
        out.write(b"{")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert str(caught.value) == f"{target}: cannot write: No space left on device"
    assert os.listdir(tmp_path) == []


def test_replacing_keeps_permissions_and_new_files_follow_the_umask(tmp_path: Path):
    kept = tmp_path / "kept.json"
    kept.write_text("old")
    kept.chmod(0o600)
    assert run(str(CNN), "-o", str(kept), "--to", "chrome").exit_code == 0
    assert kept.stat().st_mode & 0o777 == 0o600
    old = os.umask(0o027)
    try:
        with atomic_output(tmp_path / "new.json", inputs=()) as out:
            out.write(b"{}")
    finally:
        os.umask(old)
    assert (tmp_path / "new.json").stat().st_mode & 0o777 == 0o640


def test_sigterm_removes_the_partial_output(tmp_path: Path):
    # the writer is stopped by SIGTERM half-way: deterministic, no race with a timer
    script = f"""
import os, signal, sys
import traceconv.formats.chrome as writer
def stopped(trace, out, **options):
    out.write(b"[" * 4096)
    os.kill(os.getpid(), signal.SIGTERM)
    raise AssertionError("SIGTERM did not stop the writer")
writer.write = stopped
sys.argv = ["traceconv", {str(CNN)!r}, "--to", "chrome", "-o", {str(tmp_path / "o.json")!r}]
from traceconv.cli import main
main()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 128 + signal.SIGTERM, done.stderr
    assert done.stderr.strip() == "traceconv: terminated (SIGTERM)"
    assert os.listdir(tmp_path) == []


# -- 9. silent acceptance -------------------------------------------------------------------

def test_object_without_trace_events_is_not_an_empty_trace(tmp_path: Path):
    path = tmp_path / "x.json"
    path.write_bytes(b'{"schemaVersion": 1, "deviceProperties": []}')
    one_error_line(run("info", str(path), "--format", "chrome"), f"{path}:$:",
                   '"traceEvents"', "schemaVersion")
    empty = chrome(tmp_path, [], name="empty.json")   # (issue #22: an empty export is an error)
    one_error_line(run("info", str(empty), "--format", "chrome"), f"{empty}:",
                   "no trace events")


# -- also: a MIGraphX paste cut inside a dynamic dimension -----------------------------------

def test_migraphx_paste_cut_mid_shape(tmp_path: Path):
    path = tmp_path / "cut.txt"
    path.write_text("seq = @param:seq -> dynamic, int64_type, {[ 1, 4")
    trace = traceconv.load(path, format="migraphx")
    assert trace.diagnostics.as_list(), "the cut must be reported"


def test_source_bound_applies_to_standard_input():
    source = Source("-", max_bytes=4)
    import io

    stdin = sys.stdin
    try:
        sys.stdin = io.TextIOWrapper(io.BytesIO(b"123456"))
        with pytest.raises(InputError, match="4 B limit"):
            source.read_bytes()
    finally:
        sys.stdin = stdin


# -- 4. the exception kinds the fuzzer found, each from its minimised input ----------------

# file in tests/data/hostile -> (reader, what must happen: "ok" (converted), "read" (info
# reads it) or words of the located error)
MINIMISED = {
    # (a time past int64, infinity included: the builder's to move, as every text reader's)
    "summary_time_1e308.txt": ("paddle-summary", "ok"),
    "summary_step_cost_garbled.txt": ("paddle-summary", "no Paddle summary table"),
    # (a count or size past int64, infinity included: the builder's to move, as a time's)
    "summary_memory_size_inf.txt": ("paddle-summary", "read"),
    "summary_count_over_int64.txt": ("paddle-summary", "ok"),
    # (its one row a statistic: read, with no timeline to convert to)
    "report_memcpy_total_1e308.txt": ("paddle-report", "read"),
    # (its one block left out by the builder's rule: nothing else to read)
    "memory_flow_size_over_int64.svg": ("megengine-memflow-svg",
                                        "1 left out (model.memory_block_unreadable)"),
    # int(inf) in a shape, and opr steps / chunk times whose ns pass int64
    "megengine_shape_inf.json": (
        "megengine", ":$.graph_exec.var.52.static_infer_tags.SHAPE.inferred_result: shape "
        "dimension is not a finite number: inf"),
    "summary_alloc_count_inf.txt": ("paddle-summary", "read"),
    # (times past int64: the builder's to move, model.time_beyond_range; see
    # test_range_rules.py)
    "meminfo_opr_id_over_int64.json": ("megengine-meminfo", "ok"),
    "meminfo_time_over_int64.json": ("megengine-meminfo", "ok"),
    # a mem_chunk whose id is not its key (KeyError in the in-place settling before)
    "megengine_chunk_id_not_key.json": ("megengine", "ok"),
}


@pytest.mark.parametrize("name", sorted(MINIMISED))
def test_minimised_fuzz_inputs(name: str, tmp_path: Path):
    reader, expected = MINIMISED[name]
    path = HOSTILE / name
    if expected == "read":
        result = run("info", str(path), "--format", reader)
        assert result.exit_code == 0, result.output
        return
    if expected != "ok":
        one_error_line(run("info", str(path), "--format", reader), str(path), expected)
        return
    for to in ("chrome", "perfetto", "summary"):
        result = run("convert", str(path), "--format", reader, "--to", to,
                     "-o", str(tmp_path / f"out.{to}"))
        assert result.exit_code == 0, result.output


def test_minimised_migraphx_input(tmp_path: Path):
    # (inline: the MIGraphX tests sniff every text file under tests/data) a Summary average
    # of 1e308 ms, refused before: moved to the statistics' edge and counted, as in every
    # text reader
    path = tmp_path / "perf.txt"
    path.write_text('Summary:\n::8ms/1=1e308ms,2%')
    trace = traceconv.load(path, format="migraphx")
    (stat,) = trace.stats
    assert (stat.total_ns, stat.avg_ns) == (8_000_000, STAT_LIMIT)
    assert trace.diagnostics.count("model.statistic_beyond_range") == 1


def test_a_migraphx_load_past_int64_leaves_out_its_block(tmp_path: Path):
    # (fuzz) it refused the program; by hand: the one load's block, left out and counted
    path = tmp_path / "perf.txt"
    path.write_text('4=load[offset=9999999999999999999,end=6]()->float_type,{},')
    trace = traceconv.load(path, format="migraphx")
    assert len(trace.memory) == 0
    assert "address is out of the int64 range: 9999999999999999999" in trace.diagnostics[
        "model.memory_block_unreadable"].example


def test_an_infinite_instruction_time_is_a_time_past_range(tmp_path: Path):
    # (fuzz, 14 bytes) an instruction timed 1e999 ms (inf) made the group percentages nan;
    # infinity is a time past range as 1e308 is: its slice moved to the end of the time
    # range, its recomputed group's total, average and device time to the statistics' edge,
    # its share (inf / inf) counted (each counted once, by hand)
    path = tmp_path / "perf.txt"
    path.write_text("3=}:1e999ms,6%")
    trace = traceconv.load(path, format="migraphx")
    assert trace.counts()["slices"] == 1
    (stat,) = trace.stats
    assert (stat.total_ns, stat.avg_ns, stat.device_ns) == (STAT_LIMIT,) * 3
    counts = {d.code: d.count for d in trace.diagnostics if d.code.startswith("model.")}
    assert counts == {"model.time_beyond_range": 1, "model.statistic_beyond_range": 3,
                      "model.share_beyond_range": 1}


def test_garbled_migraphx_percentile_is_an_unparsed_line(tmp_path: Path):
    path = tmp_path / "perf.txt"
    path.write_text("Summary:\ngemm: 8ms / 1 = 8ms, 100%\n\nTotal time: 8ms\n"
                    "Percentiles (90, 95): (1.5ms, 2/ms)\n")
    trace = traceconv.load(path, format="migraphx")
    unparsed = {d.code: d for d in trace.diagnostics}["migraphx.unparsed_line"]
    assert unparsed.count == 1 and unparsed.example is not None
    assert unparsed.example.startswith("line 5: Percentiles")


def test_invalid_utf8_in_protobuf_strings_is_text_and_counted(tmp_path: Path):
    from protobuf_runtime import runtime_classes

    from traceconv.formats.paddle_pb.proto import MESSAGES

    NodeTreesProto = runtime_classes("paddle_pb_hostile", MESSAGES)["NodeTreesProto"]
    message = NodeTreesProto(version="3.3.1")
    node = message.thread_trees.add(thread_id=1).host_nodes.add(id=1, parentid=-1)
    node.host_trace_event.name = "innerX"   # then one byte that is not UTF-8
    node.host_trace_event.start_ns, node.host_trace_event.end_ns = 10, 20
    data = message.SerializeToString().replace(b"innerX", b"inner\xff")
    path = tmp_path / "bad.paddle_trace.pb"
    path.write_bytes(data)
    trace = traceconv.load(path)
    assert trace.slice(0).name == "inner\ufffd"
    assert {d["code"]: d["count"] for d in trace.diagnostics.as_list()}[
        "paddle_pb.invalid_utf8"] == 1
    out = tmp_path / "out.json"
    traceconv.save(trace, out, format="chrome")
    assert b"b'inner" not in out.read_bytes() and "inner\ufffd" in out.read_text()


def test_ids_of_the_wrong_type_in_chrome_files(tmp_path: Path):
    # a list as pid/tid/flow id, an object as External id: type confusion, not crashes
    path = chrome(tmp_path, [
        {"ph": "M", "name": "thread_name", "pid": [1], "tid": 1, "args": {"name": "t"}},
        {"ph": "X", "name": "a", "ts": 0, "dur": 5, "pid": [1], "tid": {"a": 1},
         "cat": "cpu_op", "args": {"External id": {"x": 1}}},
        {"ph": "s", "name": "f", "id": [7], "ts": 1, "pid": [1], "tid": 1, "cat": "c"},
        {"ph": "f", "name": "f", "id": [7], "ts": 2, "pid": [1], "tid": 1, "cat": "c",
         "bp": "e"},
        {"ph": "X", "name": "big", "ts": 0, "dur": 1, "pid": 2, "tid": 2,
         "args": {"n": 2**64 - 1}}])
    assert traceconv.check(path).counts["events"] == 5
    trace = traceconv.load(path)
    for to in ("chrome", "summary", "graphml", "perfetto"):
        traceconv.save(trace, tmp_path / f"out.{to}", format=to)
    assert str(2**64 - 1) in (tmp_path / "out.chrome").read_text()


def test_an_empty_pftrace_fails_check(tmp_path: Path):
    path = tmp_path / "empty.pftrace"
    path.write_bytes(b"")
    report = traceconv.check(path, "perfetto")
    assert not report.ok and [e["code"] for e in report.errors] == ["empty_trace"]
    assert run("check", str(path), "--format", "perfetto").exit_code == 1


# -- 8. check agrees with trace_processor ---------------------------------------------------

def test_args_nested_150_deep_are_no_decode_error(trace_processor):
    # one BEGIN/END slice whose debug annotation is a dict nested 150 deep (over protobuf's
    # recursion limit of 100): trace_processor loads the slice and its one leaf argument
    path = HOSTILE / "args_nested_150_deep.pftrace"
    report = traceconv.check(path)
    assert report.errors == [] and report.counts["slices"] == 1, report.errors
    trace_processor.load(path.read_bytes())
    assert [r.name for r in trace_processor.query("select name from slice")] == ["deep args"]
    leaves = trace_processor.query("select key from args where key like 'debug.deep.%'")
    assert len(leaves) == 1 and leaves[0].key.split(".").count("d") == 150


def test_a_nul_inside_a_name_is_flagged(trace_processor):
    # the track is named "thr\0ead" and the slice "conv\0hidden": trace_processor cuts both
    path = HOSTILE / "name_with_nul.pftrace"
    trace_processor.load(path.read_bytes())
    assert [r.name for r in trace_processor.query("select name from slice")] == ["conv"]
    assert [r.name for r in trace_processor.query("select name from track")] == ["thr"]
    report = traceconv.check(path)
    assert [(e["code"], e["count"]) for e in report.errors] == [("name_with_nul", 2)]
    # a name that is not UTF-8 (protobuf hands it over as bytes) is checked too
    report = traceconv.check(HOSTILE / "name_not_utf8_with_nul.pftrace")
    assert [(e["code"], e["count"]) for e in report.errors] == [("name_with_nul", 1)]


def test_diff_prints_names_and_paths_from_data_as_text(tmp_path: Path):
    # a name with a closing rich tag, ESC and BEL, in a folder named like a bold tag
    name = "op[/x]\x1b[2J\x07"
    a = chrome(tmp_path, [{"ph": "X", "name": name, "ts": 0, "dur": 10, "pid": 1, "tid": 1}],
               "[b]d/a.json")
    b = chrome(tmp_path, [{"ph": "X", "name": name, "ts": 0, "dur": 30, "pid": 1, "tid": 1}],
               "[b]d/b.json")
    result = run("diff", str(a), str(b), "--wide")   # long paths: on one line
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "op[/x]\\x1b[2J\\x07" in result.output          # shown, escaped, not interpreted
    assert f"{a} → {b}" in result.output
    assert "+20.000" in result.output                      # 10 µs → 30 µs


# -- 5. the fuzz classes left by issue15b (seed 5, 600 s) ------------------------------------

def chrome_doc(tmp_path: Path, events: list, **envelope) -> Path:
    path = tmp_path / "t.json"
    path.write_bytes(orjson.dumps({**envelope, "traceEvents": events}))
    return path


def codes_of(trace) -> dict[str, int]:
    return {d["code"]: d["count"] for d in trace.diagnostics.as_list()}


def test_jax_device_pid_that_is_an_object(tmp_path: Path):
    # TypeError (unhashable dict) in the JAX flavour's prepare before
    path = chrome_doc(tmp_path, [
        {"ph": "M", "name": "process_name", "pid": {"a": 1}, "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "/device:GPU:1"}},
        {"ph": "X", "name": "k", "ts": 0, "dur": 1, "pid": {"a": 1}, "tid": 1},
        {"ph": "X", "name": "k", "ts": 0, "dur": 1, "pid": 2, "tid": 1}])
    trace = traceconv.load(path, format="chrome")
    assert trace.counts()["slices"] == 1
    assert codes_of(trace)["chrome.malformed_event"] == 1


def test_jax_events_that_are_not_objects(tmp_path: Path):
    # (fuzz, seed 1 #27) AttributeError in the JAX flavour's prepare: 'str' has no .get;
    # (seed 2026 #16702) KeyError: a device process_name without a pid
    path = chrome_doc(tmp_path, [
        "-1", 7, None,
        {"ph": "M", "name": "process_name", "args": {"name": "/device:GPU:1"}},
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:GPU:0"}},
        {"ph": "M", "name": "process_name", "pid": 2, "args": {"name": "/host:CPU"}},
        {"ph": "X", "name": "k", "ts": 0, "dur": 1, "pid": 1, "tid": 1}])
    trace = traceconv.load(path, format="chrome")
    assert trace.counts()["slices"] == 1
    assert trace.metadata.framework == "JAX"
    assert [t.kind.value for t in trace.tracks] == ["stream"]   # pid 1 is still a device
    assert codes_of(trace) == {"chrome.event_not_object": 3}


def test_kineto_memory_and_correlation_of_the_wrong_type(tmp_path: Path):
    # TypeError in _memory_blocks (Device Id a list) and _join_launches (correlation an object)
    path = chrome_doc(tmp_path, [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 0, "dur": 2,
         "pid": 1, "tid": 1, "args": {"correlation": {"a": 1}}},
        {"ph": "X", "cat": "kernel", "name": "k", "ts": 3, "dur": 2, "pid": 0, "tid": 7,
         "args": {"correlation": {"a": 1}}},
        {"ph": "i", "s": "t", "name": "[memory]", "ts": 1, "pid": 1, "tid": 1,
         "args": {"Bytes": 8, "Addr": 16, "Device Type": 1, "Device Id": [0]}},
        {"ph": "i", "s": "t", "name": "[memory]", "ts": 1, "pid": 1, "tid": 1,
         "args": {"Bytes": 8, "Addr": [16], "Device Type": 1, "Device Id": 0}},
        {"ph": "i", "s": "t", "name": "[memory]", "ts": 1, "pid": 1, "tid": 1,
         "args": {"Bytes": 8, "Addr": 32, "Device Type": 1, "Device Id": 0}}],
        schemaVersion=1, distributedInfo={"rank": 0})
    trace = traceconv.load(path, format="chrome")
    codes = codes_of(trace)
    assert codes["kineto.malformed_correlation"] == 2
    assert codes["kineto.malformed_memory_event"] == 2
    assert trace.counts()["memory_blocks"] == 1
    for to in ("chrome", "summary", "perfetto"):
        traceconv.save(trace, tmp_path / f"out.{to}", format=to)


@pytest.mark.parametrize(("properties", "dropped"), [
    (7, 1), ({"id": 0, "name": "H100"}, 1),
    ([{"id": [0], "name": "A"}, "x", {"id": 0}, {"name": "B"}], 3)])
def test_kineto_device_properties_of_the_wrong_shape(tmp_path: Path, properties, dropped):
    # (fuzz, seed 0 #12) TypeError in _label_processes: deviceProperties 7 is not iterable;
    # (seed 13 #897) KeyError: an entry without "id"
    path = chrome_doc(tmp_path, [
        {"ph": "X", "cat": "kernel", "name": "k", "ts": 3, "dur": 2, "pid": 0, "tid": 7}],
        schemaVersion=1, deviceProperties=properties)
    trace = traceconv.load(path, format="chrome")
    assert trace.counts()["slices"] == 1
    assert codes_of(trace)["kineto.malformed_device_properties"] == dropped


def test_megengine_chunk_whose_id_is_not_its_key_is_counted():
    # mem_chunk {"x": {"id": "c", ...}}: a KeyError in _settle_in_place before issue15b's fix;
    # the key names the block (memory plans refer to chunks by key) and the repair is counted
    trace = traceconv.load(HOSTILE / "megengine_chunk_id_not_key.json", format="megengine")
    assert [(b.args["chunk"], b.size, b.address) for b in trace.memory] == [("x", 8, 16)]
    assert codes_of(trace)["megengine.chunk_id_not_key"] == 1


def test_migraphx_shape_whose_byte_size_passes_int64(tmp_path: Path):
    # dims and strides within int64 whose byte size is not: 4 x (1 + (2**32-1) x 2**32 + ...)
    # stopped the read ("memory block size is out of the int64 range"), or reached orjson in
    # summary-json as a > 64-bit "memory" total
    big = "float_type, {4294967296, 4294967296}, {4294967296, 1}"
    path = tmp_path / "prog.txt"
    path.write_text(f"@0 = @param:x -> {big}\n@1 = gpu::relu(@0) -> {big}\n"
                    "@2 = gpu::relu(@1) -> float_type, {2, 2}, {2, 1}\n")
    trace = traceconv.load(path, format="migraphx")
    assert codes_of(trace) == {"migraphx.shape_too_large": 2}
    assert [b.size for b in trace.memory] == [0]   # the parameter: no size
    for to in ("summary-json", "chrome", "perfetto", "graphml"):
        assert run("convert", str(path), "--format", "migraphx", "--to", to,
                   "-o", str(tmp_path / f"out.{to}")).exit_code == 0


def test_a_cut_snapshot_pickle_is_located(tmp_path: Path):
    import pickle

    doc = {"segments": [{"address": i, "total_size": 8} for i in range(50)], "device_traces": []}
    raw = pickle.dumps(doc, protocol=4)
    cut = raw[:len(raw) // 2]
    plain, packed, torn = (tmp_path / "a.pickle", tmp_path / "b.pickle.gz",
                           tmp_path / "c.pickle.gz")
    plain.write_bytes(cut)
    packed.write_bytes(gzip.compress(cut))
    torn.write_bytes(gzip.compress(raw)[:-12])   # the gzip itself cut (no trailer)
    for path, place in ((plain, f":byte {len(cut)}:"), (packed, f":decompressed byte {len(cut)}:")):
        one_error_line(run("info", str(path), "--format", "torch-snapshot"),
                       f"{path}{place} not a readable pickle: pickle data was truncated")
    # the gzip cut itself is the input layer's one line, at the content zlib gets out of it
    whole = len(zlib.decompressobj(wbits=31).decompress(torn.read_bytes()))
    one_error_line(run("info", str(torn), "--format", "torch-snapshot"),
                   f"{torn}:decompressed byte {whole}: the gzip stream is cut short")


def test_a_paddle_report_size_past_int64_is_moved_and_counted(tmp_path: Path):
    # a memory row's 1e308 MB (refused with the file before, as "time is out of the int64
    # range"): a size past int64 is the builder's to move to the statistics' edge and count,
    # as a time's is (test_hostile_numbers.py); the other size of the row as printed
    lines = (Path(__file__).parent.parent / "samples" / "paddle" /
             "report_gpu_before.txt").read_text().splitlines(keepends=True)
    at = next(i for i, text in enumerate(lines) if text.startswith("Place(gpu:0):conv2d"))
    lines[at] = re.sub(r"(?<=\s)12\.5(?=\s)", "1e308", lines[at], count=1)
    assert "1e308" in lines[at] and "12.5" in lines[at]
    path = tmp_path / "report.txt"
    path.write_text("".join(lines))
    trace = traceconv.load(path, format="paddle-report")
    (row,) = [s for s in trace.stats if s.section == "memory" and "conv2d" in s.name]
    assert (row.extra["alloc_bytes"], row.extra["free_bytes"]) == (STAT_LIMIT, 12.5 * 2**20)
    assert trace.diagnostics.count("model.statistic_beyond_range") == 1


@pytest.mark.slow
def test_paddle_nesting_subset_search_is_bounded():
    # A collapsed merged table is nested by finding the rows whose totals make up the
    # excess over Total time; every row walks every reachable sum, so a hostile table
    # (42 KB took 2.6 s) is cut off after MAX_WALK walked sums or MAX_SUMS reachable ones.
    from traceconv.formats.paddle_report.nesting import MAX_SUMS, MAX_WALK, _subset_with_sum

    assert (MAX_SUMS, MAX_WALK) == (200_000, 1_000_000)
    # n equal rows: row k walks k + 1 sums, n (n + 1) / 2 in all: 980,700 for n = 1,400
    # (under the cap: all rows found), 1,125,750 for 1,500 (the walk stops at row 1,414)
    assert _subset_with_sum([0.01] * 1400, 14.0, 1e-4) == list(range(1400))
    assert _subset_with_sum([0.01] * 1500, 15.0, 1e-4) is None
    # powers of two double the reachable sums: past 2**17 rows 18+ are never tried, so the
    # last row (which the answer needs) is not reached with 40 rows before it; with 12 it is
    powers = [0.01 * 2**k for k in range(12)]
    assert _subset_with_sum([*powers, 1000.0], 1000.01, 1e-4) == [0, 12]
    powers = [0.01 * 2**k for k in range(40)]
    assert _subset_with_sum([*powers, 1e9], 1e9 + 0.01, 1e-4) is None


def test_slice_whose_end_passes_int64_is_shortened(tmp_path: Path):
    # (fuzz, seed 2026) start and duration each fit int64 but not their sum: numpy wrapped
    # the end around ("overflow encountered in scalar subtract" in op_summary; summaries
    # and Perfetto ends came out negative)
    import warnings

    start_us = 9_200_000_000_000_000           # 9.2e18 ns: 0.023e18 below the int64 max
    path = chrome_doc(tmp_path, [
        {"ph": "X", "name": "a", "ts": start_us, "dur": 10**14, "pid": 1, "tid": 1},
        {"ph": "X", "name": "b", "ts": start_us, "dur": 1, "pid": 1, "tid": 1}])
    trace = traceconv.load(path, format="chrome")
    # shortened to end at the int64 maximum, then (issue 23) moved into the time range
    assert codes_of(trace) == {"model.slice_end_beyond_int64": 1, "model.time_beyond_range": 2}
    assert list(trace.slices.numpy("start")) == [35 * 10**17] * 2
    assert list(trace.slices.numpy("dur")) == [0, 0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for to in ("summary", "summary-json", "perfetto", "chrome"):
            traceconv.save(trace, tmp_path / f"out.{to}", format=to)


# durations past int64 as JSON text (orjson writes neither 10**30 nor 1e400): name -> dur
_PAST_INT64_DURATIONS = {"uint64": "18446744073709551615", "float": "1e300",
                         "huge": "1000000000000000000000000000000", "negative": "-1e300",
                         "infinite": "1e400"}


@pytest.mark.parametrize("names", [("uint64", "float"), tuple(_PAST_INT64_DURATIONS)],
                         ids=["column-path", "per-event-path"])
def test_a_duration_past_int64_is_a_time(tmp_path: Path, names: tuple[str, ...]):
    # A duration is a time quantity: past int64 it stops at the edge, and the builder's
    # rules for a slice's end count it (as a ts past int64 is moved), instead of the event
    # dropped as chrome.malformed_event. inf (1e400) is no number: still malformed. (uint64
    # and 1e300 alone decode as typed records, read a column at a time; 10**30 or a negative
    # duration sends the piece to the per-event path)
    events = ['{"ph": "X", "name": "ordinary", "pid": 1, "tid": 1, "ts": 1, "dur": 2}'] + [
        f'{{"ph": "X", "name": "{name}", "pid": 1, "tid": 1, "ts": 3, '
        f'"dur": {_PAST_INT64_DURATIONS[name]}}}' for name in names]
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents": [' + ", ".join(events) + "]}")
    trace = traceconv.load(path, format="chrome")
    # by hand: uint64, float, huge end past int64 (shortened there, then moved to the time
    # range's end, 3.5e18 ns); negative is an end before its start; infinite is malformed
    past = [name for name in names if name in ("uint64", "float", "huge")]
    expected = {"model.slice_end_beyond_int64": len(past), "model.time_beyond_range": len(past)}
    if "negative" in names:
        expected["model.end_before_start"] = 1
    if "infinite" in names:
        expected["chrome.malformed_event"] = 1
    assert codes_of(trace) == expected
    ends = {(row := trace.slice(i)).name: row.start + row.dur for i in range(len(trace.slices))}
    assert ends == {"ordinary": 3000, **{name: 35 * 10**17 for name in past},
                    **({"negative": 3000} if "negative" in names else {})}


def test_snapshot_items_of_the_wrong_shape_are_counted(tmp_path: Path):
    # (fuzz, the new torch-snapshot target: 20 classes in 40 s) AttributeError / TypeError /
    # ValueError / OverflowError in to_trace.py on items that are not objects, text or lists
    # where numbers belong, inf, negative sizes, a tuple-keyed dict that reached the Chrome
    # writer. The file holds 12 such items: 3 blocks, 1 segment, 4 history entries,
    # device_traces[1], 2 annotations and the allocator settings (see the test data); one
    # alloc's frames are 5 (no stack). Its two numbers past int64 are the builder's, by the
    # rules every reader meets: the segment at 2**70 is left out (model.memory_block_unreadable),
    # the alloc at time_us 2**62 (x 1000 past int64) is read at the time range's end
    # (model.time_beyond_range)
    trace = traceconv.load(HOSTILE / "snapshot_wrong_shapes.pickle", format="torch-snapshot")
    codes = codes_of(trace)
    assert codes["torch_snapshot.malformed"] == 12
    assert codes["torch_snapshot.malformed_frames"] == 1
    assert codes["model.memory_block_unreadable"] == codes["model.time_beyond_range"] == 1
    # what was well formed is read: the alloc/free pair, the late alloc, the block alive at
    # dump time, the one segment
    assert sorted((b.address, b.size, b.alloc_ns, b.free_ns) for b in trace.memory) == [
        (1, 4, 35 * 10**17, None), (4096, 500, None, None), (8192, 256, 10_000, 20_000)]
    assert [(b.address, b.size) for b in trace.reservations] == [(4096, 2048)]
    assert trace.metadata.attributes["allocator_settings"] == {"text": "{(1,): None}"}
    for to in ("chrome", "perfetto", "summary", "svg"):
        traceconv.save(trace, tmp_path / f"out.{to}", format=to)


def test_execution_trace_nodes_of_the_wrong_type_are_counted():
    # (fuzz) TypeError in graph.py: ids "3" and 2 sorted together, an id or a parent that
    # is a list (unhashable), an argument list that is a number, an attr name that is a
    # list (left out of the op's attributes, and counted); (seed 2026 #5482) a GenericList
    # argument whose value is a number
    trace = traceconv.load(HOSTILE / "et_wrong_types.json", format="torch-et")
    assert codes_of(trace) == {"torch_et.structure_nodes": 1, "torch_et.malformed": 7}
    assert sorted(trace.graph.nodes) == ["op/2", "op/5", "op/6", "op/7", "op/8",
                                         "tensor/10:11", "tensor/12:13"]


@pytest.mark.parametrize("base", [2**70, 2**63 - 100, 1_700_000_000_000_000_000])
@pytest.mark.parametrize("events", [1, 0])
def test_kineto_time_base_that_would_pass_int64_is_not_applied(tmp_path: Path, base, events):
    # (fuzz, seed 2026 #1608) OverflowError adding baseTimeNanoseconds beyond int64; one
    # within int64 that moves the times past it wrapped them around in numpy; (seed 2027
    # #76327) one beyond int64 with no timed event at all
    path = tmp_path / "t.json"
    path.write_text(f'{{"schemaVersion": 1, "baseTimeNanoseconds": {base}, "traceEvents": '
                    '[{"ph": "X", "name": "a", "ts": 1000, "dur": 1, "pid": 1, "tid": 1}]}'
                    if events else f'{{"schemaVersion": 1, "baseTimeNanoseconds": {base}, '
                    '"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1, '
                    '"args": {"name": "p"}}]}')
    if not events:   # (names alone: nothing read, one clear error, no overflow)
        with pytest.raises(InputError, match="nothing read"):
            traceconv.load(path, format="chrome")
        return
    trace = traceconv.load(path, format="chrome")
    applies = base + 1_000_000 < 2**63
    assert list(trace.slices.numpy("start")) == [1_000_000 + (base if applies else 0)]
    assert codes_of(trace).get("chrome.time_base_out_of_range", 0) == (0 if applies else 1)


def test_kineto_time_base_that_would_move_a_flow_beyond_int64(tmp_path: Path):
    # (fuzz, seed 2027 #76327) OverflowError shifting flow points: the slices fit, a flow
    # point's time does not
    path = tmp_path / "t.json"
    path.write_text(f'{{"schemaVersion": 1, "baseTimeNanoseconds": {2**62}, "traceEvents": ['
                    '{"ph": "X", "name": "a", "ts": 1000, "dur": 1, "pid": 1, "tid": 1},'
                    '{"ph": "s", "id": 1, "name": "f", "cat": "c", "ts": 9000000000000000,'
                    ' "pid": 1, "tid": 1}]}')
    trace = traceconv.load(path, format="chrome")
    assert list(trace.slices.numpy("start")) == [1_000_000]
    assert codes_of(trace)["chrome.time_base_out_of_range"] == 1


def test_kernel_external_id_that_is_a_list(tmp_path: Path):
    # (fuzz, seed 2027 #12832) TypeError (unhashable list) in the op summary's device side;
    # the host side already took only ints and text as ids
    path = chrome_doc(tmp_path, [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 10, "pid": 1,
         "tid": 1, "args": {"External id": 7}},
        {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 2, "dur": 3, "pid": 0, "tid": 7,
         "args": {"External id": [7]}},
        {"ph": "X", "cat": "kernel", "name": "gemm", "ts": 6, "dur": 2, "pid": 0, "tid": 7,
         "args": {"External id": 7}}], schemaVersion=1)
    trace = traceconv.load(path, format="chrome")
    traceconv.save(trace, tmp_path / "out.json", format="summary-json")
    ops = {(op["name"], op["kind"]): op for op in orjson.loads(
        (tmp_path / "out.json").read_bytes())["ops"]}
    # only the kernel with a usable id is the op's device time (2 µs), the other stands alone
    assert ops[("aten::mm", "op")]["device_total_ns"] == 2000


@pytest.mark.parametrize("sort_index", [1e308, 2**63, "x", 3.0])
def test_sort_index_beyond_int64_is_a_malformed_event(tmp_path: Path, sort_index):
    # a float reached the Perfetto writer's varint (sibling_order_rank) before
    path = chrome_doc(tmp_path, [
        {"ph": "M", "name": "thread_sort_index", "ts": 0, "pid": 1, "tid": 1,
         "args": {"sort_index": sort_index}},
        {"ph": "X", "name": "a", "ts": 0, "dur": 1, "pid": 1, "tid": 1}])
    trace = traceconv.load(path, format="chrome")
    ok = sort_index == 3.0
    assert codes_of(trace).get("chrome.malformed_event", 0) == (0 if ok else 1)
    assert [t.sort_index for t in trace.tracks] == [3 if ok else None]
    traceconv.save(trace, tmp_path / "out.pftrace", format="perfetto")


def test_migraphx_shape_dimension_beyond_int64_is_text(tmp_path: Path):
    # orjson refused the int in the summary JSON's out_shapes before
    path = tmp_path / "prog.txt"   # inline: files in tests/data must not sniff as MIGraphX
    path.write_text("d=] -> _type,{99999999999999999999},:2ms,9%")
    trace = traceconv.load(path, format="migraphx")
    out = tmp_path / "out.json"
    assert run("convert", str(path), "--format", "migraphx", "--to", "summary-json",
               "-o", str(out)).exit_code == 0
    assert orjson.loads(out.read_bytes())["rows"][0]["out_shapes"] == []   # not a dimension
    traceconv.save(trace, tmp_path / "out.pftrace", format="perfetto")


def test_live_bytes_of_sizes_at_the_int64_edges_is_exact():
    """Fuzz (paddle-pb, seed 2029): a block of size -2**63 made the summary's allocation
    sites fail (its free, +2**63, does not fit int64); levels are now summed exactly."""
    from traceconv.model import MemoryBlock
    from traceconv.model.memory import live_bytes

    levels = live_bytes([MemoryBlock(0, -2**63, 10, 20), MemoryBlock(8, 2**62, 15, None)])
    assert levels.times.tolist() == [10, 15, 20]
    assert [int(x) for x in levels.bytes] == [-2**63, -2**63 + 2**62, 2**62]
