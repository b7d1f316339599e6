"""Errors name the place, and one bad record costs that record, not the trace.

- A byte that is not UTF-8 in a JSON document read whole (torch ET, memory timeline,
  rocprof JSON, MegEngine) is one error at its ``line:col``, naming its byte offset. The
  expected place is counted here from the raw bytes.
- A memory block whose address or size is no int64 number (Kineto's ``"0x10"``, 2**64,
  an rpd ``ptr=`` of 5,000 digits, an nsys address past 2**63) is left out and counted as
  ``model.memory_block_unreadable`` by the trace builder; the other blocks are the ones
  a hand count or plain ``sqlite3`` gives.
- ``diff`` with an input that holds nothing to compare names that file; an error about a
  trace already read names the input by the path as given.
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import traceconv
from tests.cli_errors import one_error_line, run
from tests.conftest import DATA
from tests.test_block_pairing import nsys_with_memory
from traceconv.errors import InputError
from traceconv.model.memory import tensor_blocks

SAMPLES = Path(__file__).resolve().parent.parent / "samples"

JSON_DOCUMENTS = {   # a real file of every format read as one JSON document
    "torch-et": DATA / "torch_et" / "param_pt2_et_1.1.1.json",
    "torch-memory": DATA / "torch_memory" / "memory_timeline.json.gz",
    "rocprof-v1": DATA / "rocprof" / "shashankparsi__HIP_Programming__results.json",
    "rocprof-v3": DATA / "rocprof" / "tracelens_908_cut.rocprofv3.json.gz",
    "megengine": SAMPLES / "megengine" / "convnet_lar_embed_profile.json",
}


def _plain_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def _ascii_pair_after(data: bytes, start: int) -> int:
    """The first offset from ``start`` whose byte and the one before are ASCII: 0xA2 there
    is a lone continuation byte, not UTF-8 whatever surrounds it."""
    return next(k for k in range(start, len(data)) if data[k - 1] < 0x80 and data[k] < 0x80)


@pytest.mark.parametrize("kind", JSON_DOCUMENTS)
def test_a_byte_not_utf8_is_named_by_line_column_and_offset(kind: str, tmp_path: Path):
    original = _plain_bytes(JSON_DOCUMENTS[kind])
    at = _ascii_pair_after(original, len(original) // 2)
    damaged = tmp_path / JSON_DOCUMENTS[kind].name.removesuffix(".gz")
    damaged.write_bytes(original[:at] + b"\xa2" + original[at + 1:])
    line = original[:at].count(b"\n") + 1
    column = len(original[original.rfind(b"\n", 0, at) + 1:at].decode()) + 1
    with pytest.raises(InputError) as error:
        traceconv.load(damaged)
    assert str(error.value) == (f"{damaged}:{line}:{column}: not valid JSON: "
                                f"byte 0xa2 at offset {at} is not UTF-8")


def test_json_syntax_error_is_at_line_and_column(tmp_path: Path):
    path = tmp_path / "et.json"
    path.write_bytes(b'{"schema": "1.1.1-chakra.0.0.4",\n "nodes": [1,}')
    with pytest.raises(InputError) as error:
        traceconv.load(path, format="torch-et")
    assert (error.value.location, error.value.message) == (
        "2:14", "not valid JSON: unexpected character, expected a JSON value")


# -- memory blocks with numbers int64 does not hold -------------------------------------------

def _memory(ts: int, size: object, address: object) -> dict:
    return {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts,
            "args": {"Bytes": size, "Addr": address, "Device Type": 1, "Device Id": 0}}


def test_kineto_memory_events_beyond_int64_leave_out_their_block_only(tmp_path: Path):
    """By hand: 16 allocs and frees 8 (64 bytes, µs 1-2); "0x10" allocs at 3 and frees at 4
    (one block, address no number); 2**64 bytes at 32 (5-6: size past int64); 2**70 as an
    address (7); Addr null (8: no block, an instant); 48 bytes at 40 (9, open). Kept: 16
    and 40."""
    events = [{"ph": "X", "name": "aten::empty", "cat": "cpu_op", "pid": 1, "tid": 1,
               "ts": 0, "dur": 100},
              _memory(1, 64, 16), _memory(2, -64, 16), _memory(3, 8, "0x10"),
              _memory(4, -8, "0x10"), _memory(5, 2**64, 32), _memory(6, -(2**64), 32),
              _memory(7, 8, 2**70), _memory(8, 8, None), _memory(9, 48, 40)]
    path = tmp_path / "kineto.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    trace = traceconv.load(path)
    assert [(b.address, b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == [
        (16, 64, 1000, 2000), (40, 48, 9000, None)]
    assert trace.diagnostics.count("model.memory_block_unreadable") == 3
    assert trace.diagnostics.count("kineto.memory_event_without_block") == 1
    assert "'0x10'" in trace.diagnostics["model.memory_block_unreadable"].example


RPD_ARGS = {   # one hipMalloc's args, as the hostile round wrote them
    "ptr_beyond_int64": "ptr=0xffffffffffffffffff | size=0x100",
    "ptr_5000_digits": "ptr=" + "9" * 5000 + " | size=0x100",
    "size_beyond_int64": "ptr=0x7f0000000000 | size=0x8000000000000000",
    "size_hex_100k": "ptr=0x7f0000000000 | size=0x" + "f" * 100_000,
}


@pytest.mark.parametrize("args", RPD_ARGS.values(), ids=list(RPD_ARGS))
def test_rpd_block_beyond_int64_is_left_out_and_counted(args: str, tmp_path: Path):
    copy = tmp_path / "matmul.rpd"
    shutil.copyfile(SAMPLES / "rpd" / "matmul_result.rpd", copy)
    with closing(sqlite3.connect(copy)) as db:
        calls = db.execute("select a.id, s.string from rocpd_api a join rocpd_string n on "
                           "n.id = a.apiName_id join rocpd_string s on s.id = a.args_id "
                           "where n.string = 'hipMalloc' order by a.start").fetchall()
        db.execute("insert into rocpd_string (string) values (?)", (args,))
        db.execute("update rocpd_api set args_id = (select max(id) from rocpd_string) "
                   "where id = ?", (calls[1][0],))
        db.commit()
    kept = [text for _, text in calls[:1] + calls[2:]]
    expected = sorted((int(text.split("ptr=")[1].split()[0], 16),
                       int(text.split("size=")[1], 16)) for text in kept)
    trace = traceconv.load(copy)
    assert sorted((b.address, b.size) for b in trace.memory) == expected
    assert trace.diagnostics.count("model.memory_block_unreadable") == 1


def test_nsys_address_past_int64_is_counted_by_the_same_rule(tmp_path: Path):
    """An address past 2**63 (a REAL cell, read as uint64: 17,000,000,000,000,000,000). Its
    alloc and free pair (one block, left out); 0x7000's block is kept."""
    path = nsys_with_memory(tmp_path, [(100, True, (0, 0x7000), 64),
                                       (110, True, (0, 1.7e19), 32),
                                       (120, False, (0, 1.7e19), 32)])
    trace = traceconv.load(path)
    assert [(b.address, b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == [
        (0x7000, 64, 100, None)]
    assert trace.diagnostics.count("model.memory_block_unreadable") == 1
    assert trace.diagnostics.count("nsys.free_without_alloc") == 0


def test_rocprof_allocation_beyond_int64_is_counted_by_the_same_rule(tmp_path: Path):
    """By hand: 64 bytes at 0x1000 (10-12) freed at 70: kept; 64 bytes at 0xffff...0000
    (past 2^63) and its free: one block, left out; 2**64 bytes at 0x2000: left out; -8
    bytes at 0x3000 (50-52): kept, 0 bytes (model.negative_length); a free at
    0xfffe...0000 of nothing: a block from the start, left out."""
    rows = [("ALLOCATE", 64, 0x1000, 10, 12), ("ALLOCATE", 64, 0xFFFF_FFFF_FFFF_0000, 20, 22),
            ("FREE", 0, 0xFFFF_FFFF_FFFF_0000, 30, 31), ("ALLOCATE", 2**64, 0x2000, 40, 42),
            ("ALLOCATE", -8, 0x3000, 50, 52), ("FREE", 0, 0xFFFF_FFFF_FFFE_0000, 60, 61),
            ("FREE", 0, 0x1000, 70, 71)]
    path = tmp_path / "run_memory_allocation_trace.csv"
    path.write_text('"Kind","Operation","Agent_Id","Allocation_Size","Address",'
                    '"Correlation_Id","Start_Timestamp","End_Timestamp"\n' + "".join(
                        f'"MEMORY_ALLOCATION","MEMORY_ALLOCATION_{operation}","Agent 1",'
                        f'{size},"0x{address:016x}",{k},{start},{end}\n'
                        for k, (operation, size, address, start, end) in enumerate(rows)))
    trace = traceconv.load(path)
    assert [(b.address, b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == [
        (0x1000, 64, 12, 70), (0x3000, 0, 52, None)]
    counts = {code: trace.diagnostics.count(code) for code in (
        "model.memory_block_unreadable", "model.negative_length", "rocprof.free_without_alloc",
        "rocprof.allocation_not_read")}
    assert counts == {"model.memory_block_unreadable": 3, "model.negative_length": 1,
                      "rocprof.free_without_alloc": 1, "rocprof.allocation_not_read": 0}


def test_migraphx_block_beyond_int64_is_left_out_not_the_program(tmp_path: Path):
    """@10's scratch range moved past 2^63: that block is left out and counted, the
    program read (it was refused). By hand from the paste: scratch loads @3 (0-512), @12
    (0-40), @15 (40-80) kept; @10 and @11 (written in @10's place) own no block."""
    text = (SAMPLES / "migraphx" / "perf_simple_graph_rocm4.txt").read_text()
    path = tmp_path / "perf.txt"
    path.write_text(text.replace("offset=512,end=1024",
                                 f"offset={2**63},end={2**63 + 512}"))
    trace = traceconv.load(path, format="migraphx")
    scratch = [(b.name, b.address, b.size) for b in trace.memory if b.pool == "scratch"]
    assert scratch == [("@3", 0, 512), ("@12", 0, 40), ("@15", 40, 40)]
    assert trace.diagnostics.count("model.memory_block_unreadable") == 1
    blocks = tensor_blocks(trace)
    assert "tensor/main/@10" not in blocks and "tensor/main/@11" not in blocks
    assert trace.memory[blocks["tensor/main/@12"]].name == "@12"


def test_megengine_chunk_beyond_int64_is_left_out_not_the_profile(tmp_path: Path):
    """One chunk's dev_ptr past 2^63 (it was refused): that chunk's block alone is left
    out and counted."""
    source = SAMPLES / "megengine" / "convnet_lar_embed_profile.json"
    document = json.loads(source.read_text())
    chunks = document["graph_exec"]["mem_chunk"]
    chunk = next(key for key, record in chunks.items() if record.get("dev_ptr"))
    chunks[chunk]["dev_ptr"] = 2**63 + 5
    path = tmp_path / source.name
    path.write_text(json.dumps(document))
    trace, whole = traceconv.load(path), traceconv.load(source)
    assert trace.diagnostics.count("model.memory_block_unreadable") == 1
    assert [b.args.get("chunk") for b in trace.memory] == [
        b.args.get("chunk") for b in whole.memory if b.args.get("chunk") != chunk]


def test_diff_names_the_input_with_nothing_to_compare(tmp_path: Path):
    names_only = tmp_path / "names_only.json"
    names_only.write_text(json.dumps({"traceEvents": [
        {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "x"}}]}))
    timeline = SAMPLES / "torch" / "cnn_step5.pt.trace.json"
    # (an input of names alone is refused when read: nothing read, named as given)
    one_error_line(run("diff", str(timeline), str(names_only)), f"{names_only}: nothing read")


def test_an_error_after_reading_names_the_path_as_given(tmp_path: Path):
    """An execution trace has no times: the error names the input as the command line gave
    it (as a read error does), not its file name alone."""
    et = tmp_path / "nested" / "et.json"
    et.parent.mkdir()
    shutil.copyfile(DATA / "torch_et" / "param_pt2_et_1.1.1.json", et)
    one_error_line(run("convert", str(et), "-o", str(tmp_path / "out.pftrace")),
                   f"traceconv: error: {et}: nothing to put on a timeline")
    assert not (tmp_path / "out.pftrace").exists()
