"""The one way a reader makes a trace: :class:`TraceBuilder`, then :meth:`~TraceBuilder.build`.

A reader fills a builder through the :class:`~traceconv.model.Trace` API (``add_process``,
``add_track``, ``add_slice``, the columnar ``slices.extend`` paths) and the interval
helpers here (:meth:`~TraceBuilder.add_interval`, :meth:`~TraceBuilder.add_intervals`),
giving the numbers as its file states them: a reader never range-checks a time or repairs
an interval itself. :meth:`~TraceBuilder.build` owns every such rule, one rule and one
diagnostic code each, checked a column at a time (numpy, no loop per event):

================================  ==========================================================
``model.time_beyond_range``       a time before -1e18 or after 3.5e18 ns (int64 edges
                                  included) moves to that edge (:mod:`traceconv.model.repairs`)
``model.slice_end_beyond_int64``  a slice whose end passes int64 is shortened to end there
``model.end_before_start``        a slice that ends before it starts, a memory block freed
                                  before its allocation: zero-length at its start
``model.negative_length``         a memory block of negative size: 0 bytes
``model.counter_value_not_finite``  an infinite or NaN counter value: the largest finite
                                  number of its sign, or 0
``model.statistic_beyond_range``  statistics beyond ±2^62 move to that edge
``model.negative_statistic``      a statistics row's count or time below 0: unknown (a
                                  total: 0)
``model.share_beyond_range``      a statistics row's share outside 0-100 % (or not finite):
                                  moved to the nearer edge (NaN: no share)
``model.unknown_track``           events on a track that does not exist: moved to one
                                  "(unknown track)" track
``model.unknown_slice_ref``       flows naming a slice row that does not exist: left out
``model.unknown_owner``           a memory block's owner op or tensor that is no such node
                                  of the op graph: the link left out, the owner's name kept
``model.memory_block_unreadable``  a memory block or reservation whose address or size
                                  is no number int64 holds (``'0x10'``, 2**64), or a
                                  time that is no number: left out (a time past int64 is
                                  ``model.time_beyond_range``'s)
``model.parent_cycle``            op nodes whose ``parent`` links go round: the cycle's
                                  first op gets no parent
                                  (:func:`~traceconv.model.graph.cut_parent_cycles`)
``model.name_cut``                names and categories longer than :data:`NAME_LIMIT`
                                  characters: cut there
``model.device_number_beyond``    a device's memory size or compute capability that is
                                  negative or past int64: not known (None)
``model.id_beyond_int64``         a pid, tid or sort index past int64 (a JSON integer of
                                  30 digits): not known (None), its name kept
the reader's own code             a slice whose end is not in the input, handed over with
                                  :meth:`~TraceBuilder.not_ended`: ends at the trace's last
                                  timestamp, ``args.unfinished = true``
                                  (:func:`~traceconv.model.repairs.end_not_ended`)
================================  ==========================================================

``build()`` then freezes the trace all the way down (:meth:`Trace.freeze`) and returns it
as a plain :class:`~traceconv.model.Trace`. Under the test suite (the environment variable
:data:`VALIDATE_ENV` set, as ``tests/conftest.py`` does) it also runs the full
:func:`~traceconv.model.validate.validate` and raises :class:`InvalidTraceError` on any
broken invariant, so every reader's output is validated by every test that reads a file.

>>> b = TraceBuilder(); main = b.add_track("main", process=b.add_process("python"))
>>> _ = b.add_interval(main, 50, 20, "backwards")        # ends before it starts
>>> trace = b.build(); trace.slice(0).dur, trace.diagnostics.count("model.end_before_start")
(0, 1)
>>> trace.frozen, type(trace).__name__
(True, 'Trace')
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ..numbers import INT64_MAX, NumberError, beyond_int64
from .block_table import TIMES, BlockTable
from .columns import Args, FlowTable
from .entities import MemoryBlock, ProcessKind, TrackKind
from .repairs import (
    TIME_MAX,
    TIME_MIN,
    clamp_counter_values,
    clamp_stats,
    clamp_times,
    end_not_ended,
    repair_lengths,
    unknown_negative_stats,
)
from .trace import Metadata, Trace
from .typed_arrays import extend_typed

VALIDATE_ENV = "TRACECONV_VALIDATE_BUILD"
NAME_LIMIT = 1 << 16   # characters of one name or category (a kernel's template name: ~3 K)


class InvalidTraceError(ValueError):
    """A trace breaks the model's invariants (``problems``: what :func:`validate` found)."""

    def __init__(self, problems: list[Any], where: str = "the trace") -> None:
        self.problems = problems
        shown = "; ".join(map(str, problems[:3]))
        more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        super().__init__(f"{where} is not valid: {shown}{more}")


