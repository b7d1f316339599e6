"""The ``traceconv.model`` attribute of a ``.pftrace`` is input: whatever a file says in it,
the read is correct (the attribute holds together) or the attribute is ignored with the
note ``perfetto.model_attribute_unreadable`` and the file read as any Perfetto trace;
never an exception, never memory in proportion to a number the attribute gives.

The files are real traceconv output with the attribute edited: each of its values replaced
by wrong types, huge or negative numbers, lists of the wrong length (hypothesis, fixed seed).
"""

from __future__ import annotations

import io
import json
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace as PbTrace
from traced_peak import traced_peak

import traceconv
from traceconv.formats.perfetto import writer
from traceconv.formats.perfetto.model_attribute import ATTRIBUTE
from traceconv.formats.perfetto.reader import PftraceReader
from traceconv.model import MemoryBlock, ProcessKind, Trace, TrackKind
from traceconv.model.builder import build

NOTE = "perfetto.model_attribute_unreadable"


def rich_trace() -> Trace:
    """A trace that fills every part of the attribute: host and device processes, tracks
    of several kinds with a parent, labelled flows, dotted args, diagnostics, memory
    blocks and reservations, metadata with devices and attributes."""
    trace = Trace()
    host = trace.add_process("python", pid=7, sort_index=1, labels=["main"])
    device = trace.add_process("GPU 0", kind=ProcessKind.DEVICE)
    main = trace.add_track("main", process=host, tid=7, sort_index=2)
    stream = trace.add_track("stream 7", process=device, kind=TrackKind.STREAM,
                             description="compute", parent=None)
    counter = trace.add_track("bytes", process=device, kind=TrackKind.COUNTER, unit="bytes",
                              parent=stream)
    launches = [trace.add_slice(main, 10 * k, 5, "launch", args={"est. a": k, "grid": [1, k]})
                for k in range(3)]
    kernels = [trace.add_slice(stream, 10 * k + 3, 4, "kernel", "cat") for k in range(3)]
    for launch, kernel in zip(launches, kernels, strict=True):
        trace.add_flow(launch, kernel, "ac2g", "")
    trace.add_flow(kernels[0], kernels[1], "fwdbwd", "fwdbwd")
    trace.add_counter(counter, 3, 128.0)
    trace.add_memory_blocks([MemoryBlock(64, 128, 1, 9, device="cuda:0", shape=(2, 3),
                                         dtype="float32", owner_op="op1", args={"k": 1}),
                             MemoryBlock(256, 64, 2, None, device="cuda:1", name="w")])
    trace.add_reservation(MemoryBlock(0, 1 << 20, 0, None, device="cuda:0"))
    trace.diagnostics.add("perfetto.truncated", count=2, example="byte offset 5")
    meta = trace.metadata
    meta.source_format, meta.framework, meta.rank, meta.world_size = "kineto", "pytorch", 0, 2
    meta.attributes["step"] = 3
    return trace


def pftrace(trace: Trace) -> bytes:
    out = io.BytesIO()
    writer.write(trace, out)
    return out.getvalue()


def edited(data: bytes, edit: Callable[[dict[str, Any]], Any],
           attributes: dict[str, Any] | None = None) -> bytes:
    """``data`` with its model attribute replaced by ``edit(attribute)`` (as JSON) and the
    other attributes set to ``attributes`` (an int as a long value, else a string)."""
    trace = PbTrace.FromString(data)
    for packet in trace.packet:
        for attribute in packet.trace_attributes.attribute:
            if attribute.key == ATTRIBUTE:
                # (json, not orjson: an edit may hold an integer past 64 bits)
                attribute.string_value = json.dumps(edit(orjson.loads(attribute.string_value)))
    header = next(p for p in trace.packet if p.HasField("trace_attributes"))
    for key, value in (attributes or {}).items():
        attribute = header.trace_attributes.attribute.add(key=key)
        if type(value) is int:
            attribute.long_value = value
        else:
            attribute.string_value = str(value)
    return trace.SerializeToString()


def read(data: bytes) -> Trace:
    reader = PftraceReader("edited.pftrace")
    reader.feed(io.BytesIO(data))
    return build(reader.finish())   # (as traceconv.load hands it over: the builder's rules)


def notes(trace: Trace) -> list[str]:
    return [d.code for d in trace.diagnostics if d.code == NOTE]


BASE = pftrace(rich_trace())


def test_the_unedited_attribute_gives_the_model_back() -> None:
    trace = read(BASE)
    assert notes(trace) == []
    assert [p.kind for p in trace.processes] == [ProcessKind.HOST, ProcessKind.DEVICE]
    assert [t.parent for t in trace.tracks] == [None, None, 1]
    assert len(trace.memory) == 2 and len(trace.reservations) == 1
    assert trace.diagnostics.count("perfetto.truncated") == 2


