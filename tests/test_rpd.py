"""rocmProfileData (.rpd) traces: counts against plain SQL, and against rpd2tracing.

Expected numbers come from ``sqlite3`` queries written here and from the Chrome JSON that
rocmProfileData's own ``rpd2tracing.py`` made of the matmul sample (bundled beside it).
"""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from collections import Counter
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlite_oracle import database

import traceconv
from traceconv.cli import app
from traceconv.model import ProcessKind, TrackKind

SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "rpd"
MATMUL = SAMPLES / "matmul_result.rpd"
VLLM = SAMPLES / "vllm_fp8_mi300_autograd.rpd.gz"
REFERENCE = SAMPLES / "matmul_result.rpd2tracing.json.gz"
BUNDLED = [MATMUL, VLLM]


def count(db: sqlite3.Connection, sql: str) -> int:
    return int(db.execute(sql).fetchone()[0] or 0)


def non_live_counter_samples(trace: traceconv.Trace) -> int:
    monitor = {t.id for t in trace.tracks
               if t.kind is TrackKind.COUNTER and "live bytes" not in t.name}
    return sum(1 for c in trace.iter_counter_samples() if c.track in monitor)


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_counts_match_plain_sql(path: Path, tmp_path: Path):
    trace = traceconv.load(path)
    with database(path, tmp_path) as db:
        api = count(db, "select count(*) from rocpd_api")
        ops = count(db, "select count(*) from rocpd_op")
        links = count(db, "select count(*) from rocpd_api_ops l join rocpd_api a on "
                          "a.id = l.api_id join rocpd_op o on o.id = l.op_id")
        monitor = count(db, "select count(*) from rocpd_monitor")
        series = count(db, "select count(*) from (select distinct deviceType, deviceId, "
                           "monitorType from rocpd_monitor)")
        queues = count(db, "select count(*) from (select distinct gpuId, queueId from rocpd_op)")
        threads = count(db, "select count(*) from (select distinct pid, tid from rocpd_api)")
        markers = Counter(r[0] for r in db.execute(
            "select s.string from rocpd_api a join rocpd_string n on n.id = a.apiName_id join "
            "rocpd_string s on s.id = a.args_id where n.string = 'UserMarker'"))
        mallocs = count(db, "select count(*) from api where apiName = 'hipMalloc' "
                            "and args like 'ptr=%size=%'")
    counts = trace.counts()
    assert (counts["slices"], counts["flows"], counts["memory_blocks"]) == (api + ops, links,
                                                                           mallocs)
    # one sample per monitor row, one more at the end of each series' last row
    assert non_live_counter_samples(trace) == monitor + series
    kinds = Counter(t.kind for t in trace.tracks)
    assert (kinds[TrackKind.STREAM], kinds[TrackKind.THREAD]) == (queues, threads)
    got = Counter(s.name for s in trace.iter_slices()
                  if s.category in ("user_annotation", "cpu_op"))
    assert got == markers


def test_autograd_ops_are_host_ops(tmp_path: Path):
    trace = traceconv.load(VLLM)
    with database(VLLM, tmp_path) as db:
        autograd = count(db, "select count(*) from ext_autogradapi e join rocpd_api a "
                             "on a.id = e.api_ptr_id")
        with_seq = count(db, "select count(*) from ext_autogradapi where seq != ''")
    ops = [s for s in trace.iter_slices() if s.category == "cpu_op"]
    assert len(ops) == autograd == 11816
    assert sum("seq" in (s.args or {}) for s in ops) == with_seq
    assert trace.diagnostics["rpd.callstack_not_read"].count == 86387