class TraceBuilder(Trace):
    """A trace being made by a reader (see the module text); :meth:`build` hands it over.

    >>> b = TraceBuilder(); t = b.add_track("t", process=b.add_process("p"))
    >>> _ = b.add_interval(t, -2**63, 2**63 - 1, "huge")   # int64 edges: moved inside
    >>> s = b.build().slice(0); (s.start, s.end) == (TIME_MIN, TIME_MAX)
    True
    """

    def __init__(self, metadata: Metadata | None = None) -> None:
        super().__init__(metadata)
        self.__dict__["_moved_times"] = 0

    # -- times as the file states them -----------------------------------------------

    def time(self, value: int) -> int:
        """``value`` (an int of any size) within the trace's time range; a time outside
        moves to the nearer edge and is counted as ``model.time_beyond_range``.

        >>> b = TraceBuilder(); b.time(5), b.time(2**80) == TIME_MAX
        (5, True)
        """
        if TIME_MIN <= value <= TIME_MAX:
            return value
        self.__dict__["_moved_times"] += 1
        return TIME_MIN if value < TIME_MIN else TIME_MAX

    def add_instant(self, track: int, ts: int, name: str, category: str = "",
                    args: Args = None) -> int:
        """:meth:`Trace.add_instant <traceconv.model.Trace.add_instant>` at a time of any
        size (:meth:`time`)."""
        return super().add_instant(track, self.time(ts), name, category, args)

    def add_counter(self, track: int, ts: int, value: float) -> int:
        """:meth:`Trace.add_counter <traceconv.model.Trace.add_counter>` at a time of any
        size (:meth:`time`).

        >>> b = TraceBuilder(); t = b.add_track("c", process=b.add_process("p"))
        >>> _ = b.add_counter(t, 2**64, 1.0); b.build().counters.numpy("ts").tolist() == [TIME_MAX]
        True
        """
        return super().add_counter(track, self.time(ts), value)

    def add_interval(self, track: int, start: int, end: int, name: str, category: str = "",
                     args: Args = None, activity: int = 0) -> int:
        """Add a slice from ``start`` to ``end`` (ns, ints of any size) and return its row;
        an end before its start and times beyond the range are :meth:`build`'s to repair."""
        start, end = self.time(start), self.time(end)
        return self.add_slice(track, start, end - start, name, category, args, activity)

    def add_intervals(self, track: np.ndarray, start: np.ndarray, end: np.ndarray,
                      name: np.ndarray, category: np.ndarray, args: Sequence[Args]) -> np.ndarray:
        """Add one slice per row (int64 columns; name and category as string ids) and
        return their rows; times are brought within range before the subtraction (no
        int64 wrap), the rest is :meth:`build`'s.

        >>> b = TraceBuilder(); t = b.add_track("t", process=b.add_process("p"))
        >>> rows = b.add_intervals(np.array([t, t]), np.array([0, -2**63]),
        ...                        np.array([10, 2**63 - 1]), np.zeros(2, np.int32),
        ...                        np.zeros(2, np.int32), [None, None])
        >>> rows.tolist(), b.build().slices.numpy("dur").tolist()
        ([0, 1], [10, 4500000000000000000])
        """
        start, end = self.times(start), self.times(end)
        first = len(self.slices)
        self.slices.extend(list(args), track=track, start=start, dur=end - start, name=name,
                           category=category)
        return np.arange(first, first + len(start), dtype=np.int64)

    def times(self, values: np.ndarray) -> np.ndarray:
        """:meth:`time` for an int64 array (a new array when one moved)."""
        values = np.asarray(values, dtype=np.int64)
        outside = (values < TIME_MIN) | (values > TIME_MAX)
        moved = int(np.count_nonzero(outside))
        if not moved:
            return values
        self.__dict__["_moved_times"] += moved
        return np.clip(values, TIME_MIN, TIME_MAX)

    # -- memory blocks -------------------------------------------------------------------

    def add_memory_block(self, block: MemoryBlock) -> int | None:
        """Add ``block`` and return its index; one whose address or size is no number int64
        holds is left out by the rule of :meth:`add_memory_blocks` (None returned: the
        reader has no row to close later).

        >>> b = TraceBuilder()
        >>> b.add_memory_block(MemoryBlock(8, 4, 1, 2)), b.add_memory_block(MemoryBlock(2**64, 4))
        (0, None)
        >>> len(b.memory), b.diagnostics["model.memory_block_unreadable"].example
        (1, 'memory block address is out of the int64 range: 18446744073709551616')
        """
        return self._append_block(self.memory, block)

    def add_reservation(self, block: MemoryBlock) -> int | None:
        """:meth:`Trace.add_reservation <traceconv.model.Trace.add_reservation>` by the rule
        of :meth:`add_memory_block` (None: left out and counted).

        >>> b = TraceBuilder(); b.add_reservation(MemoryBlock(0, 2**70, 5, None)) is None
        True
        >>> len(b.reservations), b.diagnostics.count("model.memory_block_unreadable")
        (0, 1)
        """
        return self._append_block(self.reservations, block)

    def _append_block(self, table: BlockTable, block: MemoryBlock) -> int | None:
        try:   # (a row at a time, checked before any field is added: see BlockTable.append)
            table.append(block)
        except NumberError as exc:
            try:   # (a time past int64 is the time rule's: the block again, its times at
                table.append(_times_at_int64_edges(block))   # the edges, is kept)
            except NumberError:
                self._count_unreadable_blocks({0: str(exc)}, [block])
                return None
        return len(table) - 1

    def add_memory_blocks(self, blocks: Iterable[MemoryBlock]) -> None:
        """Add ``blocks``; one whose address or size is no number int64 holds (or a time
        that is no number) is left out and counted as ``model.memory_block_unreadable``
        (the rest are read); a time of any size is brought into range as :meth:`time` does.

        >>> b = TraceBuilder()
        >>> b.add_memory_blocks([MemoryBlock(8, 4, 1, 2), MemoryBlock(2**64, 4, 1, 2),
        ...                      MemoryBlock(16, 4, 1, 2**64)])
        >>> len(b.memory), b.diagnostics.count("model.memory_block_unreadable")
        (2, 1)
        >>> b.build().memory[1].free_ns == TIME_MAX
        True
        """
        blocks = [_times_at_int64_edges(block) for block in blocks]
        unreadable: dict[int, str] = {}
        self.memory.extend(blocks, unreadable=unreadable)
        self._count_unreadable_blocks(unreadable, blocks)

    def add_memory_columns(self, numbers: dict[str, np.ndarray], coded: dict[str, Any],
                           args: Sequence[Any] | None = None) -> None:
        """Add blocks given as columns (:meth:`BlockTable.extend_columns
        <traceconv.model.block_table.BlockTable.extend_columns>`) by the rule of
        :meth:`add_memory_blocks`.

        >>> b = TraceBuilder()
        >>> b.add_memory_columns({"address": np.array(["0x10", 8], object),
        ...                       "size": np.array([4, 4]),
        ...                       "alloc_ns": np.array([1, 2**70], object)}, {"device": "CPU"})
        >>> b.memory.numbers("address").tolist(), b.diagnostics["model.memory_block_unreadable"].example
        ([8], "memory block address is not a number: '0x10'")
        >>> b.build().memory[0].alloc_ns == TIME_MAX
        True
        """
        numbers = {name: _time_column_at_int64_edges(values) if name in TIMES else values
                   for name, values in numbers.items()}
        unreadable: dict[int, str] = {}
        self.memory.extend_columns(numbers, coded, args, unreadable=unreadable)
        self._count_unreadable_blocks(unreadable)

    def _count_unreadable_blocks(self, unreadable: dict[int, str],
                                 blocks: Sequence[MemoryBlock] = ()) -> None:
        """Count the blocks left out, ``unreadable`` mapping their positions to why; the
        example names the first by what the reader kept of it (its args, when ``blocks``
        are the records given)."""
        if not unreadable:
            return
        first = min(unreadable)
        kept = blocks[first].args if blocks else None
        self.diagnostics.add("model.memory_block_unreadable", count=len(unreadable),
                             example=unreadable[first] + (f" ({kept})" if kept else ""))

    # -- slices whose end is not in the input -------------------------------------------

    def not_ended(self, rows: int | Sequence[int] | np.ndarray, code: str) -> None:
        """Hand over slices ``rows`` whose end is not in the input (added with no length):
        :meth:`build` ends them by one rule for every reader
        (:func:`~traceconv.model.repairs.end_not_ended`: at the trace's last timestamp,
        ``args.unfinished = true``) and counts them under ``code``, the reader's own.

        >>> b = TraceBuilder(); t = b.add_track("t", process=b.add_process("p"))
        >>> b.not_ended(b.add_interval(t, 10, 10, "open"), "chrome.begin_without_end")
        >>> _ = b.add_interval(t, 20, 70, "closed"); s = b.build().slice(0)
        >>> s.end, s.args
        (70, {'unfinished': True})
        """
        pending = self.__dict__.setdefault("_not_ended", {})
        pending.setdefault(code, []).append(np.atleast_1d(np.asarray(rows, dtype=np.int64)))

    def end_not_ended(self) -> None:
        """End the slices handed over so far now, not at :meth:`build` (for a reader that
        needs their ends before it hands the trace over: one that binds flows to slices
        by time). Every event must be in: the end is the last timestamp so far."""
        end_not_ended(self, self.__dict__.pop("_not_ended", {}))

    # -- handing over --------------------------------------------------------------------

    def build(self, *, source_format: str | None = None,
              source_file: str | None = None) -> Trace:
        """Apply every rule (see the module text), fill ``source_format`` and
        ``source_file`` where the reader left them empty, freeze, and return the trace:
        the same object, a plain frozen :class:`~traceconv.model.Trace` from now on."""
        meta = self.metadata
        meta.source_format = meta.source_format or source_format or ""
        meta.source_file = meta.source_file or source_file
        _unknown_tracks(self)
        _unknown_slice_refs(self)
        _unknown_owners(self)
        _parent_cycles(self)
        _cut_names(self)
        _device_numbers(self)
        _id_numbers(self)
        self.shorten_overflowing_slices()
        moved = self.__dict__.pop("_moved_times", 0)
        if moved:
            self.diagnostics.add("model.time_beyond_range", count=moved,
                                 example=f"{moved} times as read")
        repair_lengths(self)   # (first: an end before its start is its own rule)
        clamp_times(self)
        unknown_negative_stats(self)   # (first: a negative value is no edge to move to)
        clamp_stats(self)
        _clamp_shares(self)
        clamp_counter_values(self)
        self.end_not_ended()   # (last: the last timestamp is that of the repaired times)
        self.__class__ = Trace   # type: ignore[assignment]  # (the same object: what a reader keyed by it still finds)
        trace = self.freeze()
        if os.environ.get(VALIDATE_ENV):
            check(trace, full=True)
        return trace


