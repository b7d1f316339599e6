"""An op graph that a reader describes now and networkx holds only once something uses it.

A networkx node costs about a kilobyte (its attribute dict and two adjacency dicts): the
graph of a 200,000-instruction MIGraphX program is most of the memory of reading its
50 MB perf log, while ``info`` and a conversion to Perfetto never look at it. A reader
gives :class:`LazyDiGraph` a ``fill`` function and the node counts; the first look at
the nodes or edges (``graph.nodes``, ``len(graph)``, an algorithm, a pickle) runs
``fill``, which writes the nodes and edges straight into the graph's dicts, and the
graph becomes a plain :class:`networkx.DiGraph` from then on: the same nodes, attributes
and edges, in the same order, as if the reader had added them at once.

A frozen trace's graph stays frozen: ``fill`` writes the dicts, never through the
``add_*`` methods that freezing takes away.

>>> def fill(g):
...     g._node.update({"op/1": {"kind": "op"}, "tensor/1": {"kind": "tensor"}})
...     g._succ.update({"op/1": {"tensor/1": {}}, "tensor/1": {}})
...     g._pred.update({"op/1": {}, "tensor/1": {"op/1": g._succ["op/1"]["tensor/1"]}})
>>> g = LazyDiGraph(fill, {"op": 1, "tensor": 1})
>>> from traceconv.model.graph import count_kind
>>> count_kind(g, "op"), type(g).__name__          # counted without filling
(1, 'LazyDiGraph')
>>> list(g.edges), type(g).__name__
([('op/1', 'tensor/1')], 'DiGraph')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import networkx as nx

from .frozen import frozen_graph_class

_STORAGE = ("_node", "_adj", "_succ", "_pred")


def _filled_on_use(name: str) -> property:
    """The storage attribute ``name``: filled first when the graph is not yet."""
    resetter = getattr(nx.DiGraph, name)   # networkx's own setter (it resets cached views)

    def get(self: LazyDiGraph) -> Any:
        self.fill_now()
        return self.__dict__[name]

    def set(self: LazyDiGraph, value: Any) -> None:
        resetter.__set__(self, value)

    return property(get, set)


class LazyDiGraph(nx.DiGraph):
    """A DiGraph filled by ``fill`` on first use; ``counts`` (kind → nodes of that kind)
    answers :func:`~traceconv.model.graph.count_kind` before that (see the module text)."""

    _node = _filled_on_use("_node")
    _adj = _filled_on_use("_adj")
    _succ = _filled_on_use("_succ")
    _pred = _filled_on_use("_pred")

    def __init__(self, fill: Callable[[nx.DiGraph], None] | None = None,
                 counts: dict[str, int] | None = None, **attr: Any) -> None:
        super().__init__(**attr)
        if fill is None:   # networkx's copy() makes an empty one of the graph's class
            self.__class__ = nx.DiGraph   # type: ignore[assignment]
            return
        for name in _STORAGE:
            del self.__dict__[name]
        self.__dict__["_fill"] = fill
        self.__dict__["unfilled_counts"] = dict(counts or {})

    def fill_now(self) -> None:
        """Make the nodes and edges now (the first use does it); a frozen one stays
        frozen (:func:`~traceconv.model.frozen.freeze_graph`: set past its refusals)."""
        fill = self.__dict__.pop("_fill")
        del self.__dict__["unfilled_counts"]
        filled = frozen_graph_class(nx.DiGraph) if getattr(self, "frozen", False) \
            else nx.DiGraph
        object.__setattr__(self, "__class__", filled)
        for name in ("_node", "_adj", "_pred"):   # (networkx's setters: _adj sets _succ)
            object.__setattr__(self, name, {})
        fill(self)

    def __reduce_ex__(self, protocol: Any) -> Any:   # pickle and copy: the filled graph
        self.fill_now()
        return self.__reduce_ex__(protocol)


def is_unfilled(graph: object) -> bool:
    """Whether ``graph`` is a :class:`LazyDiGraph` nobody has looked into yet (asking does
    not fill it).

    >>> is_unfilled(LazyDiGraph(lambda g: None)), is_unfilled(nx.DiGraph())
    (True, False)
    """
    return "_fill" in getattr(graph, "__dict__", {})
