"""GraphML output of the op graph (``trace.graph``): ops, tensors and their edges.

GraphML attributes are scalars, so lists and mappings (shapes, timings, params) are
written as JSON text and missing values are left out.
"""

from __future__ import annotations

from typing import Any, BinaryIO

import networkx as nx
import orjson

from ...model import Trace


def scalar(value: Any) -> str | int | float | bool | None:
    """A GraphML-storable form of ``value`` (JSON text for containers, None to omit).

    >>> scalar((4, 16)), scalar("x"), scalar(None), scalar({"pad": 1})
    ('[4,16]', 'x', None, '{"pad":1}')
    """
    if value is None or isinstance(value, str | bool | int | float):
        return value
    try:
        return orjson.dumps(value, default=str, option=orjson.OPT_SERIALIZE_NUMPY).decode()
    except TypeError:   # an int over 64 bits, nested: its text; nesting past orjson's 254
        try:            # levels: its text too, unless Python's own repr gives up as well
            return str(value)
        except RecursionError:
            return f"<{type(value).__name__} nested too deep to write>"


def flat_graph(graph: nx.DiGraph) -> nx.DiGraph:
    """A copy of ``graph`` whose node and edge attributes are all scalars."""
    flat = nx.DiGraph()
    for node, data in graph.nodes(data=True):
        flat.add_node(node, **{k: v for k, v in ((k, scalar(v)) for k, v in data.items())
                               if v is not None})
    for src, dst, data in graph.edges(data=True):
        flat.add_edge(src, dst, **{k: v for k, v in ((k, scalar(v)) for k, v in data.items())
                                   if v is not None})
    return flat


def write(trace: Trace, out: BinaryIO) -> None:
    """Write ``trace.graph`` as GraphML."""
    nx.write_graphml(flat_graph(trace.graph), out, encoding="utf-8")