def _int64_edge(value: Any) -> Any:
    """A time past int64 at the nearer int64 edge, where :meth:`TraceBuilder.build`'s time
    rule moves it into range and counts it (``model.time_beyond_range``), as it does every
    time; any other value as it is (the block table judges it).

    >>> _int64_edge(2**70) == INT64_MAX, _int64_edge(-2**70) == -INT64_MAX - 1, _int64_edge("x")
    (True, True, 'x')
    """
    if beyond_int64(value):
        return INT64_MAX if value > 0 else -INT64_MAX - 1
    return value


def _times_at_int64_edges(block: MemoryBlock) -> MemoryBlock:
    """``block``, or a copy whose times past int64 are at its edges (:func:`_int64_edge`)."""
    alloc_ns, free_ns = _int64_edge(block.alloc_ns), _int64_edge(block.free_ns)
    if alloc_ns is block.alloc_ns and free_ns is block.free_ns:
        return block
    return replace(block, alloc_ns=alloc_ns, free_ns=free_ns)


def _time_column_at_int64_edges(values: np.ndarray) -> np.ndarray:
    """:func:`_int64_edge` for a time column (only an object or unsigned column can hold a
    number past int64; a masked time is None, left as it is).

    >>> column = np.ma.array(np.array([2**64, 2**64, 5], object), mask=[True, False, False])
    >>> _time_column_at_int64_edges(column).tolist() == [None, INT64_MAX, 5]
    True
    >>> _time_column_at_int64_edges(np.array([2**64 - 1, 5], np.uint64)).tolist() == [INT64_MAX, 5]
    True
    """
    data = np.ma.getdata(values)
    if data.dtype.kind == "u" and (data > np.uint64(INT64_MAX)).any():
        data = data.astype(object)
    elif data.dtype.kind != "O":
        return values
    listed = data.tolist()
    if not any(map(beyond_int64, listed)):
        return values
    data = np.array([_int64_edge(value) for value in listed], dtype=object)
    return np.ma.array(data, mask=np.ma.getmaskarray(values)) \
        if np.ma.isMaskedArray(values) else data


