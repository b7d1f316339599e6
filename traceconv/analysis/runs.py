"""Several runs in one file (two MIGraphX perf runs, two Paddle profiling windows): list them
and take one out, so a file can be diffed run against run.

A run is what its reader labelled with it: statistics rows name it (``extra["run"]``, or
Paddle's ``extra["window"]``) and processes are named after it (``MIGraphX program 2``).
Taking run N out keeps, in every table, what belongs to it: its statistics rows; its
processes with their tracks, slices, instants, counter samples and the flows between them;
the op-graph components its slices or memory blocks touch; the memory blocks of its ops
and devices. What belongs to no run (a process named after none) is kept in each.
"""

from __future__ import annotations

import numpy as np

from ..model import Trace
from ..model.copying import Keep, copy_into
from ..model.diagnostics import Diagnostics

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

    >>> split_runs(Trace())
    []
    """
    return [(label, select_run(trace, number)) for number, label in enumerate(runs(trace), 1)]


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
    wanted = labels[number - 1]
    keep = _keep(trace, wanted, labels)
    out = Trace(trace.metadata.copy())
    out.metadata.diagnostics = Diagnostics()
    moved = copy_into(out, trace, keep)
    out.metadata.attributes["run"] = wanted
    others = sum(int(np.count_nonzero(~mask)) for mask in
                 (keep.tracks, keep.slices, keep.instants, keep.counters, keep.memory, keep.stats)
                 if mask is not None)
    nodes = 0 if keep.nodes is None else trace.graph.number_of_nodes() - len(keep.nodes)
    out.diagnostics.add("runs.other_runs", count=others + nodes + moved.flows_dropped)
    return out.freeze()


def _keep(trace: Trace, wanted: str, labels: list[str]) -> Keep:
    """What of ``trace`` is run ``wanted``'s or no run's (the module's rule)."""
    stats = np.fromiter((run_label(s.extra) in (wanted, None) for s in trace.stats),
                        dtype=bool, count=len(trace.stats))
    owner = {p.name: label for p in trace.processes for label in labels
             if p.name.endswith(f" {label}")}
    if not owner:   # the runs share one timeline (statistics-only runs): all of it is kept
        return Keep(stats=stats)
    theirs = {p.id for p in trace.processes if owner.get(p.name, wanted) != wanted}
    tracks = np.fromiter((t.process not in theirs for t in trace.tracks), dtype=bool,
                         count=len(trace.tracks))

    def on_kept_track(table) -> np.ndarray:
        return tracks[table.numpy("track")] if len(table) else np.zeros(0, dtype=bool)

    slices = on_kept_track(trace.slices)
    memory, nodes = _memory_and_nodes(trace, slices, {n for n, r in owner.items() if r != wanted})
    return Keep(tracks=tracks, slices=slices, instants=on_kept_track(trace.instants),
                counters=on_kept_track(trace.counters), memory=memory, stats=stats, nodes=nodes)


def _memory_and_nodes(trace: Trace, slices: np.ndarray, other_devices: set[str]
                      ) -> tuple[np.ndarray, frozenset[str] | None]:
    """The memory blocks and graph nodes of the run: an op-graph component is the other
    runs' when one of its ops ran on their slices or one of its blocks is on their devices
    (and none on the run's); a block goes with its owner op, else with its device."""
    owners = trace.memory.column("owner_op")
    on_other_device = [device in other_devices for device in trace.memory.column("device")]
    if not trace.has_graph:
        return ~np.asarray(on_other_device, dtype=bool), None
    import networkx as nx

    graph = trace.graph
    mine: set[str] = set()
    theirs: set[str] = set()
    for node, rows in graph.nodes(data="slices"):
        for row in rows or ():
            (mine if slices[row] else theirs).add(node)
    for owner, other in zip(owners, on_other_device, strict=True):
        if owner is not None:
            (theirs if other else mine).add(owner)
    kept: set[str] = set()
    for component in nx.weakly_connected_components(graph):
        if component & mine or not component & theirs:
            kept |= component
    memory = np.fromiter((owner in kept if owner is not None else not other
                          for owner, other in zip(owners, on_other_device, strict=True)),
                         dtype=bool, count=len(owners))
    return memory, frozenset(kept)
