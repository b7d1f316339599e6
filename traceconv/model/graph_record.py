"""The op graph of a trace traceconv writes, kept for reading back: one record, in the
Perfetto model attribute and the Chrome writer's ``traceconv`` key, made by one rule and read
back by one rule, so what one writer keeps the other keeps.

Neither format has words for a graph (a viewer shows the slices the ops ran as), so the
record holds it whole: every node with its attributes, every edge with its own, the graph's
attributes (``execution_order``). Values are kept as JSON holds them; what the contract of
:mod:`.graph` types otherwise is typed again on reading (spans as :class:`~.graph.OpSpan`,
a tensor's ``shape`` as a tuple); any other tuple comes back a list, and a value JSON cannot
hold (a set, a NaN) is left out (every source's values are JSON ones: none is in practice).

An op's ``slices`` are slice rows, and a reader numbers its rows its own way: the record
names each slice by its place in :func:`slice_order` (by start, length, name, category and
track name, which a round trip keeps), and the reader finds the row at that place in its
own. Reading it back trusts it no further than its types, and all or nothing: a node, an
edge or a slice place not as the writer makes it leaves the graph out, counted
(``input.carried_graph_unread``).

>>> from traceconv.model import Trace
>>> from traceconv.model.graph import OpSpan, add_op, add_tensor
>>> t = Trace(); track = t.add_track("main", process=t.add_process("p"))
>>> _ = t.add_slice(track, 50, 5, "late"); _ = t.add_slice(track, 10, 5, "conv")
>>> op = add_op(t.graph, 1, "conv", slices=[1], host_spans={"main": OpSpan(10, 15)})
>>> t.graph.add_edge(op, add_tensor(t.graph, 2, "y", shape=(2, 3)))
>>> record = graph_record(t)
>>> record["nodes"]["keys"][0][3], record["nodes"]["rows"][0][5]   # (the first by start)
('slices', [0])
>>> again = Trace(); _ = again.add_track("main", process=again.add_process("p"))
>>> _ = again.add_slice(0, 10, 5, "conv"); _ = again.add_slice(0, 50, 5, "late")
>>> import orjson; restore_graph(again, orjson.loads(orjson.dumps(record)))
>>> again.graph.nodes["op/1"]["slices"], again.graph.nodes["op/1"]["host_spans"]
([0], {'main': OpSpan(start_ns=10, end_ns=15, kernel_ns=None)})
>>> again.graph.nodes["tensor/2"]["shape"], list(again.graph.edges)
((2, 3), [('op/1', 'tensor/2')])
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from .graph import SPAN_ATTRS, OpSpan
from .json_values import as_json, holds_json
from .record_check import (
    INT64_NUMBER,
    Bad,
    a_dict,
    a_list,
    a_row,
    a_text,
    each,
    fail,
    index_below,
    optional,
    texts,
)
from .trace import Trace


def slice_order(trace: Trace) -> np.ndarray:
    """The slice rows of ``trace`` sorted by (start, duration, name, category, track name):
    an order that two readings of the same slices share, whatever order each read them in.

    >>> t = Trace(); track = t.add_track("main", process=t.add_process("p"))
    >>> for start, name in ((9, "b"), (3, "z"), (9, "a")):
    ...     _ = t.add_slice(track, start, 1, name)
    >>> slice_order(t).tolist()
    [1, 2, 0]
    """
    s = trace.slices
    string_rank = _ranks(trace.strings.strings)
    track_rank = _ranks([t.name for t in trace.tracks])
    return np.lexsort((track_rank[s.numpy("track")], string_rank[s.numpy("category")],
                       string_rank[s.numpy("name")], s.numpy("dur"), s.numpy("start")))


def _ranks(texts: list[str]) -> np.ndarray:
    """Per text, its place among ``texts`` sorted (equal texts share one)."""
    distinct = sorted(set(texts))
    place = {text: k for k, text in enumerate(distinct)}
    return np.fromiter(map(place.__getitem__, texts), dtype=np.int64, count=len(texts))


def graph_record(trace: Trace) -> dict[str, Any] | None:
    """The op graph of ``trace`` as JSON values (None: the trace has none): ``nodes`` (id,
    attributes) and ``edges`` (from, to, attributes) in graph order as :func:`_keyed` rows,
    the graph's own ``attributes``, and the number of ``slices`` the places of the ops'
    slices count in."""
    if not trace.has_graph:
        return None
    graph = trace.graph
    place: np.ndarray | None = None
    nodes = []
    for node, data in graph.nodes(data=True):
        attrs = _plain(data)
        if "slices" in attrs and isinstance(attrs["slices"], list):
            if place is None:
                place = np.empty(len(trace.slices), dtype=np.int64)
                place[slice_order(trace)] = np.arange(len(trace.slices))
            attrs["slices"] = place[np.asarray(attrs["slices"], dtype=np.int64)].tolist()
        nodes.append(([node], attrs))
    return {"nodes": _keyed(nodes),
            "edges": _keyed(([a, b], _plain(data)) for a, b, data in graph.edges(data=True)),
            "attributes": _plain(graph.graph), "slices": len(trace.slices)}


def _keyed(items: Iterable[tuple[list[Any], dict[str, Any]]]) -> dict[str, Any]:
    """(head, attributes) items as rows [number of their key list, *head, *values] and the
    distinct key lists: a graph's nodes share a few key lists, whose names would otherwise
    be a quarter of the record (MegEngine's).

    >>> _keyed([(["op/1"], {"kind": "op", "order": 0}), (["op/2"], {"kind": "op", "order": 1})])
    {'keys': [['kind', 'order']], 'rows': [[0, 'op/1', 'op', 0], [0, 'op/2', 'op', 1]]}
    """
    key_lists: dict[tuple[str, ...], int] = {}
    rows = [[key_lists.setdefault(tuple(attrs), len(key_lists)), *head, *attrs.values()]
            for head, attrs in items]
    return {"keys": [list(keys) for keys in key_lists], "rows": rows}


def _unkeyed(value: Any, where: str, head: int) -> list[tuple[list[Any], dict[str, Any]]]:
    """The (head, attributes) items of :func:`_keyed`'s ``value`` (``head`` values each)."""
    value = a_dict(value, where)
    key_lists = a_list(value.get("keys"), f"{where}.keys")
    for k, keys in enumerate(key_lists):
        texts(keys, f"{where}.keys[{k}]")
    items = []
    for k, row in enumerate(a_list(value.get("rows"), f"{where}.rows")):
        at = f"{where}.rows[{k}]"
        if type(row) is not list or not row:
            fail(at, "a list")
        index_below(len(key_lists))(row[0], f"{at}[0]")
        keys = key_lists[row[0]]
        if len(row) != 1 + head + len(keys):
            fail(at, f"a list of {1 + head + len(keys)}")
        items.append((row[1:1 + head], dict(zip(keys, row[1 + head:], strict=True))))
    return items


def _plain(attrs: dict[str, Any]) -> dict[str, Any]:
    """The attributes JSON holds, as JSON gives them back (tuples as lists)."""
    return {str(k): as_json(v) for k, v in attrs.items() if holds_json(v)}


def restore_graph(trace: Trace, record: Any) -> None:
    """Give ``trace`` (being read, its slices all in) the op graph ``record`` keeps (as
    :func:`graph_record` makes it), all of it or none: none when a part is not as the writer
    makes it, counted. No record (a file written before graphs were kept, a trace without
    one) gives none.

    >>> t = Trace(); restore_graph(t, {"nodes": {"keys": [[]], "rows": [[0, "op/1"]]},
    ...     "edges": {"keys": [[]], "rows": [[0, "op/1", "op/9"]]}, "attributes": {}, "slices": 0})
    >>> t.has_graph, t.diagnostics.count("input.carried_graph_unread")
    (False, 1)
    """
    if record is None:
        return
    try:
        nodes, edges, attributes = _checked(record, len(trace.slices))
    except Bad as bad:
        trace.diagnostics.add("input.carried_graph_unread", example=str(bad))
        return
    order = slice_order(trace) if any("slices" in data for _, data in nodes) else None
    import networkx as nx  # (only for a trace with a graph)

    graph = nx.DiGraph()
    graph.graph.update(attributes)
    graph.add_nodes_from((node, _typed(data, order)) for node, data in nodes)
    graph.add_edges_from((a, b, data) for a, b, data in edges)
    trace.graph = graph


def _typed(data: dict[str, Any], order: np.ndarray | None) -> dict[str, Any]:
    """A node's attributes as the contract of :mod:`.graph` types them, its slices as rows
    of the trace read (``order``: :func:`slice_order` of it)."""
    for name in SPAN_ATTRS & data.keys():
        data[name] = {place: OpSpan(*span) for place, span in data[name].items()}
    if isinstance(data.get("shape"), list):
        data["shape"] = tuple(data["shape"])
    if order is not None and "slices" in data:
        data["slices"] = order[np.asarray(data["slices"], dtype=np.int64)].tolist()
    return data


_SPAN = (INT64_NUMBER, INT64_NUMBER)


def _checked(record: Any, slices: int) -> tuple[list[Any], list[Any], dict[str, Any]]:
    """``record``'s nodes, edges and attributes, each part checked (:class:`Bad` names the
    first that is not as :func:`graph_record` makes it)."""
    record = a_dict(record, "graph")
    if record.get("slices") != slices:
        fail("graph.slices", f"{slices}, the number of slices read")
    nodes = []
    for k, ((node,), data) in enumerate(_unkeyed(record.get("nodes"), "graph.nodes", 1)):
        a_text(node, f"graph.nodes.rows[{k}][1]")
        _node_values(data, f"graph.nodes.rows[{k}]", slices)
        nodes.append((node, data))
    named = {node for node, _ in nodes}
    edges = []
    for k, ((a, b), data) in enumerate(_unkeyed(record.get("edges"), "graph.edges", 2)):
        for end, node in ((1, a), (2, b)):
            if type(node) is not str or node not in named:
                fail(f"graph.edges.rows[{k}][{end}]", "a node id of graph.nodes")
        edges.append((a, b, data))
    return nodes, edges, a_dict(record.get("attributes"), "graph.attributes")


def _node_values(data: dict[str, Any], where: str, slices: int) -> None:
    """The attributes :func:`_typed` reads: spans, a shape, slice places."""
    for name in SPAN_ATTRS & data.keys():
        for place, span in a_dict(data[name], f"{where}.{name}").items():
            at = f"{where}.{name}.{place}"
            if type(span) is not list or len(span) not in (2, 3):
                fail(at, "a list of 2 or 3")
            a_row(span[:2], at, _SPAN)
            optional(INT64_NUMBER)(span[2] if len(span) == 3 else None, f"{at}[2]")
    if "slices" in data:
        each(data["slices"], f"{where}.slices", index_below(slices))
