"""From execution-trace nodes to the op graph: op nodes, versioned tensor nodes, data edges.

Node layout (Chakra schema 1.1, PyTorch 2.x ``ExecutionTraceObserver``)::

    {"id", "name", "ctrl_deps": parent id,
     "inputs":  {"values", "shapes", "types", "strides"},
     "outputs": {"values", "shapes", "types", "strides"},
     "attrs": [{"name": "rf_id", "type": "uint64", "value": 7}, ...]}

The 1.0 layout puts the same facts in flat keys (``inputs`` as a list beside
``input_shapes`` / ``input_types``, ``rf_id`` / ``parent`` / ``tid`` at the top level); both
are read. A tensor argument (type ``Tensor(float)``) is ``[tensor_id, storage_id, offset,
numel, elem_bytes, device]``; a ``GenericList[Tensor(...), ...]`` holds several.

Ops nest (``aten::conv2d`` → ``aten::convolution`` → ``aten::cudnn_convolution``, with
helper ops such as ``aten::empty`` inside) and every level lists the same tensors, so data
edges are drawn for the **outermost ops that touch tensors** only (``data_op``: the ops as
the model's code called them, and the autograd nodes of the backward pass); every op is a
node, its parent in the ``parent`` attribute. A tensor written again (in place, ``out=``)
gets a new version node, so edges always run forward.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

import networkx as nx

from ...model import Diagnostics
from ...model.graph import add_op, add_tensor, cut_parent_cycles, op_node, tensor_node

# process / thread root nodes ("execution_graph" in schema 1.0.1, "execution_trace" since)
STRUCTURE_PREFIXES = ("[pytorch|profiler|execution_trace|", "[pytorch|profiler|execution_graph|")
OP_ATTRS = ("rf_id", "tid", "fw_tid", "scope", "seq_id", "op_schema", "kernel_backend",
            "kernel_file")


@dataclass(frozen=True)
class TensorRef:
    """One tensor argument of one op."""

    tensor_id: int
    storage_id: int
    offset: int
    numel: int
    elem_bytes: int
    device: str
    shape: tuple[Any, ...] | None
    dtype: str | None
    strides: tuple[Any, ...] | None

    @property
    def key(self) -> tuple[int, int]:
        return self.tensor_id, self.storage_id


def node_attrs(node: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The node's attributes as a dict, from either schema layout, and how many attribute
    entries were left out (not an object with a string ``name``).

    >>> node_attrs({"attrs": [{"name": "rf_id", "type": "uint64", "value": 7}, [1], {}]})
    ({'rf_id': 7}, 2)
    >>> node_attrs({"rf_id": 7, "parent": 3, "tid": 1})[0]["rf_id"]
    7
    """
    attrs = node.get("attrs")
    if isinstance(attrs, list):
        named = [a for a in attrs if isinstance(a, dict) and isinstance(a.get("name"), str)]
        return {a["name"]: a.get("value") for a in named}, len(attrs) - len(named)
    return {k: node[k] for k in (*OP_ATTRS, "fw_parent") if k in node}, 0


def arguments(node: dict[str, Any], side: str) -> tuple[list[Any], list[Any], list[Any],
                                                          list[Any]]:
    """(values, shapes, types, strides) of ``side`` ("inputs" / "outputs"), either layout."""
    block = node.get(side)
    if isinstance(block, dict):
        return (_list(block.get("values")), _list(block.get("shapes")),
                _list(block.get("types")), _list(block.get("strides")))
    singular = side[:-1]
    return (_list(block), _list(node.get(f"{singular}_shapes")),
            _list(node.get(f"{singular}_types")), _list(node.get(f"{singular}_strides")))


class Malformed(ValueError):
    """A node field of the wrong type (the builder counts the node and skips what it can)."""


def _list(value: Any) -> list[Any]:
    """An argument field: a list, or nothing (missing / null / empty)."""
    if isinstance(value, list):
        return value
    if value is None or value == "" or value == {}:
        return []
    raise Malformed(f"a list expected, got {type(value).__name__}")


def tensor_refs(values: list[Any], shapes: list[Any], types: list[Any],
                strides: list[Any]) -> list[TensorRef]:
    """The tensors among an op's arguments (lists of tensors flattened).

    >>> [t.key for t in tensor_refs([[7, 8, 0, 6, 4, "cuda:0"], 3], [[2, 3], []],
    ...                             ["Tensor(float)", "Int"], [[3, 1], []])]
    [(7, 8)]
    >>> tensor_refs([[[1, 2, 0, 4, 2, "cpu"]]], [[[4]]], ["GenericList[Tensor(half)]"], [])[0].dtype
    'half'
    """
    refs = []
    for i, kind in enumerate(types):
        if not isinstance(kind, str) or "Tensor" not in kind:
            continue
        value = values[i] if i < len(values) else None
        shape = shapes[i] if i < len(shapes) else None
        stride = strides[i] if i < len(strides) else None
        if kind.startswith("Tensor"):
            items = [(value, shape, stride, kind)]
        else:   # GenericList[Tensor(float),Tensor(float)] / optional lists
            inner = [k.strip() for k in kind[kind.find("[") + 1:-1].split(",")]
            items = [(v, _at(shape, j), _at(stride, j), _at(inner, j) or "")
                     for j, v in enumerate(_list(value))]
        for v, s, st, k in items:
            ref = _ref(v, s, st, k)
            if ref is not None:
                refs.append(ref)
    return refs


