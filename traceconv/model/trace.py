"""The common trace model: one object that every reader fills and every writer reads."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from os import PathLike
from typing import TYPE_CHECKING, Any, Literal, Union

import numpy as np

from ..implementations import implementation
from ..numbers import INT64_MAX, int64
from .block_table import BlockTable
from .columns import (
    Args,
    CounterSample,
    CounterTable,
    Flow,
    FlowTable,
    Instant,
    InstantTable,
    Slice,
    SliceTable,
)
from .diagnostics import Diagnostics
from .entities import MemoryBlock, OpStat, Process, ProcessKind, Track, TrackKind
from .frozen import (
    FrozenWhenUnpickled,
    deep_freeze,
    freeze_graph,
    freeze_graph_data,
    freeze_records,
    frozen_list,
)
from .graph import OP, TENSOR, count_kind
from .strings import StringTable
from .typed_arrays import extend_typed, read_only_view

if TYPE_CHECKING:
    import networkx as nx
    import pandas
    import pyarrow

FrameKind = Literal["slices", "instants", "counters", "flows", "memory", "ops"]
Selector = Union[int, str, Collection[int | str], None]   # noqa: UP007 - runtime alias


@dataclass(frozen=True)
class DeviceInfo:
    """One accelerator as the source describes it (what analyses may rely on; the source's
    own record stays in :attr:`Metadata.attributes`)."""

    id: int | str | None = None
    name: str | None = None
    memory_bytes: int | None = None      # total device memory
    compute_major: int | None = None     # compute capability (CUDA) / gfx major (ROCm)
    compute_minor: int | None = None

    def counts_out_of_range(self) -> tuple[str, ...]:
        """The count fields (memory size, compute capability) that are negative or past
        int64: the builder makes them not known, the validator refuses them.

        >>> DeviceInfo(0, "A100", memory_bytes=2**70, compute_major=-1).counts_out_of_range()
        ('memory_bytes', 'compute_major')
        """
        return tuple(name for name in ("memory_bytes", "compute_major", "compute_minor")
                     if (value := getattr(self, name)) is not None
                     and (int64(value) is None or value < 0))


@dataclass(frozen=True)
class StatedRun:
    """Figures the source states about the measured run as a whole (a benchmark's own
    summary), not derived from its events: what a report shows as the run's length where
    the events are totals laid side by side (no elapsed time of their own).

    >>> run = StatedRun(walltime_ns=3_000_520_000, throughput_per_s=3580.05)
    >>> run.stated(), StatedRun().stated()
    (True, False)
    """

    walltime_ns: int | None = None        # host wall time of the measured run
    device_ns: int | None = None          # device compute time of the run
    throughput_per_s: float | None = None  # inferences (queries) a second
    latency_min_ns: int | None = None     # one inference's latency
    latency_max_ns: int | None = None
    latency_mean_ns: int | None = None
    latency_median_ns: int | None = None

    def stated(self) -> bool:
        """Whether the source stated any figure."""
        return any(value is not None for value in vars(self).values())


@dataclass
class Metadata(FrozenWhenUnpickled):
    """Where a trace came from and what happened to it on the way in.

    Readers fill the typed fields (``framework``, ``rank``, ``world_size``, ``devices``)
    from their source's own words; analyses read those, never the free-form
    ``attributes`` (which keep the source's envelope as it was, for writers).
    """

    source_format: str = ""
    source_version: str | None = None
    source_file: str | None = None
    framework: str | None = None
    rank: int | None = None
    world_size: int | None = None
    devices: list[DeviceInfo] = field(default_factory=list)
    run: StatedRun = field(default_factory=StatedRun)
    # Epoch nanoseconds of the source's time origin when the source states one (Kineto's
    # baseTimeNanoseconds). Writers use it as the base of relative output timestamps.
    clock_base_ns: int | None = None
    # What the trace clock is: "unix epoch", "process-relative", "synthetic (program order)".
    clock: str = "unknown"
    attributes: dict[str, Any] = field(default_factory=dict)
    diagnostics: Diagnostics = field(default_factory=Diagnostics)

    def freeze(self) -> None:
        """Refuse changes from now on (the attributes, devices, run and diagnostics too)."""
        if getattr(self, "_frozen", False):
            return
        self.attributes = deep_freeze(dict(self.attributes))
        self.devices = frozen_list(self.devices)
        freeze_records([*self.devices, self.run])   # (frozen dataclasses: their __init__)
        self.diagnostics.freeze()
        object.__setattr__(self, "_frozen", True)

    def copy(self) -> Metadata:
        """An unfrozen copy: its attributes mapping and diagnostics are its own; the values
        nested in the attributes are read-only (a frozen original's are shared, at no cost
        and at any depth: an envelope nested 10,000 deep copies too).

        >>> meta = Metadata(attributes={"a": 1, "b": [1]}); meta.freeze(); again = meta.copy()
        >>> again.attributes["c"] = 2; sorted(again.attributes), sorted(meta.attributes)
        (['a', 'b', 'c'], ['a', 'b'])
        """
        attributes = self.attributes if getattr(self, "_frozen", False) else deep_freeze(
            dict(self.attributes))
        return replace(self, attributes=dict(attributes), devices=list(self.devices),
                       diagnostics=self.diagnostics.copy())


_BLOCK = 1 << 20   # rows summed together where a column's sum is only looked at


class Trace(FrozenWhenUnpickled):
    """A profiler trace in traceconv's graph-aware model.

    Times are integer nanoseconds on one trace clock. Events live in columnar tables
    (:attr:`slices`, :attr:`instants`, :attr:`counters`, :attr:`flows`) whose names and
    categories are ids into :attr:`strings`; the ``iter_*`` methods give friendly views.

    >>> trace = Trace()
    >>> host = trace.add_process("python", pid=42)
    >>> main = trace.add_track("MainThread", process=host, tid=42)
    >>> conv = trace.add_slice(main, 1_000, 500, "aten::conv2d", "cpu_op")
    >>> [s.name for s in trace.iter_slices()], trace.span_ns
    (['aten::conv2d'], 500)
    """

    def __init__(self, metadata: Metadata | None = None) -> None:
        self.metadata = metadata or Metadata()
        self.strings = StringTable()
        self.processes: list[Process] = []
        self.tracks: list[Track] = []
        self.slices = SliceTable()
        self.instants = InstantTable()
        self.counters = CounterTable()
        self.flows = FlowTable()
        self._graph: nx.DiGraph | None = None   # made on first use (see graph)
        self.memory = BlockTable()
        # Address ranges an allocator reserved from the device (CUDA caching-allocator
        # segments, arenas, pools); the blocks of :attr:`memory` live inside them, so the
        # two are kept apart: reserved and allocated bytes are different questions.
        self.reservations = BlockTable()
        self.stats: list[OpStat] = []

    @property
    def frozen(self) -> bool:
        """Whether the trace refuses changes (what readers and transformations hand over)."""
        return bool(self.__dict__.get("_frozen"))

    def freeze(self) -> Trace:
        """Make the trace read-only and return it: its columns, string table, lists, graph,
        attributes and diagnostics refuse every change from now on, so it can be shared
        (transformations build new traces: :meth:`copy`, :mod:`traceconv.model.copying`).

        >>> t = Trace(); p = t.add_process("p"); _ = t.freeze()
        >>> t.add_track("main", process=p)
        Traceback (most recent call last):
        ...
        traceconv.model.frozen.FrozenTraceError: this trace is frozen (read-only): build a new one (Trace.copy(), traceconv.model.copying)
        """
        if self.frozen:
            return self
        for table in (self.slices, self.instants, self.counters, self.flows):
            table.freeze()
        self.strings.freeze()
        self.memory.freeze()
        self.reservations.freeze()
        for name in ("processes", "tracks", "stats"):
            records = frozen_list(getattr(self, name))
            freeze_records(records)
            setattr(self, name, records)
        if self._graph is not None:
            _freeze_graph_all(self._graph)
        self.metadata.freeze()
        object.__setattr__(self, "_frozen", True)
        return self

    def copy(self) -> Trace:
        """A new, unfrozen trace with the same content that changes on its own.

        >>> t = Trace(); th = t.add_track("main", process=t.add_process("p"))
        >>> _ = t.add_slice(th, 0, 5, "x"); _ = t.freeze(); again = t.copy()
        >>> _ = again.add_slice(th, 5, 5, "y"); len(again.slices), len(t.slices)
        (2, 1)
        """
        from .copying import copy_into

        out = Trace(self.metadata.copy())
        out.metadata.diagnostics = Diagnostics()
        copy_into(out, self)
        return out

    def derived(self) -> Trace:
        """A new, unfrozen trace sharing every part of this one (tables, lists, graph,
        metadata): a transformation that changes a few parts replaces them — never changes
        them in place — and keeps the rest without a copy. Shared parts of a frozen trace
        stay read-only, so a slip shows as :class:`FrozenTraceError`, not as a changed input.

        >>> t = Trace(); th = t.add_track("main", process=t.add_process("p")); _ = t.freeze()
        >>> view = t.derived(); view.tracks = [*t.tracks, t.tracks[0]]; len(view.tracks), len(t.tracks)
        (2, 1)
        """
        new = Trace.__new__(Trace)
        new.__dict__.update(self.__dict__)
        new.__dict__.pop("_frozen", None)
        return new

    @property
    def graph(self) -> nx.DiGraph:
        """The op/tensor graph (:mod:`traceconv.model.graph`); networkx is imported when a
        trace first uses it, not to read a timeline. A reader building a trace gets a new
        graph to fill on first use; a frozen trace without one gives an empty, frozen graph
        (reading never changes a frozen trace)."""
        if self._graph is None:
            import networkx as nx

            if self.frozen:
                empty = freeze_graph(nx.DiGraph())
                freeze_graph_data(empty)   # (its graph attributes: no change looks taken)
                return empty
            self._graph = nx.DiGraph()
        return self._graph

    @graph.setter
    def graph(self, graph: nx.DiGraph) -> None:
        self._graph = graph

    @property
    def has_graph(self) -> bool:
        """Whether the trace holds an op graph with any node."""
        return self._graph is not None and self._graph.number_of_nodes() > 0

    @property
    def diagnostics(self) -> Diagnostics:
        return self.metadata.diagnostics

    # -- building -------------------------------------------------------------------------

    def add_process(self, name: str, *, kind: ProcessKind = ProcessKind.HOST,
                    pid: int | None = None, sort_index: int | None = None,
                    labels: list[str] | None = None) -> int:
        """Add a process group and return its id."""
        process = Process(len(self.processes), name, kind, pid, sort_index, list(labels or ()))
        self.processes.append(process)
        return process.id

    def add_track(self, name: str, *, process: int, kind: TrackKind = TrackKind.THREAD,
                  tid: int | None = None, sort_index: int | None = None,
                  unit: str | None = None, description: str | None = None,
                  parent: int | None = None) -> int:
        """Add a track to ``process`` and return its id."""
        if not 0 <= process < len(self.processes):
            raise ValueError(f"unknown process id {process}")
        track = Track(len(self.tracks), name, process, kind, tid, sort_index, unit,
                      description, parent)
        self.tracks.append(track)
        return track.id

    def add_slice(self, track: int, start: int, dur: int, name: str, category: str = "",
                  args: Args = None, activity: int = 0) -> int:
        """Add a slice (start and duration in ns) and return its row index; ``activity``:
        what it is (:class:`~traceconv.model.activity.Activity`), when the caller knows."""
        intern = self.strings.intern
        return self.slices.append(track, start, dur, intern(name), intern(category), args,
                                  activity)

    def shorten_overflowing_slices(self) -> int:
        """Shorten each slice whose end (``start + dur``) passes int64 to end at the int64
        maximum, counted as ``model.slice_end_beyond_int64``; returns how many. Readers
        check a start and a duration each; their sum is what analyses and writers compute.

        >>> t = Trace(); p = t.add_process("p"); k = t.add_track("t", process=p)
        >>> _ = t.add_slice(k, 2**63 - 10, 50, "late"); t.shorten_overflowing_slices()
        1
        >>> t.slice(0).dur
        9
        """
        s = self.slices
        rows: list[int] = []
        chunk = 1 << 20   # rows at a time: no copy of whole columns on huge traces
        for first in range(0, len(s.start), chunk):
            count = min(chunk, len(s.start) - first)
            start, dur = (read_only_view(column)[first:first + count]
                          for column in (s.start, s.dur))
            over = np.flatnonzero((dur > 0) & (start > INT64_MAX - dur))
            rows += (over + first).tolist()
        for row in rows:
            s.dur[row] = INT64_MAX - s.start[row]
        self.diagnostics.add("model.slice_end_beyond_int64", count=len(rows),
                             example=f"slice {rows[0]}" if rows else None)
        return len(rows)

    def add_instant(self, track: int, ts: int, name: str, category: str = "",
                    args: Args = None) -> int:
        """Add an instant event and return its row index."""
        intern = self.strings.intern
        return self.instants.append(track, ts, intern(name), intern(category), args)

    def add_counter(self, track: int, ts: int, value: float) -> int:
        """Add one sample to a counter track and return its row index."""
        return self.counters.append(track, ts, value)

    def add_counter_series(self, track: int, times: Sequence[int] | np.ndarray,
                           values: Sequence[float] | np.ndarray) -> None:
        """Add many samples to one counter track at once (numpy arrays welcome).

        >>> t = Trace(); p = t.add_process("p"); c = t.add_track("mem", process=p)
        >>> t.add_counter_series(c, [10, 20], [1.0, 0.0]); len(t.counters)
        2
        """
        stamps = np.asarray(times, dtype=np.int64)
        samples = np.asarray(values, dtype=np.float64)
        if stamps.shape != samples.shape:
            raise ValueError("times and values differ in length")
        table = self.counters
        extend_typed(table.track, np.full(len(stamps), track))
        extend_typed(table.ts, stamps)
        extend_typed(table.value, samples)

    def add_flow(self, source: int, target: int, category: str = "", name: str = "") -> int:
        """Link slice row ``source`` to slice row ``target`` and return the flow's index."""
        intern = self.strings.intern
        return self.flows.append(source, target, intern(category), intern(name))

    def add_memory_block(self, block: MemoryBlock) -> int | None:
        """Add ``block`` and return its index; its address, size and times must fit int64
        (``NumberError`` otherwise: the memory analyses and the writers hold them in int64
        arrays). A trace being read leaves such a block out instead and returns None
        (:meth:`TraceBuilder.add_memory_block
        <traceconv.model.builder.TraceBuilder.add_memory_block>`)."""
        self.memory.append(block)
        return len(self.memory) - 1

    def add_memory_blocks(self, blocks: Iterable[MemoryBlock]) -> None:
        """:meth:`add_memory_block` for many blocks (none added when one does not fit)."""
        self.memory.extend(blocks)

    def add_memory_columns(self, numbers: dict[str, np.ndarray], coded: dict[str, Any],
                           args: Sequence[Any] | None = None) -> None:
        """Add blocks given as columns (:meth:`BlockTable.extend_columns
        <traceconv.model.block_table.BlockTable.extend_columns>`); their numbers must fit
        int64 as a block's do (none added when one does not)."""
        self.memory.extend_columns(numbers, coded, args)

    def add_reservation(self, block: MemoryBlock) -> int | None:
        """Add an address range reserved by an allocator (see :attr:`reservations`); its
        numbers must fit int64 as a block's do (a trace being read leaves it out instead
        and returns None, as :meth:`add_memory_block`)."""
        self.reservations.append(block)
        return len(self.reservations) - 1

    def add_stat(self, stat: OpStat) -> int:
        self.stats.append(stat)
        return len(self.stats) - 1

    # -- reading --------------------------------------------------------------------------

    def slice(self, index: int) -> Slice:
        """The slice at row ``index``."""
        s, names = self.slices, self.strings.strings
        return Slice(index, s.track[index], s.start[index], s.dur[index], names[s.name[index]],
                     names[s.category[index]], s.args[index])

    def instant(self, index: int) -> Instant:
        """The instant at row ``index``."""
        i, names = self.instants, self.strings.strings
        return Instant(index, i.track[index], i.ts[index], names[i.name[index]],
                       names[i.category[index]], i.args[index])

    def iter_slices(self, track: int | None = None, name: str | None = None) -> Iterator[Slice]:
        """Slices in storage order, optionally only those on ``track`` or called ``name``
        (found with numpy, then only those rows are built).

        >>> t = Trace(); a = t.add_track("a", process=t.add_process("p"))
        >>> _ = t.add_slice(a, 0, 5, "x"); _ = t.add_slice(a, 9, 5, "y")
        >>> [s.index for s in t.iter_slices(name="y")]
        [1]
        """
        s, names = self.slices, self.strings.strings
        if track is None and name is None:
            rows = zip(s.track, s.start, s.dur, s.name, s.category, s.args, strict=True)
            for index, (tr, start, dur, nm, cat, args) in enumerate(rows):
                yield Slice(index, tr, start, dur, names[nm], names[cat], args)
            return
        keep = np.ones(len(s), dtype=bool)
        if name is not None:
            name_id = self.strings.find(name)
            keep &= s.numpy("name") == (-1 if name_id is None else name_id)
        if track is not None:
            keep &= s.numpy("track") == track
        for index in np.flatnonzero(keep).tolist():
            yield self.slice(index)

    def iter_instants(self) -> Iterator[Instant]:
        i, names = self.instants, self.strings.strings
        rows = zip(i.track, i.ts, i.name, i.category, i.args, strict=True)
        for index, (tr, ts, nm, cat, args) in enumerate(rows):
            yield Instant(index, tr, ts, names[nm], names[cat], args)

    def iter_counter_samples(self) -> Iterator[CounterSample]:
        c = self.counters
        for index, (tr, ts, value) in enumerate(zip(c.track, c.ts, c.value, strict=True)):
            yield CounterSample(index, tr, ts, value)

    def iter_flows(self) -> Iterator[Flow]:
        f, names = self.flows, self.strings.strings
        rows = zip(f.source, f.target, f.category, f.name, strict=True)
        for index, (src, dst, cat, nm) in enumerate(rows):
            yield Flow(index, src, dst, names[cat], names[nm])

    def tracks_of(self, process: int) -> list[Track]:
        """The tracks that belong to process ``process``."""
        return [t for t in self.tracks if t.process == process]

    @property
    def time_range(self) -> tuple[int, int] | None:
        """(first, last) timestamp in ns over all events, or None for a trace with no events."""
        lows, highs = [], []
        for table, ts, dur in ((self.slices, "start", "dur"), (self.instants, "ts", None),
                               (self.counters, "ts", None)):
            if len(table):
                starts = table.numpy_view(ts)
                lows.append(int(starts.min()))
                if dur is None:
                    highs.append(int(starts.max()))
                    continue
                durations = table.numpy_view(dur)   # (ends a block at a time: no copy of all)
                highs.append(max(int((starts[lo:lo + _BLOCK] + durations[lo:lo + _BLOCK]).max())
                                 for lo in range(0, len(starts), _BLOCK)))
        return (min(lows), max(highs)) if lows else None

    @property
    def span_ns(self) -> int:
        """Nanoseconds from the first to the last timestamp (0 for an empty trace)."""
        bounds = self.time_range
        return bounds[1] - bounds[0] if bounds else 0

    @property
    def op_count(self) -> int:
        return 0 if self._graph is None else count_kind(self._graph, OP)

    @property
    def tensor_count(self) -> int:
        return 0 if self._graph is None else count_kind(self._graph, TENSOR)

    def counts(self) -> dict[str, int]:
        """The integer counts that ``traceconv info --json`` prints."""
        return {
            "tracks": len(self.tracks),
            "slices": len(self.slices),
            "instants": len(self.instants),
            "counter_samples": len(self.counters),
            "flows": len(self.flows),
            "ops": self.op_count,
            "tensors": self.tensor_count,
            "memory_blocks": len(self.memory),
            "stat_rows": len(self.stats),
            "span_ns": self.span_ns,
        }

    # -- output ---------------------------------------------------------------------------

    def save(self, path: str | PathLike[str], format: str | None = None,
             **options: Any) -> Diagnostics:
        """Write the trace to ``path``; the format comes from the extension unless given.
        The trace is not changed; the writer's own diagnostics are returned.

        ``trace.save("out.pftrace")``, ``trace.save("out.json.gz")``,
        ``trace.save("-", format="chrome")`` (standard output).
        """
        return implementation("save")(self, path, format=format, **options)

    def to_pandas(self, kind: FrameKind = "slices", *, args: bool | Collection[str] = False,
                  start: int | None = None, end: int | None = None, category: Selector = None,
                  name: Selector = None, track: Selector = None) -> pandas.DataFrame:
        """One kind of row as a pandas DataFrame, shaped like HTA's trace frames.

        ``kind``: ``slices`` (ts, dur in int64 ns, name, cat, pid, tid, track, stream,
        correlation, external_id, depth), ``instants``, ``counters``, ``flows``, ``memory``,
        ``ops``. ``args=True`` adds an ``args.KEY`` column per argument key (or give the
        keys). Filters (numpy, no Python loop): ``start``/``end`` in trace ns (what overlaps
        the window), ``category``, ``name``, ``track`` (id or name; one or several). Needs
        pandas (``pip install 'traceconv[pandas]'``); see :mod:`traceconv.analysis.frames`.

        >>> t = Trace(); p = t.add_process("python", pid=7)
        >>> _ = t.add_slice(t.add_track("main", process=p, tid=7), 0, 100, "step")
        >>> t.to_pandas()[["ts", "dur", "name", "pid", "depth"]].to_dict("records")
        [{'ts': 0, 'dur': 100, 'name': 'step', 'pid': 7, 'depth': 0}]
        """
        return implementation("to_pandas")(self, kind, args=args, start=start, end=end,
                                           category=category, name=name, track=track)

    def to_arrow(self, kind: FrameKind = "slices", *, args: bool | Collection[str] = False,
                 start: int | None = None, end: int | None = None, category: Selector = None,
                 name: Selector = None, track: Selector = None) -> pyarrow.Table:
        """One kind of row as a pyarrow Table (the columns and filters of :meth:`to_pandas`).

        >>> t = Trace(); p = t.add_process("python", pid=7)
        >>> _ = t.add_slice(t.add_track("main", process=p, tid=7), 0, 100, "step")
        >>> t.to_arrow().column("dur").to_pylist()
        [100]
        """
        return implementation("to_arrow")(self, kind, args=args, start=start, end=end,
                                          category=category, name=name, track=track)

    def memflow_svg(self, path: str | PathLike[str], **options: Any) -> None:
        """Draw the memory blocks as a memory-flow SVG (options: ``MemflowOptions`` fields).

        ``trace.memflow_svg("memflow.svg", color_by="category", device="cuda:0")``
        """
        self.save(path, format="svg", **options)

    def __repr__(self) -> str:
        counts = ", ".join(f"{k}={v}" for k, v in self.counts().items() if v)
        return f"<Trace {self.metadata.source_format or '?'}: {counts or 'empty'}>"


def _freeze_graph_all(graph: nx.DiGraph) -> None:
    """Freeze ``graph``'s structure now and its attribute dicts once they exist (a lazy
    graph, :mod:`traceconv.model.lazy_graph`, makes them on first use)."""
    freeze_graph(graph)
    fill = graph.__dict__.get("_fill")
    if fill is None:
        freeze_graph_data(graph)
        return

    def fill_then_freeze(filled: nx.DiGraph) -> None:
        fill(filled)
        freeze_graph_data(filled)

    graph.__dict__["_fill"] = fill_then_freeze


