"""Debug annotations encoded key set by key set, column by column (the writer's path), give
the bytes of the row-by-row encoder (the reference), on every bundled sample and on
hypothesis-made argument tables of every value kind."""

from __future__ import annotations

import io
import json
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace as PbTrace

import traceconv
from traceconv.formats.perfetto import annotation_columns, write
from traceconv.formats.perfetto.annotation_columns import ColumnEncoder
from traceconv.formats.perfetto.annotations import ArgEncoder
from traceconv.formats.perfetto.wire import pack_rows, varint
from traceconv.model import Trace, arg_groups
from traceconv.model.args import ArgsColumn

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_FILES = sorted(p for folder in (ROOT / "samples", ROOT / "tests" / "data")
                      for p in folder.rglob("*") if p.is_file() and p.suffix != ".md")


def loadable() -> list[Path]:
    return [p for p in SAMPLE_FILES if p.stat().st_size < 8 << 20]


def row_by_row(column: ArgsColumn, args: ArgEncoder) -> list[bytes]:
    return [b"" if row is None else args.encode(row) for row in column]


def assert_columns_match(column: ArgsColumn) -> None:
    args = ArgEncoder()
    encoder = ColumnEncoder(column, args)   # names interned as it encodes: same iids below
    rows = np.arange(len(column))
    assert encoder.encode_rows(rows) == row_by_row(column, args)
    shuffled = np.random.default_rng(7).permutation(len(column))   # any order, any subset
    assert encoder.encode_rows(shuffled[: len(column) // 2]) == [
        b"" if column[r] is None else args.encode(column[r]) for r in shuffled[: len(column) // 2]]


def test_every_bundled_sample_encodes_as_row_by_row():
    """Every bundled file that reads on its own (not a paste, a summary or a broken sample:
    those raise) encodes its slice and instant args as the row-by-row encoder does."""
    traces = 0
    for path in loadable():
        try:
            trace = traceconv.load(path)
        except traceconv.TraceconvError:
            continue
        traces += 1
        for column in (trace.slices.args, trace.instants.args):
            try:
                assert_columns_match(column)
            except AssertionError as error:
                raise AssertionError(f"{path.relative_to(ROOT)}: {error}") from None
    assert traces >= 100   # 116 of the 200 bundled files when written: most do read


scalars = st.one_of(
    st.integers(-2**70, 2**70), st.integers(0, 300), st.floats(allow_nan=False), st.booleans(),
    st.none(), st.text(max_size=6), st.sampled_from(["float", "int64", "", "a,b"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["x", "y.z"]), inner,
                                                 max_size=2)), max_leaves=6)
key_sets = st.lists(st.sampled_from(["bytes", "Input Dims", "est. occupancy %", "a.b", "a.c",
                                     "a", "stream", ".lead"]), min_size=0, max_size=5,
                    unique=True)


@settings(max_examples=150, deadline=None)
@given(st.lists(key_sets, min_size=1, max_size=3), st.data(),
       st.sampled_from(["dicts", "text as values", "text as texts"]))
def test_any_argument_table_encodes_as_row_by_row(shapes, data, held):
    """Key sets with enough rows for the column path (and a few rows: the row path),
    values of uniform or mixed kinds, ints past int64, dotted names, None and {}; rows
    held as dicts, or (those that JSON can spell) as JSON text, spelled in several ways
    (the same list as ``[1,2]`` and ``[1, 2]``; ``1``, ``1.0`` and ``true`` apart) and
    decoded into values or into texts."""
    column = ArgsColumn() if held == "dicts" else _TextColumn(data)
    for keys in shapes:
        uniform = {key: data.draw(values) for key in keys}   # a column of one kind
        for _ in range(data.draw(st.integers(0, 24))):
            kind_of = data.draw(st.sampled_from(["uniform", "any", "none"]))
            if kind_of == "none":
                column.append(None)
                continue
            column.append({key: (data.draw(values) if kind_of == "any" else
                                 _like(uniform[key], data)) for key in keys})
    with patch.object(arg_groups, "_LISTS_PER_ROW", 0 if held == "text as texts" else 1 << 30):
        assert_columns_match(column)


@pytest.mark.parametrize("limit", [1 << 16, 1])
def test_consecutive_list_columns_encode_as_row_by_row(monkeypatch: pytest.MonkeyPatch,
                                                      limit: int) -> None:
    """Rows shaped like Kineto's CPU ops (ints around consecutive lists: inputs, types,
    strides, dims), held as text and decoded into texts: the lists of a row are looked up
    together; repeated combinations (also spelled with other spaces) hit that cache, and a
    cache limit of 1 (cleared at every new combination) changes nothing."""
    monkeypatch.setattr(arg_groups, "_LISTS_PER_ROW", 0)
    monkeypatch.setattr(annotation_columns, "_JOINT_LIMIT", limit)
    shapes = [(["", "1"], ["float", "Scalar"], [[4, 1], []], [[2, 4], []]),
              ([], ["float"], [[1]], [[8]]), (["[1, 1]"], [1.0], [{"x": 1}], [[3]])]
    column = ArgsColumn()
    for row in range(60):
        inputs, types, strides, dims = shapes[row * 7 % 3]
        args = {"External id": row, "Concrete Inputs": inputs, "Input type": types,
                "Input Strides": strides, "Input Dims": dims, "Ev Idx": row * 3}
        text = json.dumps(args, separators=(", ", ": ") if row % 2 else (",", ":")).encode()
        column.extend_json(text + b",", [len(text)])
    assert_columns_match(column)


@pytest.mark.parametrize("edge", [2**63 - 1, -2**63, 2**63, -2**63 - 1, 10**18, 10**19,
                                  -10**18, 0, None, 1.0, True])
def test_int_columns_read_from_texts_encode_as_row_by_row(monkeypatch: pytest.MonkeyPatch,
                                                          edge: object) -> None:
    """Int columns of rows held as texts are parsed by numpy from one text: the int64
    bounds stay ints, values past them (and null, 1.0, true) take the general path; every
    row encodes as the row-by-row encoder does."""
    monkeypatch.setattr(arg_groups, "_LISTS_PER_ROW", 0)
    column = ArgsColumn()
    numbers: list[object] = [7, -1, 300, 2**40, -(2**40), edge, 5, 12, 0, 99]
    for row, number in enumerate(numbers):
        text = json.dumps({"id": number, "dims": [[row]], "ev": -row}).encode()
        column.extend_json(text + b",", [len(text)])
    group = arg_groups.key_groups(column, np.arange(len(numbers)))[0]
    ints = group.ints(0)
    int64 = type(edge) is int and -2**63 <= edge < 2**63
    assert (ints.tolist() if ints is not None else None) == (
        numbers if int64 and len(str(edge).lstrip("-")) <= 18 else None)
    events = group.ints(2)
    assert events is not None and events.tolist() == [-row for row in range(len(numbers))]
    assert_columns_match(column)


class _TextColumn(ArgsColumn):
    """An args column whose rows arrive as a JSON reader hands them over: as text, each in
    a spelling drawn at random, except those JSON cannot spell (infinities)."""

    def __init__(self, data: st.DataObject) -> None:
        super().__init__()
        self.data = data

    def append(self, args: dict[str, object] | None) -> None:
        spelling = self.data.draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,", " :")]))
        if args is None:
            super().append(None)
            return
        try:
            text = json.dumps(args, separators=spelling, allow_nan=False).encode()
        except ValueError:
            super().append(args)
            return
        self.extend_json(text + b",", [len(text)])


def _like(example: object, data: st.DataObject) -> object:
    """Another value of the same type as ``example`` (so that a column stays uniform), or
    ``example`` again (values repeat)."""
    strategy = {int: st.integers(-2**64, 2**64), float: st.floats(), bool: st.booleans(),
                str: st.text(max_size=4), list: st.lists(scalars, max_size=3),
                dict: st.dictionaries(st.sampled_from(["x", "y.z"]), scalars, max_size=2),
                }.get(type(example))
    return example if strategy is None else data.draw(st.just(example) | strategy)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2**64 - 1), st.integers(0, 2**20)), min_size=1,
                max_size=70))
