"""Read-only containers for frozen traces.

A reader builds a :class:`~traceconv.model.Trace` and hands it over frozen: its columns,
lists and tables keep their types (so every reading path stays as fast as before) but
refuse every change with :class:`FrozenTraceError`. Transformations build a new trace
instead (:mod:`traceconv.model.copying`), so a trace can be shared by any number of
results without one of them corrupting another.

>>> column = FrozenArray("q", [1, 2]); column[1], sum(column)
(2, 3)
>>> column.append(3)
Traceback (most recent call last):
...
traceconv.model.frozen.FrozenTraceError: this trace is frozen (read-only): build a new one (Trace.copy(), traceconv.model.copying)
"""

from __future__ import annotations

from array import array
from functools import partial
from typing import Any, NoReturn, TypeVar

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")


class FrozenTraceError(TypeError):
    """Something tried to change a frozen trace."""

    def __init__(self) -> None:
        super().__init__("this trace is frozen (read-only): build a new one "
                         "(Trace.copy(), traceconv.model.copying)")


def _refuse(self: object, *args: Any, **kwargs: Any) -> NoReturn:
    raise FrozenTraceError


def _refusing(*names: str) -> dict[str, Any]:
    return dict.fromkeys(names, _refuse)


class FrozenArray(array):  # type: ignore[type-arg]
    """An ``array.array`` that refuses changes (reads are the C type's own, unchanged)."""

    __slots__ = ()
    locals().update(_refusing(
        "append", "extend", "frombytes", "fromlist", "fromunicode", "fromfile", "insert",
        "pop", "remove", "reverse", "byteswap", "__setitem__", "__delitem__", "__iadd__",
        "__imul__"))


class FrozenList(list[T]):
    """A ``list`` that refuses changes; a copy of it (``copy``, ``pickle``) is a list."""

    __slots__ = ()

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return list, (list(self),)

    locals().update(_refusing(
        "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
        "__setitem__", "__delitem__", "__iadd__", "__imul__"))


class FrozenDict(dict[K, V]):
    """A ``dict`` that refuses changes; a copy of it (``copy``, ``pickle``) is a dict."""

    __slots__ = ()

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        return dict, (dict(self),)

    locals().update(_refusing(
        "__setitem__", "__delitem__", "__ior__", "clear", "pop", "popitem", "setdefault",
        "update"))


def frozen_array(column: array) -> FrozenArray:  # type: ignore[type-arg]
    """``column`` as a :class:`FrozenArray` (one copy of its bytes; none when it is one)."""
    return column if isinstance(column, FrozenArray) else FrozenArray(column.typecode, column)


def frozen_list(items: list[T]) -> FrozenList[T]:
    """``items`` as a :class:`FrozenList` (itself when it is one)."""
    return items if isinstance(items, FrozenList) else FrozenList(items)


_GRAPH_CHANGES = ("add_node", "add_nodes_from", "remove_node", "remove_nodes_from",
                  "add_edge", "add_edges_from", "add_weighted_edges_from", "remove_edge",
                  "remove_edges_from", "clear", "clear_edges", "update")


def freeze_graph(graph: Any) -> Any:
    """Make a networkx graph refuse structural changes (as ``networkx.freeze`` does, with
    :class:`FrozenTraceError`); returns it.

    >>> import networkx as nx, pickle; g = freeze_graph(nx.DiGraph()); nx.is_frozen(g)
    True
    >>> nx.is_frozen(pickle.loads(pickle.dumps(g)))   # a copy is frozen too
    True
    """
    refuse = partial(_refuse, graph)   # (a bound method would not pickle)
    for name in _GRAPH_CHANGES:
        setattr(graph, name, refuse)
    graph.frozen = True
    return graph
