"""The op graph of a unit: every instruction an operator, every result a tensor.

Edges follow the inputs (tensor → op) and results (op → tensor). Module inputs
(``if``/``loop``/``pointwise`` bodies) connect both ways: the caller's inputs feed the
body's parameters in order, and what the body returns feeds the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import networkx as nx

from ...model.graph import OP, TENSOR, OpSpan, op_node, tensor_node
from .program import Node, Program
from .timeline import Layout, category, slice_name


class GraphPart(NamedTuple):
    """One unit's program and where it was placed: what its part of the graph is made of."""

    program: Program
    layout: Layout
    prefix: str


def node_counts(parts: Sequence[GraphPart]) -> dict[str, int]:
    """The op and tensor nodes that :func:`fill_graph` makes, counted without making them:
    one op per distinct instruction id, one tensor per distinct id of a non-``@return``."""
    ops = tensors = 0
    for part in parts:
        keys = [(n.module, n.instruction.name) for n in part.program.nodes]
        ops += len(set(keys))
        tensors += len({k for k, n in zip(keys, part.program.nodes, strict=True)
                        if n.instruction.op != "@return"})
    return {OP: ops, TENSOR: tensors}


class _Writer:
    """Nodes and edges written straight into a DiGraph's dicts, with what ``add_node`` and
    ``add_edge`` would do: a node named by an edge first is made bare, a node added again
    gets its attributes updated, an edge added again is kept once."""

    def __init__(self, graph: nx.DiGraph) -> None:
        self.node, self.succ, self.pred = graph._node, graph._succ, graph._pred

    def add_node(self, node: str, attrs: dict) -> None:
        known = self.node.get(node)
        if known is None:
            self.succ[node], self.pred[node] = {}, {}
            self.node[node] = attrs
        else:
            known.update(attrs)

    def add_edge(self, source: str, target: str) -> None:
        for end in (source, target):
            if end not in self.node:
                self.succ[end], self.pred[end] = {}, {}
                self.node[end] = {}
        if target not in self.succ[source]:
            self.succ[source][target] = self.pred[target][source] = {}


def fill_graph(parts: Sequence[GraphPart], graph: nx.DiGraph) -> None:
    """Write the op graph of every unit into ``graph`` (see the module text)."""
    writer = _Writer(graph)
    for part in parts:
        _fill_part(writer, part)


def _fill_part(writer: _Writer, part: GraphPart) -> None:
    program, layout, prefix = part
    ids = [f"{prefix}{n.key}" for n in program.nodes]
    ops = [op_node(i) for i in ids]
    tensors = [tensor_node(i) for i in ids]
    for node in program.nodes:
        ins = node.instruction
        op = ops[node.index]
        attrs: dict = {"kind": OP, "name": slice_name(ins), "type": ins.op,
                       "instruction": ins.name, "module": node.module, "line": ins.line,
                       "slices": layout.rows[node.index], "attributes": dict(ins.attributes)}
        if ins.module_inputs:
            attrs["module_inputs"] = list(ins.module_inputs)
        if ins.debug_symbols:
            attrs["debug_symbols"] = list(ins.debug_symbols)
        if layout.timed and ins.op != "@return":
            attrs.update(_analysis_attrs(program, node, layout))
        writer.add_node(op, attrs)
        if ins.op != "@return":
            writer.add_node(tensors[node.index], {"kind": TENSOR, "name": ins.name,
                                                  **_tensor_attrs(node, tensors)})
            writer.add_edge(op, tensors[node.index])
        for source in node.inputs:
            if source is not None:
                writer.add_edge(tensors[source], op)
    _link_modules(writer, program, ops, tensors)


def _analysis_attrs(program: Program, node: Node, layout: Layout) -> dict:
    """What ``traceconv summary`` reads from op nodes (:mod:`traceconv.model.graph`): spans
    (int ns), shapes, bytes moved."""
    start, end = int(layout.start[node.index]), int(layout.end[node.index])
    shapes = [program.nodes[i].instruction.shape if i is not None else None
              for i in node.inputs]
    out = node.instruction.shape
    attrs: dict = {"device_spans": {"device": OpSpan(start, end, start)},
                   "in_shapes": [list(s.lens) if s and s.lens is not None else []
                                 for s in shapes],
                   "out_shapes": [list(out.lens)] if out and out.lens is not None else []}
    if category(node.instruction) == "migraphx.kernel":
        moved = [s.bytes for k, s in enumerate(shapes) if s and k != node.output_arg]
        if out is not None:
            moved.append(out.bytes)
        if moved and None not in moved:
            attrs["memory"] = sum(b for b in moved if b is not None)
    return attrs


def _tensor_attrs(node: Node, tensors: list[str]) -> dict:
    shape = node.instruction.shape
    attrs: dict = {"storage": node.storage.value}
    if shape is not None:
        attrs.update(dtype=shape.dtype, bytes=shape.bytes, shape_text=shape.text)
        if shape.lens is not None:
            attrs["shape"] = tuple(shape.lens)
            attrs["strides"] = tuple(shape.strides or ())
    if node.root is not None and node.root != node.index:
        # (its memory block is its root's: the one whose owner_tensor is alias_of)
        attrs["alias_of"] = tensors[node.root]
    return attrs


def _link_modules(writer: _Writer, program: Program, ops: list[str],
                  tensors: list[str]) -> None:
    modules = program.modules()
    for node in program.nodes:
        for name in node.instruction.module_inputs:
            body = modules.get(name, [])
            params = [n for n in body if n.instruction.op == "@param"]
            for source, param in zip(node.inputs, params, strict=False):
                if source is not None:
                    writer.add_edge(tensors[source], ops[param.index])
            for ret in (n for n in body if n.instruction.op == "@return"):
                for source in ret.inputs:
                    if source is not None:
                        writer.add_edge(tensors[source], ops[node.index])
