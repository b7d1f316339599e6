"""The Chrome JSON checker: what Perfetto's JSON importer would drop or mangle."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from functools import partial

import numpy as np
import orjson
import pytest
from traced_peak import traced_peak

import traceconv
from traceconv.errors import InputError
from traceconv.formats.chrome import stream
from traceconv.formats.chrome.checker import check_chrome, check_chrome_events
from traceconv.io import Source


def X(ts, dur, name="op", tid=1, **extra):
    return {"ph": "X", "ts": ts, "dur": dur, "name": name, "pid": 1, "tid": tid, **extra}


def codes(events):
    report = check_chrome_events(events)
    return ({e["code"]: e["count"] for e in report.errors},
            {w["code"]: w["count"] for w in report.warnings}, report.counts)


def test_v8_profile_samples_are_no_warning():
    """trace_processor reads V8's 'P' (ProfileChunk) events as CPU profile samples (a real
    Chromium trace: 316 of them, 30,985 samples): nothing a viewer drops."""
    errors, warnings, counts = codes([
        {"ph": "P", "ts": 5, "pid": 1, "tid": 1, "id": "0x1", "name": "ProfileChunk",
         "cat": "disabled-by-default-v8.cpu_profiler", "args": {"data": {"cpuProfile": {}}}}])
    assert not errors and not warnings and counts["sample_events"] == 1


def test_clean_trace_counts():
    errors, warnings, counts = codes([
        {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}},
        X(0, 10), X(1, 2), {"ph": "B", "ts": 20, "pid": 1, "tid": 1, "name": "b"},
        {"ph": "E", "ts": 30, "pid": 1, "tid": 1},
        {"ph": "i", "ts": 5, "pid": 1, "tid": 1, "name": "mark", "s": "t"},
        {"ph": "C", "ts": 5, "pid": 1, "name": "mem", "args": {"a": 1, "b": "2.5"}},
        {"ph": "s", "ts": 2, "pid": 1, "tid": 1, "id": 7, "cat": "ac2g"},
        {"ph": "f", "ts": 22, "pid": 1, "tid": 1, "id": 7, "cat": "ac2g", "bp": "e"},
    ])
    assert not errors and not warnings
    assert counts == {"events": 9, "slices": 3, "instants": 1, "counter_values": 2,
                      "flows": 1, "metadata": 1, "tracks": 1}


@pytest.mark.parametrize("events, code", [
    ([X(0, 10), X(5, 10)], "overlapping_slice"),
    ([{"ph": "E", "ts": 5, "pid": 1, "tid": 1}], "end_without_begin"),
    ([{"ts": 1, "pid": 1}], "missing_ph"),
    ([{"ph": "X", "pid": 1, "dur": 1}], "missing_ts"),
    ([{"ph": "C", "ts": 1, "pid": 1, "name": "c", "args": {"v": "high"}}],
     "non_numeric_counter"),
    ([{"ph": "X", "ts": 1, "pid": 1}], "bad_dur"),
    ([X(0, -1)], "negative_dur"),
    (["not an object"], "event_not_object"),
])
def test_errors(events, code):
    errors, _, _ = codes(events)
    assert code in errors


@pytest.mark.parametrize("events, code", [
    ([{"ph": "S", "ts": 1, "pid": 1, "id": 1}], "ignored_phase_legacy_async"),
    ([{"ph": "O", "ts": 1, "pid": 1, "id": 1}], "ignored_phase_object"),
    ([{"ph": "Q", "ts": 1, "pid": 1}], "unknown_phase"),
    ([{"ph": "X", "ts": 1, "dur": 1, "tid": 1}], "missing_pid"),
    ([{"ph": "s", "ts": 100, "pid": 1, "tid": 1, "id": 1, "cat": "c"},
      {"ph": "f", "ts": 200, "pid": 1, "tid": 1, "id": 1, "cat": "c"}], "flow_not_bound"),
    ([X(0, 10), {"ph": "s", "ts": 1, "pid": 1, "tid": 1, "id": 1, "cat": "c"}],
     "flow_start_unfollowed"),
    ([X(0, 10), {"ph": "f", "ts": 1, "pid": 1, "tid": 1, "id": 1, "bp": "e"}],
     "flow_unpaired"),
    ([{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "a"}},
      {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "b"}}],
     "conflicting_metadata_names"),
    ([{"ph": "B", "ts": 0, "pid": 1, "tid": 1}], "unterminated_slice"),
    # the B is ended at 5 and kept; the X inside it outlives it in the view
    ([{"ph": "B", "ts": 0, "pid": 1, "tid": 1}, X(1, 10),
      {"ph": "E", "ts": 5, "pid": 1, "tid": 1}], "end_below_open_slice"),
    # the X ends at 10 with the B inside it still open: the importer ends the B there
    ([X(0, 10), {"ph": "B", "ts": 2, "pid": 1, "tid": 1}, X(12, 1)], "slice_ended_by_parent"),
])
def test_warnings(events, code):
    _, warnings, _ = codes(events)
    assert code in warnings


def test_depth_over_512():
    """trace_processor v52 keeps the 88 slices past depth 512 as rows of their thread at
    depth 0 (seen on it: 600 rows, max depth 511), so they are slices, and errors."""
    errors, _, counts = codes([X(i, 10_000 - 2 * i) for i in range(600)])
    assert errors == {"slice_depth_over_512": 88} and counts["slices"] == 600


def test_identical_and_touching_x_events_nest():
    errors, _, counts = codes([X(0, 10), X(0, 10), X(10, 5), X(10, 0)])
    assert not errors and counts["slices"] == 4


def test_parse_forms(tmp_path):
    def check(text):
        path = tmp_path / "t.json"
        path.write_bytes(text)
        return check_chrome(Source(path))

    assert check(b'{"traceEvents": [{"ph": "i", "ts": 1}]}').counts["instants"] == 1
    assert check(b'[{"ph": "i", "ts": 1}, ').counts["instants"] == 1   # ("]" may be left out)
    with pytest.raises(InputError, match=r"t\.json:1:18: not valid JSON"):
        check(b'{"traceEvents": [')
    with pytest.raises(InputError):
        check(b'"text"')
    # an unescaped control character inside a string (column 24, counted by hand) is not JSON
    with pytest.raises(InputError, match=r":1:24: not valid JSON"):
        check(b'[{"ph": "i", "name": "a\x01b"}]')
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(orjson.dumps({"traceEvents": [X(0, 1)]})))
    assert check_chrome(Source(path)).counts["slices"] == 1


def test_real_kineto_trace_overlaps(data):
    """rank-0 of the 4-rank gloo run: 2 record_function annotations outlive their frame."""
    report = check_chrome(Source(data / "torch" / "rank-0.pt.trace.json.gz"))
    assert report.counts["events"] == 587
    events = json.loads(gzip.decompress((data / "torch" / "rank-0.pt.trace.json.gz")
                                        .read_bytes()))["traceEvents"]
    assert report.counts["slices"] + 2 == sum(1 for e in events if e.get("ph") == "X")
    assert {e["code"]: e["count"] for e in report.errors} == {"overlapping_slice": 2}


def test_check_cli_on_chrome_json(data):
    """`traceconv check` tells JSON from protobuf by content and exits 1 on errors."""
    run = subprocess.run([sys.executable, "-m", "traceconv", "check",
                          str(data / "torch" / "rank-0.pt.trace.json.gz"), "--json"],
                         capture_output=True, text=True)
    assert run.returncode == 1
    result = json.loads(run.stdout)
    assert result["format"] == "chrome" and result["counts"]["slices"] == 409
    assert [(e["code"], e["count"]) for e in result["errors"]] == [("overlapping_slice", 2)]


def test_args_beyond_a_double_are_what_the_real_trace_processor_drops(trace_processor, data):
    """A number beyond a double (1e400) is valid JSON (JSON.parse reads infinity); the
    real importer keeps its event but drops that event's args from that number on,
    silently (no stat). check reads the file (it called it invalid JSON) and counts those
    events: a minimised fuzz input, checked against what trace_processor keeps."""
    path = data / "hostile" / "kineto_args_1e400.json"
    text = path.read_bytes()
    events = json.loads(text)["traceEvents"]   # Python's json: the independent reading
    report = check_chrome(Source(path))
    kept: dict[int, set[str]] = {}   # per slice start (ns): the top-level arg names kept
    trace_processor.load(text)
    for row in trace_processor.query("select s.ts, a.key from slice s join args a "
                                     "using(arg_set_id) where a.key like 'args.%'"):
        kept.setdefault(row.ts, set()).add(row.key[5:].split("[")[0])
    beyond = 0
    for e in events:
        if e.get("ph") != "X" or not e.get("args"):
            continue
        names = list(e["args"])
        first = next((k for k, name in enumerate(names)
                      if "Infinity" in json.dumps(e["args"][name])), len(names))
        beyond += first < len(names)
        shown = {name for name in names if json.dumps(e["args"][name]) not in ("[]", "{}")}
        assert kept.get(round(e["ts"] * 1000), set()) == shown & set(names[:first])
    assert beyond == 1
    assert {e["code"]: e["count"] for e in report.errors}["args_beyond_double"] == beyond


def test_traceconvs_own_chrome_output_holds_no_number_perfetto_stops_at(data, tmp_path,
                                                                      monkeypatch):
    """Converting that file to Chrome JSON writes the infinity as text: the args texts
    copied as the source wrote them (read in 1 KiB pieces, all but the first keep their
    args as text) are decoded and written again where they hold one."""
    monkeypatch.setattr(stream, "CHUNK", 1024)
    out = tmp_path / "out.json"
    traceconv.save(traceconv.load(data / "hostile" / "kineto_args_1e400.json"), out)
    report = check_chrome(Source(out))
    assert "args_beyond_double" not in {e["code"] for e in report.errors}
    written = [e for e in json.loads(out.read_bytes())["traceEvents"]
               if e.get("name") == "aten::as_strided" and "Input Strides" in e.get("args", {})]
    assert [e["args"]["Input Strides"] for e in written][:1] == ["Infinity"]


BEYOND_INT64 = [2**63, 2**64 - 1, 2**64, -2**63 - 1, 2**70]
WITHIN_INT64 = [2**63 - 1, -2**63, 10**18]


def _int_args_trace(beyond: list[int], nested: int, digits: str) -> bytes:
    """A Chrome trace written by hand: one slice per integer (beside an ordinary arg and
    a text of digits), one with an integer nested in a list, after 2 kB of others."""
    events = [b'{"ph":"X","name":"filler","ts":%d,"dur":1,"pid":1,"tid":2,"args":{"k":%d}}'
              % (k, k) for k in range(40)]
    events += [b'{"ph":"X","name":"s%d","ts":%d,"dur":1,"pid":1,"tid":1,'
               b'"args":{"v":%d,"n":1,"t":"%s"}}' % (k, 10 * k, v, digits.encode())
               for k, v in enumerate(beyond + WITHIN_INT64)]
    events.append(b'{"ph":"X","name":"nested","ts":500,"dur":1,"pid":1,"tid":1,'
                  b'"args":{"v":[1,%d]}}' % nested)
    return b'{"traceEvents":[' + b",".join(events) + b"]}"


@pytest.mark.parametrize(("beyond", "nested", "digits"), [
    (BEYOND_INT64, 2**64, "18446744073709551616"),
    # only integers orjson holds exactly (NCCL's uint64 ids): no second read
    ([2**63, 2**64 - 1], 2**63 + 5, "9223372036854775808")], ids=["past-uint64", "uint64"])
def test_args_ints_beyond_int64_are_what_the_real_trace_processor_shows_wrong(
        trace_processor, tmp_path, beyond, nested, digits):
    """trace_processor (v52) reads an integer beyond int64 as a real that is not it
    (2**64 - 1 as -1.0, 2**64 as 0.0), with no stat; check warns of each event holding
    one (orjson reads those past 2**64 as floats: check reads such a file again)."""
    text = _int_args_trace(beyond, nested, digits)
    path = tmp_path / "ints.json"
    path.write_bytes(text)
    trace_processor.load(text)
    shown = {(row.name, row.key): row.display_value for row in trace_processor.query(
        "select s.name, a.key, a.display_value from slice s join args a using(arg_set_id)")}
    written = {e["name"]: e["args"]["v"] for e in json.loads(text)["traceEvents"]
               if e["name"] != "filler"}
    wrong = {name for name, v in written.items() if isinstance(v, int)
             and shown[(name, "args.v")] != str(v)}
    wrong |= {"nested"} if shown[("nested", "args.v[1]")] != str(nested) else set()
    assert wrong == {f"s{k}" for k in range(len(beyond))} | {"nested"}
    assert all(shown[(name, "args.t")] == digits
               for name in written if name != "nested")   # (digits in a string: shown)
    warnings = {w["code"]: w for w in check_chrome(Source(path)).warnings}
    assert warnings["args_int_beyond_int64"]["count"] == len(wrong)


@pytest.mark.parametrize("held_as_text", [False, True])
def test_traceconvs_own_chrome_output_shows_ints_beyond_int64_as_written(
        trace_processor, tmp_path, held_as_text, monkeypatch):
    """Written as the text of their digits, at any depth and whether the reader kept the
    args as values or as the source's JSON text (read in 1 KiB pieces: the pieces after
    the first keep their args as text), the real trace_processor shows each one exactly."""
    source = tmp_path / "ints.json"
    source.write_bytes(_int_args_trace(BEYOND_INT64, 2**64, "18446744073709551616"))
    if held_as_text:
        monkeypatch.setattr(stream, "CHUNK", 1024)
    out = tmp_path / "out.json"
    trace = traceconv.load(source, format="chrome")
    held = trace.slices.args.json_texts(np.arange(len(trace.slices)))[0]
    assert (len(held) > 0) == held_as_text
    traceconv.save(trace, out)
    written = out.read_bytes()
    trace_processor.load(written)
    shown = {(row.name, row.key): row.display_value for row in trace_processor.query(
        "select s.name, a.key, a.display_value from slice s join args a using(arg_set_id)")}
    for k, value in enumerate(BEYOND_INT64 + WITHIN_INT64):
        assert shown[(f"s{k}", "args.v")] == str(value)
    assert shown[("nested", "args.v[1]")] == str(2**64)
    report = check_chrome(Source(out))
    assert "args_int_beyond_int64" not in {w["code"] for w in report.warnings}


def test_a_flow_whose_target_began_first_is_counted_by_the_writer():
    """A task posted from inside a long running slice to one that began earlier (Chromium's
    HandlePostMessage → a worker's FunctionCall): its 'f' cannot sit where the arrow reads
    right in every viewer; the writer says how many such flows it wrote."""
    import io

    from traceconv.formats.chrome.writer import write_chrome
    from traceconv.model import Trace

    trace = Trace()
    process = trace.add_process("p", pid=1)
    main, worker = (trace.add_track(n, process=process, tid=t) for n, t in (("m", 1), ("w", 2)))
    call = trace.add_slice(worker, 0, 1_000_000, "FunctionCall")
    post = trace.add_slice(main, 500_000, 10_000, "HandlePostMessage")
    later = trace.add_slice(worker, 2_000_000, 10_000, "RunTask")
    trace.add_flow(post, call, "task")
    trace.add_flow(post, later, "task")
    written = write_chrome(trace, io.BytesIO())
    assert written.count("chrome.flow_backwards") == 1


def _allocator_instants(count: int) -> bytes:
    """The shape of an allocator log as traceconv writes it: one thread, ``count``
    ``[memory]`` instants with six args each."""
    events = [b'{"ph":"i","ts":%d.5,"name":"[memory]","pid":1,"tid":1,"s":"t","args":'
              b'{"Bytes":%d,"Addr":%d,"Device Type":1,"Device Id":0,"Total Allocated":%d,'
              b'"Total Reserved":0}}' % (k, 64 - 128 * (k % 2), 4096 * (k // 2), 64 * (k % 2))
              for k in range(count)]
    return b'{"traceEvents":[' + b",".join(events) + b"]}"


def test_check_holds_no_event_of_the_file(tmp_path, monkeypatch):
    """Hostile round s14, class 3: checking a 51 MB allocator log took 503 MB, the whole
    event list held as dicts (about 10x the file). The array is now read a piece at a time
    and what an instant leaves behind is its place on its thread's slice stack (the
    importer stacks thread instants with the slices): a few numbers, under 120 bytes an
    instant (the file holds 170), so the peak stays under the file's size (16 KiB pieces
    keep the test quick)."""
    monkeypatch.setattr(stream, "CHUNK", 16 << 10)
    peaks = []
    for count in (2_000, 8_000):
        path = tmp_path / f"instants_{count}.json"
        text = _allocator_instants(count)
        path.write_bytes(text)
        report, peak = traced_peak(partial(check_chrome, Source(path)))
        assert report.counts["instants"] == count and report.ok
        peaks.append(peak)
    assert peaks[1] < len(text) and (peaks[1] - peaks[0]) / 6_000 < 120, (peaks, len(text))


@pytest.mark.parametrize("number, code, severity", [
    (b"1e400", "args_beyond_double", "errors"),
    (b"18446744073709551616", "args_int_beyond_int64", "warnings")])
def test_numbers_perfetto_cannot_show_are_found_in_any_piece(tmp_path, monkeypatch, number,
                                                             code, severity):
    """Read in 1 KiB pieces, the events holding such a number (at indexes 100 and 300, far
    past the first piece) are counted, with the first as the example."""
    monkeypatch.setattr(stream, "CHUNK", 1024)
    events = [b'{"ph":"i","ts":%d,"pid":1,"tid":1,"args":{"n":%s}}'
              % (k, number if k in (100, 300) else b"1") for k in range(400)]
    path = tmp_path / "numbers.json"
    path.write_bytes(b"[" + b",".join(events) + b"]")
    found = {f["code"]: f for f in getattr(check_chrome(Source(path)), severity)}
    assert (found[code]["count"], found[code]["example"]) == (2, "$.traceEvents[100].args")


def test_an_e_ends_the_topmost_open_b_of_its_name_and_category():
    """As the importer's ``MatchingIncompleteSliceIndex``: an E of a category no open B has
    ends nothing; an E naming ``a`` ends ``a`` below an open ``b`` (kept, ``b`` left open
    above it, never ended; by hand)."""
    b, e = {"ph": "B", "pid": 1, "tid": 1}, {"ph": "E", "pid": 1, "tid": 1}
    errors, warnings, counts = codes([{**b, "ts": 0, "name": "a"}, {**b, "ts": 1, "name": "b"},
                                      {**e, "ts": 2, "cat": "x"}, {**e, "ts": 3, "name": "a"}])
    assert errors == {"end_without_begin": 1}
    assert warnings == {"end_below_open_slice": 1, "unterminated_slice": 1}
    assert counts["slices"] == 2


def test_b_and_e_sharing_a_time_are_said_to_be_in_no_fixed_order():
    """trace_processor orders a B and an E at one time differently as events elsewhere at
    that time change (seen on v52: a zero-length B/E pair alone keeps its order; with an X
    on another thread at that time the E comes first); the checker says so."""
    _, warnings, _ = codes([{"ph": "B", "ts": 3, "pid": 1, "tid": 1, "name": "b"},
                            {"ph": "E", "ts": 3, "pid": 1, "tid": 1}])
    assert warnings["ambiguous_same_time_order"] == 2


def test_slices_open_when_their_x_ends_are_ended_there():
    """A B inside X [11, 17), an X [16, 36) pushed on the B (the importer checks no overlap
    below an open B), then an event at 26, past 17: the importer ends the B and the X above
    it at 17 (one ``misplaced_end_event``) and keeps all five (by hand, as trace_processor
    shows this file: 5 slices, the X of 20 µs drawn 1 µs long)."""
    errors, warnings, counts = codes([
        {"ph": "B", "ts": 12, "pid": 1, "tid": 1, "name": "b"}, X(11, 6), X(16, 20),
        X(26, 2), X(33, 8)])
    assert not errors and warnings == {"slice_ended_by_parent": 1}
    assert counts["slices"] == 5


def test_check_holds_columns_not_tuples_per_slice(tmp_path, monkeypatch):
    """A tuple per slice event held about 245 bytes a slice (tracemalloc peak of checking
    80,000 X events: 19.6 MB); the events are now columns: under 120 bytes a slice, four
    times the events, the same per slice."""
    monkeypatch.setattr(stream, "CHUNK", 16 << 10)
    per_slice = []
    for count in (20_000, 80_000):
        path = tmp_path / f"x_{count}.json"
        path.write_bytes(b'{"traceEvents":[' + b",".join(
            b'{"ph":"X","ts":%d,"dur":%d,"name":"op","pid":1,"tid":%d}'
            % (k * 10, 5 + k % 3, k % 4) for k in range(count)) + b"]}")
        report, peak = traced_peak(partial(check_chrome, Source(path)))
        assert report.counts["slices"] == count and report.ok
        per_slice.append(peak / count)
    assert max(per_slice) < 120 and per_slice[1] < 1.1 * per_slice[0], per_slice


def test_a_thread_numbered_0_is_its_process_main_thread():
    """trace_processor's JSON tokenizer reads tid 0 in a process other than 0 as tid = pid
    (seen on a real TensorFlow timeline: threads 0 and 1 of process 1 became one, and a
    slice was dropped there): the two X events below overlap on that one thread (by
    hand); in process 0, tid 0 stays itself."""
    errors, _, counts = codes([X(0, 10, tid=0), X(5, 10, tid=1)])
    assert errors == {"overlapping_slice": 1} and counts["tracks"] == 1
    errors, _, counts = codes([{**X(0, 10, tid=0), "pid": 0}, {**X(5, 10, tid=1), "pid": 0}])
    assert not errors and counts["tracks"] == 2


def test_a_step_draws_an_arrow_from_the_start():
    """TensorFlow writes each dataflow edge as an ``s`` and a ``t`` (no ``f``):
    trace_processor draws the arrow (2 in the real timeline); a ``t`` binds to the slice
    on top of its thread's stack, as an ``s`` does (by hand: one arrow, nothing unpaired)."""
    flow = {"cat": "DataFlow", "name": "edge", "id": 0, "pid": 1}
    _, warnings, counts = codes([X(0, 10, tid=5), X(20, 10, tid=6),
                                 {**flow, "ph": "s", "ts": 3, "tid": 5},
                                 {**flow, "ph": "t", "ts": 21, "tid": 6}])
    assert counts["flows"] == 1 and not warnings


