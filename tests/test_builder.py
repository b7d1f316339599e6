"""The one trace builder (traceconv.model.builder): its rules, the frozen trace it hands
over, ``save``'s check of a trace made by hand, and the readers that rely on it.

Expected values come from the inputs as written here (hand counts of ends before starts,
of times beyond the range), never from the builder's own results.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.errors import TraceconvError
from traceconv.formats.perfetto.wire import varint as _varint  # (protobuf's rule)
from traceconv.model import MemoryBlock, OpStat, Trace
from traceconv.model.builder import TraceBuilder, build
from traceconv.model.frozen import FrozenTraceError
from traceconv.model.repairs import TIME_MAX, TIME_MIN
from traceconv.model.validate import validate

ROOT = Path(__file__).resolve().parent.parent
KINETO = ROOT / "samples" / "torch" / "cnn_step5.pt.trace.json"
MEGENGINE = ROOT / "samples" / "megengine" / "convnet_lar_embed_profile.json"
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
EDGES = [INT64_MIN, INT64_MIN + 1, TIME_MIN - 1, TIME_MIN, -1, 0, 1, TIME_MAX, TIME_MAX + 1,
         INT64_MAX - 1, INT64_MAX]
times = st.one_of(st.sampled_from(EDGES), st.integers(INT64_MIN, INT64_MAX),
                  st.integers(-1000, 1000))


def _inside(value: int) -> int:
    return min(max(value, TIME_MIN), TIME_MAX)


# -- the rules -------------------------------------------------------------------------

@pytest.mark.slow
@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.tuples(times, times), min_size=1, max_size=20), st.booleans())
def test_intervals_at_any_edge_come_out_in_range_and_counted(pairs, columnar):
    builder = TraceBuilder()
    track = builder.add_track("t", process=builder.add_process("p"))
    if columnar:
        starts, ends = (np.array(column, dtype=np.int64) for column in zip(*pairs, strict=True))
        builder.add_intervals(np.full(len(pairs), track), starts, ends,
                              np.zeros(len(pairs), np.int32), np.zeros(len(pairs), np.int32),
                              [None] * len(pairs))
    else:
        for start, end in pairs:
            builder.add_interval(track, start, end, "x")
    trace = builder.build()
    expected_backwards = sum(_inside(end) < _inside(start) for start, end in pairs)
    expected_moved = sum((v != _inside(v)) for pair in pairs for v in pair)
    assert trace.diagnostics.count("model.end_before_start") == expected_backwards
    assert trace.diagnostics.count("model.time_beyond_range") == expected_moved
    got = [(s.start, s.end) for s in trace.iter_slices()]
    assert got == [(_inside(s), max(_inside(s), _inside(e))) for s, e in pairs]
    assert validate(trace) == []


@settings(derandomize=True, max_examples=100, deadline=None)
@given(st.lists(st.tuples(times, st.integers(INT64_MIN, INT64_MAX)), min_size=1, max_size=10))
def test_slices_given_as_start_and_duration_follow_the_same_rules(rows):
    builder = TraceBuilder()
    track = builder.add_track("t", process=builder.add_process("p"))
    for start, dur in rows:
        builder.add_slice(track, start, dur, "x")
    trace = builder.build()
    assert trace.diagnostics.count("model.end_before_start") == sum(d < 0 for _, d in rows)
    assert validate(trace) == []
    for slice_, (_, dur) in zip(trace.iter_slices(), rows, strict=True):
        assert TIME_MIN <= slice_.start <= slice_.end <= TIME_MAX
        assert slice_.dur >= 0 and (dur >= 0 or slice_.dur == 0)


@pytest.mark.parametrize("bad_track", [-1, 1, 7, 2**31 - 1])
def test_events_on_unknown_tracks_move_to_one_track(bad_track):
    builder = TraceBuilder()
    track = builder.add_track("t", process=builder.add_process("p"))
    builder.slices.append(bad_track, 0, 5, 0, 0)
    builder.instants.append(bad_track, 3, 0, 0)
    builder.add_counter(track, 1, 2.0)
    trace = builder.build()
    assert trace.diagnostics.count("model.unknown_track") == 2
    assert [t.name for t in trace.tracks] == ["t", "(unknown track)"]
    assert validate(trace) == []


@pytest.mark.parametrize(("source", "target"), [(0, 5), (-1, 0), (3, -2), (0, 1)])
def test_flows_to_missing_rows_are_left_out(source, target):
    builder = TraceBuilder()
    track = builder.add_track("t", process=builder.add_process("p"))
    builder.add_slice(track, 0, 5, "a")
    builder.add_slice(track, 5, 5, "b")
    builder.add_flow(0, 1)
    builder.add_flow(source, target)
    trace = builder.build()
    good = 0 <= source < 2 and 0 <= target < 2
    assert len(trace.flows) == 1 + good
    assert trace.diagnostics.count("model.unknown_slice_ref") == (not good)


@pytest.mark.parametrize("length", [1, 65_536, 65_537, 200_000])
def test_names_past_the_bound_are_cut(length):
    builder = TraceBuilder()
    track = builder.add_track("t", process=builder.add_process("p"))
    builder.add_slice(track, 0, 5, "n" * length, "c" * length)
    trace = builder.build()
    s = trace.slice(0)
    assert len(s.name) == len(s.category) == min(length, 65_536)
    assert trace.diagnostics.count("model.name_cut") == (2 if length > 65_536 else 0)



def test_an_op_named_past_the_bound_is_cut_as_its_slices_are():
    """(fuzz: a paddle-pb op of a 400 KB name) the op keeps the name of its slices."""
    from traceconv.model.graph import OP

    long = "conv2d/" + "x" * 70_000
    builder = TraceBuilder()
    track = builder.add_track("t", process=builder.add_process("p"))
    builder.add_slice(track, 0, 5, long)
    builder.graph.add_node("op/1", kind=OP, name=long, type=long, slices=[0])
    trace = builder.build()
    assert traceconv.validate(trace) == []
    assert trace.graph.nodes["op/1"]["name"] == trace.slice(0).name == long[:65_536]

@pytest.mark.parametrize("ratio", [-5.0, 0.0, 42.5, 100.0, 100.01, 250.0, float("inf"),
                                   float("nan")])
def test_shares_stay_within_0_and_100(ratio):
    builder = TraceBuilder()
    builder.add_stat(OpStat("conv", calls=1, total_ns=5, ratio=ratio))
    trace = builder.build()
    got = trace.stats[0].ratio
    inside = 0 <= ratio <= 100
    assert got == (ratio if inside else None if ratio != ratio else min(max(ratio, 0), 100))
    assert trace.diagnostics.count("model.share_beyond_range") == (not inside)


def test_memory_freed_before_allocation_is_the_same_rule():
    builder = TraceBuilder()
    builder.add_memory_block(MemoryBlock(0, 64, alloc_ns=10, free_ns=4))
    builder.add_memory_block(MemoryBlock(64, -8, alloc_ns=1, free_ns=2))
    trace = builder.build()
    assert (trace.memory[0].alloc_ns, trace.memory[0].free_ns) == (10, 10)
    assert trace.memory[1].size == 0
    assert trace.diagnostics.count("model.end_before_start") == 1
    assert trace.diagnostics.count("model.negative_length") == 1


def test_owner_links_to_nodes_the_graph_lacks_are_left_out_and_counted():
    """Four blocks by hand: one whose links name real nodes, one naming an op of another
    name, one naming a tensor as its op, one naming nodes of no graph; 3 lose a link."""
    from traceconv.model.graph import add_op, add_tensor

    builder = TraceBuilder()
    conv = add_op(builder.graph, 1, "conv")
    x = add_tensor(builder.graph, 1, "x")
    kept = MemoryBlock(0, 8, owner_op=conv, owner_name="conv", owner_tensor=x)
    renamed = MemoryBlock(8, 8, owner_op=conv, owner_name="gemm")
    swapped = MemoryBlock(16, 8, owner_op=x, owner_tensor=conv)
    absent = MemoryBlock(24, 8, owner_op="op/9", owner_name="relu", owner_tensor="tensor/9")
    for block in (kept, renamed, swapped, absent):
        builder.add_memory_block(block)
    trace = builder.build()
    links = [(b.owner_op, b.owner_tensor, b.owner_name) for b in trace.memory]
    assert links == [(conv, x, "conv"), (None, None, "gemm"), (None, None, None),
                     (None, None, "relu")]
    assert trace.diagnostics.count("model.unknown_owner") == 3
    assert validate(trace) == []


def test_a_plain_trace_is_built_when_a_reader_hands_one_over():
    trace = Trace()
    track = trace.add_track("t", process=trace.add_process("p"))
    trace.add_slice(track, 9, -4, "backwards")
    built = build(trace, source_format="x")
    assert built.frozen and built.slice(0).dur == 0
    assert built.metadata.source_format == "x"
    assert built is trace and build(built) is built


# -- every reader through the builder: ends before starts, times at the int64 edges ------

def _chrome(tmp_path: Path, events: list[dict]) -> Path:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return path


@pytest.mark.parametrize("dur", [-1, -1000, -10**9, -2.5])
def test_chrome_end_before_start_is_zero_long_and_counted(tmp_path, dur):
    events = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 100, "dur": dur},
              {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 200, "dur": 5}]
    trace = traceconv.load(_chrome(tmp_path, events))
    assert [(s.name, s.dur) for s in trace.iter_slices()] == [("a", 0), ("b", 5000)]
    assert trace.diagnostics.count("model.end_before_start") == 1


def _trtexec_times(tmp_path: Path, rows: list[tuple[float, float]]) -> Path:
    path = tmp_path / "model.engine.timing.json"
    path.write_text(json.dumps([{"startEnqMs": s, "endEnqMs": e, "startComputeMs": s,
                                 "endComputeMs": e, "latencyMs": e - s} for s, e in rows]))
    return path


@pytest.mark.parametrize("rows", [[(1.0, 0.5)], [(2.0, 3.0), (5.0, 4.0), (7.0, 6.0)],
                                  [(0.0, 0.0), (1e-3, 0.0)]])
def test_trtexec_end_before_start_is_counted(tmp_path, rows):
    trace = traceconv.load(_trtexec_times(tmp_path, rows))
    backwards = sum(e < s for s, e in rows)
    assert trace.diagnostics.count("model.end_before_start") == 2 * backwards  # enqueue, compute
    assert all(s.dur >= 0 for s in trace.iter_slices())


def _field(number: int, value: int | bytes) -> bytes:
    if isinstance(value, bytes):
        return _varint(number << 3 | 2) + _varint(len(value)) + value
    return _varint(number << 3) + _varint(value)


def _xspace(timestamp_ns: int, offset_ps: int, duration_ps: int) -> bytes:
    """One host plane, one line, one event (XSpace/XPlane/XLine/XEvent field numbers)."""
    event = _field(1, 1) + _field(2, offset_ps) + _field(3, duration_ps)
    line = _field(1, 1) + _field(2, b"python") + _field(3, timestamp_ns) + _field(4, event)
    metadata = _field(1, 1) + _field(2, b"op")
    plane = (_field(1, 1) + _field(2, b"/host:CPU") + _field(3, line)
             + _field(4, _field(1, 1) + _field(2, metadata)))
    return _field(1, plane)


@pytest.mark.parametrize(("timestamp_ns", "offset_ps", "duration_ps"), [
    (0, 0, INT64_MAX), (INT64_MAX, 0, 0), (INT64_MAX, INT64_MAX, INT64_MAX),
    (INT64_MIN, 0, 5), (0, INT64_MIN, 0), (10**18, 10**18, 10**18), (5, 1000, 2000)])
def test_xplane_times_at_int64_edges_are_moved_and_counted(tmp_path, timestamp_ns, offset_ps,
                                                           duration_ps):
    path = tmp_path / "edge.xplane.pb"
    path.write_bytes(_xspace(timestamp_ns, offset_ps, duration_ps))
    trace = traceconv.load(path)
    start_ps = timestamp_ns * 1000 + offset_ps
    start, end = start_ps // 1000, (start_ps + duration_ps) // 1000
    expected = (_inside(start), _inside(end))
    assert [(s.start, s.end) for s in trace.iter_slices()] == [expected]
    moved = (start != _inside(start)) + (end != _inside(end))
    assert trace.diagnostics.count("model.time_beyond_range") == moved


# -- frozen all the way down -----------------------------------------------------------

def test_a_loaded_trace_refuses_every_change_and_stays_the_same():
    trace = traceconv.load(KINETO)
    before = _fingerprint(trace)
    row = next(i for i, a in enumerate(trace.slices.args)
               if a and any(isinstance(v, list) for v in a.values()))
    listed = next(k for k, v in trace.slices.args[row].items() if isinstance(v, list))
    nested = next(k for k, v in trace.metadata.attributes.items() if isinstance(v, list | dict))
    changes = [
        lambda: setattr(trace.tracks[0], "name", "renamed"),            # a record
        lambda: trace.processes[0].labels.append("x"),                 # a record's list
        lambda: trace.memory[0].args.update(x=1),                      # a block's dict
        lambda: setattr(trace.memory[0], "size", 1),
        lambda: trace.slices.args[row][listed].append(0),              # an argument value
        lambda: _change_nested(trace.metadata.attributes[nested]),     # metadata, nested
        lambda: trace.strings.ids.__setitem__("new", 1),               # the string table
        lambda: trace.strings.strings.append("new"),
        lambda: trace.slices.start.append(0),                          # a column
        lambda: setattr(trace.slices, "start", trace.slices.start[:1]),
        lambda: trace.diagnostics.add("model.unknown_track"),              # the diagnostics
        lambda: trace.add_slice(0, 0, 1, "x"),
        lambda: setattr(trace.metadata, "rank", 3),
    ]
    for change in changes:
        with pytest.raises(FrozenTraceError):
            change()
    with pytest.raises(ValueError, match="read-only"):   # numpy's own word for it
        trace.slices.numpy("start")[0] = 0
    assert _fingerprint(trace) == before


@pytest.mark.parametrize("through", ["json", "pftrace"])
@pytest.mark.parametrize("path", ["row", "iteration", "values", "held", "get_many", "copy"])
def test_argument_values_are_read_only_whichever_way_they_are_reached(tmp_path, through, path):
    # the column freezes its lists lazily (a reader never asked for its args pays
    # nothing): each way of reaching a value, taken first on a fresh trace, must hand out
    # a read-only value or a copy, and a copy of the column shares no list with the trace
    if through == "pftrace":
        traceconv.load(KINETO).save(tmp_path / "k.pftrace")
    trace = traceconv.load(KINETO if through == "json" else tmp_path / "k.pftrace")
    column = trace.slices.args
    reference = traceconv.load(KINETO if through == "json" else tmp_path / "k.pftrace")
    rows = [i for i, a in enumerate(reference.slices.args)
            if a and any(isinstance(v, list) for v in a.values())]
    key = next(k for k, v in reference.slices.args[rows[0]].items() if isinstance(v, list))
    if path == "row":
        reached = [column[rows[0]][key]]
    elif path == "iteration":
        reached = [a[key] for a in column if a and isinstance(a.get(key), list)]
    elif path == "values":
        reached = [v for v in column.values if isinstance(v, list)]
    elif path == "held":
        reached = [v for v in column.held()[2] if isinstance(v, list)]
    elif path == "get_many":
        reached = column.get_many(np.array(rows), key)
    else:
        copied = column.copy()
        for value in (v for v in copied.values if isinstance(v, list)):
            with contextlib.suppress(FrozenTraceError):
                value.append("changed")
        reached = []
    assert path == "copy" or reached
    for value in reached:   # read-only, or a copy (rows kept as JSON text decode anew)
        with contextlib.suppress(FrozenTraceError):
            value.append("changed")
    assert list(column) == list(reference.slices.args)
    if through == "pftrace" and path != "copy":   # values held decoded: read-only
        with pytest.raises(FrozenTraceError):
            reached[0].append("changed")


def _change_nested(value):
    if isinstance(value, dict):
        value["x"] = 1
    else:
        inner = next((v for v in value if isinstance(v, dict | list)), None)
        if inner is None:
            value.append(1)
        else:
            _change_nested(inner)


def test_the_op_graph_refuses_attribute_changes():
    trace = traceconv.load(MEGENGINE)
    graph = trace.graph
    node, data = next(iter(graph.nodes(data=True)))
    edge = next(iter(graph.edges))
    before = _fingerprint(trace)
    list_key = next((k for k, v in data.items() if isinstance(v, list)), None)
    changes = [lambda: graph.nodes[node].update(name="x"),
               lambda: graph.edges[edge].update(weight=1),
               lambda: graph.graph.update(x=1),
               lambda: graph.add_node("new")]
    if list_key:
        changes.append(lambda: graph.nodes[node][list_key].append(0))
    for change in changes:
        with pytest.raises(FrozenTraceError):
            change()
    assert _fingerprint(trace) == before


def _fingerprint(trace: Trace) -> tuple:
    return (trace.counts(), list(trace.iter_slices()), [repr(t) for t in trace.tracks],
            [repr(p) for p in trace.processes], [repr(b) for b in trace.memory],
            sorted((n, repr(sorted(d.items()))) for n, d in trace.graph.nodes(data=True)),
            trace.diagnostics.as_list(), repr(trace.metadata.attributes),
            list(trace.strings.strings))


def test_copies_of_frozen_records_change_on_their_own():
    import copy
    from dataclasses import replace

    trace = traceconv.load(KINETO)
    track = trace.tracks[0]
    for copied in (replace(track, name="other"), copy.copy(track), copy.deepcopy(track)):
        copied.name = "mine"
        assert copied.name == "mine" and track.name != "mine"
    assert copy.copy(track) == track


@pytest.mark.parametrize("analysis", ["op_summary", "critical_path", "advise", "trim"])
def test_analyses_never_edit_their_input(analysis):
    from traceconv import analysis as a

    trace = traceconv.load(KINETO)
    before = _fingerprint(trace)
    if analysis == "trim":
        from traceconv.analysis.trim import trim

        first, last = trace.time_range
        trim(trace, window=(first, (first + last) // 2))
    else:
        getattr(a, analysis)(trace)
    assert _fingerprint(trace) == before


# -- save checks a trace made by hand --------------------------------------------------

@pytest.mark.parametrize(("spoil", "named"), [
    (lambda t: t.slices.append(5, 0, 1, 0, 0), "track"),
    (lambda t: t.instants.append(-1, 0, 0, 0), "track"),
    (lambda t: t.add_flow(0, 9), "flow"),
    (lambda t: t.slices.append(0, 0, 1, 999, 0), "string"),
    (lambda t: t.slices.append(0, 0, -5, 0, 0), "duration"),
    (lambda t: t.tracks.append(type(t.tracks[0])(7, "x", 0)), "ids"),
])
def test_save_refuses_a_trace_made_invalid_by_hand(tmp_path, spoil, named):
    trace = Trace()
    track = trace.add_track("t", process=trace.add_process("p"))
    trace.add_slice(track, 0, 5, "ok")
    spoil(trace)
    out = tmp_path / "out.json"
    with pytest.raises(TraceconvError, match=rf"not valid: {named}:") as caught:
        traceconv.save(trace, out)
    assert "\n" not in str(caught.value) and not out.exists()


def test_the_command_line_reads_a_file_through_the_builder(tmp_path):
    path = tmp_path / "t.json.gz"
    events = [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 100, "dur": -3}]
    path.write_bytes(gzip.compress(json.dumps({"traceEvents": events}).encode()))
    done = subprocess.run([sys.executable, "-m", "traceconv", "info", str(path), "--json"],
                          capture_output=True, text=True, check=True)
    codes = {d["code"]: d["count"] for d in json.loads(done.stdout)["diagnostics"]}
    assert codes == {"model.end_before_start": 1}


@pytest.mark.parametrize("shares", [[50.0, 50.0], [120.0], [-3.0, 40.0], [100.0, 250.5, 1e300]])
def test_trtexec_profile_shares_past_100_percent_are_counted(tmp_path, shares):
    path = tmp_path / "m.engine.profile.json"
    rows = [{"name": f"layer{i}", "timeMs": 1.0, "averageMs": 1.0, "medianMs": 1.0,
             "percentage": share} for i, share in enumerate(shares)]
    path.write_text(json.dumps([{"count": 1}, *rows]))
    trace = traceconv.load(path)
    outside = sum(not 0 <= share <= 100 for share in shares)
    assert trace.diagnostics.count("model.share_beyond_range") == outside
    assert [s.ratio for s in trace.stats] == [min(max(share, 0.0), 100.0) for share in shares]


def test_op_parent_cycles_are_cut_for_every_reader():
    """Op parents that go round (from any reader, or a graph a .pftrace carries) are cut at
    each cycle's first op, counted; the links off the cycles are kept as given."""
    from traceconv.model.graph import add_op

    builder = TraceBuilder()
    add_op(builder.graph, 1, "outer", parent="op/2")         # 1 -> 2 -> 1
    add_op(builder.graph, 2, "inner", parent="op/1")
    add_op(builder.graph, 3, "self", parent="op/3")          # 3 -> 3
    add_op(builder.graph, 4, "leaf", parent="op/2")          # into the cycle, not on it
    add_op(builder.graph, 5, "root")
    trace = builder.build()
    parents = {node: data.get("parent") for node, data in trace.graph.nodes(data=True)}
    assert parents == {"op/1": None, "op/2": "op/1", "op/3": None, "op/4": "op/2",
                       "op/5": None}
    assert trace.diagnostics.count("model.parent_cycle") == 2
