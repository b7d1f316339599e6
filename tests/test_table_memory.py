"""Large plain tables cost about their own size: a CSV's rows are packed by column
(:class:`traceconv.formats.csv_rows.CellColumns`), an nsys table's arg dicts are made a
batch at a time. Each test crosses several batches; every expected value is the generated
input itself, or counted from it with ``csv``/``sqlite3``."""

from __future__ import annotations

import csv
import random
import shutil
import sqlite3
import tracemalloc
from contextlib import closing
from pathlib import Path

import pytest

import traceconv
from tests.conftest import SAMPLES
from traceconv.formats.csv_rows import CellColumns
from traceconv.formats.rocprof.csv_table import read_table
from traceconv.formats.rocprof.v3 import build_run, load_part
from traceconv.io import Source

ROWS = 40_000   # more than two batches of every batched path
KERNEL_HEADER = ["Kind", "Agent_Id", "Queue_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id",
                 "Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp",
                 "Private_Segment_Size", "Group_Segment_Size", "Workgroup_Size_X",
                 "Grid_Size_X"]
API_HEADER = ["Domain", "Function", "Process_Id", "Thread_Id", "Correlation_Id",
              "Start_Timestamp", "End_Timestamp"]


def test_packed_columns_give_back_every_cell_as_it_was_written():
    """Integers written plainly or not, numbers past int64, words, empty cells."""
    spellings = ["0", "-7", "42", "007", "+1", "-0", "1.0", "", " 5",
                 "99999999999999999999", "9223372036854775807", "void k<int, 2>()"]
    chosen = random.Random(20261130)
    rows = [[str(i), chosen.choice(spellings), chosen.choice(spellings[:3])]
            for i in range(ROWS)]
    rows[ROWS // 2][0] = "x"   # one batch of the first column is not all integers
    table = CellColumns(3)
    for row in rows:
        table.append(list(row))
    assert len(table) == ROWS and list(table) == rows
    assert [table[i] for i in (0, 16383, 16384, -1)] == [rows[0], rows[16383], rows[16384],
                                                         rows[-1]]
    assert list(table.column(1)) == [row[1] for row in rows]


def _write_run(directory: Path, rows: int) -> tuple[Path, Path]:
    """A rocprofv3 kernel trace and API trace of ``rows`` dispatches, each launched by its
    call (same correlation id), except every 1000th kernel (no call)."""
    kernels, calls = directory / "big_kernel_trace.csv", directory / "big_hip_api_trace.csv"
    with kernels.open("w", newline="") as k, calls.open("w", newline="") as c:
        kernel_rows, call_rows = csv.writer(k, quoting=csv.QUOTE_ALL), csv.writer(c)
        kernel_rows.writerow(KERNEL_HEADER)
        call_rows.writerow(API_HEADER)
        for i in range(rows):
            start = 8_819_330_200_000_000 + 1000 * i
            kernel_rows.writerow(["KERNEL_DISPATCH", 1, i % 4, 69, i + 1, 16,
                                  f"void kernel_{i % 7}<float>(float*, int)", 10 + i,
                                  start + 100, start + 600, 0, 0, 64, 1024])
            if i % 1000:
                call_rows.writerow(["HIP_RUNTIME_API", "hipLaunchKernel", 7, 69, 10 + i,
                                    start, start + 50])
    return kernels, calls


@pytest.mark.slow
def test_a_large_kernel_trace_is_held_in_about_its_own_size(tmp_path: Path):
    kernels, _ = _write_run(tmp_path, 60_000)
    size = kernels.stat().st_size
    tracemalloc.start()
    try:
        table = read_table(Source(str(kernels)))
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    with kernels.open(newline="") as text:
        assert list(table.rows) == list(csv.reader(text))[1:]
    # (a list of str per row held about 6 times the file: 1.2 KB a row of 190 bytes)
    assert held < size and peak < size + 32 * 2**20


@pytest.mark.slow
def test_flows_join_calls_and_kernels_across_batches(tmp_path: Path):
    kernels, calls = _write_run(tmp_path, ROWS)
    trace = build_run([load_part(Source(str(kernels)), "v3-kernels"),
                       load_part(Source(str(calls)), "v3-api")]).build()
    with calls.open(newline="") as text:
        launched = sum(1 for _ in text) - 1
    assert launched == ROWS - ROWS // 1000
    assert len(trace.flows) == launched
    assert trace.diagnostics.count("rocprof.work_without_call") == ROWS // 1000
    for flow in list(trace.iter_flows())[::997]:
        call, kernel = trace.slice(flow.source), trace.slice(flow.target)
        assert kernel.args["Correlation_Id"] == call.args["Correlation_Id"]
        assert kernel.start == call.start + 100


@pytest.mark.slow
def test_every_nsys_kernel_keeps_its_own_args_across_batches(tmp_path: Path):
    many = tmp_path / "many.sqlite"
    shutil.copyfile(SAMPLES / "nsys" / "mock_rtx3080_nsys2026.1.sqlite", many)
    with closing(sqlite3.connect(many)) as db:
        db.execute(f"""
            insert into CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId,
                streamId, correlationId, globalPid, demangledName, shortName,
                registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ,
                staticSharedMemory, dynamicSharedMemory, localMemoryPerThread,
                localMemoryTotal, gridId, graphNodeId)
            with recursive n(i) as (select 1 union all select i + 1 from n where i < {ROWS})
            select k.start + 10 * i, k.start + 10 * i + 5, k.deviceId, k.contextId,
                k.streamId, 5000000 + i, k.globalPid, k.demangledName, k.shortName, i % 61,
                i % 13 + 1, 1, 1, i % 17 + 1, 1, 1, 0, 0, 0, 0, i,
                case when i % 3 = 0 then i end
            from n, (select * from CUPTI_ACTIVITY_KIND_KERNEL limit 1) k""")
        db.commit()
        expected = {correlation: (registers, grid, block, node)
                    for correlation, registers, grid, block, node in db.execute(
                        "select correlationId, registersPerThread, gridX, blockX, graphNodeId "
                        "from CUPTI_ACTIVITY_KIND_KERNEL")}
    trace = traceconv.load(many)
    found = {s.args["correlation"]: (s.args["registers per thread"], s.args["grid"][0],
                                     s.args["block"][0], s.args.get("graph node"))
             for s in trace.iter_slices() if s.category == "kernel"}
    assert found == expected
