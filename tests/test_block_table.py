"""Memory blocks held as columns behave as the list of records they replace: generated
blocks of every field kind go in as records and as columns, and come back equal, field by
field, through views, copies, pickles and the model's repairs."""

from __future__ import annotations

import copy
import cProfile
import dataclasses
import json
import pickle
import pstats
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traceconv.formats.perfetto import model_attribute
from traceconv.model import MemoryBlock, Trace, block_record
from traceconv.model.block_table import FIELDS, BlockTable
from traceconv.model.copying import Keep, copy_into
from traceconv.model.frozen import FrozenTraceError
from traceconv.model.validate import validate
from traceconv.numbers import NumberError

INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
TEXT = st.sampled_from(["", "cuda:0", "CPU", "aten::mm", "é"])
blocks = st.builds(
    MemoryBlock, INT64, INT64, st.none() | INT64, st.none() | INT64, TEXT, TEXT, TEXT,
    st.none() | TEXT, st.none() | TEXT, st.none() | TEXT, TEXT,
    st.none() | st.lists(st.integers(0, 9), max_size=3).map(tuple), st.none() | TEXT,
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers() | st.lists(st.integers())))


def _fields(block: MemoryBlock) -> tuple:
    return tuple(getattr(block, name) for name in FIELDS)


@settings(max_examples=200)
@given(st.lists(blocks, max_size=20))
def test_a_table_gives_back_every_field_of_every_block(given_blocks):
    expected = [_fields(b) for b in given_blocks]
    table = BlockTable(copy.copy(b) for b in given_blocks)
    assert [_fields(b) for b in table] == expected
    assert list(table) == given_blocks and table == given_blocks
    assert len(table) == len(given_blocks) and bool(table) == bool(given_blocks)
    for name in FIELDS:   # a column at once, as the writers and analyses read it
        assert table.column(name) == [row[FIELDS.index(name)] for row in expected]
    table.freeze()
    assert [_fields(b) for b in pickle.loads(pickle.dumps(table))] == expected
    assert [_fields(b) for b in table] == expected   # (frozen: the same values)


@settings(max_examples=200)
@given(st.lists(blocks, min_size=1, max_size=20), st.data())
def test_setting_a_field_of_a_view_changes_that_row_only(given_blocks, data):
    table = BlockTable(copy.copy(b) for b in given_blocks)
    row = data.draw(st.integers(0, len(given_blocks) - 1))
    name = data.draw(st.sampled_from(FIELDS))
    value = data.draw({"address": INT64, "size": INT64, "alloc_ns": st.none() | INT64,
                       "free_ns": st.none() | INT64, "shape": st.none() | st.just((2, 3)),
                       "args": st.just({"x": 1})}.get(name, st.none() | TEXT))
    setattr(table[row], name, value)
    expected = [dataclasses.replace(b, **{name: value}) if k == row else b
                for k, b in enumerate(given_blocks)]
    assert list(table) == expected


@settings(max_examples=200)
@given(st.lists(blocks, max_size=20))
def test_blocks_appended_one_by_one_are_the_blocks_given(given_blocks):
    """Readers add blocks one at a time as they pair frees with allocs: each row holds
    its record's fields, as a table made of them all at once does."""
    table = BlockTable()
    for block in given_blocks:
        table.append(copy.copy(block))
    assert [_fields(b) for b in table] == [_fields(b) for b in given_blocks]
    assert table == BlockTable(copy.copy(b) for b in given_blocks)


def test_a_block_appended_beyond_int64_is_refused_and_no_field_of_it_is_added():
    table = BlockTable([MemoryBlock(0, 1, device="a")])
    with pytest.raises(NumberError, match="memory block time is out of the int64 range"):
        table.append(MemoryBlock(8, 2, 5, 1 << 63, device="b"))
    table.append(MemoryBlock(16, 3, "7", 9.0))   # (numeric text and integral floats: ints)
    assert table == [MemoryBlock(0, 1, device="a"), MemoryBlock(16, 3, 7, 9)]
    assert table.distinct("device") == ["a", ""]


def _calls(work) -> int:
    """Python and builtin calls made by ``work()`` (a count, not a time)."""
    profile = cProfile.Profile()
    profile.runcall(work)
    return pstats.Stats(profile).total_calls


def test_appending_a_block_costs_the_same_few_calls_at_any_table_size():
    """Appending one block went through the column path (some 300 calls and 70 µs each:
    300 k Paddle memory records took 20 s); a row is a few dozen calls, whatever the size."""
    def append(count: int) -> int:
        table = BlockTable()
        given = [MemoryBlock(64 * k, 64, k, k + 1, device="cpu", name="op")
                 for k in range(count)]
        return _calls(lambda: [table.append(block) for block in given])

    small, large = append(1_000), append(4_000)
    assert (large - small) / 3_000 <= 100
    assert large <= 4 * small


