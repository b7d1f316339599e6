"""The one protobuf wire decoder (``traceconv.formats.protowire``) against the protobuf
runtime (``google.protobuf``) as the independent oracle: random messages encoded by the
runtime decode to the same fields; 64-bit values; cut messages; nesting depth; unknown
fields and wire types; and the XPlane reader on it (int64 edges, memory per empty event)."""

from __future__ import annotations

import functools
import gc
import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from google.protobuf.message import DecodeError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protobuf_runtime import runtime_classes
from traced_peak import traced_peak

import traceconv
from traceconv.formats.protowire import (
    WireError,
    locate_damage,
    message_classes,
    read_varint,
)
from traceconv.formats.protowire.messages import BATCH_MIN
from traceconv.model.repairs import TIME_MAX, TIME_MIN

SCALAR_TYPES = ["string", "bytes", "uint64", "int64", "uint32", "int32", "sint64", "sint32",
                "fixed64", "sfixed64", "fixed32", "sfixed32", "float", "double", "bool",
                "enum"]
# every scalar singular and repeated, a sub-message singular and repeated, a self-reference
TABLE: dict[str, list[tuple[str, int, str]]] = {
    "Leaf": [(f"s_{kind}", 1 + i, kind) for i, kind in enumerate(SCALAR_TYPES)]
    + [(f"r_{kind}", 40 + i, f"repeated {kind}") for i, kind in enumerate(SCALAR_TYPES)],
    "Node": [("id", 1, "uint64"), ("leaf", 2, "Leaf"), ("leaves", 3, "repeated Leaf"),
             ("child", 4, "Node"), ("name", 5, "string"), ("children", 6, "repeated Node")],
}
# the same messages with fields left out: what the decoder meets as unknown fields
NARROW = {"Leaf": [f for f in TABLE["Leaf"] if f[1] % 3], "Node": TABLE["Node"][::2]}

OURS = message_classes("pwtest", TABLE)
RUNTIME = runtime_classes("pwtest", TABLE)
RUNTIME_PACKED = runtime_classes("pwtest_packed", TABLE, packed=True)
OURS_NARROW = message_classes("pwnarrow", NARROW)
RUNTIME_NARROW = runtime_classes("pwnarrow", NARROW)

_RANGES = {"uint64": (0, 2**64 - 1), "int64": (-2**63, 2**63 - 1), "uint32": (0, 2**32 - 1),
           "int32": (-2**31, 2**31 - 1), "sint64": (-2**63, 2**63 - 1),
           "sint32": (-2**31, 2**31 - 1), "fixed64": (0, 2**64 - 1),
           "sfixed64": (-2**63, 2**63 - 1), "fixed32": (0, 2**32 - 1),
           "sfixed32": (-2**31, 2**31 - 1), "enum": (-2**31, 2**31 - 1)}


def _values(kind: str) -> st.SearchStrategy[Any]:
    if kind in _RANGES:
        lo, hi = _RANGES[kind]
        edges = [v for v in (lo, hi, 0, 1, -1, 2**31, 2**32, 2**32 + 1, 2**63 - 1)
                 if lo <= v <= hi]
        return st.one_of(st.sampled_from(edges), st.integers(lo, hi))
    if kind == "string":
        return st.text(max_size=8)
    if kind == "bytes":
        return st.binary(max_size=8)
    if kind == "bool":
        return st.booleans()
    if kind == "float":
        return st.floats(width=32, allow_nan=False)
    return st.floats(allow_nan=False)


@st.composite
def _leaf(draw: Any, cls: Any) -> Any:
    leaf = cls()
    for name, _, spec in TABLE["Leaf"]:
        kind = spec.removeprefix("repeated ")
        if spec.startswith("repeated "):
            getattr(leaf, name).extend(draw(st.lists(_values(kind), max_size=3)))
        elif draw(st.booleans()):
            setattr(leaf, name, draw(_values(kind)))
    return leaf


