"""ArgsColumn: rows read back equal to what was stored, values the very same objects."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from traceconv.model.args import ArgsColumn
from traceconv.model.columns import SliceTable
from traceconv.model.frozen import FrozenTraceError


def test_rows_round_trip_with_their_objects_and_key_order() -> None:
    shapes = [[64, 128], [256, 128]]
    big = 2**70
    rows = [{"Input Dims": shapes, "External id": 7}, None, {}, {"b": 1, "a": 2},
            {"a": 2, "b": 1}, {1: "int key", (2, 3): "tuple key"}, {"nan": math.nan, "big": big}]
    column = ArgsColumn(rows)
    assert len(column) == 7
    assert column[0]["Input Dims"] is shapes and column[6]["big"] is big
    assert column[1] is None and column[2] == {}
    assert list(column[3]) == ["b", "a"] and list(column[4]) == ["a", "b"]  # order kept
    assert column[5] == {1: "int key", (2, 3): "tuple key"}
    assert math.isnan(column[6]["nan"])
    assert column[-1] == column[6] and column[1:3] == [None, {}]
    # six distinct key tuples among the five dicts with keys plus the empty one
    assert len(column.key_sets) == 6


def test_reading_a_row_gives_a_copy_and_set_args_changes_it() -> None:
    table = SliceTable()
    table.append(0, 10, 5, 0, 0, {"bytes": 64})
    table.args[0]["bytes"] = 1   # a copy: the column is unchanged
    assert table.args[0] == {"bytes": 64}
    table.set_args(0, {"bytes": 64, "input_shapes": {"X": [[2, 3]]}})
    assert table.args[0] == {"bytes": 64, "input_shapes": {"X": [[2, 3]]}}
    table.set_args(0, None)
    assert table.args[0] is None and len(table.args) == 1


def test_columns_compare_by_content() -> None:
    rows = [{"a": 1}, None]
    assert ArgsColumn(rows) == ArgsColumn(rows) == rows
    assert ArgsColumn(rows) != ArgsColumn([{"a": 2}, None])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.one_of(st.none(), st.dictionaries(
    st.sampled_from("abc"), st.integers(), max_size=3)), max_size=8), max_size=4))
def test_extend_numbers_key_sets_as_append_does(batches):
    """extend (new key sets interned once each, then every row looked up in C) gives the
    column that appending the rows one by one gives: same key sets, ids and values."""
    extended, appended = ArgsColumn(), ArgsColumn()
    for batch in batches:
        extended.extend(batch)
        for row in batch:
            appended.append(row)
    assert extended.key_sets == appended.key_sets
    assert list(extended.key_set) == list(appended.key_set)
    assert list(extended) == list(appended)


_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-2, 2),
                    st.sampled_from([0.0, -0.0, 1.0]), st.sampled_from("ab"))
_VALUES = st.recursive(_LEAVES, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.sampled_from("xy"), inner, max_size=2), max_leaves=6)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from("abc"), _VALUES, max_size=3), max_size=6))
def test_freezing_keeps_every_value_and_its_type(rows):
    """Frozen in place, lists alike made one: each row reads back as it was given, type for
    type (repr tells 1, True and 1.0, 0.0 and -0.0 apart), the rows given are left as they
    were, and the values list and every list and dict in it refuse changes."""
    given_as = repr(rows)
    column = ArgsColumn(rows)
    column.freeze()
    values = column.values
    assert repr(list(column)) == given_as == repr(rows)
    with pytest.raises(FrozenTraceError):
        values.append(0)
    for value in values:
        if isinstance(value, list | dict):
            with pytest.raises(FrozenTraceError):
                value.clear()
