"""Time a thread spends blocked in a call (futex, poll, pthread_cond_wait) is waiting, not
work: the nsys SQLite reader's OS runtime slices and the ``nsys stats`` OS runtime summary
follow one rule (``vocabularies.common``'s waits), and ``summary``, ``advise`` and
``critical-path`` count no wait as host work.

Expected values are placed by hand (OS runtime rows added to a real export, in time no other
slice of their thread covers) or counted with plain SQL on a real export.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlite_oracle import database

from traceconv.cli import app

MOCK = Path(__file__).resolve().parent.parent / "samples" / "nsys" / (
    "mock_rtx3080_nsys2026.1.sqlite")
MAIN_THREAD = 283004824020018   # the mock's one thread with CUDA calls
# (name, start, end): free time of that thread (no CUDA call, overhead or range covers it)
IOCTL = ("ioctl", 1_327_200_000, 1_327_300_000)                          # 100 µs of work
COND_WAIT = ("pthread_cond_wait", 1_400_000_000, 1_470_000_000)          # 70 ms blocked
POLL = ("poll", 1_710_000_000, 1_760_000_000)                            # 50 ms, after all
# the OS calls in which a thread is blocked, by hand from their manual pages
BLOCKING = {"futex", "poll", "sem_timedwait", "sem_wait", "pthread_cond_wait",
            "pthread_cond_timedwait", "epoll_wait", "nanosleep", "pthread_mutex_lock"}


def with_os_runtime(tmp: Path) -> Path:
    """The mock export with an ``OSRT_API`` table of the three calls above."""
    path = tmp / "mock_osrt.sqlite"
    shutil.copyfile(MOCK, path)
    with closing(sqlite3.connect(path)) as db:
        first = db.execute("select max(id) + 1 from StringIds").fetchone()[0]
        db.execute("create table OSRT_API (start integer not null, end integer not null, "
                   "eventClass integer not null, globalTid integer, nameId integer not null, "
                   "returnValue integer not null, nestingLevel integer, "
                   "callchainId integer not null, argumentsId integer not null)")
        for offset, (name, start, end) in enumerate((IOCTL, COND_WAIT, POLL)):
            db.execute("insert into StringIds values (?, ?)", (first + offset, name))
            db.execute("insert into OSRT_API values (?, ?, 27, ?, ?, 0, 0, 0, 0)",
                       (start, end, MAIN_THREAD, first + offset))
        db.commit()
    return path


def run_json(*args: str) -> dict:
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_summary_lists_waits_apart_from_host_work(tmp_path: Path):
    """The waits are rows of kind ``wait``, in no total: the host total grows by the ioctl
    alone, and the waiting time is the two waits' 120 ms."""
    before = run_json("summary", str(MOCK))
    after = run_json("summary", str(with_os_runtime(tmp_path)))
    kinds = {op["name"]: op["kind"] for op in after["ops"]}
    assert (kinds["poll"], kinds["pthread_cond_wait"], kinds["ioctl"]) == (
        "wait", "wait", "runtime")
    assert after["self_host_ns_total"] - before["self_host_ns_total"] == IOCTL[2] - IOCTL[1]
    waited = (COND_WAIT[2] - COND_WAIT[1]) + (POLL[2] - POLL[1])
    assert after["not_work_time"] == {"waiting": {"rows": 2, "seconds": waited / 1e9}}
    assert "not_work_time" not in before
    text = CliRunner().invoke(app, ["summary", str(with_os_runtime(tmp_path))],
                              env={"COLUMNS": "200"}).output
    assert "not counted, waiting: 120.000ms in 2 rows" in text


def test_critical_path_counts_no_wait_as_work(tmp_path: Path):
    """A wait is never a link of host work: the poll after the last work does not lengthen
    the path, and the main thread's 70 ms blocked in pthread_cond_wait is on it as a wait
    (it was untraced host time before)."""
    before = run_json("critical-path", str(MOCK))
    after = run_json("critical-path", str(with_os_runtime(tmp_path)))
    assert (after["length_ns"], after["span_ns"]) == (before["length_ns"], before["span_ns"])
    assert not [e for e in after["path"] if e["kind"] == "cpu"
                and e["name"] in ("poll", "pthread_cond_wait")]
    blocked = [e for e in after["path"] if e["name"] == "blocked in pthread_cond_wait"]
    assert [(e["kind"], e["dur_ns"]) for e in blocked] == [
        ("wait", COND_WAIT[2] - COND_WAIT[1])]
    assert after["breakdown"]["wait"] - before["breakdown"]["wait"] == COND_WAIT[2] - COND_WAIT[1]
    # (and the ioctl, in untraced time before, is a link of work now)
    assert before["breakdown"]["untraced"] - after["breakdown"]["untraced"] == (
        COND_WAIT[2] - COND_WAIT[1]) + (IOCTL[2] - IOCTL[1])


def test_host_gaps_do_not_count_waits_as_overhead():
    """The framework-overhead rule's gap is time the main process neither works nor waits
    (by hand: a 1,000 ns step, an op of 100 ns, 600 ns blocked in futex: a 300 ns gap,
    30%, medium; counted as a gap the wait made it 90%, high)."""
    from traceconv.analysis.advise import advise
    from traceconv.model import Trace
    from traceconv.model.activity import Activity

    trace = Trace()
    main = trace.add_track("main", process=trace.add_process("python"))
    trace.add_slice(main, 0, 1_000, "ProfilerStep#1", "user_annotation")
    trace.add_slice(main, 0, 100, "aten::mm", "cpu_op")
    trace.add_slice(main, 100, 600, "futex", "os_runtime", activity=Activity.WAIT)
    found = advise(trace, rules=["framework-overhead"]).findings
    assert [(f.rule, f.severity) for f in found] == [("framework-overhead", "medium")]
    assert {key: found[0].evidence[key] for key in
            ("window_ns", "host_busy_ns", "waiting_ns", "gap_ns")} == {
        "window_ns": 1_000, "host_busy_ns": 100, "waiting_ns": 600, "gap_ns": 300}


@pytest.mark.slow
def test_weatherbench_waits_match_sql(shared_samples: Path, tmp_path: Path):
    """WeatherBench2 (nsys 2025.5: OS runtime calls, no kernels of note): every OS runtime
    call the hand list names a wait is a ``wait`` row with SQL's calls and summed duration;
    ioctl (112 ms) stays host work; no blocked thread is a link of the path or what the
    path waits on."""
    path = shared_samples / "nsys" / "frasertajima__WeatherBench2__report1.sqlite"
    with database(path, tmp_path) as db:
        calls = {name: (n, ns) for name, n, ns in db.execute(
            "select s.value, count(*), sum(o.end - o.start) from OSRT_API o "
            "join StringIds s on s.id = o.nameId group by s.value")}
    summary = run_json("summary", str(path))
    ops = {op["name"]: op for op in summary["ops"]}
    waits = {name for name in calls if name in BLOCKING}
    assert waits == {op["name"] for op in summary["ops"] if op["kind"] == "wait"}
    assert waits == {"poll", "sem_timedwait", "pthread_cond_wait"}
    for name in waits:
        assert (ops[name]["calls"], ops[name]["host_total_ns"]) == calls[name]
    assert ops["ioctl"]["kind"] == "runtime"
    assert summary["not_work_time"]["waiting"]["rows"] == len(waits)
    path_json = run_json("critical-path", str(path))
    for entry in path_json["path"]:
        assert not (entry["kind"] == "cpu" and entry["name"] in waits)
        assert not any(entry["name"].endswith(f": {name}") for name in waits)
