"""Large plain tables cost about their own size: a CSV's (and a rocpd query's) rows are
packed by column (:class:`traceconv.formats.csv_rows.CellColumns`), SQLite rows fetched a
batch at a time into numpy columns, the arg dicts of nsys, rpd and NVTX trace rows made a
batch at a time. Each test crosses several batches; every expected value is the generated
input itself, or counted from it with ``csv``/``sqlite3``."""

from __future__ import annotations

import csv
import random
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

import traceconv
from tests.conftest import SAMPLES
from tests.rocpd_database import UUID
from tests.traced_peak import traced_memory
from traceconv.formats._sqlite import open_database
from traceconv.formats.csv_rows import CellColumns
from traceconv.formats.nsys_stats import read as read_nvtx
from traceconv.formats.rocprof.csv_table import read_table
from traceconv.formats.rocprof.rocpd import load_parts
from traceconv.formats.rocprof.v3 import build_run, load_part
from traceconv.io import Source
from traceconv.model.frozen import FrozenTraceError

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
    table, held, peak = traced_memory(lambda: read_table(Source(str(kernels))))
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


def _grown_nsys(directory: Path) -> Path:
    """The mock nsys export with ``ROWS`` more kernels, each with its own correlation id,
    registers, grid, block and (every third) graph node."""
    many = directory / "many.sqlite"
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
    return many


@pytest.mark.slow
def test_every_nsys_kernel_keeps_its_own_args_across_batches(tmp_path: Path):
    many = _grown_nsys(tmp_path)
    with closing(sqlite3.connect(many)) as db:
        expected = {correlation: (registers, grid, block, node)
                    for correlation, registers, grid, block, node in db.execute(
                        "select correlationId, registersPerThread, gridX, blockX, graphNodeId "
                        "from CUPTI_ACTIVITY_KIND_KERNEL")}
    trace = traceconv.load(many)
    found = {s.args["correlation"]: (s.args["registers per thread"], s.args["grid"][0],
                                     s.args["block"][0], s.args.get("graph node"))
             for s in trace.iter_slices() if s.category == "kernel"}
    assert found == expected


@pytest.mark.slow
def test_freezing_the_args_copies_neither_the_column_nor_its_lists(tmp_path: Path):
    """A loaded trace's args are read-only; handing their values out the first time (what
    every writer does) freezes them in place: no copy of the values list (8 bytes a value),
    and the grid and block lists of 40,000 kernels, a list of their own each as the reader
    made them, become one read-only list per distinct content."""
    many = _grown_nsys(tmp_path)
    with closing(sqlite3.connect(many)) as db:
        (distinct,), = db.execute("select count(*) from (select gridX, gridY, gridZ from "
                                  "CUPTI_ACTIVITY_KIND_KERNEL union select blockX, blockY, "
                                  "blockZ from CUPTI_ACTIVITY_KIND_KERNEL)")
        grids = sorted(db.execute("select gridX, gridY, gridZ from CUPTI_ACTIVITY_KIND_KERNEL"))
    column = traceconv.load(many).slices.args
    values, _, peak = traced_memory(lambda: column.values)
    # (a copy of the list alone is 8 bytes a value; the copy with a read-only twin of each
    # kernel's two lists, as frozen before, peaked at 51 bytes a value; in place: 4 KB)
    assert len(values) > 10 * ROWS and peak < len(values)
    kernels = [args for args in column if args and "grid" in args]
    assert sorted(tuple(args["grid"]) for args in kernels) == grids
    assert len({id(args[key]) for args in kernels for key in ("grid", "block")}) == distinct
    with pytest.raises(FrozenTraceError):
        values.append(0)
    with pytest.raises(FrozenTraceError):
        kernels[0]["grid"].append(0)


@pytest.mark.slow
def test_numeric_columns_hold_the_columns_once(tmp_path: Path):
    """Rows fetched a batch at a time into columns made for the table's count: the peak is
    about the columns themselves (a structured array and a copy of each column: 2-3x)."""
    path = tmp_path / "numbers.sqlite"
    with closing(sqlite3.connect(path)) as db:
        db.execute("create table t (a integer, b real, c integer)")
        db.execute("insert into t with recursive n(i) as (select 1 union all select i + 1 "
                   "from n where i < 500000) select i * 7, i / 4.0, case when i % 5 then i end "
                   "from n")
        db.commit()
        expected = list(db.execute("select a, b, coalesce(c, -1) from t order by rowid"))
    with open_database(Source(str(path))) as database:
        columns, _, peak = traced_memory(lambda: database.numeric_columns(
            "t", {"a": ("i8", 0), "b": ("f8", 0.0), "c": ("i8", -1)}))
    data = sum(column.nbytes for column in columns.values())
    assert list(zip(*(columns[k].tolist() for k in "abc"), strict=True)) == expected
    assert peak < 1.5 * data   # (the columns, and one batch of Python rows)


