"""A NUL in any string the Perfetto writer writes: trace_processor keeps a string only up
to its first NUL, so the writer (``formats/perfetto/wire.utf8``, the one place every
string is encoded) writes it as U+2400 '␀' and counts ``perfetto.nul_replaced``, for every
reader. Expected values: hand counts with plain csv/json, and the real trace_processor on
the written file.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

import traceconv
from traceconv.formats.perfetto import check, write
from traceconv.io import Source
from traceconv.model import Diagnostics, Trace

DATA = Path(__file__).parent / "data"
KERNELS = DATA / "rocprof" / "csc-training__hip-programming__kernel_trace.csv"
STANDIN = "\u2400"


def kernel_trace_with_nul(tmp_path: Path) -> tuple[Path, str]:
    """The real rocprofv3 kernel trace with a NUL put into one kernel's name (every
    dispatch of that kernel); that name."""
    rows = list(csv.reader(KERNELS.open(newline="")))
    name = rows[2][6]
    for row in rows[1:]:
        if row[6] == name:
            row[6] = name.replace("_", "\0", 1)
    path = tmp_path / "nul_kernel_trace.csv"
    with path.open("w", newline="") as out:
        csv.writer(out).writerows(rows)
    return path, name.replace("_", "\0", 1)


def written(trace: Trace) -> tuple[bytes, Diagnostics]:
    out = io.BytesIO()
    diagnostics = write(trace, out)
    return out.getvalue(), diagnostics


def test_a_nul_in_a_kernel_name_is_replaced_and_counted(tmp_path: Path, trace_processor):
    """The kernel's dispatches show in trace_processor under the name with '␀' where the
    NUL was (not cut there); the one name is counted once, and check passes."""
    path, name = kernel_trace_with_nul(tmp_path)
    dispatches = sum(row["Kernel_Name"] == name for row in csv.DictReader(path.open(newline="")))
    assert dispatches > 0
    data, diagnostics = written(traceconv.load(path))
    assert diagnostics.count("perfetto.nul_replaced") == 1
    pftrace = tmp_path / "out.pftrace"
    pftrace.write_bytes(data)
    assert not check(Source(str(pftrace))).errors
    trace_processor.load(data)
    shown = [r.name for r in trace_processor.query("select name from slice")]
    assert shown.count(name.replace("\0", STANDIN)) == dispatches
    assert not [n for n in shown if "\0" in n or n == name.split("\0")[0]]


def test_every_kind_of_string_is_replaced(tmp_path: Path, trace_processor):
    """Slice name, category, argument name, argument value, thread name, process name:
    six strings with a NUL, six counted, each shown by trace_processor with '␀'."""
    events = [{"ph": "X", "name": "a\0b", "cat": "c\0", "ts": 1, "dur": 2, "pid": 1, "tid": 2,
               "args": {"k\0": "v\0"}},
              {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "t\0"}},
              {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "p\0"}}]
    path = tmp_path / "nul.json"
    path.write_text(json.dumps({"traceEvents": events}))   # (NUL as \u0000)
    data, diagnostics = written(traceconv.load(path))
    assert diagnostics.count("perfetto.nul_replaced") == 6
    trace_processor.load(data)
    row = trace_processor.query(
        "select s.name, s.category, t.name thread, p.name process from slice s "
        "join thread_track tt on s.track_id = tt.id join thread t using(utid) "
        "join process p using(upid)")[0]
    assert (row.name, row.category, row.thread, row.process) == ("a␀b", "c␀", "t␀", "p␀")
    args = {(r.key, r.display_value) for r in trace_processor.query(
        "select key, display_value from args join slice using(arg_set_id)")}
    assert ("debug.k␀", "v␀") in args


def test_a_pftrace_with_nul_names_converts_to_one_that_checks(tmp_path: Path):
    """Perfetto to Perfetto: the hostile file's check errors name NULs; the written file's
    none."""
    source = DATA / "hostile" / "name_with_nul.pftrace"
    assert any(e["code"] == "name_with_nul" for e in check(Source(str(source))).errors)
    data, diagnostics = written(traceconv.load(source))
    assert diagnostics.count("perfetto.nul_replaced") > 0
    out = tmp_path / "out.pftrace"
    out.write_bytes(data)
    assert not check(Source(str(out))).errors


@pytest.mark.parametrize("workers", [1, 2])
def test_each_string_counts_once_whatever_the_sequences(workers: int):
    """70,000 slices, every other named 'a\\0b', one named 'c\\0': their events fill
    several packet sequences (several forked encoders with ``workers=2``), each interning
    the names again; 2 distinct strings, counted 2."""
    trace = Trace()
    track = trace.add_track("main", process=trace.add_process("python", pid=7), tid=7)
    for k in range(70_000):
        trace.add_slice(track, 2 * k, 1, "a\0b" if k % 2 else "plain")
    trace.add_slice(track, 200_000, 1, "c\0")
    diagnostics = write(trace, io.BytesIO(), workers=workers)
    assert diagnostics.count("perfetto.nul_replaced") == 2
