"""The one copy primitive of the model: every transformation builds its result with it.

:func:`copy_into` appends (a selection of) one trace to a trace being built and renumbers,
together, everything that points at something else: process and track ids, slice rows
(flow ends, op nodes' ``slices``), string ids, op-graph node ids (edges, memory blocks'
``owner_op``/``owner_tensor``, tensors' ``owner``, ops' ``parent``, the graph's
``execution_order``) and statistics rows' ``parent``; times move by one shift, checked
against int64. Nothing of the source is shared with the result except immutable values,
so changing the result never changes the source (and a frozen source stays valid).

>>> from traceconv.model import Trace
>>> a = Trace(); th = a.add_track("main", process=a.add_process("python"))
>>> x = a.add_slice(th, 0, 10, "x"); y = a.add_slice(th, 20, 5, "y"); _ = a.add_flow(x, y)
>>> out = Trace(); _ = copy_into(out, a); moved = copy_into(out, a, shift_ns=100)
>>> moved.slices.tolist(), [(f.source, f.target) for f in out.iter_flows()]
([2, 3], [(0, 1), (2, 3)])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..numbers import INT64_MAX, INT64_MIN
from .block_table import CODED, NUMBERS, TIMES, BlockTable
from .columns import _EventTable, _Table
from .entities import OpStat, Process
from .graph import NODE_ID_ATTRS, NODE_LIST_GRAPH_ATTRS, SPAN_ATTRS, OpSpan
from .typed_arrays import extend_typed

if TYPE_CHECKING:
    from .trace import Trace

# columns holding a time on the trace clock (moved by a shift), a track id, a string id
_TIME_COLUMNS = frozenset({"start", "ts"})
_STRING_COLUMNS = frozenset({"name", "category"})


@dataclass(frozen=True)
class Keep:
    """What of the source :func:`copy_into` copies (None: everything of that kind).

    Boolean masks, one entry per track, slice row, instant row, counter row, memory
    block, reservation or statistics row. A process is kept when one of its tracks is (or when it has no
    track at all). ``slice_times`` gives new (start, duration) arrays for the kept slices
    (clipping). ``nodes``: the graph nodes kept (edges, ``owner``/``parent`` and the
    execution order lose what points at a node left out).
    """

    tracks: np.ndarray | None = None
    slices: np.ndarray | None = None
    instants: np.ndarray | None = None
    counters: np.ndarray | None = None
    memory: np.ndarray | None = None
    reservations: np.ndarray | None = None
    stats: np.ndarray | None = None
    nodes: frozenset[str] | None = None
    slice_times: tuple[np.ndarray, np.ndarray] | None = None


@dataclass(frozen=True)
class Renumbering:
    """Where the source's things went in the result (-1: left out)."""

    processes: np.ndarray
    tracks: np.ndarray
    slices: np.ndarray
    strings: np.ndarray
    node_prefix: str
    flows_dropped: int        # flows with an end left out
    times_clamped: int        # times that the shift would have moved past int64

    def node(self, node_id: str) -> str:
        """The result's id of the source's graph node ``node_id``."""
        return self.node_prefix + node_id


def copy_into(out: Trace, src: Trace, keep: Keep | None = None, *, shift_ns: int = 0,
              node_prefix: str = "", process: Callable[[Process], Process] | None = None,
              device: Callable[[str], str] | None = None,
              stat: Callable[[OpStat], OpStat] | None = None,
              diagnostics: bool = True) -> Renumbering:
    """Append ``src`` (what ``keep`` selects) to ``out``, renumbering every reference.

    ``shift_ns`` moves every time (slices, instants, counters, memory blocks, op spans);
    a time the shift would carry past int64 stops at its end and is counted as
    ``model.shift_clamped``. ``node_prefix`` is put before every graph node id.
    ``process`` and ``stat`` may rewrite each copied process (after its id is renumbered)
    and statistics row, ``device`` each device name of the memory blocks and reservations.
    ``diagnostics``: also add ``src``'s diagnostics to ``out``'s.
    """
    keep = keep or Keep()
    strings = _strings(out, src)
    processes, tracks = _processes_and_tracks(out, src, keep, process)
    clamped = [0]

    def shifted(values: np.ndarray) -> np.ndarray:
        moved, count = _shift(values, shift_ns)
        clamped[0] += count
        return moved

    slices = _copy_table(src.slices, out.slices, keep.slices, tracks, strings, shifted,
                         keep.slice_times)
    _copy_table(src.instants, out.instants, keep.instants, tracks, strings, shifted)
    _copy_table(src.counters, out.counters, keep.counters, tracks, strings, shifted)
    dropped = _copy_flows(src, out, slices, strings)
    changed = {"owner_op": _prefixed(node_prefix), "owner_tensor": _prefixed(node_prefix),
               "device": device or _same}
    _copy_blocks(src.memory, out.memory, keep.memory, shifted, changed)
    _copy_blocks(src.reservations, out.reservations, keep.reservations, shifted, changed)
    _copy_stats(src, out, keep.stats, stat or _same)
    if src.has_graph:
        _copy_graph(out, src, slices, shift_ns, node_prefix, clamped, keep.nodes)
    if diagnostics:
        out.diagnostics.extend(src.diagnostics)
    out.diagnostics.add("model.shift_clamped", count=clamped[0])
    return Renumbering(processes, tracks, slices, strings, node_prefix, dropped, clamped[0])


