"""Hostile input, round three (issue 23): each class from a minimal synthetic file.

Outputs onto special files, inputs that are not regular files, terminating signals, numbers
at the int64 edges, cut files read as whole, encodings, depth, amplification, super-linear
work, and errors raised where no handler was. The contract stays that of
``tests/test_hostile.py``: one located line on stderr, exit status 1, no traceback, nothing
of an output left behind, nothing lost without a count.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import orjson
import pytest
from cli_errors import one_error_line, run

import traceconv
from benchmarks.fuzz.hostile import unexpand
from traceconv import io as tio
from traceconv import special_files
from traceconv.errors import InputError, OutputError

EVENTS = [{"ph": "X", "name": f"op{i}", "ts": i * 10, "dur": 5, "pid": 1, "tid": 1}
          for i in range(50)]
SMALL_TRACE = orjson.dumps({"traceEvents": EVENTS})


@pytest.fixture
def small(tmp_path: Path) -> Path:
    path = tmp_path / "in" / "small.json"
    path.parent.mkdir()
    path.write_bytes(SMALL_TRACE)
    return path


@pytest.fixture
def short_fifo_wait(monkeypatch):
    monkeypatch.setattr(special_files, "FIFO_WAIT_SECONDS", 0.3)


def _feed(path: str | Path, data: bytes) -> threading.Thread:
    """Write ``data`` into the FIFO ``path`` from a thread (it opens when a reader does)."""
    def write() -> None:
        with open(path, "wb") as out:
            out.write(data)
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


# -- 1. outputs onto special files -----------------------------------------------------------

def test_output_onto_a_symlink_writes_its_file_and_keeps_the_link(small: Path, tmp_path: Path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert run(str(small), "-o", str(link)).exit_code == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert orjson.loads(real.read_bytes())["traceEvents"]


def test_output_onto_a_fifo_streams_into_it(small: Path, tmp_path: Path):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    assert run(str(small), "-o", str(fifo)).exit_code == 0
    reader.join(30)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced by a file"
    assert len(orjson.loads(got[0])["traceEvents"]) >= len(EVENTS)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".traceconv-")] == []


def test_output_onto_a_fifo_without_reader_is_refused(small: Path, tmp_path: Path,
                                                      short_fifo_wait):
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    one_error_line(run(str(small), "-o", str(fifo)), str(fifo), "no reader opened")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_output_onto_a_character_device_is_never_renamed_over(small: Path, monkeypatch):
    def no_replace(*args: object) -> None:
        raise AssertionError("os.replace over a device")
    monkeypatch.setattr(tio.os, "replace", no_replace)
    assert run(str(small), "-o", os.devnull, "--to", "chrome").exit_code == 0
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


def test_output_onto_a_socket_is_refused(small: Path, tmp_path: Path):
    where = tmp_path / "s.json"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(where))
        one_error_line(run(str(small), "-o", str(where)), str(where), "a socket")
        assert stat.S_ISSOCK(os.lstat(where).st_mode)


def test_output_onto_a_symlink_loop_says_so(small: Path, tmp_path: Path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    one_error_line(run(str(small), "-o", str(tmp_path / "a"), "--to", "chrome"),
                   "symbolic link loop")


# -- 2. inputs that are not regular files ----------------------------------------------------

def test_fifo_input_without_writer_is_refused_in_bounded_time(tmp_path: Path, short_fifo_wait):
    fifo = tmp_path / "in.json"
    os.mkfifo(fifo)
    with pytest.raises(InputError, match="no writer opened"):
        traceconv.load(fifo, format="chrome")


def test_fifo_input_is_read_once_and_whole(tmp_path: Path):
    fifo = tmp_path / "in.json"
    os.mkfifo(fifo)
    writer = _feed(fifo, SMALL_TRACE)
    trace = traceconv.load(fifo)   # detection, gzip sniff and the read share one copy
    writer.join(10)
    assert trace.counts()["slices"] == len(EVENTS)


def test_a_pipe_given_as_a_path_loses_nothing():
    # what a shell's <(cat f) passes: /dev/fd/N of a pipe, which yields its bytes once
    padded = orjson.dumps({"traceEvents": EVENTS, "pad": "x" * (200 << 10)})
    read_end, write_end = os.pipe()

    def write() -> None:
        with open(write_end, "wb") as out:
            out.write(padded)
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    try:
        trace = traceconv.load(f"/proc/self/fd/{read_end}")
    finally:
        thread.join(10)
        os.close(read_end)
    assert trace.counts()["slices"] == len(EVENTS)


def test_the_size_limit_applies_to_a_proc_file():
    # st_size is 0 for /proc files: the bound must count what is read
    with pytest.raises(InputError, match="16 B limit"):
        tio.Source("/proc/self/maps", max_bytes=16).read_bytes()


def test_dev_zero_ends_at_its_first_byte():
    """An endless stream that cannot start a JSON value ends at its first byte, not at the
    size limit (tests/test_input_bounds.py: an endless stream that could be JSON)."""
    done = subprocess.run([sys.executable, "-m", "traceconv", "info", "/dev/zero", "--format",
                           "chrome", "--max-bytes", "1M"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1
    assert "/dev/zero:1:1: not valid JSON" in done.stderr


def test_input_symlink_loop_says_so(tmp_path: Path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    one_error_line(run("info", str(tmp_path / "a")), "symbolic link loop")


# -- 3. every terminating signal removes the partial output ----------------------------------

STOPPED_WRITER = """
import os, signal, sys
import traceconv.formats.chrome as writer
def stopped(trace, out, **options):
    out.write(b"[" * 4096)
    os.kill(os.getpid(), signal.{name})
    raise AssertionError("{name} did not stop the writer")
