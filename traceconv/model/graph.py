"""The op/tensor graph: a networkx DiGraph with two node kinds, and what its nodes carry.

Operator nodes (``kind="op"``) and tensor nodes (``kind="tensor"``); an edge op → tensor
means "produces", tensor → op means "consumes". Node ids are strings (``op/<id>``,
``tensor/<id>``) so the graph exports to GraphML and DOT unchanged.

The attribute contract
----------------------
Readers put vendor facts on nodes under these names and units only, so that ``summary``,
``advise`` and ``critical-path`` read concepts, never one vendor's conventions
(:class:`OpAttrs`, :class:`TensorAttrs`; a reader may add other, vendor-prefixed keys):

- times are :class:`OpSpan` values in integer nanoseconds **on the trace clock** (the clock
  of the slices), per place (a device stream / comp node, or a host thread):
  ``device_spans`` and ``host_spans``; ``kernel_ns`` is when the kernel itself began
  (``start_ns``..``kernel_ns`` was waiting), None when the source does not say;
- ``computation`` is a count of floating-point operations, ``memory`` a count of bytes
  read and written (both int);
- ``slices`` lists the slice rows that executed the op;
- ``parent`` (op) is the node id of the enclosing op, ``owner`` (tensor) the node id of the
  op that produces it; the graph attribute ``execution_order`` lists op node ids in the
  order they ran.

:attr:`MemoryBlock.owner_op <traceconv.model.entities.MemoryBlock.owner_op>` is the node id
of the op that owns a block, always a node of this graph, or None;
:attr:`MemoryBlock.owner_name <traceconv.model.entities.MemoryBlock.owner_name>` is that op's
``name``. Readers with no op graph leave ``owner_op`` None and put the
owning op's name, as their source records it, in ``owner_name``.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, MutableMapping
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict, TypeVar

if TYPE_CHECKING:   # networkx loads only when a trace has a graph (CLI start-up, readers)
    import networkx as nx

    from .diagnostics import Diagnostics

OP = "op"
TENSOR = "tensor"
Op = TypeVar("Op", bound=Hashable)   # what names an op in a parents map (an id, a node id)

# The node attributes that link to another node, each with the kind it must name: what
# copying a graph renumbers (traceconv.model.copying) and the validator checks. A link to
# another table is never a row number in an attribute (copying renumbers rows): a tensor
# finds its memory block by the block's owner_tensor (traceconv.model.memory).
NODE_LINKS: dict[str, str] = {"parent": OP,      # an op's enclosing op
                              "owner": OP,       # a tensor's producer
                              "alias_of": TENSOR}  # the tensor whose storage this one is
NODE_ID_ATTRS = frozenset(NODE_LINKS)
# place -> OpSpan maps, or (on the graph itself) lists of op node ids: what copying shifts
# or renumbers too
SPAN_ATTRS = frozenset({"device_spans", "host_spans"})
NODE_LIST_GRAPH_ATTRS = frozenset({"execution_order"})


class OpSpan(NamedTuple):
    """When an op ran at one place, in integer ns on the trace clock."""

    start_ns: int
    end_ns: int
    kernel_ns: int | None = None   # the kernel began here; before it the op was waiting

    @property
    def dur_ns(self) -> int:
        return self.end_ns - self.start_ns


class OpAttrs(TypedDict, total=False):
    """The attributes of an operator node that analyses may rely on."""

    kind: str                          # OP
    name: str
    type: str
    slices: list[int]                  # slice rows that executed the op
    order: int                         # position in the execution order, when known
    device_spans: dict[str, OpSpan]    # place (stream / comp node) -> span
    host_spans: dict[str, OpSpan]      # place (thread) -> span
    computation: int | None            # floating-point operations
    memory: int | None                 # bytes read and written
    in_shapes: list[list[int]] | None
    out_shapes: list[list[int]] | None
    # the source's own times in float seconds, place -> {where: (start, kernel, end)}, for
    # tools whose every printed digit is reproduced (MegEngine's profile_analyze)
    source_seconds: dict[str, dict[str, tuple[float, float, float]]]


class TensorAttrs(TypedDict, total=False):
    """The attributes of a tensor node that analyses may rely on."""

    kind: str                          # TENSOR
    name: str
    shape: tuple[int, ...] | None
    dtype: str | None
    bytes: int | None
    owner: str                         # node id of the op that produces it
    alias_of: str                      # node id of the tensor whose storage this one is


def op_spans(attrs: dict[str, Any], place: str) -> dict[str, OpSpan]:
    """The ``device`` or ``host`` spans of an op node (empty when it has none).

    >>> op_spans({"device_spans": {"gpu0": OpSpan(10, 50, 20)}}, "device")["gpu0"].dur_ns
    40
    """
    spans: dict[str, OpSpan] = attrs.get(f"{place}_spans") or {}
    return spans


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

    >>> import networkx as nx; g = nx.DiGraph(); add_op(g, 1, "conv1", "Convolution", flops=10)
    'op/1'
    """
    node = op_node(op_id)
    graph.add_node(node, kind=OP, name=name, type=type, **attrs)
    return node


