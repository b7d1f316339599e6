"""Every allocator log pairs its records by one rule (traceconv/model/block_pairing.py): the
same hand-built records through each reader give the same blocks and the same counts.

The records, on one device: 64 bytes allocated at 0x1000 at t=100; 128 bytes allocated at
0x1000 at t=200 (the first block's free was not recorded: it ends at 200); 0x1000 freed at
t=300; 32 bytes at 0x2000 freed at t=400 (allocated before the trace). By hand: three
blocks, one allocation on an open address, one free of nothing.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import traceconv
from tests.cli_errors import run
from tests.conftest import SAMPLES
from tests.test_paddle_memory_records import ALLOCATE, FREE, _pb
from traceconv.formats.xplane.memory import ALLOCATION, DEALLOCATION, MemoryLog
from traceconv.model import Trace
from traceconv.model.block_pairing import BlockPairing
from traceconv.model.entities import MemoryBlock

# (time, allocates, address, bytes)
RECORDS = [(100, True, 0x1000, 64), (200, True, 0x1000, 128), (300, False, 0x1000, 128),
           (400, False, 0x2000, 32)]
BLOCKS = [(0x1000, 64, 100, 200), (0x1000, 128, 200, 300), (0x2000, 32, None, 400)]


def _blocks(trace: Trace) -> list[tuple]:
    return [(b.address, b.size, b.alloc_ns, b.free_ns) for b in trace.memory]


def _counts(trace: Trace, reader: str) -> tuple[int, int]:
    return (trace.diagnostics.count(f"{reader}.alloc_without_free"),
            trace.diagnostics.count(f"{reader}.free_without_alloc"))


def test_the_rule_record_by_record():
    pairs = BlockPairing("x")
    for ts, allocates, address, size in RECORDS:
        if allocates:
            pairs.alloc(address, ts, MemoryBlock(address, size, ts, None))
        elif not pairs.free(address, ts):
            pairs.allocated_before(MemoryBlock(address, size, None, ts))
    assert [(b.address, b.size, b.alloc_ns, b.free_ns) for b in pairs.blocks] == BLOCKS
    assert (pairs.alloc_without_free, pairs.free_without_alloc) == (1, 1)


def test_an_allocation_not_read_swallows_its_free_and_ends_the_open_block():
    pairs = BlockPairing("x")
    pairs.alloc(8, 10, MemoryBlock(8, 4, 10, None))
    pairs.alloc(8, 20, None)   # (a size the reader could not read)
    assert pairs.free(8, 30)
    assert [(b.alloc_ns, b.free_ns) for b in pairs.blocks] == [(10, 20)]
    assert (pairs.alloc_without_free, pairs.free_without_alloc, pairs.unread_frees) == (1, 0, 1)


def test_nsys(tmp_path: Path):
    path = tmp_path / "memory.sqlite"
    shutil.copyfile(SAMPLES / "nsys" / "mock_rtx3080_nsys2026.1.sqlite", path)
    with closing(sqlite3.connect(path)) as db:
        db.execute("create table CUDA_GPU_MEMORY_USAGE_EVENTS (start int, globalPid int, "
                   "deviceId int, contextId int, address int, pc int, bytes int, memKind int, "
                   "memoryOperationType int, name int, correlationId int)")
        db.executemany("insert into CUDA_GPU_MEMORY_USAGE_EVENTS (start, deviceId, address, "
                       "bytes, memoryOperationType) values (?, 0, ?, ?, ?)",
                       [(ts, address, size, 0 if allocates else 1)
                        for ts, allocates, address, size in RECORDS])
        db.commit()
    trace = traceconv.load(path)
    assert _blocks(trace) == BLOCKS
    assert _counts(trace, "nsys") == (1, 1)


def test_paddle_protobuf(tmp_path: Path):
    trace = traceconv.load(_pb(tmp_path, [(ts, ALLOCATE if allocates else FREE, address,
                                           size if allocates else -size)
                                          for ts, allocates, address, size in RECORDS]))
    assert _blocks(trace) == BLOCKS
    assert _counts(trace, "paddle_pb") == (1, 1)


def _rocprof_csv(tmp_path: Path, records: list[tuple]) -> Path:
    """rocprofv3's memory_allocation_trace.csv of ``records`` (a FREE records size 0)."""
    path = tmp_path / "run_memory_allocation_trace.csv"
    lines = ['"Kind","Operation","Agent_Id","Allocation_Size","Address","Correlation_Id",'
             '"Start_Timestamp","End_Timestamp"']
    for k, (ts, allocates, address, size) in enumerate(records):
        operation = "ALLOCATE" if allocates else "FREE"
        lines.append(f'"MEMORY_ALLOCATION","MEMORY_ALLOCATION_{operation}",'
                     f'"{"Agent 1" if allocates else ""}",{size if allocates else 0},'
                     f'"0x{address:016x}",{k + 1},{ts},{ts}')
    path.write_text("\n".join(lines) + "\n")
    return path


def test_rocprof(tmp_path: Path):
    trace = traceconv.load(_rocprof_csv(tmp_path, RECORDS))
    # (a FREE states no size: the block from the start has 0 bytes)
    assert _blocks(trace) == [*BLOCKS[:2], (0x2000, 0, None, 400)]
    assert _counts(trace, "rocprof") == (1, 1)


def test_rocprof_file_of_frees_only_reads(tmp_path: Path):
    """Memory allocated before the trace and freed in it: blocks from the start, as every
    other allocator log gives (it was "nothing read", exit 1)."""
    frees = [(ts, False, address, size) for ts, _, address, size in RECORDS[2:]]
    path = _rocprof_csv(tmp_path, frees)
    trace = traceconv.load(path)
    assert _blocks(trace) == [(0x1000, 0, None, 300), (0x2000, 0, None, 400)]
    assert _counts(trace, "rocprof") == (0, 2)
    result = run("info", "--json", str(path))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["memory_blocks"] == 2


def test_xplane():
    trace = Trace()
    track = trace.add_track("python3", process=trace.add_process("/host:CPU"))
    log = MemoryLog(trace)
    for ts, allocates, address, size in RECORDS:
        log.record(track, ts, ALLOCATION if allocates else DEALLOCATION,
                   {"allocator_name": "GPU_0_bfc", "addr": address, "allocation_bytes": size})
    log.finish()
    assert _blocks(trace) == BLOCKS
    assert _counts(trace, "xplane") == (1, 1)


@pytest.mark.parametrize("order", [1, -1], ids=["time-order", "reversed"])
def test_kineto(tmp_path: Path, order: int):
    """Kineto pairs whole arrays at once (and files need not be in time order)."""
    events = [{"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": ts / 1000,
               "args": {"Addr": address, "Bytes": size if allocates else -size,
                        "Device Type": 1, "Device Id": 0}}
              for ts, allocates, address, size in RECORDS][::order]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    trace = traceconv.load(path, format="chrome")
    assert _blocks(trace) == BLOCKS
    assert _counts(trace, "kineto") == (1, 1)
