"""The Chrome writer's events, built from text pieces column by column, read back as the
model's rows: every slice, instant, counter and flow, with exact times, names, places and
arguments (compared with the model itself, through the JSON of a dict per row)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from tests.conftest import bundled_files
from traceconv.formats.chrome.event_json import dumps, microseconds, value_texts
from traceconv.formats.chrome.writer import write_chrome
from traceconv.model import Trace
from traceconv.model.nesting import nested_view

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_FILES = sorted(p for folder in (ROOT / "samples", ROOT / "tests" / "data")
                      for p in bundled_files(folder) if p.suffix not in (".md", ".txt")
                      and p.stat().st_size < 8 << 20)


def as_json(value: object) -> object:
    """A value as it reads back from JSON (what a dict per event would have given), read
    as the standard library reads it (as JSON.parse: 1e999 is infinity)."""
    return json.loads(dumps(value))


def assert_written_as_model(trace: Trace) -> None:
    out = io.BytesIO()
    write_chrome(trace, out)
    written = json.loads(out.getvalue())
    view = nested_view(trace)   # what the writer writes (lanes for overlapping slices)
    base = written["baseTimeNanoseconds"]
    events = written["traceEvents"]
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
               if e["ph"] == "M" and e["name"] == "thread_name"}
    strings = view.strings.strings
    by_phase: dict[str, list[dict]] = {}
    for event in events:
        by_phase.setdefault(event["ph"], []).append(event)
    for phase, table, time in (("X", view.slices, "start"), ("i", view.instants, "ts")):
        found = by_phase.get(phase, [])
        assert len(found) == len(table)
        for row, event in enumerate(found):
            assert event["ts"] == (getattr(table, time)[row] - base) / 1000
            if phase == "X":
                assert event["dur"] == table.dur[row] / 1000
            assert event["name"] == strings[table.name[row]]
            assert event.get("cat", "") == (strings[table.category[row]]
                                            if table.category[row] else "")
            assert threads[(event["pid"], event["tid"])] == view.tracks[table.track[row]].name
            args = table.args[row]
            assert event.get("args") == (as_json(args) if args else None)
    counters = by_phase.get("C", [])
    assert len(counters) == len(view.counters)
    keys = {(e["pid"], e["name"]) for e in counters}
    assert len(keys) == len(set(view.counters.track))   # one name a track, in its process
    for row, event in enumerate(counters):
        value = view.counters.value[row]
        assert event["ts"] == (view.counters.ts[row] - base) / 1000
        track = view.tracks[view.counters.track[row]]
        # (counters sharing a name in a process are told apart by their thread)
        assert event["name"] == track.name or event["name"].startswith(f"{track.name} (")
        integral = value.is_integer() and -2**63 <= value < 2**63   # (as an int64)
        assert event["args"] == as_json({"value": int(value) if integral else value})
    starts, ends = by_phase.get("s", []), by_phase.get("f", [])
    assert len(starts) == len(ends) == len(view.flows)
    for row, (begin, end) in enumerate(zip(starts, ends, strict=True)):
        src, dst = view.flows.source[row], view.flows.target[row]
        assert begin["id"] == end["id"] == row + 1 and end["bp"] == "e"
        assert begin["ts"] == (view.slices.start[src] - base) / 1000
        assert view.slices.start[dst] <= round(end["ts"] * 1000) + base <= (
            view.slices.start[dst] + view.slices.dur[dst])
        for event, slice_row in ((begin, src), (end, dst)):
            track = view.tracks[view.slices.track[slice_row]].name
            assert threads[(event["pid"], event["tid"])] == track


def test_every_bundled_sample_reads_back_as_the_model():
    """Every bundled file that reads on its own (not a paste, a summary or a broken sample:
    those raise) is written as Chrome JSON that reads back as its model."""
    traces = 0
    for path in SAMPLE_FILES:
        try:
            trace = traceconv.load(path)
        except traceconv.TraceconvError:
            continue
        traces += 1
        try:
            assert_written_as_model(trace)
        except AssertionError as error:
            raise AssertionError(f"{path.relative_to(ROOT)}: {error}") from None
    assert traces >= 65   # 73 of these 103 files when written: most do read


scalars = st.one_of(st.integers(-2**70, 2**70), st.floats(), st.booleans(), st.none(),
                    st.text(max_size=5), st.sampled_from(["a,b", "x\"y", "], ["]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=2)),
    max_leaves=5)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([("bytes",), ("a", "b"), ("shape", "dtype", "n"),
                                           ()]), st.integers(-10**15, 10**15),
                          st.integers(0, 10**9)), min_size=1, max_size=40), st.data())
def test_any_arguments_read_back(rows, data):
    """Key sets with uniform or mixed values (ints past 64 bits, NaN, nested lists,
    strings with commas and quotes), negative and large times."""
    trace = Trace()
    track = trace.add_track("main", process=trace.add_process("p", pid=1), tid=1)
    for keys, start, dur in rows:
        args = {key: data.draw(values) for key in keys} if keys else None
        trace.add_slice(track, start, dur, data.draw(st.text(max_size=4)), args=args)
        trace.add_instant(track, start, "mark", args=args)
    assert_written_as_model(trace)


def test_value_texts_and_microseconds_match_orjson():
    column = [1, -2**63, 2**63 - 1, 2.5, float("nan"), True, None]
    assert value_texts(column) == [orjson.dumps(v) for v in column]
    # (beyond int64, which Perfetto's importer shows wrong: the text of the digits)
    assert value_texts([2**65, 2**64 - 1, 1]) == [
        b'"36893488147419103232"', b'"18446744073709551615"', b"1"]
    ns = np.array([0, 1, 999, -1_000_001, 2**53 - 1, 2**62], dtype=np.int64)
    assert microseconds(ns) == [orjson.dumps(int(v) / 1000) for v in ns]


def test_infinities_are_written_as_text_the_real_trace_processor_keeps(trace_processor):
    """orjson writes ±infinity as null (the value lost), and 1e999 makes Perfetto's JSON
    importer drop the event's arguments from that one on. Written as the texts "Infinity" and
    "-Infinity", at any depth and in every column shape, the real trace_processor shows
    them and the event's other arguments."""
    inf = float("inf")
    for column, expected in (
            ([inf, -inf, 1.5], ["Infinity", "-Infinity", 1.5]),
            ([inf, None, "x"], ["Infinity", None, "x"]),
            ([[inf, {"a": -inf}], 2**70, None],
             [["Infinity", {"a": "-Infinity"}], str(2**70), None])):
        assert json.loads(b"[" + b",".join(value_texts(column)) + b"]") == expected
        assert json.loads(dumps(column)) == expected
    trace = Trace()
    track = trace.add_track("main", process=trace.add_process("p", pid=1), tid=1)
    trace.add_slice(track, 0, 10, "a", args={"big": inf, "small": -inf, "n": 1})
    out = io.BytesIO()
    write_chrome(trace, out)
    trace_processor.load(out.getvalue())
    found = {(row.key, row.display_value) for row in trace_processor.query(
        "select a.key, a.display_value from slice s join args a using(arg_set_id)")}
    assert found == {("args.big", "Infinity"), ("args.small", "-Infinity"), ("args.n", "1")}


