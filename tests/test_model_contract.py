"""The model's contract: frozen traces from every reader, transformations that build new
traces, and one validator that holds all of them to the model's invariants.

The readers and transformations come from their tables (the format registry,
:data:`traceconv.analysis.transformations.TRANSFORMATIONS`), not from lists kept here: a new
format or transformation is covered without anyone remembering to add it.
"""

from __future__ import annotations

import copy
import functools
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest

import traceconv
from traceconv import registry
from traceconv.analysis.merge import merge
from traceconv.analysis.transformations import TRANSFORMATIONS
from traceconv.errors import TraceconvError
from traceconv.io import Source
from traceconv.model import DeviceInfo, MemoryBlock, OpStat, Trace, add_op, add_tensor
from traceconv.model.copying import copy_into
from traceconv.model.diagnostics import Diagnostic
from traceconv.model.frozen import FrozenTraceError
from traceconv.model.validate import INVARIANTS, validate
from traceconv.numbers import INT64_MAX

ROOT = Path(__file__).resolve().parents[1]
MEGENGINE = ROOT / "samples/megengine/convnet_lar_embed_profile.json"
SNAPSHOT = ROOT / "samples/torch/resnet18_train_snapshot.pickle.gz"
KINETO = ROOT / "samples/torch/resnet18_train_cuda.pt.trace.json.gz"
ET = ROOT / "samples/torch/resnet18_train_et.json.gz"
RANKS = sorted(ROOT.glob("samples/torch/ddp_gloo_rank?.pt.trace.json.gz"))


def _bundled() -> list[Path]:
    """Every bundled input file (hostile inputs apart: they have their own tests)."""
    files = [*ROOT.glob("samples/**/*"), *ROOT.glob("tests/data/**/*")]
    return sorted(p for p in files if p.is_file() and "hostile" not in p.parts
                  and p.suffix not in (".md", ".png", ".py"))


@functools.cache
def _detected() -> dict[Path, str]:
    """Each bundled file that a registered reader claims, with that format's name."""
    found = {}
    for path in _bundled():
        try:
            info = registry.detect(Source(str(path)))
        except TraceconvError:
            continue
        if info.reads:
            found[path] = info.name
    return found


@functools.cache
def _load(path: Path) -> Trace | None:
    try:
        return traceconv.load(path)
    except TraceconvError:   # a refusal is a valid answer; the model is not involved
        return None


@pytest.mark.slow
def test_every_reader_has_a_bundled_sample_it_reads() -> None:
    readers = {f.name for f in registry.all_formats() if f.reads and f.origin == "built-in"}
    read = {name for path, name in _detected().items() if _load(path) is not None}
    assert readers - read == set()


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(_detected()), ids=lambda p: str(p.relative_to(ROOT)))
def test_reader_output_is_frozen_and_valid(path: Path) -> None:
    trace = _load(path)
    if trace is None:
        return
    assert trace.frozen
    assert validate(trace) == []


# -- transformations -------------------------------------------------------------------

def _inputs(needed: int) -> list[list[Trace]]:
    """Input sets for a transformation: two ranks, two MegEngine profiles with an op graph,
    a timeline with its execution trace, allocator snapshots."""
    ranks = [traceconv.load(p) for p in RANKS[:2]]
    megengine = [_load(MEGENGINE), _load(MEGENGINE)]
    linked = [_load(KINETO), _load(ET)]
    snapshots = [_load(SNAPSHOT), _load(SNAPSHOT)]
    sets = [ranks, megengine, linked, snapshots]
    return [[t for t in s if t is not None][:max(needed, 1) if needed > 1 else 1]
            for s in sets]


def _fingerprint(trace: Trace) -> tuple:
    """Everything a transformation could change in its input, by value."""
    return (trace.counts(), [s for s in trace.iter_slices()], list(trace.iter_flows()),
            [copy.deepcopy(b) for b in trace.memory], list(trace.reservations),
            sorted((n, repr(sorted(d.items()))) for n, d in trace.graph.nodes(data=True)),
            trace.diagnostics.as_list(), dict(trace.metadata.attributes))


@pytest.mark.slow
@pytest.mark.parametrize("transformation", TRANSFORMATIONS, ids=lambda t: t.name)
def test_transformation_output_is_valid_and_inputs_unchanged(transformation) -> None:
    for inputs in _inputs(transformation.inputs):
        before = [_fingerprint(t) for t in inputs]
        result = transformation.apply(inputs)
        assert result.frozen
        assert validate(result) == [], transformation.name
        assert [_fingerprint(t) for t in inputs] == before
        assert all(result is not t for t in inputs)