def _same(value: Any) -> Any:
    return value


def _strings(out: Trace, src: Trace) -> np.ndarray:
    intern = out.strings.intern
    return np.fromiter(map(intern, src.strings.strings), dtype=np.int64,
                       count=len(src.strings))


def _processes_and_tracks(out: Trace, src: Trace, keep: Keep,
                          process: Callable[[Process], Process] | None
                          ) -> tuple[np.ndarray, np.ndarray]:
    kept_tracks = (np.ones(len(src.tracks), dtype=bool) if keep.tracks is None
                   else np.asarray(keep.tracks, dtype=bool))
    with_tracks = {t.process for t in src.tracks}
    wanted = {src.tracks[i].process for i in np.flatnonzero(kept_tracks).tolist()}
    processes = np.full(len(src.processes), -1, dtype=np.int64)
    for p in src.processes:
        if p.id in wanted or p.id not in with_tracks:
            processes[p.id] = len(out.processes)
            copied = replace(p, id=len(out.processes), labels=list(p.labels))
            out.processes.append(process(copied) if process else copied)
    tracks = np.full(len(src.tracks), -1, dtype=np.int64)
    for t in src.tracks:
        if kept_tracks[t.id]:
            tracks[t.id] = len(out.tracks)
            parent = None if t.parent is None or tracks[t.parent] < 0 else int(tracks[t.parent])
            out.tracks.append(replace(t, id=len(out.tracks), process=int(processes[t.process]),
                                      parent=parent))
    return processes, tracks


def _shift(values: np.ndarray, shift_ns: int) -> tuple[np.ndarray, int]:
    """``values + shift_ns`` in int64, stopping at its ends; and how many stopped there."""
    if not shift_ns or not len(values):
        return values, 0
    if shift_ns > 0:
        over = values > INT64_MAX - shift_ns
        limit = INT64_MAX
    else:
        over = values < INT64_MIN - shift_ns
        limit = INT64_MIN
    moved = values + np.int64(shift_ns)   # (wrapped where over: replaced next)
    count = int(np.count_nonzero(over))
    if count:
        moved[over] = limit
    return moved, count