def build(trace: Trace, *, source_format: str | None = None,
          source_file: str | None = None) -> Trace:
    """``trace`` built (:meth:`TraceBuilder.build`): a frozen trace is returned as it is.

    >>> t = Trace(); _ = t.add_track("t", process=t.add_process("p")); build(t).frozen
    True
    """
    if trace.frozen:
        return trace
    if not isinstance(trace, TraceBuilder):
        trace.__class__ = TraceBuilder   # (the same object, as a reader's own builder is)
        trace.__dict__.setdefault("_moved_times", 0)
    assert isinstance(trace, TraceBuilder)
    return trace.build(source_format=source_format, source_file=source_file)



def check(trace: Trace, *, full: bool = False, where: str = "the trace") -> None:
    """Raise :class:`InvalidTraceError` naming the broken invariants of ``trace``: the
    cheap ones (ids, tracks, strings, flows, durations; vectorised, what a writer relies
    on) or, with ``full``, every one of :func:`~traceconv.model.validate.validate`.

    >>> t = Trace(); _ = t.add_process("p"); t.slices.append(3, 0, 5, 0, 0)
    0
    >>> check(t)
    Traceback (most recent call last):
    ...
    traceconv.model.builder.InvalidTraceError: the trace is not valid: track: 1 slices on a track that does not exist (e.g. slices row 0)
    """
    from .validate import validate, validate_cheap

    problems = validate(trace) if full else validate_cheap(trace)
    if problems:
        raise InvalidTraceError(problems, where)


