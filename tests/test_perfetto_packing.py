"""The writer's numpy packing against plain Python: pack_rows with every kind of part
(uniform and mixed varint sizes, optional fields, byte matrices), the flow fields cut per
group, and the write order computed from the lane repair's sort or afresh."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traceconv.formats.perfetto.flow_fields import FIELD, FlowFields
from traceconv.formats.perfetto.ordering import event_order
from traceconv.formats.perfetto.wire import pack_rows
from traceconv.model import Trace
from traceconv.model.nesting import nested_view_timeline


def _varint(value: int) -> bytes:
    """Base-128, least significant group first (the protobuf rule, written out)."""
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


uint64s = st.integers(0, 2**64 - 1)
small = st.integers(0, 127)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.data(), st.integers(1, 40))
def test_pack_rows_matches_plain_python(data, rows):
    parts: list = []
    expected = [b""] * rows
    for kind in data.draw(st.lists(st.sampled_from(["bytes", "uniform", "mixed", "field",
                                                    "matrix"]), min_size=1, max_size=8)):
        if kind == "bytes":
            part = data.draw(st.binary(max_size=3))
            cells = [part] * rows
        elif kind in ("uniform", "mixed"):
            values = data.draw(st.lists(small if kind == "uniform" else uint64s,
                                        min_size=rows, max_size=rows))
            part = np.array(values, dtype=np.uint64)
            cells = [_varint(v) for v in values]
        elif kind == "field":
            values = data.draw(st.lists(uint64s, min_size=rows, max_size=rows))
            present = data.draw(st.lists(st.booleans(), min_size=rows, max_size=rows))
            part = (b"P", np.array(values, dtype=np.uint64), np.array(present))
            cells = [b"P" + _varint(v) if p else b"" for v, p in zip(values, present, strict=True)]
        else:
            width = data.draw(st.integers(0, 3))
            matrix = np.array(data.draw(st.lists(st.integers(0, 255), min_size=rows * width,
                                                 max_size=rows * width)),
                              dtype=np.uint8).reshape(rows, width)
            part = matrix
            cells = [bytes(row) for row in matrix]
        parts.append(part)
        expected = [row + cell for row, cell in zip(expected, cells, strict=True)]
    assert pack_rows(parts, rows) == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=40), st.lists(st.integers(0, 11), max_size=30))
def test_flow_fields_of_a_group_are_each_rows_fields_in_order(owners, chosen):
    rows = np.sort(np.array(owners, dtype=np.int64))
    fields = np.arange(len(rows) * FIELD, dtype=np.uint8).reshape(len(rows), FIELD)
    per_row: dict[int, bytes] = {}
    for row, field in zip(rows.tolist(), fields, strict=True):
        per_row[row] = per_row.get(row, b"") + bytes(field)
    found = FlowFields(fields, rows, 12).of(np.array(chosen, dtype=np.int64))
    expected = [per_row.get(row, b"") for row in chosen]
    if not any(expected):
        assert found is None
    elif isinstance(found, np.ndarray):
        assert [bytes(row) for row in found] == expected
    else:
        assert found == expected


intervals = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 60), st.integers(0, 30)),
                     max_size=40)


@settings(max_examples=100, deadline=None)
@given(intervals, st.lists(st.integers(0, 60), max_size=5), st.integers(1, 3))
def test_the_write_order_from_the_repairs_sort_is_the_fresh_one(slices, instants, max_depth):
    trace = Trace()
    host = trace.add_process("p", pid=1)
    tracks = [trace.add_track(f"t{i}", process=host, tid=i + 1) for i in range(3)]
    for track, start, dur in slices:
        trace.add_slice(tracks[track], start, dur, "s")
    for ts in instants:
        trace.add_instant(tracks[0], ts, "i")
    view, timeline = nested_view_timeline(trace, max_depth)
    given_ts, given_codes = event_order(view, timeline)
    fresh_ts, fresh_codes = event_order(view)
    assert given_ts.tolist() == fresh_ts.tolist()
    assert given_codes.tolist() == fresh_codes.tolist()