def test_pack_rows_writes_each_rows_varints(pairs):
    big = np.array([a for a, _ in pairs], dtype=np.uint64)
    small = np.array([b for _, b in pairs], dtype=np.uint64)
    matrix = np.arange(len(pairs) * 2, dtype=np.uint8).reshape(len(pairs), 2)
    assert pack_rows([b"\x0a", big, matrix, small, b"!"], len(pairs)) == [
        b"\x0a" + varint(a) + bytes(matrix[i]) + varint(b) + b"!"
        for i, (a, b) in enumerate(pairs)]


def test_annotation_names_are_interned_once_per_sequence(monkeypatch):
    """Names keep one iid for the whole file; every sequence interns, in its first
    packet, the names its events use, before any event refers to them."""
    import traceconv.formats.perfetto.writer as writer

    monkeypatch.setattr(writer, "CHUNK_SEQUENCE", 4)
    monkeypatch.setattr(writer, "CHUNK_EVENTS", 2)
    trace = Trace()
    main = trace.add_track("main", process=trace.add_process("p", pid=1), tid=1)
    for i in range(12):
        trace.add_slice(main, i * 10, 5, "s", args={"first": i} if i < 6 else {"second": i})
    out = io.BytesIO()
    write(trace, out)
    parsed = PbTrace()
    parsed.ParseFromString(out.getvalue())
    iids: dict[int, dict[int, str]] = {}   # per sequence
    seen: dict[str, set[int]] = {}
    for packet in parsed.packet:
        seq = packet.trusted_packet_sequence_id
        table = iids.setdefault(seq, {})
        for entry in packet.interned_data.debug_annotation_names:
            table[entry.iid] = entry.name
            seen.setdefault(entry.name, set()).add(entry.iid)
        for annotation in packet.track_event.debug_annotations:
            assert annotation.name_iid in table   # interned earlier in its sequence
    assert {name: len(found) for name, found in seen.items()} == {"first": 1, "second": 1}
    assert len(iids) > 3   # several event sequences, each with its own interning


@pytest.mark.parametrize("layouts", [2, 200])
def test_pack_rows_with_many_varint_columns(layouts):
    """Twenty varint columns (the layout key is renumbered before it overflows int64);
    a few layouts are packed as matrices, very many fall back to row by row."""
    rng = np.random.default_rng(3)
    kind = rng.integers(0, layouts, 300)
    columns = [(np.uint64(1) << ((kind * (k + 1)) % 64).astype(np.uint64)) for k in range(20)]
    assert pack_rows(list(columns), 300) == [
        b"".join(varint(int(c[r])) for c in columns) for r in range(300)]
