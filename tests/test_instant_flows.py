"""Flows that start or end on an instant: trace_processor imports every instant as a slice
of no length and binds flows to it, so the model makes those instants slices
(``traceconv.model.instant_slices``) for every reader.

The Chrome file is a cut of a real Chromium 156 recording (one renderer's main and IO
threads, ``tests/data/chrome/PROVENANCE.md``): Chromium's ``PostTask`` instants start most
of its ``toplevel.flow`` flows. Expected values: hand counts with plain json, and the real
trace_processor on the input.
"""

from __future__ import annotations

import gzip
import io
import json
from collections import Counter
from pathlib import Path

import pytest

import traceconv
from traceconv.formats.perfetto import write

CHROMIUM = Path(__file__).parent / "data" / "chrome" / "chromium156_renderer_flows_cut.json.gz"
FLOW_ENDS_SQL = """select so.name source, so.ts source_ts, si.name target, si.ts target_ts
                   from flow f join slice so on so.id = f.slice_out
                   join slice si on si.id = f.slice_in"""


def chromium_events() -> list[dict]:
    return json.loads(gzip.decompress(CHROMIUM.read_bytes()))["traceEvents"]


def test_chromium_flows_bind_to_their_instants():
    """Every flow of the cut is bound (541 chains of one ``s`` and one ``f``), the 469
    points stamped at the time of an instant on their thread bind to it, and each instant
    is either an instant or a slice of no length, never both."""
    events = chromium_events()
    phases = Counter(e["ph"] for e in events)
    instants = {(e["pid"], e["tid"], e["ts"]) for e in events if e["ph"] == "I"}
    points = [e for e in events if e["ph"] in ("s", "f")]
    chains = Counter((e["cat"], e["id"]) for e in points)
    on_instant = sum((e["pid"], e["tid"], e["ts"]) in instants for e in points)
    assert (phases["s"], phases["f"], len(chains), on_instant) == (541, 541, 541, 469)
    trace = traceconv.load(CHROMIUM)
    assert len(trace.flows) == len(chains)
    diagnostics = trace.diagnostics
    assert not any(diagnostics.count(code) for code in (
        "chrome.flow_unbound", "chrome.flow_dangling", "chrome.flow_within_one_slice"))
    named = {(e["tid"], e["ts"] * 1000, e["name"]) for e in events if e["ph"] == "I"}
    ends = [trace.slice(row) for row in [*trace.flows.numpy("source"),
                                         *trace.flows.numpy("target")]]
    assert sum((trace.tracks[s.track].tid, s.start, s.name) in named and s.dur == 0
               for s in ends) == on_instant
    made = len(trace.slices) - phases["X"] - phases["B"]   # (the instants made slices)
    assert made > 0 and len(trace.instants) + made == phases["I"]


def flow_ends(tp, data: bytes) -> Counter:
    tp.load(data)
    return Counter((r.source, r.source_ts, r.target, r.target_ts)
                   for r in tp.query(FLOW_ENDS_SQL))


def test_chromium_flows_agree_with_trace_processor(trace_processor):
    """trace_processor's flow table on traceconv's .pftrace is its flow table on the
    input: the same 541 flows between the same slices (by name and time)."""
    expected = flow_ends(trace_processor, gzip.decompress(CHROMIUM.read_bytes()))
    out = io.BytesIO()
    write(traceconv.load(CHROMIUM), out)
    assert sum(expected.values()) == 541
    assert flow_ends(trace_processor, out.getvalue()) == expected


def test_a_flow_after_its_slice_ended_binds_to_the_slice_around(tmp_path: Path,
                                                                 trace_processor):
    """The one way traceconv binds otherwise than trace_processor: a point stamped after
    the last slice begun on its thread has ended (nothing begun since) binds, in
    trace_processor, to that ended slice (the top of its stack, popped only when the next
    slice begins); traceconv binds it to the slice around it (here the task), as the
    Trace Event Format says. 10 of 16,090 flows of the whole Chromium recording."""
    events = [
        {"ph": "X", "name": "Task", "pid": 1, "tid": 1, "ts": 0, "dur": 20},
        {"ph": "X", "name": "Microtasks", "pid": 1, "tid": 1, "ts": 1, "dur": 2},
        {"ph": "s", "id": 7, "cat": "c", "name": "f", "pid": 1, "tid": 1, "ts": 5},
        {"ph": "X", "name": "Run", "pid": 1, "tid": 2, "ts": 30, "dur": 5},
        {"ph": "f", "id": 7, "cat": "c", "name": "f", "pid": 1, "tid": 2, "ts": 31, "bp": "e"},
    ]
    path = tmp_path / "stale.json"
    path.write_text(json.dumps({"traceEvents": events}))
    assert flow_ends(trace_processor, path.read_bytes()) == Counter(
        {("Microtasks", 1000, "Run", 30000): 1})
    trace = traceconv.load(path)
    [flow] = trace.iter_flows()
    assert (trace.slice(flow.source).name, trace.slice(flow.target).name) == ("Task", "Run")