def _grown_rpd(directory: Path, calls: int) -> Path:
    """The real matmul rpd with ``calls`` more calls, each with its own args text, every
    third one a kernel launch (``rocpd_kernelapi``) with its own grid."""
    path = directory / "many.rpd"
    shutil.copyfile(Path(__file__).parent / "data" / "seeds" / "matmul.rpd", path)
    with closing(sqlite3.connect(path)) as db:
        first = db.execute("select max(id) from rocpd_string").fetchone()[0] + 1
        db.execute(f"""insert into rocpd_string (id, string)
            with recursive n(i) as (select 0 union all select i + 1 from n where i < {calls - 1})
            select {first} + i, 'ptr=0x' || i || ' call ' || i from n""")
        db.execute(f"""insert into rocpd_api (pid, tid, start, "end", apiName_id, args_id)
            select a.pid, a.tid, a.start + 10 * (s.id - {first}),
                   a.start + 10 * (s.id - {first}) + 5, a.apiName_id, s.id
            from rocpd_string s, (select * from rocpd_api where id in
                (select api_ptr_id from rocpd_kernelapi) limit 1) a
            where s.id >= {first} order by s.id""")
        columns = [c for _, c, *_ in db.execute("pragma table_info(rocpd_kernelapi)")]
        made = ", ".join({"api_ptr_id": "a.id", "gridX": "a.id % 1000"}.get(c, f'k."{c}"')
                         for c in columns)
        db.execute(f"""insert into rocpd_kernelapi ({', '.join(columns)})
            select {made} from rocpd_api a, (select * from rocpd_kernelapi limit 1) k
            where a.args_id >= {first} and a.id % 3 = 0""")
        db.commit()
    return path


@pytest.mark.slow
def test_every_rpd_call_keeps_its_own_args_across_batches(tmp_path: Path):
    path = _grown_rpd(tmp_path, ROWS)
    with closing(sqlite3.connect(path)) as db:
        expected = dict(db.execute(
            "select s.string, k.gridX from rocpd_api a join rocpd_string s on s.id = a.args_id "
            "left join rocpd_kernelapi k on k.api_ptr_id = a.id where s.string like '% call %'"))
    trace, held, peak = traced_memory(lambda: traceconv.load(path))
    # beyond the model (an args dict and a position per call held 5 times the file; the
    # string table, every call's own text here, is read whole)
    assert peak - held < 3.5 * path.stat().st_size
    found = {s.args["args"]: s.args["grid"][0] if "grid" in s.args else None
             for s in trace.iter_slices()
             if s.args and " call " in str(s.args.get("args"))}
    assert len(expected) == ROWS and found == expected


@pytest.mark.slow
def test_an_rpd_string_table_is_read_as_far_as_the_trace_names_it(tmp_path: Path):
    """100,000 strings no row names (20 MB of text) cost nothing; a string that a call or
    a kernel launch names but the table lacks is still counted (``rpd.missing_string``)."""
    seed = Path(__file__).parent / "data" / "seeds" / "matmul.rpd"
    path = tmp_path / "strings.rpd"
    shutil.copyfile(seed, path)
    with closing(sqlite3.connect(path)) as db:
        db.execute("""insert into rocpd_string (string)
            with recursive n(i) as (select 1 union all select i + 1 from n where i < 100000)
            select printf('unused %0193d', i) from n""")
        (called,), = db.execute("select apiName_id from rocpd_api group by apiName_id "
                                "order by count(*) desc limit 1")
        (launched,), = db.execute("select kernelName_id from rocpd_kernelapi k join rocpd_api "
                                  "a on a.id = k.api_ptr_id group by 1 order by count(*) "
                                  "desc limit 1")
        db.execute("delete from rocpd_string where id in (?, ?)", (called, launched))
        db.commit()
        absent = "not in (select id from rocpd_string)"
        (missing,), = db.execute(
            f"select (select count(*) from rocpd_api where apiName_id {absent}) "
            f"+ (select count(*) from rocpd_op where opType_id {absent}) "
            f"+ (select count(*) from rocpd_kernelapi k join rocpd_api a "
            f"on a.id = k.api_ptr_id where k.kernelName_id {absent})")
        (unused,), = db.execute("select sum(length(string)) from rocpd_string "
                                "where string like 'unused %'")
        (calls,), = db.execute("select count(*) from rocpd_api where apiName_id = ?", (called,))
    traceconv.load(seed)   # (the modules imported: their memory is no part of the read)
    trace, _, peak = traced_memory(lambda: traceconv.load(path))
    # (read whole, the table's texts and a dict of them peaked at 42 MB; now: 0.2 MB)
    assert unused == 100_000 * 200 and peak < unused / 4
    assert missing >= calls + 1 and trace.diagnostics.count("rpd.missing_string") == missing
    assert sum(s.name == f"<string {called}>" for s in trace.iter_slices()) == calls


