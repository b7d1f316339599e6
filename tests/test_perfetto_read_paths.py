"""The Perfetto reader's fast paths give what the general ones give: equal byte ranges found
by hashing (also when every hash collides), annotations read straight from their bytes, and
args merged from BEGIN and END annotations, names given twice, every value kind."""

from __future__ import annotations

import io
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace as PbTrace
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TrackEvent

import traceconv
from traceconv.formats.perfetto import byte_ranges
from traceconv.formats.perfetto.annotation_bytes import name_and_number
from traceconv.formats.perfetto.reader import PftraceReader
from traceconv.formats.perfetto.wire import FIXED64, LENGTH, VARINT, tag, varint
from traceconv.formats.protowire.columns import decode_fields, padded
from traceconv.model import Trace

ranges = st.lists(st.tuples(st.integers(0, 40), st.integers(0, 12), st.integers(0, 1)),
                  max_size=20)


def by_dict(data: bytes, found: list[tuple[int, int, int]]) -> tuple[list[int], list[int]]:
    groups: dict[tuple[bytes, int], int] = {}
    first, inverse = [], []
    for k, (start, end, label) in enumerate(found):
        key = (data[start:end], label)
        if key not in groups:
            groups[key] = len(first)
            first.append(k)
        inverse.append(groups[key])
    return first, inverse


def place(data: bytes, drawn: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    return [(min(s, len(data)), min(s + n, len(data)), label) for s, n, label in drawn]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=48), ranges, st.booleans())
def test_distinct_ranges_is_grouping_by_content(data: bytes, drawn: list, collide: bool) -> None:
    found = place(data, drawn)
    starts, ends, labels = (np.array([f[i] for f in found], dtype=np.int64) for i in range(3))
    if collide:   # every hash the same: only the byte-for-byte check tells ranges apart
        with patch.object(byte_ranges, "_powers",
                          lambda n: np.zeros(max(n, 1), dtype=np.uint64)):
            first, inverse = byte_ranges.distinct_ranges(padded(data), starts, ends, labels)
        groups = {}
        for k, g in enumerate(inverse.tolist()):   # (a collision may split a group)
            groups.setdefault(g, []).append(k)
        assert sorted(first.tolist()) == first.tolist()
        for g, members in groups.items():
            assert members[0] == first[g]
            assert len({(data[found[k][0]:found[k][1]], found[k][2]) for k in members}) == 1
    else:
        first, inverse = byte_ranges.distinct_ranges(padded(data), starts, ends, labels)
        assert (first.tolist(), inverse.tolist()) == by_dict(data, found)


annotation = st.one_of(
    st.tuples(st.integers(0, 300), st.sampled_from([2, 3, 4]), st.integers(0, 2**64 - 1)),
    st.tuples(st.integers(0, 300), st.just(5), st.integers(0, 2**64 - 1)),
    st.tuples(st.integers(0, 300), st.just(17), st.integers(0, 2**64 - 1)),
    st.tuples(st.integers(0, 300), st.just(6), st.integers(0, 5)))   # a string: not the form


def encoded(iid: int, number: int, value: int, extra: bool) -> bytes:
    out = tag(1, VARINT) + varint(iid)
    if number == 5:
        out += tag(5, FIXED64) + value.to_bytes(8, "little")
    elif number == 6:
        out += tag(6, LENGTH) + varint(value) + b"x" * value
    else:
        out += tag(number, VARINT) + varint(value)
    return out + (tag(4, VARINT) + varint(1) if extra else b"")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(annotation, st.booleans()), max_size=12))
def test_name_and_number_is_the_field_decode(drawn: list) -> None:
    messages = [encoded(*a, extra) for a, extra in drawn]
    data = b"".join(messages)
    ends = np.cumsum([len(m) for m in messages]).astype(np.int64)
    starts = ends - np.array([len(m) for m in messages], dtype=np.int64)
    buf = padded(data)
    rows, iid, kind, bits = name_and_number(buf, starts, ends)
    fields = decode_fields(buf, starts, ends)
    table = {}
    for r in fields.rounds:
        for m, f, w, v in zip(r.msg.tolist(), r.field.tolist(), r.wire.tolist(),
                              r.value.tolist(), strict=True):
            table.setdefault(m, []).append((f, w, v))
    expected = {m: (found[0][2], found[1][0], found[1][2]) for m, found in table.items()
                if len(found) == 2 and found[0][:2] == (1, VARINT) and found[0][2] < 128
                and found[1][0] in (2, 3, 4, 5, 17) and found[1][1] == (
                    FIXED64 if found[1][0] == 5 else VARINT)}
    got = dict(zip(rows.tolist(), zip(iid.tolist(), kind.tolist(), bits.tolist(),
                                      strict=True), strict=True))
    assert got == expected