@st.composite
def _node(draw: Any, cls: Any, depth: int = 0) -> Any:
    node = cls()
    if draw(st.booleans()):
        node.id = draw(_values("uint64"))
    if draw(st.booleans()):
        node.name = draw(st.text(max_size=6))
    if draw(st.booleans()):
        node.leaf.CopyFrom(draw(_leaf(RUNTIME["Leaf"] if cls is RUNTIME["Node"]
                                      else RUNTIME_PACKED["Leaf"])))
    leaves = draw(st.lists(_leaf(RUNTIME["Leaf"] if cls is RUNTIME["Node"]
                                 else RUNTIME_PACKED["Leaf"]), max_size=3))
    if leaves and draw(st.booleans()):   # past BATCH_MIN: the numpy batch path too
        leaves = leaves * BATCH_MIN
    for leaf in leaves:
        node.leaves.add().CopyFrom(leaf)
    if depth < 1:
        if draw(st.booleans()):
            node.child.CopyFrom(draw(_node(cls, depth + 1)))
        for child in draw(st.lists(_node(cls, depth + 1), max_size=3)):
            node.children.add().CopyFrom(child)
    return node


def _same(runtime: Any, ours: Any, path: str = "") -> None:
    """Field by field: the runtime's ``ListFields`` against ours (``set_fields``)."""
    expected = [(f.name, f, v) for f, v in runtime.ListFields()]
    got = ours.set_fields()
    assert [name for name, _, _ in expected] == [name for name, _ in got], path
    for (name, field, want), (_, have) in zip(expected, got, strict=True):
        where = f"{path}.{name}"
        if field.message_type is not None:
            if field.is_repeated:
                have = list(have)
                assert len(want) == len(have), where
                for i, (w, h) in enumerate(zip(want, have, strict=True)):
                    _same(w, h, f"{where}[{i}]")
            else:
                _same(want, have, where)
        elif field.is_repeated:
            assert _plain(list(want)) == _plain(list(have)), where
        else:
            assert _plain(want) == _plain(have) and type(want) is type(have), where


def _plain(value: Any) -> Any:
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return ("nan",) if isinstance(value, float) and math.isnan(value) else value


@pytest.mark.slow
@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_random_messages_decode_as_the_runtime_decodes(data: Any) -> None:
    for runtime in (RUNTIME, RUNTIME_PACKED):   # repeated scalars unpacked, then packed
        wire = data.draw(_node(runtime["Node"])).SerializeToString()
        _same(runtime["Node"].FromString(wire), OURS["Node"].decode(wire))
        # fields the table does not know are skipped, as the runtime skips them
        _same(RUNTIME_NARROW["Node"].FromString(wire), OURS_NARROW["Node"].decode(wire))


@pytest.mark.parametrize(("kind", "value"), [
    (kind, value) for kind in ("uint64", "int64", "fixed64", "sfixed64", "sint64")
    for value in (2**32, 2**32 + 7, 2**40, 2**62 + 1, 2**63 - 1, 2**64 - 1, -1, -2**63, -2**32)
    if _RANGES[kind][0] <= value <= _RANGES[kind][1]])
def test_64_bit_values_keep_every_bit(kind: str, value: int) -> None:
    leaf = RUNTIME["Leaf"]()
    setattr(leaf, f"s_{kind}", value)
    getattr(leaf, f"r_{kind}").extend([value, 1, value])
    decoded = OURS["Leaf"].decode(leaf.SerializeToString())
    assert getattr(decoded, f"s_{kind}") == value
    assert getattr(decoded, f"r_{kind}") == [value, 1, value]


def test_ids_past_32_bits_do_not_alias() -> None:
    """Ids that differ only above bit 32 stay different (2**32 + 5 is not 5)."""
    node = RUNTIME["Node"]()
    for i in range(2 * BATCH_MIN):   # (the batch path too)
        child = node.children.add()
        child.id = (i << 32) | 5
    decoded = OURS["Node"].decode(node.SerializeToString())
    assert [c.id for c in decoded.children] == [(i << 32) | 5 for i in range(2 * BATCH_MIN)]