def parent_cycles(parents: MutableMapping[Op, Any]) -> list[list[Op]]:
    """The cycles of ``parents`` (op -> its parent op, or None), each as the ops on it from
    the one that comes first in ``parents`` (a parent is recorded before the ops it
    encloses: the first one of a cycle is its outermost op). A parent that is no key of
    ``parents`` ends its chain.

    >>> parent_cycles({1: None, 2: 1, 3: 3, 4: 6, 5: 4, 6: 5, 7: 5, 8: "elsewhere"})
    [[3], [4, 6, 5]]
    """
    position = {op: at for at, op in enumerate(parents)}
    done: set[Op] = set()
    cycles: list[list[Op]] = []
    for op in parents:
        path: dict[Op, None] = {}   # (the chain walked from ``op``, in order)
        node: Any = op
        while _among(node, parents) and not _among(node, done) and not _among(node, path):
            path[node] = None
            node = parents[node]
        if _among(node, path):
            chain = list(path)
            cycle = chain[chain.index(node):]
            first = min(range(len(cycle)), key=lambda at: position[cycle[at]])
            cycles.append(cycle[first:] + cycle[:first])
        done.update(path)
    return cycles


def _among(value: Any, keys: Collection[Any]) -> bool:
    """Whether ``value`` is one of ``keys`` (a file's list where an id belongs is none)."""
    return isinstance(value, Hashable) and value in keys


def cut_parent_cycles(parents: MutableMapping[Op, Any], diagnostics: Diagnostics) -> list[Op]:
    """Cut every cycle of ``parents`` (see :func:`parent_cycles`): its first op gets no
    parent (None), as the outermost op it is; counted as ``model.parent_cycle``. Parent ids
    come from files: an op its own parent, or A in B in A, would send every walk up the
    ops (a subtree's time, the outermost op touching a tensor) round for ever or stop it
    nowhere in particular. Returns the ops whose parent was cut.

    >>> from traceconv.model import Diagnostics
    >>> found = Diagnostics(); parents = {1: None, 2: 2, 3: 4, 4: 3}
    >>> cut_parent_cycles(parents, found), parents, found.count("model.parent_cycle")
    ([2, 3], {1: None, 2: None, 3: None, 4: 3}, 2)
    >>> found.as_list()[0]["example"]
    '2 -> 2'
    """
    cycles = parent_cycles(parents)
    for cycle in cycles:
        parents[cycle[0]] = None
    if cycles:
        diagnostics.add("model.parent_cycle", count=len(cycles),
                        example=" -> ".join(map(str, (*cycles[0], cycles[0][0]))))
    return [cycle[0] for cycle in cycles]


def add_tensor(graph: nx.DiGraph, tensor_id: object, name: str, **attrs: Any) -> str:
    """Add (or update) a tensor node (shape, dtype, bytes, ... as attributes) and return its id.

    >>> import networkx as nx; g = nx.DiGraph(); add_tensor(g, 7, "x", shape=(1, 3), dtype="float32")
    'tensor/7'
    """
    node = tensor_node(tensor_id)
    graph.add_node(node, kind=TENSOR, name=name, **attrs)
    return node


def count_kind(graph: nx.DiGraph, kind: str) -> int:
    """How many nodes of ``kind`` (``"op"`` or ``"tensor"``) the graph holds."""
    unfilled = graph.__dict__.get("unfilled_counts")   # a graph made on first use
    if unfilled is not None:                            # (traceconv.model.lazy_graph)
        return int(unfilled.get(kind, 0))
    return sum(1 for _, k in graph.nodes(data="kind") if k == kind)
