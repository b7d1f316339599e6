"""Every allocator log pairs its records by one rule (traceconv/model/block_pairing.py): the
same hand-built records through each reader give the same blocks and the same counts.

The records, on one device: 64 bytes allocated at 0x1000 at t=100; 128 bytes allocated at
0x1000 at t=200 (the first block's free was not recorded: it ends at 200); 0x1000 freed at
t=300; 32 bytes at 0x2000 freed at t=400 (allocated before the trace). By hand: three
blocks, one allocation on an open address, one free of nothing.

The rule pairs whole columns (:func:`pair_events`); a plain record-by-record reference
written here (:func:`_reference`) is the independent source its property test compares with.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from traced_peak import traced_peak

import traceconv
from tests.cli_errors import run
from tests.conftest import SAMPLES
from tests.test_paddle_memory_records import ALLOCATE, FREE, _pb
from traceconv.formats.xplane.memory import ALLOCATION, DEALLOCATION, MemoryLog
from traceconv.model import Trace
from traceconv.model.block_pairing import pair_events
from traceconv.model.diagnostics import Diagnostics

# (time, allocates, address, bytes)
RECORDS = [(100, True, 0x1000, 64), (200, True, 0x1000, 128), (300, False, 0x1000, 128),
           (400, False, 0x2000, 32)]
BLOCKS = [(0x1000, 64, 100, 200), (0x1000, 128, 200, 300), (0x2000, 32, None, 400)]


def _blocks(trace: Trace) -> list[tuple]:
    return [(b.address, b.size, b.alloc_ns, b.free_ns) for b in trace.memory]


def _counts(trace: Trace, reader: str) -> tuple[int, int]:
    return (trace.diagnostics.count(f"{reader}.alloc_without_free"),
            trace.diagnostics.count(f"{reader}.free_without_alloc"))


def _reference(records: list[tuple]) -> tuple[list[list], int, int]:
    """The rule record by record, in plain Python: ``records`` are (time, allocates, key,
    size) in time order; the blocks [key, size, alloc time, free time] in the order of
    their first record, allocations on an open key, frees of no open block."""
    open_blocks: dict = {}
    blocks: list[list] = []
    alloc_without_free = free_without_alloc = 0
    for ts, allocates, key, size in records:
        if allocates:
            if key in open_blocks:
                alloc_without_free += 1
                open_blocks[key][3] = ts
            open_blocks[key] = [key, size, ts, None]
            blocks.append(open_blocks[key])
        elif key in open_blocks:
            open_blocks.pop(key)[3] = ts
        else:
            free_without_alloc += 1
            blocks.append([key, size, None, ts])
    return blocks, alloc_without_free, free_without_alloc


def _paired(records: list[tuple]) -> tuple[list[list], int, int]:
    """:func:`pair_events` on the columns of ``records`` (keys: (device, address))."""
    ts = np.array([r[0] for r in records], dtype=np.int64)
    allocates = np.array([r[1] for r in records], dtype=bool)
    device, address = (np.array([r[2][k] for r in records], dtype=np.int64) for k in (0, 1))
    paired = pair_events((device, address), allocates)
    events = paired.block_events()
    alloc_ns, free_ns = paired.block_times(ts, events)
    diagnostics = Diagnostics()
    paired.count(diagnostics, "nsys")
    return ([[records[k][2], records[k][3], a, f] for k, a, f in zip(
        events.tolist(), alloc_ns.tolist(), free_ns.tolist(), strict=True)],
        diagnostics.count("nsys.alloc_without_free"),
        diagnostics.count("nsys.free_without_alloc"))


# records on few keys and few times: frees before allocs, double frees, reused addresses,
# equal timestamps; sizes zero, negative and huge
RECORD = st.tuples(st.integers(0, 6), st.booleans(),
                   st.tuples(st.integers(0, 1), st.sampled_from([0, 64, 2**63 - 1])),
                   st.sampled_from([0, 1, 64, -8, 2**63 - 1]))


@given(st.lists(RECORD, max_size=40))
def test_the_columns_pair_as_the_records_do(records: list[tuple]):
    records.sort(key=lambda r: r[0])   # (stable: equal times keep their order)
    assert _paired(records) == _reference(records)


def test_the_rule_by_hand():
    records = [(ts, allocates, (0, address), size) for ts, allocates, address, size in RECORDS]
    blocks, *counts = _paired(records)
    assert [(key[1], size, a, f) for key, size, a, f in blocks] == BLOCKS
    assert counts == [1, 1]


def nsys_with_memory(tmp_path: Path, records: list[tuple], name: str = "memory.sqlite") -> Path:
    """The mock nsys export plus ``records`` (time, allocates, (device, address), bytes)."""
    path = tmp_path / name
    shutil.copyfile(SAMPLES / "nsys" / "mock_rtx3080_nsys2026.1.sqlite", path)
    with closing(sqlite3.connect(path)) as db:
        db.execute("create table CUDA_GPU_MEMORY_USAGE_EVENTS (start int, globalPid int, "
                   "deviceId int, contextId int, address int, pc int, bytes int, memKind int, "
                   "memoryOperationType int, name int, correlationId int)")
        db.executemany("insert into CUDA_GPU_MEMORY_USAGE_EVENTS (start, deviceId, address, "
                       "bytes, memoryOperationType) values (?, ?, ?, ?, ?)",
                       [(ts, device, address, size, 0 if allocates else 1)
                        for ts, allocates, (device, address), size in records])
        db.commit()
    return path


@pytest.mark.slow
@settings(max_examples=25)   # (each example a database read)
@given(st.lists(RECORD, max_size=30))
def test_an_allocator_log_pairs_as_the_records_do(tmp_path_factory, records: list[tuple]):
    """Through a reader (nsys), blocks and counts are the reference's; a negative size is
    the model's to repair (0 bytes)."""
    records.sort(key=lambda r: r[0])
    path = nsys_with_memory(tmp_path_factory.mktemp("nsys"), records)
    trace = traceconv.load(path)
    blocks, *counts = _reference(records)
    assert [(b.device, b.address, b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == [
        (f"cuda:{device}", address, max(size, 0), a, f)
        for (device, address), size, a, f in blocks]
    assert list(_counts(trace, "nsys")) == counts


def test_nsys(tmp_path: Path):
    trace = traceconv.load(nsys_with_memory(tmp_path, [(ts, allocates, (0, address), size)
                                            for ts, allocates, address, size in RECORDS]))
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


def test_an_allocation_not_read_ends_the_open_block_and_swallows_its_free(tmp_path: Path):
    """By hand: 64 bytes at 0x10 from t=10; an allocation there at t=20 whose size is no
    number ends that block; its block (to the free at t=30) is left out by the builder's
    rule for every reader."""
    trace = traceconv.load(_rocprof_csv(tmp_path, [(10, True, 0x10, 64), (20, True, 0x10, "x"),
                                                   (30, False, 0x10, 0)]))
    assert _blocks(trace) == [(0x10, 64, 10, 20)]
    assert _counts(trace, "rocprof") == (1, 0)
    assert trace.diagnostics.count("model.memory_block_unreadable") == 1
    assert trace.diagnostics.count("rocprof.allocation_not_read") == 0


def test_a_scratch_file_without_sizes_reads_no_block(tmp_path: Path):
    """An older rocprofv3 scratch file has no Allocation_Size column. By hand: an ALLOC on
    queue 1 at t=10 and its FREE at t=20, both not read (no size stated): nothing read."""
    path = tmp_path / "run_scratch_memory_trace.csv"
    path.write_text('"Kind","Operation","Agent_Id","Queue_Id","Thread_Id","Alloc_Flags",'
                    '"Start_Timestamp","End_Timestamp"\n'
                    '"SCRATCH_MEMORY","SCRATCH_MEMORY_ALLOC","Agent 1",1,5,1,10,12\n'
                    '"SCRATCH_MEMORY","SCRATCH_MEMORY_FREE","Agent 1",1,5,1,20,21\n')
    result = run("info", str(path))
    assert result.exit_code == 1
    assert result.stderr.strip().endswith("2 left out (rocprof.allocation_not_read)")


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


# Many alloc/free pairs (the hostile round's 0.5-1 M records, scaled down), and the bytes
# each record may add to the peak of a read. Paired as MemoryBlock records they added about
# 460 (nsys) and 1030 (rocprof CSV); as columns about 140 and 380.
MANY = {"nsys": (100_000, 300), "rocprof": (50_000, 700)}


def _many_records(count: int) -> list[tuple]:
    """``count`` records: alloc and free, in turn, of 512 bytes at a new address each."""
    return [(1000 + k, k % 2 == 0, (0, 0x7F00_0000_0000 + (k // 2) * 512), 512)
            for k in range(count)]


def _written(tmp_path: Path, reader: str, records: list[tuple], name: str) -> Path:
    if reader == "nsys":
        return nsys_with_memory(tmp_path, records, f"{name}.sqlite")
    folder = tmp_path / name
    folder.mkdir()
    return _rocprof_csv(folder, [(ts, allocates, address, size)
                                 for ts, allocates, (_, address), size in records])


@pytest.mark.slow
@pytest.mark.parametrize("reader", list(MANY))
def test_an_allocator_log_holds_no_object_per_record(tmp_path: Path, reader: str):
    count, bytes_per_record = MANY[reader]
    few = _written(tmp_path, reader, _many_records(10), "few")
    many = _written(tmp_path, reader, _many_records(count), "many")
    traceconv.load(few)   # (the modules a read imports are not counted)
    _, floor = traced_peak(lambda: traceconv.load(few))
    trace, peak = traced_peak(lambda: traceconv.load(many))
    assert len(trace.memory) == count // 2   # (by construction: every alloc freed)
    assert _counts(trace, reader) == (0, 0)
    assert peak - floor < count * bytes_per_record
