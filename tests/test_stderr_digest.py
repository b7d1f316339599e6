"""The one stderr line of ``convert``: what the user lost first, repairs never called dropped.

Expected counts come from plain ``json`` / ``sqlite3`` reads of the files, not from traceconv.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections import defaultdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from traceconv import load
from traceconv.cli.app import app
from traceconv.cli.digest import WIDTH

RESNET = SAMPLES / "torch" / "resnet18_train_cuda.pt.trace.json.gz"


def _stderr_line(path, tmp_path) -> str:
    result = CliRunner().invoke(app, ["convert", str(path), "-o", str(tmp_path / "x.pftrace")])
    assert result.exit_code == 0, result.output
    # (the reader's line: the writer's, "written with ...", is apart)
    (line,) = [line for line in result.output.splitlines() if line.startswith("traceconv: ")
               and "written with" not in line]
    return line


def test_one_ended_flows_are_a_note_and_the_healthy_conversion_says_nothing_was_left_out(
        tmp_path):
    # hand count: flow ids (per category) whose events hold only a start or only a finish
    events = json.loads(gzip.decompress(RESNET.read_bytes()))["traceEvents"]
    phases: dict[tuple[str, int], set[str]] = defaultdict(set)
    for event in events:
        if event.get("ph") in ("s", "t", "f"):
            phases[(event["cat"], event["id"])].add(event["ph"])
    one_ended = sum(1 for seen in phases.values() if seen in ({"s"}, {"f"}))
    assert one_ended == 1_005   # (the "1,005 dropped")
    trace = load(RESNET)
    assert trace.diagnostics.count("chrome.flow_dangling") == one_ended
    assert trace.diagnostics["chrome.flow_dangling"].kind == "note"
    assert not [item for item in trace.diagnostics if item.kind == "dropped"]
    line = _stderr_line(RESNET, tmp_path)
    assert "nothing left out" in line and "dropped" not in line and len(line) <= WIDTH


def test_what_the_writer_repaired_is_said_on_a_line_of_its_own(tmp_path):
    """A real CPU trace (PyTorch 2.13, with_stack): slices that overlap part of their parent
    go to an overlap lane in the output. The writer counts them; they were said nowhere.
    By hand: the output's tracks named `(overlap lane N)` hold as many slices."""
    path = Path(__file__).parent / "data" / "torch" / "cpu_2.13" / "compile.pt.trace.json.gz"
    out = tmp_path / "x.pftrace"
    result = CliRunner().invoke(app, ["convert", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.output.splitlines() if "written with" in line]
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent

    packets = Trace.FromString(out.read_bytes()).packet   # (a wire walk: no reader of ours)
    lanes = {p.track_descriptor.uuid for p in packets if p.HasField("track_descriptor")
             and "overlap lane" in (p.track_descriptor.name
                                    or p.track_descriptor.thread.thread_name)}
    on_lanes = sum(1 for p in packets if p.HasField("track_event")
                   and p.track_event.type == TrackEvent.TYPE_SLICE_BEGIN
                   and p.track_event.track_uuid in lanes)
    assert on_lanes and f"written with {on_lanes} repaired (nesting.overlap_moved)" in line
    # (and Kineto's thread 0, which a Perfetto viewer takes for the idle thread: made up)
    assert line.endswith(", 1 repaired (perfetto.tid_replaced)")


@pytest.mark.shared
def test_unread_nsys_tables_are_named_as_what_was_left_out(shared_samples, tmp_path):
    path = shared_samples / "nsys" / "NVIDIA__Fuser__ee4fcf3_report1_H200_nsys2025.1.1.sqlite"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = sum(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
                   for table in ("SCHED_EVENTS", "DIAGNOSTIC_EVENT"))
    assert rows == 11_646   # (the H200 Fuser export)
    line = _stderr_line(path, tmp_path)
    assert f": {rows:,} left out (nsys.table_not_read) (" in line and len(line) <= WIDTH


def test_a_long_name_and_many_codes_still_fit_one_line():
    from traceconv.cli.digest import digest
    from traceconv.model import Trace

    trace = Trace()
    for code, count in (("chrome.missing_phase", 7), ("chrome.missing_timestamp", 3),
                        ("chrome.malformed_event", 2), ("chrome.counter_not_numeric", 1)):
        trace.diagnostics.add(code, count=count)
    trace.diagnostics.add("nesting.overlap_moved", count=40)
    name = "runs/" + "very-long-folder-name/" * 6 + "rank0.pt.trace.json"
    line = digest(trace, (name,))
    assert line is not None and len(line) <= WIDTH
    assert "13 left out (" in line and "40 repaired" in line and line.count("…") == 1
    assert "(4 codes)" in line   # (every code gave way before the name went under 16)
    shorter = digest(trace, ("r0.json",))
    assert shorter is not None and len(shorter) <= WIDTH
    assert "(chrome.missing_phase 7, " in shorter   # the largest loss keeps its name


def test_the_line_fits_a_narrow_terminal(monkeypatch, tmp_path):
    """COLUMNS narrower than the line's 100: the line fits it (a log keeps the 100; a name
    is never cut below 16 characters)."""
    # hand-made: one op and two events whose pid is an object (2 chrome.malformed_event),
    # under a name long enough to need shortening
    events = [{"ph": "X", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
              {"ph": "X", "name": "aten::mm", "pid": {"a": 1}, "tid": 1, "ts": 10, "dur": 5},
              {"ph": "X", "name": "aten::mm", "pid": {"b": 1}, "tid": 1, "ts": 20, "dur": 5}]
    path = tmp_path / f"{'a_long_run_name_' * 6}.json"
    path.write_text(json.dumps({"traceEvents": events}))
    monkeypatch.setenv("COLUMNS", "70")
    result = CliRunner().invoke(app, ["info", str(path)])
    (line,) = [line for line in result.output.splitlines() if line.startswith("traceconv: ")]
    assert len(line) <= 70 and "left out" in line


def test_summary_says_under_its_totals_what_the_read_left_out(tmp_path):
    # hand-made: one op, two events whose pid is an object (chrome.malformed_event) and a
    # [memory] block at address 2**64 - 1 (the builder's model.memory_block_unreadable):
    # 3 left out, said under the totals of the text and in the JSON, as info's line counts
    memory = {"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1}
    events = [{"ph": "X", "name": "aten::empty", "cat": "cpu_op", "pid": 1, "tid": 1,
               "ts": 0, "dur": 100},
              {"ph": "X", "name": "aten::mm", "pid": {"a": 1}, "tid": 1, "ts": 10, "dur": 5},
              {"ph": "X", "name": "aten::mm", "pid": {"b": 1}, "tid": 1, "ts": 20, "dur": 5},
              {**memory, "ts": 1, "args": {"Bytes": 64, "Addr": 16, "Device Type": 1}},
              {**memory, "ts": 2, "args": {"Bytes": 8, "Addr": 2**64 - 1, "Device Type": 1}}]
    path = tmp_path / "k.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    said = ("totals cover what was read: 3 left out (chrome.malformed_event 2, "
            "model.memory_block_unreadable 1) (info --json lists them)")
    text = CliRunner().invoke(app, ["summary", str(path)], env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    lines = text.output.splitlines()
    assert said in lines
    assert lines.index(said) > next(i for i, line in enumerate(lines) if "total" in line)
    as_json = CliRunner().invoke(app, ["summary", str(path), "--json"])
    assert json.loads(as_json.output)["totals_note"] == said