# -- the reproductions of the issue ---------------------------------------------------

def _same_named_copies(tmp_path: Path, source: Path) -> list[Path]:
    copies = []
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        copies.append(Path(shutil.copy(source, tmp_path / folder / source.name)))
    return copies


def test_merge_keeps_each_inputs_op_graph_and_owners(tmp_path: Path) -> None:
    """Two MegEngine profiles with the same file name: every op, every block owner and every
    op's slice rows survive the merge (before: 41 of 82 ops, 0 of the owners resolved)."""
    one = traceconv.load(MEGENGINE)
    merged = merge([traceconv.load(p) for p in _same_named_copies(tmp_path, MEGENGINE)])
    assert merged.op_count == 2 * one.op_count
    assert merged.tensor_count == 2 * one.tensor_count
    owned = [b for b in merged.memory if b.owner_op is not None]
    assert len(owned) == 2 * sum(b.owner_op is not None for b in one.memory) > 0
    assert all(merged.graph.nodes[b.owner_op]["name"] == b.owner_name for b in owned)
    names = merged.strings.strings
    for _, data in merged.graph.nodes(data=True):
        rows = data.get("slices") or []
        assert not rows or data["name"] in {names[merged.slices.name[r]] for r in rows}
    assert validate(merged) == []


@pytest.mark.slow
def test_merge_keeps_allocator_segments() -> None:
    one = traceconv.load(SNAPSHOT)
    assert one.reservations   # the segments of the snapshot
    merged = merge([one, traceconv.load(SNAPSHOT)])
    assert len(merged.reservations) == 2 * len(one.reservations)


def test_a_shift_past_int64_stops_at_its_end_and_is_counted() -> None:
    source = Trace()
    th = source.add_track("main", process=source.add_process("p"))
    source.add_slice(th, INT64_MAX - 10, 5, "late")
    source.add_instant(th, 0, "early")
    out = Trace()
    moved = copy_into(out, source, shift_ns=100)
    assert out.slice(0).start == INT64_MAX and out.instant(0).ts == 100
    assert moved.times_clamped == 1 == out.diagnostics.count("model.shift_clamped")


def test_combine_shares_nothing_that_can_change() -> None:
    timeline, et = traceconv.load(KINETO), traceconv.load(ET)
    combined = traceconv.combine([timeline, et])
    with pytest.raises(FrozenTraceError):
        combined.add_slice(0, 0, 1, "new")
    with pytest.raises(FrozenTraceError):
        combined.graph.add_node("x")
    editable = combined.copy()
    editable.add_slice(0, 0, 1, "a name the timeline never had")
    editable.memory.append(MemoryBlock(0, 1))
    for _, data in list(editable.graph.nodes(data=True))[:50]:
        data["touched"] = True
    assert sum(1 for _ in timeline.iter_slices()) == len(timeline.slices)
    assert not any("touched" in d for _, d in et.graph.nodes(data=True))
    assert not any("touched" in d for _, d in combined.graph.nodes(data=True))


def test_reading_the_graph_of_a_frozen_trace_changes_nothing() -> None:
    trace = traceconv.load(RANKS[0])
    assert trace.graph.number_of_nodes() == 0
    assert trace._graph is None


@pytest.mark.parametrize("change", [
    lambda t: t.add_slice(0, 0, 1, "x"),
    lambda t: t.slices.start.append(1),
    lambda t: t.slices.dur.__setitem__(0, 5),
    lambda t: t.slices.args.set(0, {"a": 1}),
    lambda t: t.slices.args.values.append(1),
    lambda t: t.slices.args.key_sets.append(("a",)),
    lambda t: t.strings.intern("a new string"),
    lambda t: t.tracks.append(t.tracks[0]),
    lambda t: t.memory.append(MemoryBlock(0, 1)),
    lambda t: t.memory.coded("device")[0].append("x"),
    lambda t: t.stats.append(OpStat("x")),
    lambda t: t.metadata.attributes.update(x=1),
    lambda t: t.diagnostics.add("merge.clocks"),
    lambda t: setattr(t, "processes", []),
    lambda t: setattr(t.metadata, "rank", 3),
])
@pytest.mark.parametrize("how", ["loaded", "pickled"])
def test_a_frozen_trace_refuses_every_change(change, how: str) -> None:
    trace = traceconv.load(RANKS[0])
    if how == "pickled":   # (batch workers and pools hand traces over by pickle)
        trace = pickle.loads(pickle.dumps(trace))
    before = _fingerprint(trace)
    with pytest.raises(FrozenTraceError):
        change(trace)
    assert _fingerprint(trace) == before


