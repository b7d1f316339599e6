"""The op/tensor graph: a networkx DiGraph with two node kinds.

Operator nodes (``kind="op"``) and tensor nodes (``kind="tensor"``); an edge op → tensor
means "produces", tensor → op means "consumes". Node ids are strings (``op/<id>``,
``tensor/<id>``) so the graph exports to GraphML and DOT unchanged. An operator's
``slices`` attribute lists the slice rows that executed it.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

OP = "op"
TENSOR = "tensor"


def op_node(op_id: object) -> str:
    """The node id of operator ``op_id``.

    >>> op_node(12)
    'op/12'
    """
    return f"{OP}/{op_id}"


def tensor_node(tensor_id: object) -> str:
    """The node id of tensor ``tensor_id``.

    >>> tensor_node("x")
    'tensor/x'
    """
    return f"{TENSOR}/{tensor_id}"


def add_op(graph: nx.DiGraph, op_id: object, name: str, type: str = "", **attrs: Any) -> str:
    """Add (or update) an operator node and return its node id.

    >>> g = nx.DiGraph(); add_op(g, 1, "conv1", "Convolution", flops=10)
    'op/1'
    """
    node = op_node(op_id)
    graph.add_node(node, kind=OP, name=name, type=type, **attrs)
    return node


def add_tensor(graph: nx.DiGraph, tensor_id: object, name: str, **attrs: Any) -> str:
    """Add (or update) a tensor node (shape, dtype, bytes, ... as attributes) and return its id.

    >>> g = nx.DiGraph(); add_tensor(g, 7, "x", shape=(1, 3), dtype="float32")
    'tensor/7'
    """
    node = tensor_node(tensor_id)
    graph.add_node(node, kind=TENSOR, name=name, **attrs)
    return node


def count_kind(graph: nx.DiGraph, kind: str) -> int:
    """How many nodes of ``kind`` (``"op"`` or ``"tensor"``) the graph holds."""
    return sum(1 for _, k in graph.nodes(data="kind") if k == kind)