def test_same_events_as_rpd2tracing():
    """rocmProfileData's own converter: one X per call and op, one s/f pair per api_op, and
    a sclk sample per monitor row plus one closing sample."""
    events = json.loads(gzip.decompress(REFERENCE.read_bytes()))
    trace = traceconv.load(MATMUL)
    gpu = {str(p.name.removeprefix("GPU ")) for p in trace.processes
           if p.kind is ProcessKind.DEVICE}
    x = Counter("op" if e.get("pid") in gpu else "api" for e in events if e.get("ph") == "X")
    ops = sum(trace.processes[trace.tracks[s.track].process].kind is ProcessKind.DEVICE
              for s in trace.iter_slices())
    assert (x["api"], x["op"]) == (len(trace.slices) - ops, ops)
    assert sum(e.get("ph") == "s" for e in events) == len(trace.flows)
    reference = sorted((int(e["ts"]), e["args"]["sclk"]) for e in events
                       if e.get("ph") == "C" and e.get("name") == "sclk")
    sclk = next(t.id for t in trace.tracks if t.name.startswith("sclk"))
    ours = sorted((c.ts // 1000, c.value) for c in trace.iter_counter_samples()
                  if c.track == sclk)
    assert ours == reference
    names = Counter(e["name"] for e in events if e.get("ph") == "X")
    assert names == Counter(s.name for s in trace.iter_slices())


def test_copy_ops_carry_the_bytes_of_their_call(tmp_path: Path):
    trace = traceconv.load(MATMUL)
    with database(MATMUL, tmp_path) as db:
        want = sorted(r[0] for r in db.execute("select size from copyop"))
    got = sorted(s.args["bytes"] for s in trace.iter_slices()
                 if s.category == "gpu_memcpy" and "bytes" in (s.args or {}))
    assert got == want


def test_summary_advise_and_memflow(tmp_path: Path):
    runner = CliRunner()
    summary = runner.invoke(app, ["summary", str(VLLM), "--json"])
    assert summary.exit_code == 0, summary.output
    assert '"aten::_scaled_mm"' in summary.output
    assert runner.invoke(app, ["advise", str(MATMUL), "--json"]).exit_code == 0
    out = tmp_path / "matmul.svg"
    drawn = runner.invoke(app, ["memflow", str(MATMUL), "-o", str(out)])
    assert drawn.exit_code == 0, drawn.output
    assert out.read_text().count("<rect") >= 5


def test_detected_by_content_under_another_name(tmp_path: Path):
    renamed = tmp_path / "trace.db"
    shutil.copyfile(MATMUL, renamed)
    assert traceconv.load(renamed).metadata.source_format == "rpd"


def test_not_an_rpd_database_is_one_clear_error(tmp_path: Path):
    other = tmp_path / "other.rpd"
    with closing(sqlite3.connect(other)) as db:
        db.execute("create table rocpd_op_x (id int)")
        db.commit()
    result = CliRunner().invoke(app, ["info", str(other), "--format", "rpd"])
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "rocpd_api" in lines[0] and str(other) in lines[0]


def test_shared_rpd_files(shared_samples: Path, tmp_path: Path):
    for path in sorted((shared_samples / "rocprof").glob("*.rpd*")):
        if path.name.endswith(".json"):
            continue
        test_counts_match_plain_sql(path, tmp_path)


@pytest.mark.integration
@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: p.name)
def test_pftrace_loads_in_trace_processor(trace_processor, path: Path):
    from tests.test_trace_processor import assert_loads_completely

    assert_loads_completely(trace_processor, traceconv.load(path))


def test_allocation_owner_is_the_enclosing_op(tmp_path: Path):
    """A hipMalloc inside an autograd op belongs to it (added to a copy of the matmul file)."""
    copy = tmp_path / "owned.rpd"
    shutil.copyfile(MATMUL, copy)
    with closing(sqlite3.connect(copy)) as db:
        pid, tid, start, end = db.execute("select pid, tid, start, end from api where "
                                          "apiName = 'hipMalloc' order by start").fetchone()
        db.execute("insert into rocpd_string (string) values ('UserMarker'), ('aten::empty')")
        marker, name = (db.execute("select id from rocpd_string where string = ?",
                                   (text,)).fetchone()[0] for text in ("UserMarker",
                                                                       "aten::empty"))
        db.execute("insert into rocpd_api (pid, tid, start, end, apiName_id, args_id) values "
                   "(?, ?, ?, ?, ?, ?)", (pid, tid, start - 10, end + 10, marker, name))
        db.commit()
    blocks = sorted(traceconv.load(copy).memory, key=lambda b: b.alloc_ns or 0)
    assert blocks[0].owner_name == "aten::empty"
    assert all(b.owner_name is None for b in blocks[1:])