def _writable_view(view: np.ndarray) -> np.ndarray:
    view.setflags(write=True)
    return view


# Routes to a column's memory: each would write row 0 if the memory let it.
MEMORY_ROUTES = {
    "numpy_setflags": lambda table, name: _writable_view(table.numpy(name)),
    "numpy_view_setflags": lambda table, name: _writable_view(table.numpy_view(name)),
    "memoryview": lambda table, name: memoryview(getattr(table, name)),
    "frombuffer": lambda table, name: np.frombuffer(getattr(table, name), np.uint8),
    "asarray": lambda table, name: np.asarray(getattr(table, name)),
    "asarray_setflags": lambda table, name: _writable_view(np.asarray(getattr(table, name))),
}


def _frozen_columns(trace: Trace) -> list[tuple[object, str]]:
    """(table, column) for every non-empty column of every event table."""
    tables = (trace.slices, trace.instants, trace.counters, trace.flows)
    return [(table, name) for table in tables for name, _ in table._columns
            if len(getattr(table, name))]


@pytest.mark.parametrize("route", MEMORY_ROUTES)
@pytest.mark.parametrize("how", ["loaded", "pickled"])
def test_a_frozen_trace_hands_out_no_writable_memory(route: str, how: str) -> None:
    """The columns' memory refuses writes by every public route: numpy views cannot be
    made writeable, and no writable buffer is exported (found by a hostile round)."""
    trace = traceconv.load(MEGENGINE)
    if how == "pickled":
        trace = pickle.loads(pickle.dumps(trace))
    before = _fingerprint(trace)
    columns = _frozen_columns(trace)
    assert len(columns) >= 10   # (slices, counters, flows: the sample has all three)
    for table, name in columns:
        with pytest.raises((TypeError, ValueError)):
            MEMORY_ROUTES[route](table, name)[0] = 1
    assert _fingerprint(trace) == before


@pytest.mark.parametrize("route", [
    lambda t: _writable_view(t.memory.numbers("size")),
    lambda t: _writable_view(t.memory.coded("device")[1]),
    lambda t: _writable_view(t.slices.args.held()[0]),
    lambda t: _writable_view(t.slices.args.held()[1]),
    lambda t: memoryview(t.slices.args.key_set),
    lambda t: _writable_view(np.asarray(t.slices.args.start)),
], ids=["memory_numbers", "memory_codes", "args_key_set", "args_start",
        "key_set_memoryview", "start_asarray"])
@pytest.mark.parametrize("how", ["loaded", "pickled"])
def test_a_frozen_traces_blocks_and_args_hand_out_no_writable_memory(route, how) -> None:
    trace = traceconv.load(MEGENGINE)
    if how == "pickled":
        trace = pickle.loads(pickle.dumps(trace))
    before = _fingerprint(trace)
    assert len(trace.memory) and len(trace.slices.args)
    with pytest.raises((TypeError, ValueError)):
        route(trace)[0] = 1
    assert _fingerprint(trace) == before


def test_an_editable_copy_of_a_frozen_column_writes_through() -> None:
    """The routes above are real: on an editable copy the same writes go through."""
    trace = traceconv.load(MEGENGINE).copy()
    memoryview(trace.slices.dur)[0] = 123
    _writable_view(trace.slices.numpy_view("start"))[0] = 456
    assert (trace.slice(0).dur, trace.slice(0).start) == (123, 456)


def test_a_frozen_trace_pickles_and_copies_to_an_editable_one() -> None:
    trace = traceconv.load(RANKS[0])
    again = pickle.loads(pickle.dumps(trace.copy()))
    again.add_slice(0, 0, 1, "x")
    assert len(again.slices) == len(trace.slices) + 1


