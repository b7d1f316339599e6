"""Nsight Systems SQLite exports: every count checked against plain SQL on the same file.

The expected numbers come from ``sqlite3`` queries written here (not from the reader), on
the bundled samples and, when ``../shared/samples`` is beside the checkout, on all eight
exports there (schema 2.9.1 to 3.25.0).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from sqlite_oracle import database

import traceconv
from traceconv.analysis.activity import Activity, Timeline
from traceconv.cli import app
from traceconv.model import ProcessKind

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "nsys"
BUNDLED = sorted(SAMPLES.glob("*.sqlite*"))
MOCK = SAMPLES / "mock_rtx3080_nsys2026.1.sqlite"
SAXPY = SAMPLES / "saxpy_mpi_cuda_a100_nsys2022.2.sqlite.gz"
NCCL = SAMPLES / "mfu_2xh100_nccl_nsys2026.2.sqlite.gz"
HOST_TABLES = ("CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_OVERHEAD",
               "PROFILER_OVERHEAD", "OSRT_API")
WORK_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
               "CUPTI_ACTIVITY_KIND_MEMSET")
DEVICE_TABLES = (*WORK_TABLES, "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")


def tables(db: sqlite3.Connection) -> set[str]:
    return {r[0] for r in db.execute("select name from sqlite_master where type = 'table'")}


def count(db: sqlite3.Connection, sql: str) -> int:
    return int(db.execute(sql).fetchone()[0] or 0)


def expected(db: sqlite3.Connection) -> dict[str, int]:
    """The counts a complete reading must give, by plain SQL."""
    present = tables(db)
    rows = {t: count(db, f"select count(*) from {t}") for t in (*HOST_TABLES, *DEVICE_TABLES)
            if t in present}
    nvtx = "NVTX_EVENTS" in present
    ranges = count(db, "select count(*) from NVTX_EVENTS where eventType in (59, 60, 70, 71) "
                       "and end is not null") if nvtx else 0
    marks = count(db, "select count(*) from NVTX_EVENTS where eventType in (34, 65)") if (
        nvtx) else 0
    work = " union all ".join(f"select globalPid, correlationId from {t}" for t in WORK_TABLES
                              if t in present)
    flows = 0
    if work and "CUPTI_ACTIVITY_KIND_RUNTIME" in present:
        flows = count(db, f"select count(*) from ({work}) w join (select distinct globalTid "
                          ">> 24 p, correlationId c from CUPTI_ACTIVITY_KIND_RUNTIME) r "
                          "on r.c = w.correlationId and r.p = w.globalPid >> 24")
    threads = " union ".join(f"select globalTid from {t}" for t in HOST_TABLES if t in present)
    if nvtx:
        threads += (" union " if threads else "") + (
            "select globalTid from NVTX_EVENTS where eventType in (59, 70, 34, 65)")
    return {"slices": sum(rows.values()) + ranges, "instants": marks, "flows": flows,
            "threads": count(db, f"select count(*) from ({threads})") if threads else 0,
            "kernels": rows.get("CUPTI_ACTIVITY_KIND_KERNEL", 0)}


def check_counts(path: Path, tmp: Path) -> traceconv.Trace:
    trace = traceconv.load(path)
    with database(path, tmp) as db:
        want = expected(db)
        kernels_per_device = dict(db.execute(
            "select deviceId, count(*) from CUPTI_ACTIVITY_KIND_KERNEL group by deviceId")
            .fetchall()) if "CUPTI_ACTIVITY_KIND_KERNEL" in tables(db) else {}
    counts = trace.counts()
    assert (counts["slices"], counts["instants"], counts["flows"]) == (
        want["slices"], want["instants"], want["flows"]), path.name
    threads = [t for t in trace.tracks
               if trace.processes[t.process].kind is ProcessKind.HOST and t.tid is not None]
    assert len(threads) == want["threads"]
    kernel = trace.strings.find("kernel")
    categories, track_of = trace.slices.numpy("category"), trace.slices.numpy("track")
    device_of_track = {t.id: trace.processes[t.process].name for t in trace.tracks}
    got = {}
    for track in track_of[categories == kernel].tolist():
        got[device_of_track[track]] = got.get(device_of_track[track], 0) + 1
    assert got == {f"GPU {d}": n for d, n in kernels_per_device.items()}
    assert trace.metadata.source_format == "nsys"
    return trace


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_bundled_sample_counts(path: Path, tmp_path: Path):
    check_counts(path, tmp_path)


def test_every_shared_export_counts(shared_samples: Path, tmp_path: Path):
    exports = sorted((shared_samples / "nsys").glob("*.sqlite"))
    assert len(exports) >= 8
    for path in exports:
        check_counts(path, tmp_path)


def test_nccl_kernels_are_communication(tmp_path: Path):
    with database(NCCL, tmp_path) as db:
        nccl = count(db, "select count(*) from CUPTI_ACTIVITY_KIND_KERNEL k join StringIds s "
                         "on s.id = k.demangledName where s.value like 'nccl%'")
    timeline = Timeline(traceconv.load(NCCL))
    assert nccl == 66   # PROVENANCE_formats.md
    assert int((timeline.activity == Activity.COMMUNICATION).sum()) >= nccl
    kernel = timeline.trace.strings.find("kernel")
    on_kernels = timeline.activity[timeline.trace.slices.numpy("category") == kernel]
    assert int((on_kernels == Activity.COMMUNICATION).sum()) == nccl


def test_kernel_args_and_copy_bandwidth_come_from_the_row(tmp_path: Path):
    trace = traceconv.load(MOCK)
    with database(MOCK, tmp_path) as db:
        grid, block, registers, correlation = db.execute(
            "select gridX, blockX, registersPerThread, correlationId from "
            "CUPTI_ACTIVITY_KIND_KERNEL order by start limit 1").fetchone()
        nbytes, start, end = db.execute(
            "select bytes, start, end from CUPTI_ACTIVITY_KIND_MEMCPY").fetchone()
    first = min((s for s in trace.iter_slices() if s.category == "kernel"), key=lambda s: s.start)
    assert first.args["grid"][0] == grid and first.args["block"][0] == block
    assert (first.args["registers per thread"], first.args["correlation"]) == (registers,
                                                                               correlation)
    copy = next(s for s in trace.iter_slices() if s.category == "gpu_memcpy")
    assert copy.args["bytes"] == nbytes
    assert copy.args["memory bandwidth (GB/s)"] == round(nbytes / (end - start), 3)
    launch = trace.slice(next(f.source for f in trace.iter_flows() if f.target == first.index))
    assert launch.category == "cuda_runtime" and launch.name == "cudaLaunchKernel"


def test_old_schema_nvtx_domain_and_os_runtime(tmp_path: Path):
    """Schema 2.9.1: no ENUM tables, EXPORT_META_DATA; NVTX ranges carry their domain."""
    trace = traceconv.load(SAXPY)
    assert "2.9.1" in (trace.metadata.source_version or "")
    with database(SAXPY, tmp_path) as db:
        domain = db.execute("select text from NVTX_EVENTS where eventType = 75").fetchone()[0]
        in_domain = count(db, "select count(*) from NVTX_EVENTS where eventType = 59 and "
                              "domainId != 0")
        osrt = count(db, "select count(*) from OSRT_API")
    nvtx = [s for s in trace.iter_slices() if s.category == "nvtx"]
    assert sum((s.args or {}).get("domain") == domain for s in nvtx) == in_domain
    assert sum(s.category == "os_runtime" for s in trace.iter_slices()) == osrt


def test_emit_nvtx_op_texts_become_op_names(tmp_path: Path):
    trace = traceconv.load(NCCL)
    with database(NCCL, tmp_path) as db:
        ops = count(db, "select count(*) from NVTX_EVENTS where text like 'aten::%, op_id = %'")
    named = [s for s in trace.iter_slices() if s.category == "nvtx"
             and s.name.startswith("aten::") and "op_id" in (s.args or {})]
    assert len(named) == ops and all("," not in s.name for s in named)


def test_sniffed_without_extension_and_from_stdin(tmp_path: Path):
    bare = tmp_path / "torch_overlap_test"
    shutil.copyfile(MOCK, bare)
    result = CliRunner().invoke(app, ["info", str(bare), "--json"])
    assert result.exit_code == 0, result.output
    assert '"format": "nsys"' in result.output.replace('":"', '": "')
    piped = CliRunner().invoke(app, ["info", "-", "--json"], input=MOCK.read_bytes())
    assert piped.exit_code == 0, piped.output


def test_input_is_opened_read_only(tmp_path: Path):
    copy = tmp_path / "ro.sqlite"
    shutil.copyfile(MOCK, copy)
    os.chmod(copy, 0o444)
    os.chmod(tmp_path, 0o555)   # not even a journal could be created beside it
    try:
        before = copy.stat().st_mtime_ns
        assert len(traceconv.load(copy).slices) > 0
        assert copy.stat().st_mtime_ns == before
        assert sorted(p.name for p in tmp_path.iterdir()) == ["ro.sqlite"]
    finally:
        os.chmod(tmp_path, 0o755)


def test_gzip_input_respects_the_size_limit():
    with pytest.raises(traceconv.errors.InputError, match="limit"):
        traceconv.load(SAXPY, max_bytes=100_000)


def test_damaged_database_is_one_clear_error(tmp_path: Path):
    cut = tmp_path / "cut.sqlite"
    cut.write_bytes(MOCK.read_bytes()[:20_000])
    result = CliRunner().invoke(app, ["info", str(cut)])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(cut) in lines[0] and "Traceback" not in result.output


def test_a_column_missing_from_the_schema_reads_as_a_default(tmp_path: Path):
    """Schema drift: an export without ``registersPerThread`` still reads, every kernel kept."""
    drifted = tmp_path / "drift.sqlite"
    shutil.copyfile(MOCK, drifted)
    with closing(sqlite3.connect(drifted)) as db:
        db.execute("alter table CUPTI_ACTIVITY_KIND_KERNEL drop column registersPerThread")
        db.execute("create table SOMETHING_NEW (start int, value int)")
        db.execute("insert into SOMETHING_NEW values (1, 2)")
        db.commit()
    trace = traceconv.load(drifted)
    kernels = [s for s in trace.iter_slices() if s.category == "kernel"]
    assert len(kernels) == 2 and {s.args["registers per thread"] for s in kernels} == {0}
    assert "SOMETHING_NEW (1)" in (trace.diagnostics["nsys.table_not_read"].example or "")


def test_device_memory_usage_events_become_blocks(tmp_path: Path):
    with_memory = tmp_path / "memory.sqlite"
    shutil.copyfile(MOCK, with_memory)
    events = [(100, 0, 0x7000, 4096, 0), (150, 0, 0x9000, 512, 0), (300, 0, 0x7000, 4096, 1),
              (400, 0, 0x5000, 64, 1)]   # the last frees what was allocated before capture
    with closing(sqlite3.connect(with_memory)) as db:
        db.execute("create table CUDA_GPU_MEMORY_USAGE_EVENTS (start int, globalPid int, "
                   "deviceId int, contextId int, address int, pc int, bytes int, memKind int, "
                   "memoryOperationType int, name int, correlationId int)")
        db.executemany("insert into CUDA_GPU_MEMORY_USAGE_EVENTS (start, deviceId, address, "
                       "bytes, memoryOperationType) values (?, ?, ?, ?, ?)", events)
        db.commit()
    blocks = traceconv.load(with_memory).memory
    assert sorted((b.address, b.alloc_ns, b.free_ns) for b in blocks) == [
        (0x5000, None, 400), (0x7000, 100, 300), (0x9000, 150, None)]


@pytest.mark.slow
def test_summary_and_advise_read_the_export():
    result = CliRunner().invoke(app, ["summary", str(NCCL), "--json"])
    assert result.exit_code == 0, result.output
    assert '"ncclDevKernel_SendRecv' in result.output
    advised = CliRunner().invoke(app, ["advise", str(NCCL), "--json"])
    assert advised.exit_code == 0, advised.output


@pytest.mark.integration
@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_pftrace_loads_in_trace_processor(trace_processor, path: Path):
    from tests.test_trace_processor import assert_loads_completely
    from tests.tp_wasm.layout import slices_per_track

    trace = traceconv.load(path)
    assert_loads_completely(trace_processor, trace)
    shown = set(slices_per_track(trace_processor))   # a stream is a thread of its GPU
    assert {t.name for t in trace.tracks if t.name.startswith("stream ")} <= shown
    assert np.all(trace.slices.numpy("dur") >= 0)


def test_nvtx_marks_start_end_ranges_colours_payloads_categories(tmp_path: Path):
    """The NVTX event kinds no bundled export has, added to the 2.9.1 export's own table."""
    with database(SAXPY, tmp_path) as db:
        tid = db.execute("select globalTid from NVTX_EVENTS where eventType = 59 "
                         "limit 1").fetchone()[0]
    other = tid + 1   # a thread of the same process
    plain = tmp_path / SAXPY.stem
    rows = [  # eventType, start, end, text, globalTid, endGlobalTid, color, category, payload
        (33, 0, None, "io", tid, None, None, 7, None),                 # names category 7
        (34, 1_000, None, "checkpoint", tid, None, 0xFF00FF00, None, 42),
        (60, 2_000, 9_000, "load batch", tid, other, None, 7, None),   # ends on another thread
        (60, 3_000, 5_000, "prefetch", tid, tid, 0x80112233, None, None),
        (60, 4_000, None, "never ended", tid, None, None, None, None),
    ]
    with closing(sqlite3.connect(plain)) as db:
        db.executemany("insert into NVTX_EVENTS (eventType, start, end, text, globalTid, "
                       "endGlobalTid, color, category, int64Value) values "
                       "(?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        db.commit()
    trace = traceconv.load(plain)
    marks = [i for i in trace.iter_instants() if i.category == "nvtx"]
    assert [(m.name, m.ts, m.args) for m in marks] == [
        ("checkpoint", 1_000, {"color": "#00ff00", "payload": 42})]
    ranges = {s.name: s for s in trace.iter_slices() if s.name in ("load batch", "prefetch")}
    assert (ranges["load batch"].start, ranges["load batch"].dur) == (2_000, 7_000)
    assert ranges["load batch"].args == {"category": "io"}
    assert ranges["prefetch"].args == {"color": "#112233"}
    track = trace.tracks[ranges["load batch"].track]
    assert track.name == "NVTX start/end ranges" and track.kind.value == "async"
    assert trace.processes[track.process].pid == tid >> 24 & 0xFFFFFF
    assert trace.diagnostics["nsys.nvtx_unfinished_range"].count == 1
    # ranges that may cross threads are no thread's work: no self time
    rows = {r.name: r for r in traceconv.analysis.op_summary(trace)}
    assert [(rows[n].kind, rows[n].calls, rows[n].self_host_ns, rows[n].host_total_ns)
            for n in ("load batch", "prefetch")] == [("async", 1, None, 7_000),
                                                     ("async", 1, None, 2_000)]
    # the range with no end is kept (its row in the table: start 4,000), ended at the last timestamp
    never = [s for s in trace.iter_slices() if s.name == "never ended"]
    assert [(s.start, s.end, s.args) for s in never] == [
        (4_000, trace.time_range[1], {"unfinished": True})]