def test_xla_thread_ids_keep_their_threads_apart_in_trace_processor(trace_processor):
    """XLA names its host threads with 64-bit ids (negative ones too): written as they are,
    trace_processor's JSON importer folded every thread onto one and dropped the slices
    that overlapped there. Each thread keeps its own track, and every slice stays."""
    path = ROOT / "tests" / "data" / "xplane" / "jax_cpu_mlp.xplane.pb.gz"
    trace = traceconv.load(path)
    assert any(not 0 <= (t.tid or 0) < 1 << 31 for t in trace.tracks)   # (what the file has)
    out = io.BytesIO()
    write_chrome(trace, out)
    trace_processor.load(out.getvalue())
    slices = trace_processor.query("select count(*) n from slice")[0].n
    assert slices == len(trace.slices) + len(trace.instants)
    threads = trace_processor.query(
        "select count(distinct utid) n from thread_track tt join slice s on s.track_id = tt.id")
    assert threads[0].n == len({trace.slices.track[i] for i in range(len(trace.slices))}
                               | {i.track for i in trace.iter_instants()})


def test_a_thread_numbered_0_keeps_its_own_thread_in_trace_processor(trace_processor):
    """A real TensorFlow timeline has threads 0 and 1 in process 1; written as they are,
    trace_processor reads tid 0 as the process's main thread (tid = pid = 1), joins the
    two and drops an overlapping slice. The thread numbered 0 gets a spare tid (counted,
    ``chrome.id_replaced``; its name stays), and both slices stay on two threads."""
    trace = Trace()
    process = trace.add_process("/job:localhost/replica:0/task:0/device:CPU:0", pid=1)
    for tid, start in ((0, 0), (1, 5_000)):
        track = trace.add_track(f"thread {tid}", process=process, tid=tid)
        trace.add_slice(track, start, 10_000, "RandomStandardNormal")
    out = io.BytesIO()
    diagnostics = write_chrome(trace, out)
    trace_processor.load(out.getvalue())
    rows = trace_processor.query("select t.name, count(*) n from slice s join thread_track tt "
                                 "on s.track_id = tt.id join thread t using(utid) "
                                 "group by t.name order by t.name")
    assert [(r.name, r.n) for r in rows] == [("thread 0", 1), ("thread 1", 1)]
    assert diagnostics.count("chrome.id_replaced") == 1