writer.write = stopped
sys.argv = ["traceconv", {source!r}, "--to", "chrome", "-o", {output!r}]
from traceconv.cli import main
main()
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM",
                                  "SIGXCPU", "SIGVTALRM"])
def test_terminating_signals_remove_the_partial_output(name: str, small: Path, tmp_path: Path):
    out = tmp_path / "out"
    out.mkdir()
    script = STOPPED_WRITER.format(name=name, source=str(small), output=str(out / "o.json"))
    # (as a terminal starts it: under nohup or as a background job SIGHUP / SIGQUIT arrive
    # ignored, and traceconv rightly leaves them so)
    script = f"import signal; signal.signal(signal.{name}, signal.SIG_DFL)\n" + script
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    number = getattr(signal, name)
    assert done.returncode == 128 + number, done.stderr
    assert done.stderr.strip() == f"traceconv: terminated ({name})"
    assert os.listdir(out) == []


def test_an_ignored_hangup_stays_ignored(small: Path, tmp_path: Path):
    # nohup: SIGHUP ignored by the caller is not turned into a clean-up and exit
    out = tmp_path / "o.json"
    script = STOPPED_WRITER.format(name="SIGHUP", source=str(small), output=str(out))
    script = script.replace("raise AssertionError", "writer_went_on = ")
    script = "import signal; signal.signal(signal.SIGHUP, signal.SIG_IGN)\n" + script
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert out.exists()


def test_output_error_names_are_unchanged_for_regular_outputs(tmp_path: Path, small: Path):
    with pytest.raises(OutputError, match="no such directory"):
        traceconv.save(traceconv.load(small), tmp_path / "no" / "x.json")


# -- 4. numbers at the edges -----------------------------------------------------------------

EDGES = [{"ph": "X", "name": "early", "ts": -9223372036854775, "dur": 1, "pid": 1, "tid": 1},
         {"ph": "X", "name": "late", "ts": 9223372036854775, "dur": 0, "pid": 1, "tid": 1},
         {"ph": "i", "name": "mark", "ts": 9223372036854775, "pid": 1, "tid": 1, "s": "t"},
         {"ph": "C", "name": "c", "ts": -9223372036854775, "pid": 1, "args": {"v": 1}}]


