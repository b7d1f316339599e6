"""The model's invariants, in one place: what every reader and transformation must hand over.

:func:`validate` returns the broken invariants of a trace (an empty list when it is
valid). The test suite runs it on what every registered reader makes of every bundled
sample and on the output of every transformation; ``traceconv check --model IN`` runs it
on any input. Each invariant has a stable code:

==========================  =====================================================================
``ids``                     process and track ids are their positions; a track's process, a
                            lane's home track exist; a pid, tid or sort index fits int64
``track``                   every slice, instant and counter sample is on an existing track
``string``                  every name and category id resolves in the string table; the
                            table's strings and the process and track names are text
``duration``                no slice has a negative duration
``slice_end``               no slice ends (start + duration) past int64
``flow``                    both ends of every flow are existing slice rows
``graph_kind``              every op-graph node is an ``op`` or a ``tensor``
``graph_edge``              edges go op → tensor (produces) or tensor → op (consumes)
``op_slices``               an op's ``slices`` are existing rows, one of them named as the op
``graph_ref``               every node link names a node of its kind
                            (:data:`~traceconv.model.graph.NODE_LINKS`: an op's ``parent``
                            and a tensor's ``owner`` an op, ``alias_of`` a tensor); the
                            graph's ``execution_order`` names op nodes
``owner``                   a memory block's ``owner_op`` is an op node (of its ``owner_name``),
                            its ``owner_tensor`` a tensor node
``memory``                  a memory block's size is not negative; it is not freed before it is
                            allocated
``device``                  a device's memory size and compute capability, when known, are
                            int64 counts (not negative)
``stat_parent``             a statistics row's ``parent`` is an earlier row
``activity``                every slice's activity is a kind with roles
                            (:mod:`traceconv.model.activity`)
``diagnostic``              every diagnostic code is registered
                            (:mod:`traceconv.model.diagnostic_codes`)
==========================  =====================================================================

>>> from traceconv.model import Trace
>>> t = Trace(); th = t.add_track("main", process=t.add_process("python"))
>>> _ = t.add_slice(th, 0, 10, "step"); validate(t)
[]
>>> _ = t.add_flow(0, 5); [p.invariant for p in validate(t)]
['flow']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..numbers import INT64_MAX
from .graph import NODE_LINKS, OP, TENSOR
from .typed_arrays import read_only_view

if TYPE_CHECKING:
    from .trace import Trace


INVARIANTS = ("ids", "track", "string", "duration", "slice_end", "flow", "graph_kind",
              "graph_edge", "op_slices", "graph_ref", "owner", "memory", "device", "stat_parent",
              "activity", "diagnostic")


@dataclass(frozen=True)
class Problem:
    """One broken invariant: its code, what is wrong, how often, and a first example."""

    invariant: str
    message: str
    count: int
    example: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"invariant": self.invariant, "message": self.message, "count": self.count,
                "example": self.example}

    def __str__(self) -> str:
        example = f" (e.g. {self.example})" if self.example else ""
        return f"{self.invariant}: {self.count:,} {self.message}{example}"


def validate(trace: Trace) -> list[Problem]:
    """The broken invariants of ``trace`` (see the module's table); empty when it is valid.

    >>> import traceconv
    >>> traceconv.validate(traceconv.load("samples/torch/cnn_step5.pt.trace.json"))
    []
    """
    return [p for check in _CHECKS for p in check(trace) if p.count]


def validate_cheap(trace: Trace) -> list[Problem]:
    """The invariants a writer relies on and numpy checks in one pass a column (ids,
    tracks, strings, durations, slice ends, flows): what ``save`` checks before writing.

    >>> from traceconv.model import Trace
    >>> t = Trace(); _ = t.add_process("p"); _ = t.add_flow(0, 1); validate_cheap(t)[0].invariant
    'flow'
    """
    return [p for check in _CHEAP_CHECKS for p in check(trace) if p.count]


def _problem(invariant: str, message: str, bad: np.ndarray | list[Any],
             describe: Any = str) -> Problem:
    """A problem counting the true entries of a mask (example: the first one's index)."""
    where = np.flatnonzero(bad) if isinstance(bad, np.ndarray) else bad
    example = describe(where[0]) if len(where) else None
    return Problem(invariant, message, int(len(where)), example)


def _ids(trace: Trace) -> Iterator[Problem]:
    processes, tracks = len(trace.processes), len(trace.tracks)
    yield _problem("ids", "processes whose id is not their position",
                   [p.id for i, p in enumerate(trace.processes) if p.id != i],
                   lambda i: f"process id {i}")
    yield _problem("ids", "tracks whose id is not their position, or whose process or home "
                   "track does not exist",
                   [t.id for i, t in enumerate(trace.tracks)
                    if t.id != i or not 0 <= t.process < processes
                    or t.parent is not None and not 0 <= t.parent < tracks],
                   lambda i: f"track id {i}")
    yield _problem("ids", "processes and tracks whose pid, tid or sort index is past int64",
                   [f"{r.name!r}: {name}" for records in (trace.processes, trace.tracks)
                    for r in records for name in r.ids_out_of_range()])


def _tables(trace: Trace) -> Iterator[tuple[str, Any]]:
    yield "slices", trace.slices
    yield "instants", trace.instants
    yield "counter samples", trace.counters


def _track(trace: Trace) -> Iterator[Problem]:
    tracks = len(trace.tracks)
    for what, table in _tables(trace):
        column = table.numpy("track")
        yield _problem("track", f"{what} on a track that does not exist",
                       (column < 0) | (column >= tracks), lambda i, w=what: f"{w} row {i}")


def _string(trace: Trace) -> Iterator[Problem]:
    strings = len(trace.strings)
    for what, table in (*_tables(trace), ("flows", trace.flows)):
        for column in ("name", "category"):
            if not hasattr(table, column):
                continue
            ids = table.numpy(column)
            yield _problem("string", f"{what} whose {column} id is not in the string table",
                           (ids < 0) | (ids >= strings), lambda i, w=what: f"{w} row {i}")
    # (a reader that hands over undecoded bytes breaks every text writer: JSON, tables)
    for what, texts in (("strings", trace.strings.strings),
                        ("process names", [p.name for p in trace.processes]),
                        ("track names", [t.name for t in trace.tracks])):
        yield _problem("string", f"{what} that are not text",
                       [i for i, text in enumerate(texts) if type(text) is not str],
                       lambda i, w=what: f"{w} {i}")


def _times(trace: Trace) -> Iterator[Problem]:
    start, dur = trace.slices.numpy("start"), trace.slices.numpy("dur")
    yield _problem("duration", "slices with a negative duration", dur < 0,
                   lambda i: f"slice row {i}")
    yield _problem("slice_end", "slices that end past int64",
                   (dur > 0) & (start > INT64_MAX - dur), lambda i: f"slice row {i}")


def _flow(trace: Trace) -> Iterator[Problem]:
    rows = len(trace.slices)
    for end in ("source", "target"):
        column = trace.flows.numpy(end)
        yield _problem("flow", f"flows whose {end} is not a slice row",
                       (column < 0) | (column >= rows), lambda i: f"flow {i}")


def _graph(trace: Trace) -> Iterator[Problem]:
    if not trace.has_graph:
        return
    graph = trace.graph
    kinds = dict(graph.nodes(data="kind"))
    yield _problem("graph_kind", "graph nodes that are neither an op nor a tensor",
                   [n for n, k in kinds.items() if k not in (OP, TENSOR)])
    yield _problem("graph_edge", "graph edges that do not join an op and a tensor",
                   [f"{a} -> {b}" for a, b in graph.edges()
                    if {kinds.get(a), kinds.get(b)} != {OP, TENSOR}])
    yield _op_slices(trace, graph)
    yield _problem("graph_ref", "node references (an op's parent, a tensor's owner or "
                   "alias_of, the execution order) that do not name a node of their kind",
                   [f"{n}.{key} = {ref}" for n, key, ref, kind in _references(graph)
                    if kinds.get(ref) != kind])


def _op_slices(trace: Trace, graph: Any) -> Problem:
    rows, names, strings = len(trace.slices), trace.slices.name, trace.strings.strings

    def name(row: int) -> str | None:   # (a broken string id is the "string" invariant's)
        return strings[names[row]] if 0 <= names[row] < len(strings) else None

    bad = []
    for node, data in graph.nodes(data=True):
        listed = data.get("slices") if data.get("kind") == OP else None
        if not listed:
            continue
        if not all(isinstance(r, int) and 0 <= r < rows for r in listed):
            bad.append(f"{node}: rows {listed[:3]}")
        elif not {name(r) for r in listed} & {data.get("name"), data.get("type")}:
            bad.append(f"{node} ({str(data.get('name'))[:80]!r}): rows {listed[:3]} are "
                       f"{[str(name(r))[:80] for r in listed[:3]]}")
    return _problem("op_slices", "op nodes none of whose slices is named as the op, or "
                    "whose slices are not rows", bad)


def _references(graph: Any) -> Iterator[tuple[str, str, Any, str]]:
    """(node, attribute, the node it names, the kind that node must be) of every link."""
    for node, data in graph.nodes(data=True):
        for key, kind in NODE_LINKS.items():
            if data.get(key) is not None:
                yield node, key, data[key], kind
    for ref in graph.graph.get("execution_order") or ():
        yield "graph", "execution_order", ref, OP


def _owner(trace: Trace) -> Iterator[Problem]:
    graph = trace.graph if trace.has_graph else None
    nodes: dict[str, Any] = dict(graph.nodes(data=True)) if graph is not None else {}
    bad_op, bad_tensor = [], []
    for index, block in enumerate(_blocks(trace)):
        if block.owner_op is not None:
            data = nodes.get(block.owner_op)
            if (data is None or data.get("kind") != OP or block.owner_name is not None
                    and data.get("name") != block.owner_name):
                bad_op.append(f"block {index}: {block.owner_op}")
        if block.owner_tensor is not None and (nodes.get(block.owner_tensor) or {}).get(
                "kind") != TENSOR:
            bad_tensor.append(f"block {index}: {block.owner_tensor}")
    yield _problem("owner", "memory blocks whose owner_op is not an op node of their "
                   "owner_name", bad_op)
    yield _problem("owner", "memory blocks whose owner_tensor is not a tensor node",
                   bad_tensor)


def _blocks(trace: Trace) -> Iterable[Any]:
    yield from trace.memory
    yield from trace.reservations


def _memory(trace: Trace) -> Iterator[Problem]:
    yield _problem("memory", "memory blocks with a negative size",
                   [f"block {i}" for i, b in enumerate(_blocks(trace)) if b.size < 0])
    yield _problem("memory", "memory blocks freed before they are allocated",
                   [f"block {i}" for i, b in enumerate(_blocks(trace))
                    if b.alloc_ns is not None and b.free_ns is not None
                    and b.free_ns < b.alloc_ns])


def _device(trace: Trace) -> Iterator[Problem]:
    yield _problem("device", "device numbers (memory size, compute capability) that are "
                   "negative or past int64",
                   [f"device {d.id}: {name}" for d in trace.metadata.devices
                    for name in d.counts_out_of_range()])


def _stats(trace: Trace) -> Iterator[Problem]:
    yield _problem("stat_parent", "statistics rows whose parent is not an earlier row",
                   [f"row {i}" for i, s in enumerate(trace.stats)
                    if s.parent is not None and not 0 <= s.parent < i])


def _activity(trace: Trace) -> Iterator[Problem]:
    values = read_only_view(trace.slices.activity)
    yield _problem("activity", "slices whose activity is not a kind with roles", values < 0,
                   lambda i: f"slice row {i}")


def _diagnostic(trace: Trace) -> Iterator[Problem]:
    from .diagnostic_codes import lookup

    yield _problem("diagnostic", "diagnostic codes not in the table of codes",
                   [d.code for d in trace.diagnostics if lookup(d.code) is None])


_CHEAP_CHECKS = (_ids, _track, _string, _times, _flow)
_CHECKS = (_ids, _track, _string, _times, _flow, _graph, _owner, _memory, _device, _stats,
           _activity, _diagnostic)