def set_at(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of ``data`` with the part at ``path`` replaced by ``value``."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    copy = list(data) if isinstance(data, list) else dict(data)
    copy[head] = set_at(data[head], rest, value)
    return copy


def paths(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in the JSON ``data``, containers included."""
    yield path
    items = enumerate(data) if isinstance(data, list) else \
        data.items() if isinstance(data, dict) else ()
    for key, value in items:
        yield from paths(value, (*path, key))


ATTRIBUTE_JSON = orjson.loads(next(
    a.string_value for p in PbTrace.FromString(BASE).packet
    for a in p.trace_attributes.attribute if a.key == ATTRIBUTE))
PLACES = list(paths(ATTRIBUTE_JSON))[1:]
HUGE = [-1, -(1 << 63) - 1, (1 << 63) - 1, 1 << 63, 1 << 64, 10 ** 30, 10 ** 12]
WRONG = [None, True, 1.0, 0.5, "", "7", "x" * 300, [], {}, [None], {"a": 1}, *HUGE]


def wrong_length(value: Any) -> list[Any]:
    if isinstance(value, list):
        return [value[:-1], [*value, *value[-1:]], value * 3] if value else [[0], [None]]
    return []


@st.composite
def edits(draw: st.DrawFn) -> tuple[tuple[Any, ...], Any]:
    path = draw(st.sampled_from(PLACES))
    original = ATTRIBUTE_JSON
    for key in path:
        original = original[key]
    value = draw(st.sampled_from(WRONG + wrong_length(original)))
    return path, value


def check_read(data: bytes) -> Trace:
    """Read ``data`` and require a model that holds together or the note, within memory
    bounded by the file's size times a constant."""
    trace, peak = traced_peak(lambda: read(data))
    assert peak < BASELINE_PEAK + 200 * len(data)
    if not notes(trace):
        assert traceconv.validate(trace) == []
    return trace


tracemalloc.start()
read(BASE)
BASELINE_PEAK = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()


@pytest.mark.slow
@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(edits())
def test_any_value_of_the_attribute_replaced_reads_or_is_ignored(edit: tuple[Any, Any]) -> None:
    path, value = edit
    check_read(edited(BASE, lambda model: set_at(model, path, value)))


@pytest.mark.parametrize("shift", [-1, -(1 << 63), "12", "x", 1.5])
def test_a_time_shift_that_is_not_a_number_of_ns_ignores_the_attribute(shift: Any) -> None:
    data = edited(BASE, lambda model: model, {"time_shift_ns": shift})
    assert notes(check_read(data)) == [NOTE]


def test_a_time_shift_in_range_moves_every_time_back() -> None:
    shifted = read(edited(BASE, lambda model: model, {"time_shift_ns": 5}))
    assert notes(shifted) == []
    assert [int(s) + 5 for s in shifted.slices.start] == list(read(BASE).slices.start)


@pytest.mark.parametrize("count", [10, 10 ** 6, 10 ** 12, (1 << 63) - 1])
def test_flow_label_counts_are_checked_against_the_file_before_use(count: int) -> None:
    """A 324-byte file once asked for 24 GB through one run count."""
    data = edited(BASE, lambda model: {**model, "flows": [[count, "a", "b"]]})
    assert notes(check_read(data)) == [NOTE]


@pytest.mark.parametrize("edit", [
    pytest.param(lambda m: {**m, "diagnostics": ["perfetto.truncated"]},
                 id="diagnostic not an object"),
    pytest.param(lambda m: {**m, "tracks": [[*t[:1], float(t[1]), *t[2:]] for t in m["tracks"]]},
                 id="float process index"),
    pytest.param(lambda m: set_at(m, ("memory", "device", 1, 0), -1), id="negative block index"),
    pytest.param(lambda m: set_at(m, ("memory", "address"), [64]), id="short column"),
    pytest.param(lambda m: {**m, "dotted": [5]}, id="dotted name not text"),
    pytest.param(lambda m: {**m, "base": "7"}, id="base as text"),
    pytest.param(lambda m: {**m, "version": 1.0}, id="version as float"),
])
def test_each_audited_class_ignores_the_attribute(edit: Callable[[Any], Any]) -> None:
    trace = check_read(edited(BASE, edit))
    assert notes(trace) == [NOTE]
    assert trace.memory == []   # (read as any Perfetto trace: no blocks from the attribute)


def test_a_diagnostic_takes_its_kind_and_text_from_the_table_not_the_file() -> None:
    data = edited(BASE, lambda m: set_at(set_at(m, ("diagnostics", 0, "kind"), "bogus"),
                                         ("diagnostics", 0, "message"), "made up"))
    found = check_read(data).diagnostics["perfetto.truncated"]
    assert (found.kind, found.count) == ("dropped", 2)
    assert found.message != "made up"


@pytest.mark.parametrize("text", ["", "null", "[]", "1", "not json", "{", '"text"',
                                  "[" * 5000 + "]" * 5000, '{"version": 2}', "1e400"])
def test_an_attribute_that_is_not_an_object_of_this_version_is_ignored(text: str) -> None:
    trace = PbTrace.FromString(BASE)
    for packet in trace.packet:
        for attribute in packet.trace_attributes.attribute:
            if attribute.key == ATTRIBUTE:
                attribute.string_value = text
    assert notes(check_read(trace.SerializeToString())) == [NOTE]