def _unknown_tracks(builder: TraceBuilder) -> None:
    """Events on a track id that does not exist go to one "(unknown track)" track."""
    tracks, moved, lost = len(builder.tracks), 0, None
    for table in (builder.slices, builder.instants, builder.counters):
        if not len(table):
            continue
        column = np.frombuffer(table.track, np.int32)
        bad = (column < 0) | (column >= tracks)
        count = int(np.count_nonzero(bad))
        if count:
            if lost is None:
                process = builder.add_process("(unknown)", kind=ProcessKind.SYNTHETIC)
                lost = builder.add_track("(unknown track)", process=process,
                                         kind=TrackKind.SYNTHETIC)
            column[bad] = lost
            moved += count
    builder.diagnostics.add("model.unknown_track", count=moved)


def _unknown_slice_refs(builder: TraceBuilder) -> None:
    """Flows whose source or target is not a slice row are left out."""
    flows = builder.flows
    if not len(flows):
        return
    rows = len(builder.slices)
    source, target = flows.numpy("source"), flows.numpy("target")
    keep = (source >= 0) & (source < rows) & (target >= 0) & (target < rows)
    dropped = int(len(keep) - np.count_nonzero(keep))
    if not dropped:
        return
    example = f"flow {int(np.flatnonzero(~keep)[0])}"
    kept = FlowTable()
    for column, _ in kept._columns:
        extend_typed(getattr(kept, column), flows.numpy(column)[keep])
    builder.flows = kept
    builder.diagnostics.add("model.unknown_slice_ref", count=dropped, example=example)


def _unknown_owners(builder: TraceBuilder) -> None:
    """A memory block's ``owner_op`` that is not an op node (of its ``owner_name``) and an
    ``owner_tensor`` that is not a tensor node are left out (a ``.pftrace`` carries blocks
    but not the graph their links name)."""
    if not any(_any_set(table, name) for table in (builder.memory, builder.reservations)
               for name in ("owner_op", "owner_tensor")):
        return
    blocks = [*builder.memory, *builder.reservations]
    from .graph import OP, TENSOR  # (networkx: not imported by reads without a graph)
    from .lazy_graph import is_unfilled

    graph = builder._graph
    if is_unfilled(graph):
        return   # (a lazy graph is the reader's own, made on first use: not made for this)
    nodes = dict(graph.nodes(data=True)) if graph is not None else {}
    dropped, example = 0, None
    for block in blocks:
        op, tensor = block.owner_op, block.owner_tensor
        if op is not None:
            data = nodes.get(op) or {}
            if data.get("kind") != OP or block.owner_name not in (None, data.get("name")):
                block.owner_op = None
        if tensor is not None and (nodes.get(tensor) or {}).get("kind") != TENSOR:
            block.owner_tensor = None
        if (op, tensor) != (block.owner_op, block.owner_tensor):
            dropped += 1
            example = example or f"memory block {block.name!r}: {op or tensor}"
    builder.diagnostics.add("model.unknown_owner", count=dropped, example=example)


