"""The args of the rows whose annotations are not simply their BEGIN's: a slice with
annotations on its END too, a name given twice, dotted names the writer nested.

Most rows take their values as they come (a key set and values one row after another).
The others are made here and put in place in one pass, never row by row into the model's
column: a dotted-name row (CUDA kernels carry ``est. achieved occupancy %``, which the
writer nests as ``est`` → `` achieved occupancy %``) is flattened once per key set and
shape of its nested values, and the rows of that shape only take their values apart.

>>> dotted = frozenset({"est.occ"})
>>> plan = dotted_plan(("grid", "est"), (None, (("occ", None),)), dotted)
>>> plan
(('grid', 'est.occ'), ((0,), (1, 'occ')))
>>> taken([[[1, 1], {"occ": 50}], [[2, 1], {"occ": 25}]], plan[1])
[([1, 1], 50), ([2, 1], 25)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import reduce
from operator import getitem
from typing import Any

import numpy as np

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


def shape(value: Any) -> Any:
    """What flattening looks at in a value: None for anything but a dict, else its keys
    and their values' shapes (nested dicts all the way down).

    >>> shape({"a": 1, "b": {"c": [2]}}), shape([1])
    ((('a', None), ('b', (('c', None),))), None)
    """
    if type(value) is not dict:
        return None
    return tuple((key, shape(item)) for key, item in value.items())


def _probe(shape_of: Any, path: Path) -> Any:
    if shape_of is None:
        return _Leaf(path)
    probe = _Nested({key: _probe(inner, (*path, key)) for key, inner in shape_of})
    probe.path = path
    return probe


def dotted_plan(keys: tuple[str, ...], shapes: tuple[Any, ...], dotted: frozenset[str]
                ) -> tuple[tuple[str, ...], tuple[Path, ...]]:
    """The keys of rows of key set ``keys`` flattened, and where each key's value lies,
    for rows whose values have ``shapes`` (one per key, see :func:`shape`): flattening
    run once on a probe row of that shape."""
    probe = {key: _probe(one, (k,)) for k, (key, one) in enumerate(zip(keys, shapes,
                                                                        strict=True))}
    flat = flatten_dotted(probe, dotted)
    return tuple(flat), tuple(value.path for value in flat.values())


def taken(rows: list[list[Any]], paths: tuple[Path, ...]) -> list[tuple[Any, ...]]:
    """The values at ``paths`` of each of ``rows`` (lists of a row's values)."""
    columns = []
    for path in paths:
        column = [row[path[0]] for row in rows]
        if len(path) > 1:
            column = [reduce(getitem, path[1:], value) for value in column]
        columns.append(column)
    return list(zip(*columns, strict=True))


def flattened(keys: tuple[str, ...], rows: list[list[Any]], dotted: frozenset[str]
              ) -> list[tuple[tuple[str, ...], tuple[Any, ...]]]:
    """Rows of key set ``keys`` (their values) with dotted names flat again, as
    :func:`~.model_attribute.flatten_dotted` makes each: (keys, values) per row."""
    shapes_seen: dict[int, Any] = {}   # id of a (shared) value -> its shape

    def shape_of(value: Any) -> Any:
        if type(value) is not dict:
            return None
        found = shapes_seen.get(id(value))
        if found is None:
            found = shapes_seen[id(value)] = shape(value)
        return found

    heads = [k for k, key in enumerate(keys)
             if any(name.startswith(key + ".") for name in dotted)]
    none = (None,) * len(keys)
    groups: dict[tuple[Any, ...], list[int]] = {}
    for index, row in enumerate(rows):
        one = list(none)
        for k in heads:
            one[k] = shape_of(row[k])
        groups.setdefault(tuple(one), []).append(index)
    out: list[Any] = [None] * len(rows)
    for row_shape, indexes in groups.items():
        flat_keys, paths = dotted_plan(keys, row_shape, dotted)
        for index, values in zip(indexes, taken([rows[i] for i in indexes], paths),
                                 strict=True):
            out[index] = (flat_keys, values)
    return out


def put_rows(key_sets: Sequence[tuple[str, ...]], sets: np.ndarray, values: list[Any],
             rows: np.ndarray, made: list[tuple[tuple[str, ...], Sequence[Any]] | None]
             ) -> tuple[list[tuple[str, ...]], np.ndarray, list[Any]]:
    """Rows ``rows`` (ascending) of the layout (``sets``: key-set numbers, -1 for none;
    ``values`` one row after another) replaced by ``made`` ((keys, values), or None for no
    args): the new key sets, numbers and values.

    >>> key_sets, sets, values = put_rows([("a",)], np.array([0, 0]), [1, 2], np.array([1]),
    ...                                   [(("b", "c"), (3, 4))])
    >>> key_sets, sets.tolist(), values
    ([('a',), ('b', 'c')], [0, 1], [1, 3, 4])
    """
    key_sets = list(key_sets)
    ids = {keys: k for k, keys in enumerate(key_sets)}
    widths = np.array([len(k) for k in key_sets] + [0], dtype=np.int64)
    sizes = widths[np.where(sets >= 0, sets, len(key_sets))]
    starts = (np.cumsum(sizes) - sizes).tolist()
    ends = np.cumsum(sizes).tolist()
    new_sets = sets.astype(np.int64)
    out: list[Any] = []
    done = 0
    for row, item in zip(rows.tolist(), made, strict=True):
        out += values[done:starts[row]]
        done = ends[row]
        if item is None:
            new_sets[row] = -1
            continue
        keys, row_values = item
        found = ids.get(keys)
        if found is None:
            found = ids[keys] = len(key_sets)
            key_sets.append(keys)
        new_sets[row] = found
        out += row_values
    out += values[done:]
    return key_sets, new_sets, out


def merged_rows(key_sets: Sequence[tuple[str, ...]], sets: np.ndarray, values: list[Any],
                rows: np.ndarray, end_args: Callable[[int], dict[str, Any]],
                with_end: np.ndarray, dotted: frozenset[str]
                ) -> list[tuple[tuple[str, ...], Sequence[Any]] | None]:
    """The args of each of ``rows`` (ascending): its own values (a name given twice keeps
    its last), then, where ``with_end``, ``end_args(row)`` (its END's), dotted names flat
    again. Rows with nothing from an END are flattened a key set at a time
    (:func:`flattened`).

    >>> merged_rows([("a", "a"), ("b",)], np.array([0, 1]), [1, 2, 3], np.array([0, 1]),
    ...             lambda row: {"e": 4}, np.array([False, True]), frozenset())
    [(('a',), (2,)), (('b', 'e'), (3, 4))]
    """
    widths = np.array([len(k) for k in key_sets] + [0], dtype=np.int64)
    sizes = widths[np.where(sets >= 0, sets, len(key_sets))]
    starts = (np.cumsum(sizes) - sizes)[rows].tolist()
    made: list[Any] = [None] * len(rows)
    by_set: dict[int, list[int]] = {}
    for k, (row, key_set, start, end) in enumerate(zip(
            rows.tolist(), sets[rows].tolist(), starts, with_end.tolist(), strict=True)):
        keys = key_sets[key_set] if key_set >= 0 else ()
        if dotted and not end and keys and len(set(keys)) == len(keys):
            by_set.setdefault(key_set, []).append(k)
            continue
        args = dict(zip(keys, values[start:start + len(keys)], strict=True))
        if end:
            args.update(end_args(row))
        if dotted:
            args = flatten_dotted(args, dotted)
        made[k] = (tuple(args), tuple(args.values())) if args else None
    for key_set, ks in by_set.items():
        keys = key_sets[key_set]
        found = flattened(keys, [values[starts[k]:starts[k] + len(keys)] for k in ks], dotted)
        for k, item in zip(ks, found, strict=True):
            made[k] = item if item[0] else None
    return made