def test_a_frozen_trace_with_an_op_graph_pickles_and_stays_frozen() -> None:
    """Batch workers and multiprocessing pools pickle loaded traces (MIGraphX: a graph)."""
    trace = traceconv.load(ROOT / "samples/migraphx/perf_simple_graph_rocm4.txt")
    again = pickle.loads(pickle.dumps(trace))
    assert sorted(again.graph.edges) == sorted(trace.graph.edges) != []
    assert traceconv.validate(again) == []
    with pytest.raises(FrozenTraceError):
        again.graph.add_node("x")


MIGRAPHX = ROOT / "samples/migraphx/perf_simple_graph_rocm4.txt"   # (a lazy op graph)


def _everything(trace: Trace) -> str:
    """The whole content of ``trace``, by value, as text (NaN equals NaN): what a fresh load
    of its file must still equal."""
    meta = trace.metadata
    tables = {name: {column: getattr(table, column).tolist() for column, _ in table._columns}
              for name in ("slices", "instants", "counters", "flows")
              for table in [getattr(trace, name)]}
    graph = trace.graph
    return repr({
        "metadata": [getattr(meta, name) for name in (
            "source_format", "source_version", "source_file", "framework", "rank",
            "world_size", "devices", "run", "clock_base_ns", "clock", "attributes")],
        "diagnostics": trace.diagnostics.as_list(), "strings": trace.strings.strings,
        "records": [trace.processes, trace.tracks, trace.stats], "tables": tables,
        "args": [list(trace.slices.args), list(trace.instants.args)],
        "memory": [list(trace.memory), list(trace.reservations)],
        "graph": [graph.graph, list(graph.nodes(data=True)), list(graph.edges(data=True))]})


def _graph_method_back(trace: Trace) -> None:
    import networkx as nx
    graph = trace.graph
    graph.add_node = nx.DiGraph.add_node.__get__(graph)   # (networkx.freeze's own hole)
    graph.add_node("new op")


def _graph_refusal_deleted(trace: Trace) -> None:
    graph = trace.graph
    del graph.add_node   # (networkx.freeze's refusals are attributes of the graph)
    graph.add_node("new op")


def _record_state(trace: Trace) -> None:
    state = trace.tracks[0].__getstate__()
    trace.tracks[0].__setstate__([state[0], "renamed", *state[2:]])


# Routes that changed a loaded trace before (a hostile round found them; each its own
# way past the refusals the routes above meet): sample, route, the error it must raise.
ROUTES_ONCE_OPEN = {
    "args_key_sets_replaced": (MEGENGINE, lambda t: setattr(
        t.slices.args, "key_sets", [("x",) * len(k) for k in t.slices.args.key_sets])),
    "args_column_init_again": (MEGENGINE, lambda t: t.slices.args.__init__()),
    "string_table_init_again": (MEGENGINE, lambda t: t.strings.__init__()),
    "diagnostics_init_again": (MEGENGINE, lambda t: t.diagnostics.__init__()),
    "memory_table_init_again": (MEGENGINE, lambda t: t.memory.__init__()),
    "column_init_again": (MEGENGINE, lambda t: t.slices.start.__init__(
        "q", [0] * len(t.slices))),
    "frozen_list_init_again": (MEGENGINE, lambda t: t.tracks.__init__([])),
    "frozen_dict_init_again": (MEGENGINE, lambda t: t.metadata.attributes.__init__(x=1)),
    "device_init_again": (KINETO, lambda t: t.metadata.devices[0].__init__(name="other")),
    "stated_run_init_again": (KINETO, lambda t: t.metadata.run.__init__(walltime_ns=1)),
    "record_state_set": (MEGENGINE, _record_state),
    "trace_state_set": (MEGENGINE, lambda t: t.__setstate__(dict(vars(t), tracks=[]))),
    "graph_attributes_replaced": (MEGENGINE, lambda t: setattr(t.graph, "graph", {"x": 1})),
    "graph_flag_cleared": (MEGENGINE, lambda t: setattr(t.graph, "frozen", False)),
    "graph_refusal_deleted": (MEGENGINE, _graph_refusal_deleted),
    "graph_method_set_back": (MEGENGINE, _graph_method_back),
    "graph_init_again": (MEGENGINE, lambda t: t.graph.__init__()),
    "lazy_graph_init_again": (MIGRAPHX, lambda t: t._graph.__init__()),
    "graphless_graph_attributes": (SNAPSHOT, lambda t: t.graph.graph.__setitem__("x", 1)),
    "memory_known_view": (MEGENGINE, lambda t: t.memory.known("alloc_ns").__setitem__(
        0, False)),
}