def test_columns_and_records_make_the_same_blocks():
    records = BlockTable([MemoryBlock(8, 4, 1, 5, device="CPU", owner_name="mm",
                                      category="allocation"),
                          MemoryBlock(16, 4, None, 7, device="CPU", category="before")])
    columns = BlockTable()
    columns.extend_columns(
        {"address": np.array([8, 16]), "size": np.array([4, 4]),
         "alloc_ns": np.ma.array([1, 0], mask=[False, True]), "free_ns": np.array([5, 7])},
        {"device": "CPU", "owner_name": (["mm", None], np.array([0, 1])),
         "category": (["before", "allocation"], np.array([1, 0]))})
    assert columns == records


def test_a_number_beyond_int64_is_refused_and_nothing_is_added():
    table = BlockTable([MemoryBlock(0, 1)])
    with pytest.raises(NumberError, match="memory block size is out of the int64 range"):
        table.extend([MemoryBlock(0, 2), MemoryBlock(0, 1 << 64)])
    with pytest.raises(NumberError, match="memory block address"):
        table.extend_columns({"address": np.array([1 << 63, 0], dtype=object),
                              "size": np.array([1, 1])}, {})
    assert len(table) == 1


def test_a_block_handed_to_a_trace_is_changed_through_the_trace_only():
    """A reader that kept the record it added and set its free time lost that change
    silently once blocks became columns: the record is read-only now, the view is not."""
    trace = Trace()
    block = MemoryBlock(64, 8, 1, None)
    view = trace.memory[trace.add_memory_block(block)]
    with pytest.raises(FrozenTraceError):
        block.free_ns = 9
    view.free_ns = 9
    assert trace.memory[0].free_ns == 9
    assert dataclasses.replace(view, size=1) == MemoryBlock(64, 1, 1, 9)
    assert type(copy.deepcopy(view)) is MemoryBlock
    trace.freeze()
    with pytest.raises(FrozenTraceError):
        trace.memory[0].size = 1
    with pytest.raises(FrozenTraceError):
        trace.memory.append(MemoryBlock(0, 1))


@settings(max_examples=100)
@given(st.lists(blocks.map(lambda b: dataclasses.replace(b, args={})), max_size=12),
       st.integers(1, 5))
def test_the_model_attribute_made_in_chunks_is_the_fields_json(given_blocks, chunk):
    """The writer makes the blocks' text a chunk of values at a time (twice: for its length,
    then to write); at any chunk size it is the JSON of each field, and reads back."""
    trace = Trace()
    trace.add_memory_blocks(copy.copy(b) for b in given_blocks)
    whole = b"".join(model_attribute.encode(trace, 0))
    with patch.object(block_record, "CHUNK", chunk):
        assert b"".join(model_attribute.encode(trace, 0)) == whole
    memory = json.loads(whole)["memory"]
    for name in FIELDS:
        column = [getattr(b, name) for b in given_blocks]
        if name in block_record.REPEATED:   # [distinct values in first-seen order, index]
            values = list(dict.fromkeys(column))
            column = [[None if v is None else list(v) for v in values] if name == "shape"
                      else values, [values.index(v) for v in column]]
        assert memory[name] == column
    table = BlockTable()
    block_record.add_blocks(table, memory)
    assert list(table) == given_blocks


@settings(max_examples=150)
@given(st.lists(blocks, max_size=12), st.data())
def test_copying_blocks_moves_their_times_and_renames_their_owners_block_by_block(
        given_blocks, data):
    """copy_into copies blocks as columns; each copy is what the rule says of its record:
    known times shifted (clamped at the ends of int64, and counted), owners prefixed,
    devices renamed, args equal but not shared, the unkept blocks left out."""
    shift = data.draw(st.sampled_from([0, 7, -(1 << 62), 1 << 62]))
    kept = data.draw(st.lists(st.booleans(), min_size=len(given_blocks),
                              max_size=len(given_blocks)))
    src = Trace()
    src.add_memory_blocks(copy.copy(b) for b in given_blocks)
    src.freeze()
    out = Trace()
    moved = copy_into(out, src, Keep(memory=np.array(kept, bool)), shift_ns=shift,
                      node_prefix="r1/", device=lambda d: f"dev {d}")

    clamped = 0

    def time(value):
        nonlocal clamped
        if value is None:
            return None
        if not -(1 << 63) <= value + shift < 1 << 63:
            clamped += 1
            return (1 << 63) - 1 if shift > 0 else -(1 << 63)
        return value + shift

    expected = [MemoryBlock(
        b.address, b.size, time(b.alloc_ns), time(b.free_ns), f"dev {b.device}", b.pool,
        b.name, None if b.owner_op is None else "r1/" + b.owner_op, b.owner_name,
        None if b.owner_tensor is None else "r1/" + b.owner_tensor, b.category, b.shape,
        b.dtype, b.args) for b, keep in zip(given_blocks, kept, strict=True) if keep]
    assert list(out.memory) == expected
    assert moved.times_clamped == clamped
    if not validate(src):   # (a valid source copies to a valid result: the one validator)
        assert validate(out) == []
    for copied in out.memory:
        if copied.args:
            copied.args["new"] = 1   # (the result's own: the source is unchanged)
    assert list(src.memory) == given_blocks