def test_flows_are_counted_as_trace_processor_tracks_them():
    """One trace of each way the importer's flow tracker treats a flow event (v52's JSON
    parser and FlowTracker), counted by hand: 4 arrows, and one event for each reason it
    draws none. (trace_processor draws the same 4 and counts the drops its way:
    flow_duplicate_id, flow_step_without_start, flow_invalid_id, flow_no_enclosing_slice,
    flow_without_direction 1 each.)"""
    def flow(ph, ts, ident, tid, **extra):
        return {"ph": ph, "ts": ts, "id": ident, "cat": "c", "pid": 1, "tid": tid, **extra}

    events = [
        X(0, 10, "a"), flow("s", 2, 1, 1),            # flow ("c", 1), the first met: number 0
        X(20, 10, "b", tid=2), flow("f", 21, 1, 2, bp="e"),   # arrow 1: a -> b
        flow("s", 22, 1, 2),                           # its id stays open after the f: dropped
        flow("f", 25, 1, 2),                           # waits for the next slice on thread 2
        X(30, 5, "c", tid=2),                          # arrow 2: a -> c
        flow("f", 31, "0x2", 2),                       # ("c", 2) never started ...
        X(40, 5, "d", tid=2),                          # arrow 3: from the first slice, a -> d
        flow("t", 41, 3, 2),                           # a step of nothing: dropped
        flow("s", 42, 1.5, 2),                         # no id to the importer: dropped
        flow("s", 50, 4, 3),                           # no slice on thread 3: dropped
        X(60, 5, "e", bind_id=0, flow_in=True),        # v2 id 0 is flow ("c", 1): arrow 4
        X(70, 5, "g", bind_id=9),                      # neither flow_in nor flow_out
        flow("s", 71, 5, 1),                           # bound to g; nothing follows it
        flow("f", 80, 5, 1),                           # no slice begins after it
    ]
    errors, warnings, counts = codes(events)
    assert counts["flows"] == 4 and not errors
    assert warnings == {"flow_duplicate_start": 1, "flow_from_first_slice": 1,
                        "flow_unpaired": 1, "flow_invalid_id": 1, "flow_not_bound": 1,
                        "flow_without_direction": 1, "flow_start_unfollowed": 1,
                        "flow_end_without_next_slice": 1, "flow_v2_id_of_a_v1_flow": 1}