@pytest.mark.parametrize("to", ["chrome", "perfetto", "summary", "summary-json"])
def test_times_at_both_int64_edges_convert_and_are_counted(tmp_path: Path, to: str):
    source = tmp_path / "edges.json"
    source.write_bytes(orjson.dumps({"traceEvents": EDGES}))
    out = tmp_path / f"out.{to}"
    result = run(str(source), "--to", to, "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert "4 repaired" in result.stderr   # one per event moved into the range
    if to == "perfetto":   # (and the writer shifts them where Perfetto shows them, said apart)
        assert "written with 1 repaired (perfetto.time_shifted)" in result.stderr
    if to in ("chrome", "perfetto"):
        assert traceconv.check(out).ok


@pytest.mark.parametrize("command", ["info", "advise", "critical-path", "report"])
def test_a_span_past_int64_is_no_internal_error(tmp_path: Path, command: str):
    source = tmp_path / "edges.json"
    source.write_bytes(orjson.dumps({"traceEvents": EDGES}))
    args = [command, str(source)] + (["--json"] if command != "report" else
                                     ["-o", str(tmp_path / "r.html")])
    result = run(*args)
    if command == "critical-path":   # no work to walk: said in one line, --json or not
        assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.output
        assert "no critical path" in result.stderr and "internal" not in result.stderr
        return
    assert result.exit_code == 0 and "error" not in result.stderr, result.output
    if command == "info":
        codes = {d["code"]: d["count"] for d in orjson.loads(result.stdout)["diagnostics"]}
        assert codes == {"model.time_beyond_range": 4}
        trace = traceconv.load(source)
        assert trace.time_range == (-10**18, 35 * 10**17)   # the range's two edges


def test_an_infinite_counter_value_is_a_number_in_the_output(tmp_path: Path):
    source = tmp_path / "inf.json"
    source.write_bytes(b'{"traceEvents": [{"ph": "C", "name": "c", "ts": 1, "pid": 1, '
                       b'"args": {"v": 1e999}}]}')
    out = tmp_path / "out.json"
    assert run(str(source), "-o", str(out)).exit_code == 0
    written = [e for e in orjson.loads(out.read_bytes())["traceEvents"] if e["ph"] == "C"]
    assert written[0]["args"]["value"] == sys.float_info.max   # not null
    codes = {d["code"] for d in traceconv.load(source).diagnostics.as_list()}
    assert "model.counter_value_not_finite" in codes



def test_an_argument_integer_of_more_digits_than_python_converts_reads_as_infinity(
        tmp_path: Path):
    """(fuzz) a Kineto correlation of 5,000 digits: the args are kept as text and decoded
    when the launches are joined, where msgspec refused it past the reading."""
    huge = b"7" * 5000
    source = tmp_path / "huge.json"
    source.write_bytes(
        b'{"schemaVersion": 1, "traceEvents": ['
        b'{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 1, "dur": 2, '
        b'"pid": 1, "tid": 1, "args": {"correlation": ' + huge + b'}},'
        b'{"ph": "X", "cat": "kernel", "name": "k", "ts": 5, "dur": 2, "pid": 0, "tid": 7, '
        b'"args": {"correlation": -' + huge + b', "name": "' + huge + b'"}}]}')
    trace = traceconv.load(source)
    assert traceconv.validate(trace) == []
    values = [(s.args["correlation"], s.args.get("name")) for s in trace.iter_slices()]
    assert values == [(float("inf"), None), (float("-inf"), huge.decode())]   # texts stay
    assert run(str(source), "-o", str(tmp_path / "out.pftrace")).exit_code == 0


@pytest.mark.parametrize("command", ["summary", "info", "critical-path"])
def test_json_totals_past_2_64_are_written_exactly(tmp_path: Path, command: str):
    """(fuzz) ten host slices of 3e18 ns: their total passes 2^64, which orjson refuses;
    every --json output writes it as its digits."""
    source = tmp_path / "long.json"
    source.write_bytes(orjson.dumps({"traceEvents": [
        {"ph": "X", "name": f"op{k}", "cat": "cpu_op", "ts": 0, "dur": 3 * 10**15,
         "pid": 1, "tid": k} for k in range(10)]}))
    result = run(command, str(source), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)   # (Python's json reads integers of any size)
    if command == "summary":
        assert data["self_host_ns_total"] == 10 * 3 * 10**18 > 2**64

REPORT_ROWS = """Event                     Calls       Total       Min.        Max.        Ave.
  conv2d                  {calls}  60.5        0.2         0.6         0.3
  relu                    10          1.5         0.1         0.2         0.15
"""


@pytest.mark.parametrize("calls", ["99999999999999999999999", "18446744073709551617"])
def test_paddle_calls_past_int64_diff_and_json(tmp_path: Path, calls: str):
    before = tmp_path / "before.txt"
    after = tmp_path / "after.txt"
    before.write_text(REPORT_ROWS.format(calls=calls))
    after.write_text(REPORT_ROWS.format(calls="200        "))
    for args in (["diff", str(before), str(after), "--json"], ["diff", str(before), str(after)],
                 ["info", str(before), "--json"]):
        result = run(*args)
        assert result.exit_code == 0 and "error" not in result.stderr, result.output
    codes = {d["code"] for d in traceconv.load(before, format="paddle-report")
             .diagnostics.as_list()}
    assert "model.statistic_beyond_range" in codes


@pytest.mark.parametrize("rows, code", [
    ([[1, 2, -64, 1]], "model.negative_length"),                     # a negative create
    ([[1, 1, -64, 3], [2, 4, -64, 3]], "model.negative_length"),
    ([[1, 4, 64, 1]], "torch_memory.impossible_free"),               # a free of +64 bytes
    ([[1, 4, -64, 1]], "torch_memory.unmatched_free"),               # a free of nothing
    ([[1, 2, 2**62, 1], [2, 2, 2**62, 1]], "torch_memory.reconstructed"),   # (at 0, 2**62)
    ([[k, 2, 2**62, 1] for k in range(3)], "model.memory_block_unreadable"),   # (at 2**63)
    ([[2**63 + 5, 2, 64, 1]], "model.time_beyond_range"),          # (moved to the edge)
])
def test_memory_timeline_rows_out_of_range_are_dropped_and_counted(tmp_path: Path, rows, code):
    path = tmp_path / "m.raw.json"
    path.write_text(json.dumps(rows))   # (the stdlib writes ints past int64)
    try:
        trace = traceconv.load(path, format="torch-memory")
    except InputError as exc:   # (every row left out: nothing read, the largest count named)
        assert "nothing read" in str(exc) and "torch_memory." in str(exc), exc
        return
    codes = {d["code"] for d in trace.diagnostics.as_list()}
    assert code in codes
    for writer in ("chrome", "perfetto", "svg"):
        try:
            traceconv.save(trace, tmp_path / f"o.{writer}", format=writer)
        except traceconv.errors.TraceconvError as exc:
            assert "no memory" in str(exc)


def test_totals_whose_time_passes_int64_move_to_the_edge_and_are_counted(tmp_path: Path):
    path = tmp_path / "m.json"
    path.write_text("[[1, 9223372036854775807], [[0,64,0,0,0,0,0,0,0], [0,128,0,0,0,0,0,0,0]]]")
    trace = traceconv.load(path, format="torch-memory")
    assert {d["code"]: d["count"] for d in trace.diagnostics.as_list()}[
        "model.time_beyond_range"] == 1   # (the builder's one rule: 2**63 - 1 µs as ns)
    assert max(b.alloc_ns for b in trace.memory) == 35 * 10**17


# -- 10. errors outside the handler ----------------------------------------------------------

def test_a_failure_while_rendering_is_one_line_even_with_json(small: Path, monkeypatch):
    import traceconv.cli.info as info

    def broken(trace):
        raise TypeError("Integer exceeds 64-bit range")
    monkeypatch.setattr(info, "info_dict", broken)
    result = run("info", str(small), "--json")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stderr.strip().splitlines() == [
        "traceconv: internal error: TypeError: Integer exceeds 64-bit range "
        "(set TRACECONV_DEBUG=1 for the traceback)"]


# -- 5. truncation read as success -----------------------------------------------------------

SAMPLES = Path(__file__).parent.parent / "samples"
MIGRAPHX_REPORT = SAMPLES / "migraphx" / "perf_simple_graph_rocm4.txt"
MEMFLOW_SVG = Path(__file__).parent / "data" / "megengine" / "infer_traced_memory_flow.svg"


def test_a_migraphx_report_cut_inside_its_summary_is_counted(tmp_path: Path):
    lines = MIGRAPHX_REPORT.read_text().splitlines(keepends=True)
    summary = next(i for i, line in enumerate(lines) if line.startswith("Summary:"))
    cut = tmp_path / "cut.txt"
    cut.write_text("".join(lines[:summary + 3]))
    result = run("info", str(cut), "--format", "migraphx")
    assert result.exit_code == 0 and "1 left out" in result.stderr, result.stderr
    codes = {d["code"]: d["kind"] for d in traceconv.load(cut, format="migraphx")
             .diagnostics.as_list()}
    assert codes["migraphx.report_truncated"] == "dropped"
    whole = traceconv.load(MIGRAPHX_REPORT)
    assert "migraphx.report_truncated" not in {d["code"] for d in whole.diagnostics.as_list()}


def test_a_memory_flow_svg_cut_midway_is_counted(tmp_path: Path):
    data = MEMFLOW_SVG.read_bytes()
    cut = tmp_path / "memory_flow.svg"
    cut.write_bytes(data[:len(data) // 2])
    trace = traceconv.load(cut)
    codes = {d["code"]: d["kind"] for d in trace.diagnostics.as_list()}
    assert codes == {"megengine_memflow.truncated": "dropped"}
    assert 0 < trace.counts()["memory_blocks"] < traceconv.load(MEMFLOW_SVG).counts()[
        "memory_blocks"]
    assert "megengine_memflow.truncated" not in {
        d["code"] for d in traceconv.load(MEMFLOW_SVG).diagnostics.as_list()}


# -- 6. encodings and whitespace -------------------------------------------------------------

TEXT_SAMPLES = {"paddle-summary": SAMPLES / "paddle" / "summary_small_2.6.2.txt",
                "paddle-report": SAMPLES / "paddle" / "report_gpu_before.txt",
                "migraphx": MIGRAPHX_REPORT,
                "chrome": SAMPLES / "torch" / "cnn_step5.pt.trace.json",
                "megengine-memflow-svg": MEMFLOW_SVG}


DRESSES = {
    "utf8_bom": lambda text: b"\xef\xbb\xbf" + text.encode(),
    "utf16le_bom": lambda text: b"\xff\xfe" + text.encode("utf-16-le"),
    "utf16be_bom": lambda text: b"\xfe\xff" + text.encode("utf-16-be"),
    "utf32le_bom": lambda text: b"\xff\xfe\x00\x00" + text.encode("utf-32-le"),
    "cr_only": lambda text: text.replace("\n", "\r").encode(),
    "crlf": lambda text: text.replace("\n", "\r\n").encode(),
    "tabs": lambda text: unexpand(text).encode(),
}


def _counts(trace) -> tuple:
    c = trace.counts()
    return c["slices"], c["stat_rows"], c["memory_blocks"], c["counter_samples"]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", sorted(TEXT_SAMPLES))
@pytest.mark.parametrize("dress", sorted(DRESSES))
def test_a_text_input_in_another_dress_reads_the_same(tmp_path: Path, fmt: str, dress: str):
    original = TEXT_SAMPLES[fmt]
    dressed = tmp_path / original.name
    dressed.write_bytes(DRESSES[dress](original.read_text()))
    assert _counts(traceconv.load(dressed)) == _counts(traceconv.load(original))


def test_utf16_that_is_not_valid_is_refused_at_its_byte(tmp_path: Path):
    path = tmp_path / "report.txt"
    path.write_bytes(b"\xff\xfe" + "Event  Calls\n".encode("utf-16-le") + b"\x00\xdc")
    one_error_line(run("info", str(path), "--format", "paddle-report"),
                   f"{path}:byte 28: not valid UTF-16-LE")


# -- 7. depth and recursion ------------------------------------------------------------------

def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("where", ["args", "events", "document"])
def test_json_nested_1000_deep_is_a_located_error(tmp_path: Path, where: str):
    deep = _nested(1000)
    text = {"args": '{"traceEvents": [{"ph": "X", "name": "a", "ts": 1, "dur": 1, "pid": 1, '
                    '"tid": 1, "args": {"x": ' + deep + "}}]}",
            "events": '{"traceEvents": [' + deep + "]}", "document": deep}[where]
    path = tmp_path / "deep.json"
    path.write_text(text)
    one_error_line(run("info", str(path), "--format", "chrome"), f"{path}:1:",
                   "nested deeper than 900 levels")


def test_a_paddle_report_nested_1000_levels_reads(tmp_path: Path):
    rows = ["Event                     Calls       Total       Min.        Max.        Ave."]
    rows += ["  " * i + f"op{i}    10          1.5         0.1         0.2         0.15"
             for i in range(1000)]
    path = tmp_path / "deep.txt"
    path.write_text("\n".join(rows) + "\n")
    trace = traceconv.load(path, format="paddle-report")
    assert trace.counts()["stat_rows"] == 1000
    for to in ("chrome", "perfetto"):
        traceconv.save(trace, tmp_path / f"o.{to}", format=to)


def _key(text: bytes) -> bytes:
    return b"\x8c" + bytes([len(text)]) + text


def test_allocator_settings_nested_100000_deep_are_kept_as_text(tmp_path: Path):
    n = 100_000
    path = tmp_path / "deep.pickle"   # {"device_traces": [[]], "allocator_settings": {"a": [[[...]]]}}
    path.write_bytes(b"\x80\x04}" + _key(b"device_traces") + b"]]as" + _key(b"allocator_settings")
                     + b"}" + _key(b"a") + b"]" * n + b"a" * (n - 1) + b"ss.")
    # (no block and no event beside them: nothing read, in one line that counts them)
    with pytest.raises(InputError, match=r"nothing read.*torch_snapshot\.malformed"):
        traceconv.load(path, format="torch-snapshot")


def test_an_op_attribute_nested_1000_deep_writes_as_graphml(tmp_path: Path):
    """Found by the fuzzer (deepen_json on an execution trace): orjson refuses past 254
    levels, and Python's repr of the value then recursed past its limit."""
    from traceconv.model import Trace, add_op

    deep: list = []
    inner = deep
    for _ in range(5000):
        inner.append([])
        inner = inner[0]
    trace = Trace()
    add_op(trace.graph, 1, "aten::mm", "aten::mm", attrs=deep)
    traceconv.save(trace.freeze(), tmp_path / "g.graphml")
    assert "nested too deep" in (tmp_path / "g.graphml").read_text()


# -- 8. amplification in allocator snapshots -------------------------------------------------

def _dag(levels: int, leaf: object) -> list:
    node: object = leaf
    for _ in range(levels):
        node = [node, node]   # pickle writes the second reference as a memo GET
    return node  # type: ignore[return-value]


def _snapshot(tmp_path: Path, document: dict) -> Path:
    import pickle

    path = tmp_path / "bomb.pickle"
    path.write_bytes(pickle.dumps({"device_traces": [[]], "segments": [], **document},
                                  protocol=4))
    assert path.stat().st_size < 2 << 20
    return path


def test_a_frame_name_that_is_a_memo_dag_is_shown_short(tmp_path: Path):
    # 2**40 items as a tree, in a few hundred bytes: str() of it never ends
    entry = {"action": "alloc", "addr": 1, "size": 8, "time_us": 1,
             "frames": [{"name": _dag(40, "x"), "filename": "/m/net.py", "line": 3}]}
    trace = traceconv.load(_snapshot(tmp_path, {"device_traces": [[entry]]}))
    assert len(trace.memory[0].args["stack"]) < 300


def test_allocator_settings_that_expand_past_the_budget_are_refused(tmp_path: Path):
    path = _snapshot(tmp_path, {"allocator_settings": {"a": _dag(40, "x")}})
    one_error_line(run("info", str(path)), f"{path}:$.allocator_settings:",
                   "amplification bomb")


def test_stack_texts_that_expand_past_the_budget_are_refused(tmp_path: Path):
    # one 1 MiB name shared by every frame of 40 stacks of 300+ frames: 12 GB of stack text
    name = "n" * (1 << 20)
    entries = [{"action": "alloc", "addr": i, "size": 8, "time_us": 1,
                "frames": [{"name": name, "filename": "/m/net.py", "line": 3}] * (300 + i)}
               for i in range(40)]
    path = _snapshot(tmp_path, {"device_traces": [entries]})
    one_error_line(run("info", str(path)), f"{path}:$.device_traces (a stack):",
                   "amplification bomb")


def test_an_annotation_name_that_is_a_memo_dag_is_shown_short(tmp_path: Path):
    item = {"device": 0, "name": _dag(40, "y"), "stage": "START", "time_us": 1}
    trace = traceconv.load(_snapshot(tmp_path, {"external_annotations": [item, {
        **item, "stage": "END", "time_us": 2}]}))
    assert len(trace.slice(0).name) < 300


# -- 9. super-linear work ---------------------------------------------------------------------

def test_enclosing_rows_over_many_tracks_match_the_per_track_scan():
    # the grouped loop (one sort) must find what the old scan per track found
    import numpy as np

    from traceconv.model import Trace
    from traceconv.model.slice_index import SliceIndex, enclosing_rows

    trace = Trace()
    process = trace.add_process("p")
    tracks = [trace.add_track(f"t{i}", process=process) for i in range(300)]
    for i, track in enumerate(tracks):
        trace.add_slice(track, i, 10, "outer")
        trace.add_slice(track, i + 2, 3, "inner")
    rng = np.random.default_rng(7)
    points_tracks = rng.choice(np.array(tracks), 2000)
    points_times = rng.integers(0, 320, 2000)
    got = enclosing_rows(SliceIndex(trace), points_tracks, points_times).tolist()
    starts, durs = trace.slices.numpy("start"), trace.slices.numpy("dur")
    owner = trace.slices.numpy("track")
    expected = []
    for track, ts in zip(points_tracks.tolist(), points_times.tolist(), strict=True):
        inside = [r for r in range(len(starts)) if owner[r] == track
                  and starts[r] <= ts <= starts[r] + durs[r]]
        expected.append(max(inside, key=lambda r: starts[r]) if inside else -1)
    assert got == expected


# -- 10. one rule, and places --------------------------------------------------------------------

@pytest.mark.parametrize("pad", [0, 3000])   # a whole parse, and the chunked path (> 256 KiB)
def test_a_second_trace_events_key_is_dropped_and_counted_at_any_size(tmp_path: Path, pad):
    first = [{"ph": "X", "name": "first", "ts": i, "dur": 1, "pid": 1, "tid": 1,
              "args": {"p": "x" * 100}} for i in range(max(pad, 1))]
    second = [{"ph": "X", "name": "second", "ts": 1, "dur": 1, "pid": 1, "tid": 1}] * 2
    path = tmp_path / "dup.json"
    path.write_bytes(b'{"traceEvents": ' + orjson.dumps(first) + b', "traceEvents": '
                     + orjson.dumps(second) + b"}")
    trace = traceconv.load(path)
    assert {s.name for s in trace.iter_slices()} == {"first"}
    assert {d["code"]: d["count"] for d in trace.diagnostics.as_list()} == {
        "chrome.duplicate_trace_events": 2}


def test_a_cut_gzip_names_the_place(tmp_path: Path):
    import gzip
    import zlib

    data = gzip.compress(orjson.dumps({"traceEvents": EVENTS * 2000}))
    path = tmp_path / "cut.json.gz"
    path.write_bytes(data[:len(data) // 2])
    whole = len(zlib.decompressobj(wbits=31).decompress(data[:len(data) // 2]))
    one_error_line(run("info", str(path)), f"{path}:decompressed byte {whole}: ",
                   "the gzip stream is cut short")


def test_an_action_that_is_a_memo_dag_is_counted_by_a_short_name(tmp_path: Path):
    # (fuzz, seed 2300, pickle_amplify) f"action:{action}" wrote out 2**40 items
    entry = {"action": _dag(40, "free_requested"), "addr": 1, "size": 8, "time_us": 1}
    # (nothing else in it: the input is refused, naming the code and the example)
    with pytest.raises(traceconv.InputError, match=r"1 left out \(torch_snapshot.unknown_action\)"
                       ) as refused:
        traceconv.load(_snapshot(tmp_path, {"device_traces": [[entry]]}))
    assert len(str(refused.value)) < 400