@pytest.mark.parametrize("scope", ["t", "p", "g"])
def test_the_instant_a_flow_starts_on_is_read_back_as_one_event(tmp_path: Path, scope: str):
    """An instant a flow starts on is one slice of no length, in the model and in the
    .pftrace written from it: trace_processor on the input and on the output holds it once
    (a thread-scoped one only: trace_processor binds no flow to a process or global
    instant, counting `flow_no_enclosing_slice`, and neither does traceconv)."""
    events = [
        {"ph": "i", "name": "PostTask", "pid": 1, "tid": 1, "ts": 5, "s": scope},
        {"ph": "s", "id": 7, "cat": "c", "name": "f", "pid": 1, "tid": 1, "ts": 5},
        {"ph": "X", "name": "RunTask", "pid": 1, "tid": 2, "ts": 10, "dur": 5},
        {"ph": "f", "id": 7, "cat": "c", "name": "f", "pid": 1, "tid": 2, "ts": 11, "bp": "e"},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    trace = traceconv.load(path)
    assert len(trace.slices) + len(trace.instants) == 2
    assert len(trace.flows) == (scope == "t")


def flow_v2_events(instants: int) -> list[dict]:
    """An X bound by flow v2 (``bind_id``) to a later X, and two instants bound to the same
    id between them in time (one ``flow_in``, one ``flow_out``), written after ``instants``
    plain instants: past the reader's first 256 KiB, the instants' piece (no bound X in it)
    is read by the column path (``records.py``), the first by the event loop."""
    plain = [{"ph": "i", "name": "mark", "cat": "c", "pid": 1, "tid": 1, "ts": k, "s": "t"}
             for k in range(instants)]
    start = instants + 10
    return [{"ph": "X", "name": "x", "cat": "c", "pid": 1, "tid": 1, "ts": start, "dur": 5,
             "bind_id": "0x2", "flow_out": True},
            {"ph": "X", "name": "y", "cat": "c", "pid": 1, "tid": 2, "ts": start + 20, "dur": 5,
             "bind_id": "0x2", "flow_in": True},
            *plain,
            {"ph": "i", "name": "in", "cat": "c", "pid": 1, "tid": 2, "ts": start + 10,
             "s": "t", "bind_id": "0x2", "flow_in": True},
            {"ph": "I", "name": "out", "cat": "c", "pid": 1, "tid": 2, "ts": start + 12,
             "s": "t", "bind_id": "0x2", "flow_out": True}]


@pytest.mark.parametrize("instants", [0, 8000])
def test_flow_v2_bindings_on_instants_are_counted(tmp_path: Path, instants: int):
    """An instant with ``bind_id`` and ``flow_in``/``flow_out`` links nothing (as in
    trace_processor, below), and is counted, by both of the reader's paths: 2 by hand."""
    path = tmp_path / "v2.json"
    path.write_text(json.dumps({"traceEvents": flow_v2_events(instants)}))
    trace = traceconv.load(path)
    assert trace.diagnostics.count("chrome.flow_on_instant") == 2
    assert len(trace.instants) == instants + 2
    [flow] = trace.iter_flows()
    assert (trace.slice(flow.source).name, trace.slice(flow.target).name) == ("x", "y")


def test_trace_processor_binds_no_flow_v2_to_an_instant(tmp_path: Path, trace_processor):
    """What the count above rests on: trace_processor's flow table on the input links the
    two X only, the instants between them bound to nothing; the .pftrace agrees."""
    data = json.dumps({"traceEvents": flow_v2_events(0)}).encode()
    expected = Counter({("x", 10_000, "y", 30_000): 1})
    assert flow_ends(trace_processor, data) == expected
    path = tmp_path / "v2.json"
    path.write_bytes(data)
    out = io.BytesIO()
    write(traceconv.load(path), out)
    assert flow_ends(trace_processor, out.getvalue()) == expected


def cross_category_v2() -> bytes:
    """A flow v2 from a host op to a kernel, the two X of other categories (as a runtime
    writes a launch), and a v1 flow whose id equals the bind_id (a name space of its own)."""
    return json.dumps({"traceEvents": [
        {"ph": "X", "name": "launch", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
         "bind_id": 7, "flow_out": True},
        {"ph": "X", "name": "kernel", "cat": "kernel", "pid": 1, "tid": 2, "ts": 30, "dur": 5,
         "bind_id": 7, "flow_in": True},
        {"ph": "X", "name": "a", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 50, "dur": 5},
        {"ph": "X", "name": "b", "cat": "cpu_op", "pid": 1, "tid": 2, "ts": 60, "dur": 5},
        {"ph": "s", "id": 7, "cat": "", "name": "v1", "pid": 1, "tid": 1, "ts": 51},
        {"ph": "f", "id": 7, "cat": "", "name": "v1", "pid": 1, "tid": 2, "ts": 61, "bp": "e"},
    ]}).encode()


def test_a_flow_v2_joins_slices_of_other_categories(tmp_path: Path):
    """Found by an experiment on trace_processor v52: a bind_id joins its two X whatever
    their categories (the reader had keyed it by each X's own category: two dangling ends,
    no flow); a v1 flow of the same id stays apart. By hand: launch → kernel, a → b."""
    path = tmp_path / "v2.json"
    path.write_bytes(cross_category_v2())
    trace = traceconv.load(path)
    ends = sorted((trace.slice(f.source).name, trace.slice(f.target).name)
                  for f in trace.iter_flows())
    assert ends == [("a", "b"), ("launch", "kernel")]
    assert trace.diagnostics.count("chrome.flow_dangling") == 0


def test_trace_processor_joins_a_flow_v2_across_categories(trace_processor):
    assert flow_ends(trace_processor, cross_category_v2()) == Counter(
        {("launch", 10_000, "kernel", 30_000): 1, ("a", 50_000, "b", 60_000): 1})
