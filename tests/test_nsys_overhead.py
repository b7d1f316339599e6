"""Nsight Systems' profiler-overhead rows stay on the thread nsys recorded (``globalTid``):
in the model, in what the analyses time (``Timeline.host_track``: critical path, ``diff``;
``summary``'s nesting) and in the ``.pftrace``. Kineto's pseudo-process rows still go to the
main thread (``tests/test_kineto_views.py``).

Expected values: plain sqlite3 over ``PROFILER_OVERHEAD`` and ``CUPTI_ACTIVITY_KIND_OVERHEAD``
(rows and summed ns per ``globalTid``, split into pid and tid here: bits 24-47 and 0-23),
the self time of a row as its duration less the union of the same thread's rows inside it,
and the real trace_processor's slices per thread of our ``.pftrace``.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from sqlite_oracle import database

import traceconv
from tests.test_nsys import BUNDLED, MOCK, tables
from traceconv.analysis.activity import Activity, Timeline
from traceconv.cli import app

OVERHEAD_TABLES = ("PROFILER_OVERHEAD", "CUPTI_ACTIVITY_KIND_OVERHEAD")
HOST_CALL_TABLES = ("PROFILER_OVERHEAD", "CUPTI_ACTIVITY_KIND_OVERHEAD", "OSRT_API",
                    "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS")
WEATHERBENCH = "frasertajima__WeatherBench2__report1.sqlite"

PerThread = dict[tuple[int, int], tuple[int, int]]   # (pid, tid) -> (rows, ns)


def overhead_per_thread(db: sqlite3.Connection) -> PerThread:
    """The overhead rows and their summed ns per (pid, tid), by SQL."""
    rows: Counter[tuple[int, int]] = Counter()
    ns: Counter[tuple[int, int]] = Counter()
    for table in OVERHEAD_TABLES:
        if table not in tables(db):
            continue
        for global_tid, n, total in db.execute(
                f"select globalTid, count(*), sum(end - start) from {table} group by globalTid"):
            key = ((global_tid >> 24) & 0xFFFFFF, global_tid & 0xFFFFFF)
            rows[key] += n
            ns[key] += total
    return {key: (rows[key], ns[key]) for key in rows}


def placed_per_thread(trace: traceconv.Trace) -> PerThread:
    """Where the analyses time the overhead rows (Timeline.host_track), per (pid, tid)."""
    tl = Timeline(trace)
    rows: Counter[tuple[int, int]] = Counter()
    ns: Counter[tuple[int, int]] = Counter()
    for row in np.flatnonzero(tl.activity == Activity.OVERHEAD).tolist():
        track = trace.tracks[int(tl.host_track[row])]
        key = (trace.processes[track.process].pid, track.tid)
        rows[key] += 1
        ns[key] += int(tl.dur[row])
    return {key: (rows[key], ns[key]) for key in rows}


def check_placement(path: Path, tmp: Path) -> PerThread:
    with database(path, tmp) as db:
        expected = overhead_per_thread(db)
    assert placed_per_thread(traceconv.load(path)) == expected, path.name
    return expected


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_overhead_is_timed_on_the_thread_nsys_recorded(path: Path, tmp_path: Path):
    check_placement(path, tmp_path)


def test_helper_threads_keep_their_overhead(tmp_path: Path):
    """The mock export: nsys's own threads paid TLS allocations and buffer flushes."""
    expected = check_placement(MOCK, tmp_path)
    assert len(expected) == 4 and sum(rows for rows, _ in expected.values()) == 31


@pytest.mark.slow
def test_every_shared_export_places_its_overhead(shared_samples: Path, tmp_path: Path):
    exports = sorted((shared_samples / "nsys").glob("*.sqlite"))
    assert len(exports) >= 8
    for path in exports:
        check_placement(path, tmp_path)


def self_time(db: sqlite3.Connection, name: str) -> int:
    """The ns of the longest overhead row called ``name`` that no row of its own thread
    covers: its duration less the union of that thread's rows inside it."""
    start, end, thread = db.execute(
        "select o.start, o.end, o.globalTid from PROFILER_OVERHEAD o join StringIds s "
        "on s.id = o.nameId where s.value = ? order by o.end - o.start desc limit 1",
        (name,)).fetchone()
    inside = sorted(
        interval for table in HOST_CALL_TABLES if table in tables(db)
        for interval in db.execute(
            f"select start, end from {table} where globalTid = ? and start >= ? and end <= ? "
            "and not (start = ? and end = ?)", (thread, start, end, start, end)))
    covered, reach = 0, start
    for lo, hi in inside:
        covered += max(hi - max(lo, reach), 0)
        reach = max(reach, hi)
    return end - start - covered


def test_profiling_initialization_is_on_the_critical_path_whole(shared_samples: Path,
                                                               tmp_path: Path):
    """WeatherBench2: a helper thread's TLS allocation moved onto the main thread overlapped
    "CUDA profiling initialization" and cut it short: 223 ms of it showed as untraced host
    time. On its own thread's path it is there whole (its self time)."""
    path = shared_samples / "nsys" / WEATHERBENCH
    with database(path, tmp_path) as db:
        expected = self_time(db, "CUDA profiling initialization")
    result = CliRunner().invoke(app, ["critical-path", str(path), "--json"])
    assert result.exit_code == 0, result.output
    on_path = [e for e in json.loads(result.output)["path"]
               if e["name"] == "CUDA profiling initialization"]
    assert {e["kind"] for e in on_path} == {"cpu"}
    assert sum(e["dur_ns"] for e in on_path) == expected > 200_000_000


@pytest.mark.integration
def test_pftrace_slices_per_thread(trace_processor, tmp_path: Path):
    from tests.test_trace_processor import pftrace

    with database(MOCK, tmp_path) as db:
        expected = overhead_per_thread(db)
    trace_processor.load(pftrace(traceconv.load(MOCK)))
    found = {(r.pid, r.tid): (r.n, r.ns) for r in trace_processor.query(
        "select p.pid, t.tid, count(*) n, sum(s.dur) ns from slice s "
        "join thread_track tt on s.track_id = tt.id join thread t using (utid) "
        "join process p using (upid) where s.category = 'overhead' group by p.pid, t.tid")}
    assert found == expected
