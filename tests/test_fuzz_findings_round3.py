"""What the round-three fuzz campaigns found (issue 23), one minimised input per class.

Each input goes through the fuzzer's own contract (:func:`benchmarks.fuzz.worker.run_target`
with the model check on): the read either succeeds with a model that keeps every
invariant (``traceconv.validate``) and every writer then writes or refuses cleanly, or it
is refused with a located error. Before the fixes these were: two ``TypeError``\\s in the
Perfetto reader (a number field with the bytes wire type; a track name that is not UTF-8,
which protobuf hands over as bytes) and one in the XSpace reader (a plane or line name likewise), a ``RecursionError`` in the DOT writer (a shape nested
thousands deep), a hang on an allocator-settings memo DAG, NaN, infinite and int64-passing
times in trtexec exports, a PID past 32 bits in an nsys stats CSV, arguments nested past
Python's recursion limit in the Chrome and Perfetto writers, and models with negative
lengths or frees before allocations (MegEngine, Paddle, MIGraphX) or with a MIGraphX
instruction name printed twice, re-used by a trace-eval record of another operator, or
read as an input where it names a ``@return``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import traceconv
from benchmarks.fuzz import worker
from traceconv.errors import InputError

pytestmark = pytest.mark.slow

FOUND = Path(__file__).parent / "data" / "hostile" / "fuzz_round3"
INPUTS = sorted(FOUND.glob("*.input"))


@pytest.mark.parametrize("path", INPUTS, ids=[p.stem for p in INPUTS])
def test_a_fuzz_finding_keeps_the_contract(path: Path, tmp_path: Path):
    outcome = worker.replay(path, str(tmp_path))
    assert outcome.status in ("ok", "error"), (outcome.signature, outcome.detail)


def test_every_class_is_here():
    assert len(INPUTS) == 19


def test_an_sqlite_schema_that_is_not_utf8_is_one_error(tmp_path: Path):
    """Found by the fuzzer on an nsys export: Python failed to decode SQLite's own error
    message (it quotes the damaged schema) and raised UnicodeDecodeError."""
    import sqlite3

    path = tmp_path / "damaged.sqlite"
    connection = sqlite3.connect(path)
    connection.execute("create table StringIds (id integer, value text)")
    connection.commit()
    connection.close()
    data = path.read_bytes()
    at = data.find(b"CREATE TABLE") + 2   # "CR\x80ATE TABLE": not UTF-8
    path.write_bytes(data[:at] + b"\x80" + data[at + 1:])
    with pytest.raises(InputError, match="schema is not UTF-8"):
        traceconv.load(path, format="nsys")


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


@pytest.mark.parametrize(("name", "where"), [
    ("trtexec__infinite_time", "$[2]: startEnqMs is out of the int64 range"),
    ("trtexec__nan_time", "$[7]: medianMs is not a finite number"),
    ("trtexec__span_past_int64", "$[2]: medianMs is out of the int64 range"),
])
def test_a_trtexec_time_no_trace_can_hold_is_named_by_its_json_path(name, where, tmp_path: Path):
    """The record and field were found by hand (``json.load`` of the input)."""
    from click.testing import CliRunner

    from traceconv.cli import app

    path = tmp_path / f"{name}.json"
    path.write_bytes((FOUND / f"{name}.input").read_bytes())
    result = CliRunner().invoke(app, ["info", str(path), "--format", "trtexec"])
    assert result.exit_code == 1
    assert result.stderr.startswith(f"traceconv: error: {path}:{where}: ")
    assert result.stderr.count("\n") == 1