def _grown_rocpd(directory: Path, regions: int) -> Path:
    """The rocpd seed with ``regions`` more API regions, each with its own times."""
    path = directory / "many_results.db"
    shutil.copyfile(Path(__file__).parent / "data" / "seeds" / "rocprofv3_results.db", path)
    with closing(sqlite3.connect(path)) as db:
        region = f"rocpd_region{UUID}"
        columns = [c for _, c, *_ in db.execute(f'pragma table_info("{region}")') if c != "id"]
        picked = ", ".join(f'"{c}"' for c in columns)
        moved = ", ".join({"start": "r.start + 1000 * n.i", "end": 'r."end" + 1000 * n.i'}
                          .get(c, f'r."{c}"') for c in columns)
        db.execute(f"""insert into "{region}" ({picked})
            with recursive n(i) as (select 1 union all select i + 1 from n where i < {regions})
            select {moved} from n, (select * from "{region}" limit 1) r""")
        db.commit()
    return path


@pytest.mark.slow
def test_a_large_rocpd_table_is_held_in_about_its_own_size(tmp_path: Path):
    path = _grown_rocpd(tmp_path, 60_000)
    with closing(sqlite3.connect(path)) as db:
        starts = [str(s) for (s,) in db.execute(
            f'select start from "rocpd_region{UUID}" order by id')]
    (parts, _), held, _ = traced_memory(lambda: load_parts(Source(str(path))))
    api = next(part.table for part in parts if part.kind == "v3-api")
    assert list(api.column("Start_Timestamp")) == starts
    # (SQLite writes such a row in 35 bytes; a list of str per row held 550 bytes a row)
    assert held < 200 * len(starts)


def _nvtx_trace(path: Path, rows: int) -> None:
    """An NVTX pushpop trace whose ranges each have their own id, name and parent (the
    first of every 10 none, as nsys writes a range without one)."""
    header = ["Start (ns)", "End (ns)", "Duration (ns)", "DurChild (ns)", "DurNonChild (ns)",
              "Name", "PID", "TID", "Lvl", "NumChild", "RangeId", "ParentId", "RangeStack",
              "NameTree"]
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(header)
        for i in range(rows):
            writer.writerow([1000 * i, 1000 * i + 500, 500, 0, 500, f"range {i}", 7, 8 + i % 3,
                             i % 4, 0, i + 1, "" if i % 10 == 0 else i, f":{i + 1}",
                             f"range {i}"])


@pytest.mark.slow
def test_every_nvtx_range_keeps_its_own_args_in_about_the_reports_size(tmp_path: Path):
    path = tmp_path / "big.nvtx_pushpop_trace.csv"
    _nvtx_trace(path, 60_000)
    with path.open(newline="") as text:
        expected = {row["Name"]: {"range id": int(row["RangeId"]), "level": int(row["Lvl"]),
                                  **({"parent id": int(row["ParentId"])}
                                     if row["ParentId"] else {})}
                    for row in csv.DictReader(text)}
    trace, held, peak = traced_memory(lambda: read_nvtx(Source(str(path))))
    assert {s.name: dict(s.args) for s in trace.iter_slices()} == expected
    # beyond the model: (Python numbers, names and an args dict per row: 5.7 times the file)
    assert peak - held < 2 * path.stat().st_size