def test_begin_and_end_annotations_merge_as_trace_processor_adds_them() -> None:
    trace = PbTrace()
    packet = trace.packet.add()
    packet.trusted_packet_sequence_id = 1
    packet.track_descriptor.uuid, packet.track_descriptor.name = 7, "t"

    def event(ts: int, kind: int, args: list[tuple[str, object]]) -> None:
        p = trace.packet.add()
        p.timestamp, p.trusted_packet_sequence_id = ts, 1
        p.track_event.type, p.track_event.track_uuid = kind, 7
        if kind != TrackEvent.TYPE_SLICE_END:
            p.track_event.name = "s"
        for name, value in args:
            a = p.track_event.debug_annotations.add()
            a.name = name
            if isinstance(value, bool):
                a.bool_value = value
            elif isinstance(value, int):
                a.int_value = value
            elif isinstance(value, float):
                a.double_value = value
            elif isinstance(value, str):
                a.string_value = value
            else:
                for item in value:   # type: ignore[attr-defined]
                    a.array_values.add().int_value = item

    expected = []
    for i in range(6):
        event(100 * i, TrackEvent.TYPE_SLICE_BEGIN,
              [("a", 1), ("a", i), ("s", f"t{i % 2}"), ("l", [1, i % 2]), ("f", 0.5)])
        end = [("b", True), ("a", -i)] if i % 2 else []
        event(100 * i + 50, TrackEvent.TYPE_SLICE_END, end)
        merged = {"a": i, "s": f"t{i % 2}", "l": [1, i % 2], "f": 0.5}
        merged.update(end)
        expected.append(merged)
    event(1000, TrackEvent.TYPE_INSTANT, [("u", 2), ("u", 3)])
    reader = PftraceReader("t.pftrace")
    reader.feed(io.BytesIO(trace.SerializeToString()))
    loaded = reader.finish()
    assert list(loaded.slices.args) == expected
    assert [type(v) for v in loaded.slices.args[1].values()] == [int, str, list, float, bool]
    assert list(loaded.instants.args) == [{"u": 3}]


def test_dotted_names_come_back_flat_whatever_the_shape(tmp_path) -> None:  # type: ignore[no-untyped-def]
    trace = Trace()
    process = trace.add_process("p", pid=1)
    track = trace.add_track("t", process=process, tid=1)
    rows = [{"grid": [1, 1], "est. achieved occupancy %": 50, "stream": 7},
            {"grid": [2, 1], "est. achieved occupancy %": 25, "stream": 7},
            {"est. a": 1, "est. b": {"deep": 2}},
            {"a.b.c": 1, "a.b.d": [2], "a.e": "s", "f": None},
            {"est. achieved occupancy %": 75.5, "est. a": "s"},
            None]
    for k, args in enumerate(rows):
        trace.add_slice(track, 100 * k, 10, "kernel", "cat", args)
    path = tmp_path / "dotted.pftrace"
    trace.save(path)
    # (dicts compare without their order: nested names come back after the others)
    assert list(traceconv.load(path).slices.args) == rows


_PARTS = st.sampled_from(["a", "b", "est", " a", "x", ""])
_NAMES = st.lists(_PARTS, min_size=1, max_size=4).map(".".join)
_VALUES = st.recursive(st.integers(-3, 3) | st.sampled_from(["s", None, 0.5]),
                       lambda inner: st.dictionaries(_NAMES, inner, max_size=3)
                       | st.lists(inner, max_size=2), max_leaves=6)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.lists(st.dictionaries(_NAMES, _VALUES, max_size=5), min_size=1, max_size=4))
def test_dotted_names_that_collide_come_back_as_written(rows: list[dict[str, object]]) -> None:
    """Names that are the start of another ("x.y" and "x.y.z"), a plain name beside dotted
    ones of the same head ("est" and "est. a"), dict values whose keys hold dots: every
    row, in every event of a trace, reads back equal to what was written."""
    trace = Trace()
    track = trace.add_track("t", process=trace.add_process("p", pid=1), tid=1)
    for k, args in enumerate(rows):
        trace.add_slice(track, 100 * k, 10, "s", "c", args or None)
    out = io.BytesIO()
    traceconv.formats.perfetto.writer.write(trace, out)
    reader = PftraceReader("collide.pftrace")
    reader.feed(io.BytesIO(out.getvalue()))
    assert [dict(a) if a else None for a in reader.finish().slices.args] == \
        [a or None for a in rows]


@pytest.mark.parametrize("rows", [
    [{"est. a": 1, "est. b": {"k": 2}, "est": 3}],
    [{"x.y.z": 1, "x.y": 2, "x": {"k": 1}}],
    [{"x.y": 2, "x.y.z": 1}],
    [{"x.y": 1}, {"x": {"y": 2}}],
    [{"k": {"a.b": 1, "a": {"b": 2}}}],
], ids=["plain beside dotted", "three levels", "longer after", "across events",
        "dotted keys in a value"])
def test_the_collisions_once_lost_come_back(rows: list[dict[str, object]]) -> None:
    test_dotted_names_that_collide_come_back_as_written.hypothesis.inner_test(rows)  # type: ignore[attr-defined]