def _sample_message() -> bytes:
    node = RUNTIME["Node"](id=2**40, name="root")
    node.leaf.s_string, node.leaf.s_double = "x", 1.5
    for i in range(BATCH_MIN + 2):
        node.leaves.add(s_uint64=i << 33, s_string=f"leaf {i}").r_int64.extend([-1, i])
    node.child.children.add(name="deep").leaf.s_bytes = b"\xff\x00"
    return node.SerializeToString()


def test_every_cut_of_a_message_is_refused_where_the_runtime_refuses_it() -> None:
    """A prefix that ends between fields is a valid (shorter) message for both; any other
    cut is a located error for ours and a DecodeError for the runtime."""
    whole = _sample_message()
    for cut in range(len(whole)):
        part = whole[:cut]
        try:
            RUNTIME["Node"].FromString(part)
            runtime_ok = True
        except DecodeError:
            runtime_ok = False
        found = locate_damage(OURS["Node"], part)
        assert (found is None) == runtime_ok, cut
        if found is not None:
            offset, path, why = found
            assert 0 <= offset <= cut and why and path


def test_a_length_past_the_buffer_is_one_error_with_its_offset() -> None:
    with pytest.raises(WireError) as caught:
        OURS["Node"].decode(b"\x08\x01\x2a\x7fabc")   # name: 127 bytes announced, 3 there
    assert caught.value.offset == 3 and "runs past the end" in str(caught.value)
    with pytest.raises(WireError):
        read_varint(b"\xff" * 10 + b"\x01", 0)   # 11 bytes: not a varint


@pytest.mark.parametrize("depth", [5, 99, 100, 101, 102, 150, 1000])
def test_nesting_is_bounded(depth: int) -> None:
    wire = b""
    for _ in range(depth):
        wire = b"\x22" + _varint(len(wire)) + wire   # Node.child, nested ``depth`` deep
    try:
        RUNTIME["Node"].FromString(wire)
        runtime_ok = True
    except DecodeError:
        runtime_ok = False
    try:
        node = OURS["Node"].decode(wire)
        ok = True
    except WireError as exc:
        ok = False
        assert "nested more than" in str(exc)
    assert ok == runtime_ok == (depth <= 100)
    if ok:
        for _ in range(depth):
            node = node.child
        assert not node.set_fields()


def test_a_field_of_an_unexpected_wire_type_is_skipped_as_the_runtime_skips_it() -> None:
    # id (a varint field) sent as a string, name (a string) sent as a varint, then a
    # field number the table does not have as fixed32 and fixed64
    wire = b"\x0a\x02ab\x28\x07\x7d\x01\x02\x03\x04\x79" + bytes(8) + b"\x08\x09"
    _same(RUNTIME["Node"].FromString(wire), OURS["Node"].decode(wire))
    assert OURS["Node"].decode(wire).id == 9


def test_groups_and_wire_types_6_7_are_refused() -> None:
    for key in (0x0B, 0x0E, 0x0F):   # field 1 as start-group, wire 6, wire 7
        with pytest.raises(WireError):
            OURS["Node"].decode(bytes([key]) + b"\x00")


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes([*out, value])


# -- the XPlane reader on the decoder -------------------------------------------------------

XPLANE_RUNTIME: dict[str, Any] = {}


def _xplane() -> dict[str, Any]:
    if not XPLANE_RUNTIME:
        from traceconv.formats.xplane.proto import MESSAGES

        XPLANE_RUNTIME.update(runtime_classes("xplane_pwtest", MESSAGES))
    return XPLANE_RUNTIME


