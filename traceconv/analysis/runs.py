"""Several runs in one file (two MIGraphX perf runs, two Paddle profiling windows): list them
and take one out, so a file can be diffed run against run.

A run is what its reader labelled with it: statistics rows name it (``extra["run"]``, or
Paddle's ``extra["window"]``) and processes are named after it (``MIGraphX program 2``) or
carry it as a label (``run=0``: Paddle's report breakdowns).
Taking run N out keeps, in every table, what belongs to it: its statistics rows; its
processes with their tracks, slices, instants, counter samples and the flows between them;
the op-graph components its slices or memory blocks touch; the memory blocks of its ops
and devices. What belongs to no run (a process named after none) is kept in each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import Process, Trace
from ..model.copying import Keep, copy_into
from ..model.diagnostics import Diagnostics
from ..model.entities import RUN_LABEL

# where readers label the run of a statistics row: MIGraphX "run", Paddle's "window"
_RUN_KEYS = ("run", "window")


def run_label(extra: dict) -> str | None:
    """The run a statistics row's ``extra`` names, or None.

    >>> run_label({"window": 0}), run_label({"run": "v4"}), run_label({})
    ('0', 'v4', None)
    """
    for key in _RUN_KEYS:
        if extra.get(key) is not None:
            return str(extra[key])
    return None


def runs(trace: Trace) -> list[str]:
    """The run labels of the trace's statistics, in file order (empty: one run).

    >>> from traceconv.model import OpStat
    >>> t = Trace(); _ = t.add_stat(OpStat("a", extra={"window": 0}))
    >>> _ = t.add_stat(OpStat("a", extra={"window": 1})); runs(t)
    ['0', '1']
    """
    labels = dict.fromkeys(label for s in trace.stats if (label := run_label(s.extra)) is not None)
    return list(labels) if len(labels) > 1 else []


def split_runs(trace: Trace) -> list[tuple[str, Trace]]:
    """Each run's label and :func:`select_run` trace, in file order (empty: one run).

    The file is looked at once for all runs (which run each row, track and block is),
    so a file of N runs is split in time proportional to its size, not N times it.

    >>> split_runs(Trace())
    []
    """
    index = _RunIndex.of(trace)
    return [(label, index.select(number)) for number, label in enumerate(index.labels, 1)]


def select_run(trace: Trace, number: int) -> Trace:
    """A new trace with only run ``number`` (1-based) in every table (the module's rule);
    what belongs to the other runs is counted as ``runs.other_runs``. Run 1 of a trace with
    one run is the trace itself; ``ValueError`` for a run the trace does not have.

    >>> from traceconv.model import OpStat
    >>> t = Trace()
    >>> for run in ("program 1", "program 2"):
    ...     track = t.add_track("ops", process=t.add_process(f"MIGraphX {run}"))
    ...     _ = t.add_slice(track, 0, 10, "gemm"); _ = t.add_stat(OpStat("gemm", extra={"run": run}))
    >>> second = select_run(t, 2)
    >>> [p.name for p in second.processes], len(second.slices), len(second.stats)
    (['MIGraphX program 2'], 1, 1)
    >>> second.diagnostics.count("runs.other_runs"), select_run(second, 1) is second
    (3, True)
    """
    labels = runs(trace)
    if not labels and number == 1:
        return trace
    if not 1 <= number <= len(labels):
        raise ValueError(f"run {number} of {len(labels) or 1}")
    return _RunIndex.of(trace, labels).select(number)


_NONE = -1   # the run of what belongs to no run


@dataclass(frozen=True)
class _RunIndex:
    """Which run each statistics row, track and memory block of a trace is (``_NONE``:
    no run), and each op-graph component's runs: made once, then any run's selection is
    array comparisons."""

    trace: Trace
    labels: list[str]
    stat_runs: np.ndarray
    track_runs: np.ndarray | None          # None: the runs share one timeline
    block_runs: np.ndarray | None          # a block's device's run
    block_components: np.ndarray | None    # its owner op's component (-1: no owner op;
    #                                        len(components): an owner outside the graph)
    components: list[list[str]]            # each component's nodes
    component_runs: list[frozenset[int]]   # the runs its slices and blocks touch

    @classmethod
    def of(cls, trace: Trace, labels: list[str] | None = None) -> _RunIndex:
        labels = runs(trace) if labels is None else labels
        number: dict[str | None, int] = {label: k for k, label in enumerate(labels)}
        stat_runs = np.fromiter((number.get(run_label(s.extra), _NONE) for s in trace.stats),
                                dtype=np.int64, count=len(trace.stats))
        process_runs = {p.id: _owner(p, number) for p in trace.processes}
        if all(run == _NONE for run in process_runs.values()):
            return cls(trace, labels, stat_runs, None, None, None, [], [])
        track_runs = np.fromiter((process_runs[t.process] for t in trace.tracks),
                                 dtype=np.int64, count=len(trace.tracks))
        # a block on a device named as one run's process is that run's
        device_runs = {p.name: process_runs[p.id] for p in trace.processes
                       if process_runs[p.id] != _NONE}
        block_runs = np.fromiter((device_runs.get(d, _NONE)
                                  for d in trace.memory.column("device")),
                                 dtype=np.int64, count=len(trace.memory))
        if not trace.has_graph:
            return cls(trace, labels, stat_runs, track_runs, block_runs, None, [], [])
        return cls(trace, labels, stat_runs, track_runs, block_runs,
                   *_components(trace, track_runs, block_runs))

    def select(self, number: int) -> Trace:
        """Run ``number``'s trace (1-based)."""
        keep = self._keep(number - 1)
        trace = self.trace
        out = Trace(trace.metadata.copy())
        out.metadata.diagnostics = Diagnostics()
        moved = copy_into(out, trace, keep)
        out.metadata.attributes["run"] = self.labels[number - 1]
        others = sum(int(np.count_nonzero(~mask)) for mask in
                     (keep.tracks, keep.slices, keep.instants, keep.counters, keep.memory,
                      keep.stats) if mask is not None)
        nodes = 0 if keep.nodes is None else trace.graph.number_of_nodes() - len(keep.nodes)
        out.diagnostics.add("runs.other_runs", count=others + nodes + moved.flows_dropped)
        return out.freeze()

    def _keep(self, run: int) -> Keep:
        """What is run ``run``'s or no run's (the module's rule)."""
        stats = _ours(self.stat_runs, run)
        if self.track_runs is None:   # statistics-only runs: the whole timeline is kept
            return Keep(stats=stats)
        trace, tracks = self.trace, _ours(self.track_runs, run)

        def on_kept_track(table) -> np.ndarray:
            return tracks[table.numpy("track")] if len(table) else np.zeros(0, dtype=bool)

        assert self.block_runs is not None
        memory = _ours(self.block_runs, run)
        nodes = None
        if self.block_components is not None:
            kept = np.fromiter((run in runs_ or _NONE in runs_ or not runs_
                                for runs_ in self.component_runs), dtype=bool,
                               count=len(self.component_runs))
            # a block goes with its owner op's component (an owner outside the graph:
            # the sentinel after the last component, never kept), else with its device
            with_owner = np.append(kept, False)[self.block_components]
            memory = np.where(self.block_components >= 0, with_owner, memory)
            nodes = frozenset(node for k in np.flatnonzero(kept).tolist()
                              for node in self.components[k])
        return Keep(tracks=tracks, slices=on_kept_track(trace.slices),
                    instants=on_kept_track(trace.instants),
                    counters=on_kept_track(trace.counters), memory=memory, stats=stats,
                    nodes=nodes)


def _ours(runs_: np.ndarray, run: int) -> np.ndarray:
    return (runs_ == run) | (runs_ == _NONE)


def _owner(process: Process, number: dict[str | None, int]) -> int:
    """The run a process is labelled with (``run=LABEL``) or named after (``MIGraphX
    program 2``: a label after a space; of several, the last in file order), or ``_NONE``."""
    for label in process.labels:
        if label.startswith(RUN_LABEL) and label[len(RUN_LABEL):] in number:
            return number[label[len(RUN_LABEL):]]
    name = process.name
    found = [number[name[i + 1:]] for i, c in enumerate(name) if c == " "
             and name[i + 1:] in number]
    return max(found, default=_NONE)


def _components(trace: Trace, track_runs: np.ndarray, block_runs: np.ndarray
                ) -> tuple[np.ndarray, list[list[str]], list[frozenset[int]]]:
    """The op graph's weakly connected components, the component of each memory block's
    owner op, and the runs each component touches: those of its ops' slices' tracks and of
    its blocks' devices (``_NONE`` among them: it is kept in every run)."""
    import networkx as nx

    graph = trace.graph
    components = [list(nodes) for nodes in nx.weakly_connected_components(graph)]
    where = {node: k for k, nodes in enumerate(components) for node in nodes}
    touched: list[set[int]] = [set() for _ in components]
    slice_runs = track_runs[trace.slices.numpy("track")] if len(trace.slices) else track_runs[:0]
    for node, rows in graph.nodes(data="slices"):
        if rows:
            touched[where[node]].update(slice_runs[np.asarray(rows, dtype=np.int64)].tolist())
    outside = len(components)
    block_components = np.fromiter(
        (-1 if owner is None else where.get(owner, outside)
         for owner in trace.memory.column("owner_op")), dtype=np.int64, count=len(trace.memory))
    for k, run in zip(block_components.tolist(), block_runs.tolist(), strict=True):
        if 0 <= k < outside:
            touched[k].add(run)
    return block_components, components, [frozenset(runs_) for runs_ in touched]
