"""The op graph of a unit: every instruction an operator, every result a tensor.

Edges follow the inputs (tensor → op) and results (op → tensor). Module inputs
(``if``/``loop``/``pointwise`` bodies) connect both ways: the caller's inputs feed the
body's parameters in order, and what the body returns feeds the caller.
"""

from __future__ import annotations

import networkx as nx

from ...model.graph import OpSpan, add_op, add_tensor, op_node, tensor_node
from .program import Node, Program, Storage
from .timeline import Layout, category, slice_name


def add_graph(graph: nx.DiGraph, program: Program, layout: Layout, prefix: str,
              blocks: dict[int, int]) -> None:
    """Add ``program`` to ``graph``; ``blocks`` maps storage-owner index → memory block."""
    ids = [f"{prefix}{n.key}" for n in program.nodes]
    for node in program.nodes:
        ins = node.instruction
        op = add_op(graph, ids[node.index], slice_name(ins), ins.op, instruction=ins.name,
                    module=node.module, line=ins.line, slices=layout.rows[node.index],
                    attributes=dict(ins.attributes))
        if ins.module_inputs:
            graph.nodes[op]["module_inputs"] = list(ins.module_inputs)
        if ins.debug_symbols:
            graph.nodes[op]["debug_symbols"] = list(ins.debug_symbols)
        if layout.timed and ins.op != "@return":
            graph.nodes[op].update(_analysis_attrs(program, node, layout))
        if ins.op != "@return":
            graph.add_edge(op, add_tensor(graph, ids[node.index], ins.name,
                                          **_tensor_attrs(node, ids, blocks)))
        for source in node.inputs:
            if source is not None:
                graph.add_edge(tensor_node(ids[source]), op)
    _link_modules(graph, program, ids)


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


def _tensor_attrs(node: Node, ids: list[str], blocks: dict[int, int]) -> dict:
    shape = node.instruction.shape
    attrs: dict = {"storage": node.storage.value}
    if shape is not None:
        attrs.update(dtype=shape.dtype, bytes=shape.bytes, shape_text=shape.text)
        if shape.lens is not None:
            attrs["shape"] = tuple(shape.lens)
            attrs["strides"] = tuple(shape.strides or ())
    if node.root is not None and node.root != node.index:
        attrs["alias_of"] = tensor_node(ids[node.root])
    if node.root is not None and node.root in blocks and node.storage != Storage.POOL:
        attrs["memory_block"] = blocks[node.root]
    return attrs


def _link_modules(graph: nx.DiGraph, program: Program, ids: list[str]) -> None:
    modules = program.modules()
    for node in program.nodes:
        for name in node.instruction.module_inputs:
            body = modules.get(name, [])
            params = [n for n in body if n.instruction.op == "@param"]
            for source, param in zip(node.inputs, params, strict=False):
                if source is not None:
                    graph.add_edge(tensor_node(ids[source]), op_node(ids[param.index]))
            for ret in (n for n in body if n.instruction.op == "@return"):
                for source in ret.inputs:
                    if source is not None:
                        graph.add_edge(tensor_node(ids[source]), op_node(ids[node.index]))