def _space(line_timestamp: int, offset: int, duration: int) -> bytes:
    classes = _xplane()
    space = classes["XSpace"]()
    plane = space.planes.add(name="/host:CPU")
    entry = plane.event_metadata.add(key=1)
    entry.value.id, entry.value.name = 1, "op"
    line = plane.lines.add(id=1, name="worker", timestamp_ns=line_timestamp)
    line.events.add(metadata_id=1, offset_ps=offset, duration_ps=duration)
    line.events.add(metadata_id=1, offset_ps=0, duration_ps=1000)
    return space.SerializeToString()


EDGES = [0, 999, 2**32, 2**62, 2**63 - 1, -1, -2**63]


@pytest.mark.parametrize("line_timestamp", EDGES)
def test_xplane_times_at_int64_edges_read(tmp_path: Path, line_timestamp: int) -> None:
    """Line timestamp x offset x duration over the int64 edges: every file reads; a time
    outside the model's range (int64 ps plus a base: wider than int64 ns) is moved to the
    edge by the builder's one rule and counted (no OverflowError)."""
    path = tmp_path / "edge.xplane.pb"
    for offset, duration in itertools.product(EDGES, EDGES):
        path.write_bytes(_space(line_timestamp, offset, duration))
        trace = traceconv.load(path)
        start_ps = line_timestamp * 1000 + offset
        start, end = start_ps // 1000, (start_ps + duration) // 1000
        times = (start, end, line_timestamp, line_timestamp + 1)   # (and the second event's)
        outside = not all(TIME_MIN <= t <= TIME_MAX for t in times)
        assert (trace.diagnostics.count("model.time_beyond_range") > 0) == outside
        first = trace.slice(0)
        if not outside and start <= end:   # (an end before its start: the builder's other rule)
            assert (first.start, first.dur) == (start, end - start)


@pytest.mark.slow
def test_xplane_of_empty_events_reads_in_memory_linear_in_its_size(tmp_path: Path) -> None:
    """Each empty ``XEvent`` is 2 bytes on the wire (``22 00``); reading many must cost at
    most 50x the file in memory (the protobuf runtime's tree took 68x), and the same per
    byte at 1x and 4x the events."""
    peaks = []
    for events in (20_000, 80_000):
        # XSpace.planes[0] = {name: "/host:CPU", lines[0]: {id: 1, name: "worker",
        # events: {} x events}}, written by hand (xplane.proto's field numbers)
        body = b"\x22\x00" * events
        line_bytes = b"\x08\x01\x12\x06worker" + body
        plane_bytes = b"\x12\x09/host:CPU\x1a" + _varint(len(line_bytes)) + line_bytes
        wire = b"\x0a" + _varint(len(plane_bytes)) + plane_bytes
        path = tmp_path / f"empty{events}.xplane.pb"
        path.write_bytes(wire)
        if not peaks:   # the modules a read imports are not the file's cost
            traceconv.load(path)
        gc.collect()
        trace, peak = traced_peak(functools.partial(traceconv.load, path))
        assert len(trace.slices) == events
        assert peak <= 50 * len(wire), (events, peak / len(wire))
        peaks.append(peak / len(wire))
        del trace
    assert peaks[1] <= peaks[0] * 1.3   # linear: the same per byte at 4x the events


# -- the Perfetto reader: interned ids of 64 bits ---------------------------------------------