def _copy_table(src: _Table, out: _Table, mask: np.ndarray | None, tracks: np.ndarray,
                strings: np.ndarray, shifted: Callable[[np.ndarray], np.ndarray],
                times: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Append the kept rows of ``src`` to ``out``; returns old row -> new row (-1: not)."""
    first, count = len(out), len(src)
    on_kept_track = tracks[src.numpy("track")] >= 0 if count else np.zeros(0, dtype=bool)
    chosen = on_kept_track if mask is None else on_kept_track & np.asarray(mask, dtype=bool)
    rows = np.flatnonzero(chosen)
    every = len(rows) == count
    for column, _ in src._columns:
        values = src.numpy(column) if every else src.numpy(column)[rows]
        if times is not None and column in ("start", "dur"):
            values = times[0] if column == "start" else times[1]
        if column == "track":
            values = tracks[values]
        elif column in _STRING_COLUMNS:
            values = strings[values]
        elif column in _TIME_COLUMNS:
            values = shifted(values)
        extend_typed(getattr(out, column), values)
    if isinstance(src, _EventTable):
        target = out.args   # type: ignore[attr-defined]
        if every and not first:
            out.args = src.args.copy()   # type: ignore[attr-defined]
        else:
            target.extend(src.args if every else [src.args[i] for i in rows.tolist()])
    mapping = np.full(count, -1, dtype=np.int64)
    mapping[rows] = np.arange(first, first + len(rows), dtype=np.int64)
    return mapping


def _copy_flows(src: Trace, out: Trace, slices: np.ndarray, strings: np.ndarray) -> int:
    f = src.flows
    if not len(f):
        return 0
    source, target = slices[f.numpy("source")], slices[f.numpy("target")]
    both = (source >= 0) & (target >= 0)
    rows = np.flatnonzero(both)
    new = {"source": source[rows], "target": target[rows],
           "category": strings[f.numpy("category")[rows]], "name": strings[f.numpy("name")[rows]]}
    for column, _ in f._columns:
        extend_typed(getattr(out.flows, column), new[column])
    return len(f) - len(rows)


def _moved(value: int | None, shift_ns: int, clamped: list[int]) -> int | None:
    if value is None or not shift_ns:
        return value
    moved = value + shift_ns
    if not INT64_MIN <= moved <= INT64_MAX:
        clamped[0] += 1
        return INT64_MAX if moved > INT64_MAX else INT64_MIN
    return moved


def _span(span: OpSpan, shift_ns: int, clamped: list[int]) -> OpSpan:
    start, end, kernel = (_moved(t, shift_ns, clamped) for t in span)
    return OpSpan(span.start_ns if start is None else start,
                  span.end_ns if end is None else end, kernel)


def _copy_blocks(src: BlockTable, out: BlockTable, mask: np.ndarray | None,
                 shifted: Callable[[np.ndarray], np.ndarray],
                 changed: dict[str, Callable[[Any], Any]]) -> None:
    """Append the kept blocks of ``src`` to ``out`` column by column: times shifted (those
    not known stay so), the coded fields named in ``changed`` rewritten value by value
    (text values only: None stays None), args copied."""
    rows = np.arange(len(src)) if mask is None else np.flatnonzero(mask)
    numbers: dict[str, np.ndarray] = {}
    for name in NUMBERS:
        values = src.numbers(name)[rows]
        if name in TIMES:
            known = src.known(name)[rows]
            values[known] = shifted(values[known])
            values = np.ma.array(values, mask=~known)
        numbers[name] = values
    coded = {}
    distinct, _ = src.coded(CODED[0])
    for name in CODED:
        used, codes = np.unique(src.coded(name)[1][rows], return_inverse=True)
        change = changed.get(name, _same)
        coded[name] = ([change(v) if type(v) is str else v
                        for v in map(distinct.__getitem__, used.tolist())], codes.reshape(-1))
    position = np.full(len(src), -1, dtype=np.int64)
    position[rows] = np.arange(len(rows))
    args: list[Any] = [None] * len(rows)
    for row, held in src.held_args():
        if position[row] >= 0:
            args[position[row]] = dict(held)
    out.extend_columns(numbers, coded, args)


def _copy_stats(src: Trace, out: Trace, mask: np.ndarray | None,
                stat: Callable[[OpStat], OpStat]) -> None:
    """Append the kept statistics rows, their ``parent`` renumbered (a parent left out: None)."""
    rows = range(len(src.stats)) if mask is None else np.flatnonzero(mask).tolist()
    moved = {old: new for new, old in enumerate(rows, len(out.stats))}
    out.stats.extend(stat(replace(s, parent=moved.get(s.parent) if s.parent is not None
                                  else None, extra=dict(s.extra)))
                     for s in map(src.stats.__getitem__, rows))


def _prefixed(prefix: str) -> Callable[[str], str]:
    return lambda value: prefix + value


def _copy_graph(out: Trace, src: Trace, slices: np.ndarray, shift_ns: int, prefix: str,
                clamped: list[int], nodes: frozenset[str] | None) -> None:
    """Add ``src``'s graph (the ``nodes`` kept, None: all) to ``out``'s: node ids prefixed,
    attributes copied one level deep, slice rows renumbered (rows left out are dropped), op
    spans shifted; edges and node references to a node left out are dropped."""
    graph = out.graph

    def wanted(node: Any) -> bool:
        return nodes is None or node in nodes

    for node, attrs in src.graph.nodes(data=True):
        if not wanted(node):
            continue
        copied = {key: _attr(key, value, slices, shift_ns, prefix, clamped)
                  for key, value in attrs.items()
                  if key not in NODE_ID_ATTRS or value is None or wanted(value)}
        kept = copied.get("slices")
        if kept and len(kept) < len(attrs["slices"]) and not _names_the_op(src, attrs, slices):
            # the op's own slice was left out and only others (its kernels) are left: an
            # op's slices always include one named as the op (model.validate, op_slices)
            copied["slices"] = []
        graph.add_node(prefix + node, **copied)
    graph.add_edges_from((prefix + a, prefix + b, dict(data))
                         for a, b, data in src.graph.edges(data=True) if wanted(a) and wanted(b))
    for key, value in src.graph.graph.items():
        graph.graph[key] = ([prefix + n for n in value if wanted(n)]
                            if key in NODE_LIST_GRAPH_ATTRS else _one_level(value))


def _names_the_op(src: Trace, attrs: dict[str, Any], slices: np.ndarray) -> bool:
    """Whether a kept row of the op's ``slices`` is named as the op (or its type)."""
    names, strings = src.slices.name, src.strings.strings
    wanted = {attrs.get("name"), attrs.get("type")}
    return any(slices[row] >= 0 and 0 <= names[row] < len(strings)
               and strings[names[row]] in wanted for row in attrs["slices"])


def _attr(key: str, value: Any, slices: np.ndarray, shift_ns: int, prefix: str,
          clamped: list[int]) -> Any:
    if key == "slices" and value is not None:
        rows = slices[np.asarray(value, dtype=np.int64)] if len(value) else np.zeros(0, int)
        return rows[rows >= 0].tolist()
    if key in NODE_ID_ATTRS and isinstance(value, str):
        return prefix + value
    if key in SPAN_ATTRS and isinstance(value, dict):
        return {place: _span(OpSpan(*span), shift_ns, clamped) for place, span in value.items()}
    return _one_level(value)


def _one_level(value: Any) -> Any:
    """A copy of a list, dict or set (its items shared: they are not changed in place)."""
    return type(value)(value) if isinstance(value, list | dict | set) else value