def _parent_cycles(builder: TraceBuilder) -> None:
    """Op nodes whose ``parent`` links go round: the cycle's first op gets no parent, one
    rule for every reader (:func:`~traceconv.model.graph.cut_parent_cycles`)."""
    graph = builder._graph
    if graph is None:
        return   # (no graph: networkx not imported for it)
    from .graph import OP, cut_parent_cycles
    from .lazy_graph import is_unfilled

    if is_unfilled(graph):
        return   # (a lazy graph is the reader's own, made on first use)
    parents = {node: data["parent"] for node, data in graph.nodes(data=True)
               if data.get("kind") == OP and data.get("parent") is not None}
    for node in cut_parent_cycles(parents, builder.diagnostics):
        graph.nodes[node]["parent"] = None


def _any_set(table: BlockTable, name: str) -> bool:
    """Whether a block of ``table`` has field ``name`` set (not None)."""
    values, codes = table.coded(name)
    return any(values[code] is not None for code in np.unique(codes).tolist())


def _cut_names(builder: TraceBuilder) -> None:
    """Strings (names, categories) past :data:`NAME_LIMIT` characters are cut there."""
    table = builder.strings
    strings = table.strings
    if max(map(len, strings)) <= NAME_LIMIT:   # (one C-speed pass over unique strings)
        return
    ids = table.ids
    cut = 0
    for index, text in enumerate(strings):
        if len(text) > NAME_LIMIT:
            short = text[:NAME_LIMIT]
            strings[index] = short
            del ids[text]
            ids.setdefault(short, index)
            cut += 1
    builder.diagnostics.add("model.name_cut", count=cut, example=f"{cut} names")
    _cut_op_names(builder)


def _device_numbers(builder: TraceBuilder) -> None:
    """A device's memory size and compute capability are counts: one that is negative or
    past int64 (a damaged ``deviceProperties``) is not known."""
    meta, unknown, example = builder.metadata, 0, None
    devices = []
    for device in meta.devices:
        wrong = dict.fromkeys(device.counts_out_of_range())
        if wrong:
            unknown += len(wrong)
            example = example or f"device {device.id}: {', '.join(wrong)}"
            device = replace(device, **wrong)
        devices.append(device)
    if unknown:
        meta.devices = devices
        builder.diagnostics.add("model.device_number_beyond", count=unknown, example=example)


def _id_numbers(builder: TraceBuilder) -> None:
    """A pid, tid or sort index is an int64 (what every writer and frame holds): one past
    it (a JSON integer of 30 digits) is not known; the name made of it stays.

    >>> b = TraceBuilder(); p = b.add_process("pid 1e30", pid=10**30)
    >>> _ = b.add_track("main", process=p, tid=7); trace = b.build()
    >>> trace.processes[0].pid, trace.diagnostics["model.id_beyond_int64"].example
    (None, "process 'pid 1e30': pid")
    """
    unknown, example = 0, None
    for kind, records in (("process", builder.processes), ("track", builder.tracks)):
        for record in records:
            if wrong := record.ids_out_of_range():
                unknown += len(wrong)
                example = example or f"{kind} {record.name!r}: {', '.join(wrong)}"
                for name in wrong:
                    setattr(record, name, None)
    builder.diagnostics.add("model.id_beyond_int64", count=unknown, example=example)


def _cut_op_names(builder: TraceBuilder) -> None:
    """An op node's ``name`` and ``type`` are cut as its slices' names are (an op is
    known by a slice of its name: the ``op_slices`` invariant)."""
    from .lazy_graph import is_unfilled

    graph = builder._graph
    if graph is None or is_unfilled(graph):
        return   # (a lazy graph cuts nothing: its names are the reader's, made on use)
    for _, data in graph.nodes(data=True):
        for key in ("name", "type"):
            value = data.get(key)
            if isinstance(value, str) and len(value) > NAME_LIMIT:
                data[key] = value[:NAME_LIMIT]


def _clamp_shares(builder: TraceBuilder) -> None:
    """A statistics row's ``ratio`` (percent of its section) within 0-100; NaN: none."""
    moved, example = 0, None
    for row in builder.stats:
        ratio = row.ratio
        if ratio is None or 0 <= ratio <= 100:
            continue
        example = example or f"{row.name}: {ratio}%"
        row.ratio = None if math.isnan(ratio) else min(max(ratio, 0.0), 100.0)
        moved += 1
    builder.diagnostics.add("model.share_beyond_range", count=moved, example=example)