def _at(items: Any, index: int) -> Any:
    return items[index] if isinstance(items, list) and index < len(items) else None


def _ref(value: Any, shape: Any, strides: Any, kind: str) -> TensorRef | None:
    if not (isinstance(value, list) and len(value) >= 5
            and all(isinstance(x, int) for x in value[:5])):
        return None
    dtype = kind[kind.find("(") + 1:kind.rfind(")")] if "(" in kind else None
    return TensorRef(value[0], value[1], value[2], value[3], value[4],
                     str(value[5]) if len(value) > 5 else "",
                     tuple(shape) if isinstance(shape, list) else None, dtype,
                     tuple(strides) if isinstance(strides, list) else None)


def _is_id(value: Any) -> bool:
    return type(value) is int


def _ancestors(op_id: Any, parents: dict[Any, Any]) -> list[Any]:
    """The parent chain of ``op_id`` (its cycles cut before: :meth:`GraphBuilder.add_nodes`).

    >>> _ancestors(3, {3: 2, 2: 1, 1: None})
    [2, 1]
    """
    chain, seen = [], {op_id}
    parent = parents.get(op_id)
    while parent in parents and parent not in seen:
        chain.append(parent)
        seen.add(parent)
        parent = parents[parent]
    return chain


class GraphBuilder:
    """Adds the nodes of one execution trace to ``graph`` (see the module docstring)."""

    def __init__(self, graph: nx.DiGraph, diagnostics: Diagnostics) -> None:
        self.graph = graph
        self.diagnostics = diagnostics
        self.skipped: Counter[str] = Counter()
        self._version: dict[tuple[int, int], int] = {}   # tensor key -> latest version

    def add_nodes(self, nodes: list[dict[str, Any]]) -> None:
        ops: dict[int, dict[str, Any]] = {}
        for n in nodes:
            if not isinstance(n, dict) or not _is_id(n.get("id")):
                self.skipped["malformed"] += 1   # (ids are ints: they order the ops)
            elif str(n.get("name", "")).startswith(STRUCTURE_PREFIXES):
                self.skipped["structure"] += 1
            elif n["id"] in ops:   # (an id names one op: the first node keeps it)
                self.skipped["duplicate_id"] += 1
            else:
                ops[n["id"]] = n
        # (in id order: an op's id is given when it starts, so the first of a cycle is the
        # outermost; the file lists ops as they end, innermost first)
        parents = {i: self._parent(ops[i]) for i in sorted(ops)}
        # (parent ids are the file's: a cycle is cut, counted, before any walk up the ops)
        cut_parent_cycles(parents, self.diagnostics)
        tensors = {i: self._tensors(n) for i, n in ops.items()}
        touches = {i for i, (ins, outs) in tensors.items() if ins or outs}
        for op_id in sorted(ops):
            data_op = op_id in touches and not any(
                a in touches for a in _ancestors(op_id, parents))
            self._add_op(ops[op_id], parents[op_id], ops, tensors[op_id], data_op)

    def _parent(self, node: dict[str, Any]) -> int | None:
        parent = node.get("ctrl_deps", node.get("parent"))
        if parent is not None and not _is_id(parent):
            self.skipped["malformed"] += 1   # a list or text where the parent id belongs
            return None
        return parent

    def _tensors(self, node: dict[str, Any]) -> tuple[list[TensorRef], list[TensorRef]]:
        try:
            return (tensor_refs(*arguments(node, "inputs")),
                    tensor_refs(*arguments(node, "outputs")))
        except Malformed:
            self.skipped["malformed"] += 1
            return [], []

    def _add_op(self, node: dict[str, Any], parent: Any, ops: dict[Any, Any],
                tensors: tuple[list[TensorRef], list[TensorRef]], data_op: bool) -> None:
        attrs, left_out = node_attrs(node)
        self.skipped["malformed"] += left_out
        name = str(node.get("name", ""))
        inputs, outputs = tensors
        op = add_op(self.graph, node["id"], name, name,
                    parent=op_node(parent) if parent in ops else None,
                    data_op=data_op, in_shapes=[list(t.shape or ()) for t in inputs],
                    out_shapes=[list(t.shape or ()) for t in outputs],
                    **{k: attrs[k] for k in OP_ATTRS if k in attrs and attrs[k] != ""})
        if not data_op:
            return
        for ref in inputs:
            self.graph.add_edge(self._tensor(ref), op)
        for ref in outputs:
            if ref.key in self._version:   # seen before: this write makes a new version
                self._version[ref.key] += 1
            tensor = self._tensor(ref)
            self.graph.add_edge(op, tensor)
            self.graph.nodes[tensor]["owner"] = op

    def _tensor(self, ref: TensorRef) -> str:
        version = self._version.setdefault(ref.key, 0)
        key = f"{ref.tensor_id}:{ref.storage_id}" + (f"@v{version}" if version else "")
        node = tensor_node(key)
        if node not in self.graph:
            add_tensor(self.graph, key, key, et_tensor_id=ref.tensor_id,
                       storage_id=ref.storage_id, offset=ref.offset, numel=ref.numel,
                       bytes=ref.numel * ref.elem_bytes, shape=ref.shape, dtype=ref.dtype,
                       strides=ref.strides, device=ref.device, version=version)
        return node