@pytest.mark.parametrize("fmt", ["chrome", "perfetto"])
def test_args_held_as_json_text_write_as_the_same_args_as_values(fmt):
    """Rows a reader kept as JSON text, beside rows held as values, write the same args as
    the same rows held as values: in Perfetto the same bytes (decoded a batch at a time
    while written), in Chrome JSON the same values, the text copied as the source wrote it.
    An empty object, however spaced, writes no args, as {} does."""
    texts = [b'{"b": 1.50, "c": "\\u00e9"}', b"{ }", b"{}", b'{"d": {"e": null}, "b": 2}']
    dicts = [orjson.loads(t) for t in texts] + [None]
    outputs = []
    for held_as_text in (True, False):
        trace = Trace()
        track = trace.add_track("main", process=trace.add_process("p", pid=1), tid=1)
        trace.add_slice(track, 0, 10, "values", args={"a": [1, 2], "b": 3})
        columns = dict(track=[0] * 5, start=[1, 2, 3, 4, 5], dur=[1] * 5, name=[0] * 5,
                       category=[0] * 5)
        if held_as_text:
            trace.slices.extend_json(b",".join(texts) + b",", [len(t) for t in texts] + [0],
                                     **columns)
        else:
            for row, args in enumerate(dicts):
                trace.add_slice(0, row + 1, 1, "", args=args)
        trace.add_slice(track, 9, 1, "values again", args={"b": 4})
        out = io.BytesIO()
        traceconv.registry.get(fmt).load().write(trace, out)
        outputs.append(out.getvalue())
        if fmt == "chrome":
            assert_written_as_model(trace)
            written = [e.get("args") for e in orjson.loads(out.getvalue())["traceEvents"]
                       if e["ph"] == "X"]
            assert written == [{"a": [1, 2], "b": 3}, {"b": 1.5, "c": "é"}, None, None,
                               {"d": {"e": None}, "b": 2}, None, {"b": 4}]
    if fmt == "perfetto":
        assert outputs[0] == outputs[1]
    else:
        assert orjson.loads(outputs[0]) == orjson.loads(outputs[1])
        assert b'"args":' + texts[0] + b"}" in outputs[0]
