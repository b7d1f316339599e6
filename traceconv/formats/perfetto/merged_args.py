"""The args of the rows whose annotations are not simply their BEGIN's: a slice with
annotations on its END too, a name given twice, dotted names the writer nested.

Most rows take their values as they come (a key set and values one row after another).
The others are made here and put in place in one pass, never row by row into the model's
column: a dotted-name row (CUDA kernels carry ``est. achieved occupancy %``, which the
writer nests as ``est`` → `` achieved occupancy %``) is flattened once per key set and
shape of its nested values, and the rows of that shape only take their values apart.

>>> dotted = DottedNames({"est.occ"})
>>> plan = dotted_plan(("grid", "est"), (None, (("occ", None),)), dotted)
>>> plan
(('grid', 'est.occ'), ((0,), (1, 'occ')))
>>> taken([[1, 1], {"occ": 50}, [2, 1], {"occ": 25}], np.array([0, 2]), plan[1])
[([1, 1], 50), ([2, 1], 25)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce
from operator import getitem
from typing import Any

import numpy as np

from .dotted_names import DottedNames, NestedGroup
from .model_attribute import flatten_dotted

Path = tuple[Any, ...]   # a value's place: its position in the row, then the dict keys


class _Leaf:
    """A stand-in value of a probe row: where the real value lies."""

    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        self.path = path


class _Nested(dict):  # type: ignore[type-arg]
    """A stand-in dict of a probe row (a dict, so flattening treats it as one)."""

    path: Path = ()


_GROUP = ("group",)   # (a marked group's shape: this, then its names)


def shape(value: Any) -> Any:
    """What flattening looks at in a value: None for anything but a dict or a marked
    group, else its keys and their values' shapes (nested dicts all the way down; a group
    is flat already).

    >>> shape({"a": 1, "b": {"c": [2]}}), shape([1]), shape(NestedGroup([("x.y", 1)]))
    ((('a', None), ('b', (('c', None),))), None, (('group',), 'x.y'))
    """
    if type(value) is NestedGroup:
        return (_GROUP, *(key for key, _ in value))
    if type(value) is not dict:
        return None
    return tuple((key, shape(item)) for key, item in value.items())


def _probe(shape_of: Any, path: Path) -> Any:
    if shape_of is None:
        return _Leaf(path)
    if shape_of and shape_of[0] is _GROUP:   # (where a group's k-th value lies: its k-th pair, then 1)
        return NestedGroup((key, _Leaf((*path, k, 1))) for k, key in enumerate(shape_of[1:]))
    probe = _Nested({key: _probe(inner, (*path, key)) for key, inner in shape_of})
    probe.path = path
    return probe


def dotted_plan(keys: tuple[str, ...], shapes: tuple[Any, ...], dotted: DottedNames
                ) -> tuple[tuple[str, ...], tuple[Path, ...]]:
    """The keys of rows of key set ``keys`` flattened, and where each key's value lies,
    for rows whose values have ``shapes`` (one per key, see :func:`shape`): flattening
    run once on a probe row of that shape."""
    probe = {key: _probe(one, (k,)) for k, (key, one) in enumerate(zip(keys, shapes,
                                                                        strict=True))}
    flat = flatten_dotted(probe.items(), dotted)
    return tuple(flat), tuple(value.path for value in flat.values())


def taken(values: list[Any], starts: np.ndarray, paths: tuple[Path, ...]
          ) -> list[tuple[Any, ...]]:
    """The values at ``paths`` of the rows whose values begin at ``starts`` in
    ``values``: one tuple per row."""
    columns = []
    for path in paths:
        column = list(map(values.__getitem__, (starts + path[0]).tolist()))
        if len(path) > 1:
            column = [reduce(getitem, path[1:], value) for value in column]
        columns.append(column)
    return list(zip(*columns, strict=True))


def flattened(keys: tuple[str, ...], values: list[Any], starts: np.ndarray,
              dotted: DottedNames) -> list[tuple[tuple[str, ...], tuple[Any, ...]]]:
    """Rows of key set ``keys`` (distinct keys), whose values begin at ``starts`` in
    ``values``, with dotted names flat again as :func:`~.model_attribute.flatten_dotted`
    makes each: (keys, values) per row."""
    shapes_seen: dict[int, Any] = {}   # id of a (shared) value -> its shape

    def shape_of(value: Any) -> Any:
        if type(value) is not dict and type(value) is not NestedGroup:
            return None
        found = shapes_seen.get(id(value))
        if found is None:
            found = shapes_seen[id(value)] = shape(value)
        return found

    heads = [k for k, key in enumerate(keys) if key in dotted.groups or dotted.nests(key)]
    columns = [list(map(shape_of, map(values.__getitem__, (starts + k).tolist())))
               for k in heads]
    row_shapes = list(zip(*columns, strict=True)) if heads else [()] * len(starts)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for index, row_shape in enumerate(row_shapes):
        groups.setdefault(row_shape, []).append(index)
    out: list[Any] = [None] * len(starts)
    for head_shapes, indexes in groups.items():
        one = [None] * len(keys)
        for k, found in zip(heads, head_shapes, strict=True):
            one[k] = found
        flat_keys, paths = dotted_plan(keys, tuple(one), dotted)
        for index, row_values in zip(indexes, taken(values, starts[indexes], paths),
                                     strict=True):
            out[index] = (flat_keys, row_values)
    return out


def merged_rows(key_sets: Sequence[tuple[str, ...]], sets: np.ndarray, values: list[Any],
                with_end: np.ndarray, end_args: Callable[[int], list[tuple[str, Any]]],
                dotted: DottedNames) -> list[tuple[tuple[str, ...], Sequence[Any]] | None]:
    """The args of rows of key sets ``sets`` (-1: none) whose values are ``values``, one
    row after another: a row's own values (a name given twice keeps its last), then,
    where ``with_end``, ``end_args(row)`` (its END's), dotted names flat again. Rows with
    nothing from an END are flattened a key set at a time (:func:`flattened`).

    >>> merged_rows([("a", "a"), ("b",)], np.array([0, 1]), [1, 2, 3],
    ...             np.array([False, True]), lambda row: [("e", 4)], DottedNames())
    [(('a',), (2,)), (('b', 'e'), (3, 4))]
    """
    widths = np.array([len(k) for k in key_sets] + [0], dtype=np.int64)
    where = np.where(sets >= 0, sets, len(key_sets))
    sizes = widths[where]
    starts = np.cumsum(sizes) - sizes
    distinct = np.array([len(set(k)) == len(k) for k in key_sets] + [False], dtype=bool)
    by_set = (distinct[where] & ~with_end) if dotted else np.zeros(len(sets), dtype=bool)
    made: list[Any] = [None] * len(sets)
    for k in np.flatnonzero(~by_set).tolist():
        keys = key_sets[sets[k]] if sets[k] >= 0 else ()
        pairs = list(zip(keys, values[starts[k]:starts[k] + len(keys)], strict=True))
        if with_end[k]:
            pairs += end_args(k)
        args = flatten_dotted(pairs, dotted) if dotted else dict(pairs)
        made[k] = (tuple(args), tuple(args.values())) if args else None
    for key_set in np.unique(sets[by_set]).tolist():
        rows = np.flatnonzero(by_set & (sets == key_set))
        for k, item in zip(rows.tolist(), flattened(key_sets[key_set], values, starts[rows],
                                                    dotted), strict=True):
            made[k] = item if item[0] else None
    return made


def laid_out(key_sets: Sequence[tuple[str, ...]], made: list[Any]
             ) -> tuple[list[tuple[str, ...]], np.ndarray, list[Any]]:
    """``made`` ((keys, values) per row, or None) as key sets (``key_sets`` and any new
    ones after them), each row's key-set number (-1: no args) and the values one row
    after another.

    >>> laid_out([("a",)], [(("a",), (1,)), None, (("b", "c"), (2, 3))])
    ([('a',), ('b', 'c')], array([ 0, -1,  1]), [1, 2, 3])
    """
    key_sets = list(key_sets)
    ids = {keys: k for k, keys in enumerate(key_sets)}
    numbers = np.full(len(made), -1, dtype=np.int64)
    values: list[Any] = []
    for k, item in enumerate(made):
        if item is None:
            continue
        keys, row_values = item
        found = ids.get(keys)
        if found is None:
            found = ids[keys] = len(key_sets)
            key_sets.append(keys)
        numbers[k] = found
        values += row_values
    return key_sets, numbers, values