@pytest.mark.parametrize("route", ROUTES_ONCE_OPEN)
def test_no_route_changes_a_loaded_trace(route: str) -> None:
    """Each route raises (a numpy view: its read-only ValueError), and the trace still
    equals a fresh load of its file, graph filled or not."""
    sample, change = ROUTES_ONCE_OPEN[route]
    trace = traceconv.load(sample)
    with pytest.raises((FrozenTraceError, ValueError)):
        change(trace)
    assert _everything(trace) == _everything(traceconv.load(sample))


# -- one planted break per invariant ------------------------------------------------

def _valid() -> Trace:
    """A small valid trace with every kind of thing the invariants speak of."""
    t = Trace()
    p = t.add_process("python")
    th = t.add_track("main", process=p)
    t.add_track("main (overlap lane 1)", process=p, parent=th)
    a = t.add_slice(th, 0, 10, "conv")
    b = t.add_slice(th, 20, 5, "relu")
    t.add_instant(th, 3, "mark")
    t.add_counter(t.add_track("bytes", process=p), 0, 1.0)
    t.add_flow(a, b)
    op = add_op(t.graph, 1, "conv", "Convolution", slices=[a])
    add_op(t.graph, 2, "relu", "Relu", slices=[b], parent=op)
    x = add_tensor(t.graph, 9, "x", owner=op)
    t.graph.add_edge(op, x)
    t.graph.graph["execution_order"] = [op]
    t.add_memory_block(MemoryBlock(0, 64, 0, 10, owner_op=op, owner_name="conv",
                                   owner_tensor=x))
    t.add_stat(OpStat("conv"))
    t.add_stat(OpStat("conv.inner", parent=0))
    t.metadata.devices = [DeviceInfo(0, "A100", memory_bytes=80 << 30, compute_major=8,
                                     compute_minor=0)]
    return t


PLANTED = {
    "ids": lambda t: setattr(t.tracks[1], "parent", 7),
    "track": lambda t: t.slices.track.__setitem__(0, 9),
    "string": lambda t: t.instants.name.__setitem__(0, 999),
    "duration": lambda t: t.slices.dur.__setitem__(0, -1),
    "slice_end": lambda t: (t.slices.start.__setitem__(0, INT64_MAX - 2)),
    "flow": lambda t: t.flows.target.__setitem__(0, 5),
    "graph_kind": lambda t: t.graph.add_node("mystery"),
    "graph_edge": lambda t: t.graph.add_edge("op/1", "op/2"),
    "op_slices": lambda t: t.graph.nodes["op/1"].update(slices=[1]),
    "graph_ref": lambda t: t.graph.nodes["tensor/9"].update(owner="op/77"),
    "owner": lambda t: setattr(t.memory[0], "owner_op", "op/2"),
    "memory": lambda t: setattr(t.memory[0], "free_ns", -5),
    "device": lambda t: t.metadata.devices.__setitem__(0, DeviceInfo(0, "A100", 2**64)),
    "stat_parent": lambda t: setattr(t.stats[0], "parent", 1),
    "activity": lambda t: t.slices.activity.__setitem__(0, -1),
    # (add refuses an unregistered code: planted behind its back)
    "diagnostic": lambda t: t.diagnostics._items.__setitem__(   # type: ignore[attr-defined]
        "made.up_code", Diagnostic("made.up_code", "note", "info", "not registered", 1)),
}


def test_the_planted_breaks_cover_every_invariant() -> None:
    assert set(PLANTED) == set(INVARIANTS)


def test_the_valid_trace_is_valid() -> None:
    assert validate(_valid()) == []


@pytest.mark.parametrize("invariant", sorted(PLANTED))
def test_validate_finds_a_planted_break(invariant: str) -> None:
    trace = _valid()
    PLANTED[invariant](trace)
    assert [p.invariant for p in validate(trace)] == [invariant]


def test_check_model_on_the_command_line(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from traceconv.cli import app

    good = CliRunner().invoke(app, ["check", "--model", str(MEGENGINE)])
    assert good.exit_code == 0, good.output
    assert "model OK" in good.output
    as_json = CliRunner().invoke(app, ["check", "--model", str(MEGENGINE), "--json"])
    assert '"problems": []' in as_json.output.replace("\n", "").replace("  ", "")


def test_validate_is_exported() -> None:
    assert traceconv.validate is validate
    assert "validate" in traceconv.__all__
