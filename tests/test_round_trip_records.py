"""What the writers that read back keep beyond their formats' words: the direction of a flow
that Perfetto reads reversed, memory blocks through Chrome JSON, the op graph through both;
and a kept record that is not as the writer makes it, counted, never trusted.

The census (test_round_trip_census.py) compares real samples field by field; here the
expected values are hand-made: a trace built flow by flow, the direction of each written
down, and trace_processor's own reading of the file for what Perfetto shows.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

import traceconv
from traceconv.formats.perfetto.writer import write
from traceconv.model import Trace
from traceconv.model.graph import OpSpan

ROOT = Path(__file__).resolve().parent.parent

# (source, target) of each flow, by slice name; a slice's start and track in SLICES
SLICES = {"early": (0, 100, 10), "late": (1, 200, 10),       # track, start, duration
          "left": (0, 300, 10), "right": (1, 300, 10),       # one start, two tracks
          "outer": (0, 400, 10), "inner": (0, 400, 5)}       # one start, nested
FLOWS = [("early", "late"), ("late", "early"),               # forward, backwards
         ("left", "right"), ("right", "left"),               # a tie each way
         ("outer", "inner"), ("inner", "outer")]
# Perfetto takes the end it meets first for a flow's source: the earlier start, on a tie
# the BEGIN written first (by track, then the enclosing slice first)
READ_REVERSED_BY_PERFETTO = {("late", "early"), ("right", "left"), ("inner", "outer")}


def _flows_trace() -> Trace:
    trace = Trace()
    process = trace.add_process("p", pid=1)
    tracks = [trace.add_track(name, process=process, tid=tid)
              for tid, name in enumerate(("A", "B"), 1)]
    rows = {name: trace.add_slice(tracks[track], start, dur, name)
            for name, (track, start, dur) in SLICES.items()}
    for k, (source, target) in enumerate(FLOWS):
        trace.add_flow(rows[source], rows[target], "flow", str(k))
    return trace


def _flow_names(trace: Trace) -> list[tuple[str, str]]:
    pairs = {trace.strings.strings[name]: (trace.slice(s).name, trace.slice(t).name)
             for s, t, name in zip(trace.flows.source, trace.flows.target, trace.flows.name,
                                   strict=True)}
    return [pairs[str(k)] for k in range(len(pairs))]


@pytest.mark.parametrize("window_slices", [1 << 17, 1], ids=["whole", "window by window"])
def test_a_perfetto_flow_comes_back_as_it_was_written(window_slices: int, tmp_path: Path):
    out = io.BytesIO()
    written = write(_flows_trace(), out, window_slices=window_slices)
    assert written.count("perfetto.flow_backwards") == len(READ_REVERSED_BY_PERFETTO)
    (tmp_path / "flows.pftrace").write_bytes(out.getvalue())
    assert _flow_names(traceconv.load(tmp_path / "flows.pftrace")) == FLOWS


def test_the_flows_perfetto_reads_reversed_are_those_counted(trace_processor):
    out = io.BytesIO()
    write(_flows_trace(), out)
    trace_processor.load(out.getvalue())
    rows = trace_processor.query(
        "select o.name as source, i.name as target from flow "
        "join slice o on o.id = flow.slice_out join slice i on i.id = flow.slice_in")
    shown = {(row.source, row.target) for row in rows}
    assert shown == {(t, s) if (s, t) in READ_REVERSED_BY_PERFETTO else (s, t)
                     for s, t in FLOWS}


def _written_chrome(sample: str, tmp_path: Path) -> tuple[Trace, dict]:
    first = traceconv.load(ROOT / sample)
    out = tmp_path / "again.json"
    traceconv.save(first, out)
    return first, json.loads(out.read_text())


def _read_back(document: dict, tmp_path: Path) -> Trace:
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(document))
    return traceconv.load(path)


def test_chrome_json_keeps_memory_blocks_that_a_viewer_sees_as_counters(tmp_path: Path):
    first, document = _written_chrome("tests/data/seeds/memory_timeline.raw.json", tmp_path)
    kept = document["traceconv"]["memory"]
    assert sorted(kept["size"]) == sorted(block.size for block in first.memory)
    # (what Perfetto's UI and chrome://tracing draw: the live-bytes counters, as C events)
    drawn = {e["name"] for e in document["traceEvents"] if e["ph"] == "C"}
    assert {"timeline live bytes", "timeline parameter live bytes"} <= drawn


def test_a_memory_record_not_as_written_is_left_out_counted(tmp_path: Path):
    first, document = _written_chrome("tests/data/seeds/memory_timeline.raw.json", tmp_path)
    assert len(first.memory) == 24
    document["traceconv"]["memory"]["size"].pop()
    again = _read_back(document, tmp_path)
    assert len(again.memory) == 0
    unread = [d for d in again.diagnostics if d.code == "input.carried_blocks_unread"]
    assert [(d.count, d.example) for d in unread] == [(1, "memory.size: expected a list of 24")]


def test_the_op_graph_comes_back_typed_as_its_contract_says(tmp_path: Path):
    first, document = _written_chrome("samples/migraphx/perf_simple_graph_rocm4.txt", tmp_path)
    again = _read_back(document, tmp_path)
    spans = again.graph.nodes["op/main/@0"]["device_spans"]
    assert spans == {"device": OpSpan(0, 578, 0)} and isinstance(spans["device"], OpSpan)
    assert again.graph.nodes["tensor/main/@2"]["shape"] == (784, 128)
    assert sorted(again.graph.edges) == sorted(first.graph.edges)


def test_a_graph_record_not_as_written_is_left_out_counted(tmp_path: Path):
    _, document = _written_chrome("samples/migraphx/perf_simple_graph_rocm4.txt", tmp_path)
    document["traceconv"]["graph"]["edges"]["rows"][0][2] = "op/nowhere"
    again = _read_back(document, tmp_path)
    assert not again.has_graph
    unread = [d for d in again.diagnostics if d.code == "input.carried_graph_unread"]
    assert [d.example for d in unread] == ["graph.edges.rows[0][2]: expected a node id of "
                                           "graph.nodes"]
    # the blocks stay, without the owners no graph names (counted as the model's rule says)
    assert len(again.memory) == 10
    assert again.diagnostics.count("model.unknown_owner") == 10