@pytest.mark.parametrize("high", [1, 0xABCDEF, 2**31, 2**32 - 1])
def test_perfetto_interned_ids_past_32_bits_do_not_alias(tmp_path: Path, high: int) -> None:
    """Names, categories and debug annotation names interned under iids that differ only
    above bit 32 (5 and 5 + high * 2**32) stay apart: each event gets its own."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TrackEvent
    from perfetto.trace_builder.proto_builder import TraceProtoBuilder

    builder = TraceProtoBuilder()
    packet = builder.add_packet()
    packet.track_descriptor.uuid = 10
    packet.track_descriptor.name = "t"
    iids = [5, 5 + (high << 32)]
    for i, iid in enumerate(iids):
        packet = builder.add_packet()
        packet.trusted_packet_sequence_id = 1
        packet.timestamp = 100 * (i + 1)
        if i == 0:
            packet.sequence_flags = 1   # SEQ_INCREMENTAL_STATE_CLEARED
            for j, other in enumerate(iids):
                packet.interned_data.event_names.add(iid=other, name=f"name{j}")
                packet.interned_data.event_categories.add(iid=other, name=f"cat{j}")
                packet.interned_data.debug_annotation_names.add(iid=other, name=f"arg{j}")
        else:
            packet.sequence_flags = 2   # SEQ_NEEDS_INCREMENTAL_STATE
        event = packet.track_event
        event.type, event.track_uuid = TrackEvent.TYPE_INSTANT, 10
        event.name_iid = iid
        event.category_iids.append(iid)
        event.debug_annotations.add(name_iid=iid, int_value=i)
    path = tmp_path / "iids.pftrace"
    path.write_bytes(builder.serialize())
    trace = traceconv.load(path)
    got = [(i.name, i.category, i.args) for i in trace.iter_instants()]
    assert got == [("name0", "cat0", {"arg0": 0}), ("name1", "cat1", {"arg1": 1})]


# -- counting elements, columns and orders without decoding every element ------------------

def _tree(leaves_per_child: list[int]) -> Any:
    """A runtime Node: two leaves of its own, then one child per entry with that many
    leaves, each leaf numbered in ``s_uint64`` and ``s_int32`` (negative)."""
    node = RUNTIME["Node"](id=1)
    for i in range(2):
        node.leaves.add(s_uint64=i)
    for count in leaves_per_child:
        child = node.children.add(name="c")
        for i in range(count):
            child.leaves.add(s_uint64=2**63 + i, s_int32=-i)
    return node


@pytest.mark.parametrize("leaves_per_child", [[], [0], [3, 0, 5], [1] * 40, [300, 2]])
def test_count_elements_agrees_with_the_runtime(leaves_per_child: list[int]) -> None:
    from traceconv.formats.protowire.counting import count_elements

    node = _tree(leaves_per_child)
    wire = node.SerializeToString()
    decoded = RUNTIME["Node"].FromString(wire)   # the runtime's own lengths
    expected = {"leaves": len(decoded.leaves), "children": len(decoded.children),
                "children.leaves": sum(len(c.leaves) for c in decoded.children)}
    assert count_elements(OURS["Node"], wire, tuple(expected)) == expected
    assert count_elements(OURS["Node"], wire, ("children.leaves",)) == {
        "children.leaves": sum(leaves_per_child)}


def test_count_elements_stops_at_damage_with_what_it_counted() -> None:
    from traceconv.formats.protowire.counting import count_elements

    wire = _tree([4, 4]).SerializeToString()
    whole = RUNTIME["Node"]().SerializeToString()   # (nothing: the count of an empty node)
    assert count_elements(OURS["Node"], whole, ("children.leaves",)) == {"children.leaves": 0}
    # the second child runs past the end once a byte is cut: only the first one's leaves
    assert count_elements(OURS["Node"], wire[:-1], ("children.leaves",)) == {
        "children.leaves": 4}


@pytest.mark.parametrize("count", [3, BATCH_MIN, 5000])   # one by one, and in batches
def test_fields_and_in_order_agree_with_the_runtime(count: int) -> None:
    node = _tree([count])
    wire = node.SerializeToString()
    leaves = OURS["Node"].decode(wire).children[0].leaves
    expected = RUNTIME["Node"].FromString(wire).children[0].leaves
    table = leaves.fields("s_uint64", "s_int32")
    assert table["s_uint64"].tolist() == [leaf.s_uint64 for leaf in expected]
    assert table["s_int32"].tolist() == [leaf.s_int32 for leaf in expected]
    assert leaves.fields("s_double")["s_double"].tolist() == [0.0] * count   # absent
    order = np.arange(count)[::-1] if count > 3 else np.array([2, 0, 1])
    assert [leaf.s_uint64 for leaf in leaves.in_order(order)] == [
        expected[int(i)].s_uint64 for i in order]
