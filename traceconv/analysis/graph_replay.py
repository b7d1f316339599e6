"""Kernels of a replayed CUDA/HIP graph, back to the ops and modules that captured them.

A graph replay shows one launch call (``cudaGraphLaunch`` / ``hipGraphLaunch``) and the
graph's kernels with no op above them. The profile taken while the graph was captured has
the launch calls the graph recorded, under their ops, modules and annotations, in capture
order. :func:`map_replay` pairs each replayed kernel with one captured launch: by graph
node id where both traces record it, else by aligning kernel names in order (a longest
matching of the two name sequences; a kernel on either side of a mismatch is left
unmatched, never guessed). :func:`annotate_replay` returns a new trace whose mapped kernels
carry what captured them (``captured_op``, ``captured_stack``, ``captured_annotation``),
which ``summary --by-annotation`` reads.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher

import numpy as np

from ..model import Trace
from .activity import DEVICE_WORK, Activity, Timeline

GRAPH_LAUNCH = re.compile(r"^(cuda|hip)GraphLaunch")
_BEGIN_CAPTURE = re.compile(r"^(cuda|hip)StreamBeginCapture")
_END_CAPTURE = re.compile(r"^(cuda|hip)StreamEndCapture")
_MODULE = "nn.Module: "          # PyTorch's module frames (with_stack / with_modules)
NODE_ID = "graph node id"        # the kernel argument where a profiler names the graph node
# vLLM names a step's batch "execute_<n>_context_<prefill tokens>_generation_<decode tokens>"
# (tried from each line's start to its first "context_<digit>" only: a later one in the
# line cannot match where the first did not, and each re-read the rest of the line)
_VLLM_BATCH = re.compile(r"^(?:(?!context_\d).)*+context_(\d++).*generation_(\d+)", re.MULTILINE)


@dataclass(frozen=True)
class CapturedLaunch:
    """One launch call recorded into a graph: its kernel, its position and its host stack."""

    position: int                 # order within its capture window, from 0
    kernel: str
    node_id: object | None
    stack: tuple[str, ...]        # enclosing annotations, modules and ops, outermost first
    op: str | None                # the innermost host operator
    annotation: str | None        # the innermost user annotation


@dataclass
class ReplayMapping:
    """Which captured launch each replayed kernel is, per graph launch of the replay."""

    replayed: int = 0
    mapped: int = 0
    by_node_id: int = 0
    graph_launches: int = 0
    other_work: int = 0           # copies and memsets the graph launches ran (not mapped)
    phase: dict[str, int] = field(default_factory=dict)   # replayed kernels per phase
    pairs: dict[int, CapturedLaunch] = field(default_factory=dict)   # kernel row → launch

    @property
    def unmatched(self) -> int:
        return self.replayed - self.mapped

    def as_dict(self) -> dict:
        """The counts, as ``summary --json`` prints them under ``"graph_replay"``."""
        share = self.mapped / self.replayed if self.replayed else 0.0
        return {"graph_launches": self.graph_launches, "replayed_kernels": self.replayed,
                "mapped": self.mapped, "unmatched": self.unmatched,
                "mapped_by_node_id": self.by_node_id, "mapped_share": round(share, 4),
                "other_graph_work": self.other_work,
                "phase": dict(sorted(self.phase.items()))}


def align_in_order(replayed: list[str], captured: list[str]) -> list[int]:
    """For each replayed name, the index of the captured name it is (-1: unmatched): the
    longest in-order matching of the two sequences; names either side of a mismatch that
    cannot be matched in order stay -1.

    >>> align_in_order(["a", "b", "c", "d"], ["a", "b", "x", "c", "d"])
    [0, 1, 3, 4]
    >>> align_in_order(["a", "y", "c"], ["a", "b", "c"])
    [0, -1, 2]
    """
    if replayed == captured:
        return list(range(len(replayed)))
    out = [-1] * len(replayed)
    # autojunk off: a kernel that repeats every layer is the signal, not noise
    matcher = SequenceMatcher(None, replayed, captured, autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            out[block.a + k] = block.b + k
    return out


def phase_of(name: str) -> str | None:
    """Prefill or decode, where a range's name says so (vLLM's batch ranges, or the words).

    >>> phase_of("execute_32_context_0(sq0sk0)_generation_32(sq32sk55086)")
    'decode'
    >>> phase_of("prefill_batch"), phase_of("forward")
    ('prefill', None)
    """
    batch = _VLLM_BATCH.search(name)
    if batch:
        prefill, decode = int(batch.group(1)), int(batch.group(2))
        return "mixed" if prefill and decode else "prefill" if prefill else \
            "decode" if decode else None
    lowered = name.lower()
    for word in ("prefill", "decode"):
        if word in lowered:
            return word
    return None


def captured_graphs(capture: Trace) -> list[list[CapturedLaunch]]:
    """The launch calls of each stream-capture window (``…StreamBeginCapture`` to
    ``…StreamEndCapture`` on one thread), in capture order, with the host stack of each.
    Only launches that name their kernel (argument ``kernel``) can be matched by name.

    >>> t = Trace(); th = t.add_track("main", process=t.add_process("host"))
    >>> _ = t.add_slice(th, 0, 100, "layer", "user_annotation")
    >>> _ = t.add_slice(th, 1, 1, "cudaStreamBeginCapture", "cuda_runtime")
    >>> _ = t.add_slice(th, 5, 20, "aten::mm", "cpu_op")
    >>> _ = t.add_slice(th, 10, 2, "cudaLaunchKernel", "cuda_runtime", {"kernel": "gemm"})
    >>> _ = t.add_slice(th, 90, 1, "cudaStreamEndCapture", "cuda_runtime")
    >>> [(c.kernel, c.stack, c.op) for c in captured_graphs(t)[0]]
    [('gemm', ('layer', 'aten::mm'), 'aten::mm')]
    """
    tl = Timeline(capture)
    names = capture.strings.strings
    runtime = np.flatnonzero(np.isin(tl.activity, np.array(
        (Activity.LAUNCH, Activity.RUNTIME, Activity.SYNC), np.int8)) & ~tl.on_device)
    row_names = tl.names(runtime)
    begins = [int(r) for r, n in zip(runtime, row_names, strict=True) if _BEGIN_CAPTURE.match(n)]
    ends = [int(r) for r, n in zip(runtime, row_names, strict=True) if _END_CAPTURE.match(n)]
    launches = tl.rows(Activity.LAUNCH)
    frames = _stack_rows(tl)
    graphs = []
    for begin in begins:
        track = tl.track[begin]
        closing = [e for e in ends if tl.track[e] == track and tl.start[e] >= tl.start[begin]]
        until = min((int(tl.start[e]) for e in closing), default=int(tl.end.max()))
        inside = launches[(tl.track[launches] == track) & (tl.start[launches] >= tl.start[begin])
                          & (tl.start[launches] <= until)]
        inside = inside[np.argsort(tl.start[inside], kind="stable")]
        # the frames that can hold a launch of this window (not every frame of the trace)
        near = frames[(tl.track[frames] == track) & (tl.start[frames] <= until)
                      & (tl.end[frames] >= tl.start[begin])]
        graph: list[CapturedLaunch] = []
        for row in inside.tolist():
            args = capture.slices.args[row] or {}
            kernel = args.get("kernel")
            if not isinstance(kernel, str):
                continue   # a copy or a memset recorded into the graph: no kernel name
            stack = near[(tl.start[near] <= tl.start[row]) & (tl.end[near] >= tl.end[row])]
            stack = stack[np.lexsort((-tl.dur[stack], tl.start[stack]))]
            ops = [names[tl.name[s]] for s in stack if tl.activity[s] == Activity.HOST_OP]
            notes = [names[tl.name[s]] for s in stack if tl.activity[s] == Activity.ANNOTATION]
            graph.append(CapturedLaunch(len(graph), kernel, args.get(NODE_ID),
                                        tuple(names[tl.name[s]] for s in stack.tolist()),
                                        ops[-1] if ops else None,
                                        notes[-1] if notes else None))
        graphs.append(graph)
    return graphs


def _stack_rows(tl: Timeline) -> np.ndarray:
    """Host rows that make a stack: operators, user annotations and module frames."""
    rows = np.flatnonzero(np.isin(tl.activity, np.array(
        (Activity.HOST_OP, Activity.ANNOTATION), np.int8)) & ~tl.on_device)
    python = np.flatnonzero((tl.activity == Activity.PYTHON) & ~tl.on_device)
    modules = [int(r) for r, n in zip(python, tl.names(python), strict=True) if n.startswith(_MODULE)]
    return np.sort(np.concatenate([rows, np.array(modules, np.int64)]))


def replayed_kernels(tl: Timeline) -> dict[int, np.ndarray]:
    """Per graph launch row, the kernels it launched, in time order (copies and memsets of
    the graph are :func:`replayed_other_work`).

    >>> from traceconv.model import ProcessKind
    >>> t = Trace(); main = t.add_track("main", process=t.add_process("host"))
    >>> s = t.add_track("stream", process=t.add_process("GPU", kind=ProcessKind.DEVICE))
    >>> g = t.add_slice(main, 0, 5, "cudaGraphLaunch", "cuda_runtime")
    >>> for at in (30, 10): _ = t.add_flow(g, t.add_slice(s, at, 5, "k", "kernel"))
    >>> {k: v.tolist() for k, v in replayed_kernels(Timeline(t)).items()}
    {0: [2, 1]}
    """
    return _graph_work(tl, (Activity.KERNEL,))


def replayed_other_work(tl: Timeline) -> int:
    """How many copies, memsets and collectives graph launches ran (not mapped: a capture
    names kernels only)."""
    other = tuple(a for a in DEVICE_WORK if a != Activity.KERNEL)
    return sum(len(rows) for rows in _graph_work(tl, other).values())


def _graph_work(tl: Timeline, kinds: tuple[Activity, ...]) -> dict[int, np.ndarray]:
    work = np.flatnonzero((tl.launch_of >= 0) & tl.on_device
                          & np.isin(tl.activity, np.array(kinds, np.int8)))
    out: dict[int, np.ndarray] = {}
    launchers = np.unique(tl.launch_of[work])
    for launch, name in zip(launchers.tolist(), tl.names(launchers), strict=True):
        if GRAPH_LAUNCH.match(name):
            mine = work[tl.launch_of[work] == launch]
            out[launch] = mine[np.lexsort((mine, tl.start[mine]))]
    return out


def map_replay(replay: Trace, capture: Trace) -> ReplayMapping:
    """Pair each kernel of each graph launch in ``replay`` with a launch captured in
    ``capture`` (the capture window whose kernels match most), with counts and the phase
    (prefill / decode) of the range around each graph launch.

    >>> from traceconv.model import ProcessKind
    >>> cap = Trace(); th = cap.add_track("main", process=cap.add_process("host"))
    >>> _ = cap.add_slice(th, 0, 1, "hipStreamBeginCapture", "cuda_runtime")
    >>> _ = cap.add_slice(th, 2, 9, "aten::mm", "cpu_op")
    >>> for at, k in ((3, "gemm"), (20, "norm")):
    ...     _ = cap.add_slice(th, at, 1, "hipLaunchKernel", "cuda_runtime", {"kernel": k})
    >>> _ = cap.add_slice(th, 30, 1, "hipStreamEndCapture", "cuda_runtime")
    >>> rep = Trace(); main = rep.add_track("main", process=rep.add_process("host"))
    >>> s = rep.add_track("stream", process=rep.add_process("GPU", kind=ProcessKind.DEVICE))
    >>> _ = rep.add_slice(main, 0, 50, "decode_step", "user_annotation")
    >>> g = rep.add_slice(main, 1, 5, "hipGraphLaunch", "cuda_runtime")
    >>> for at, k in ((10, "gemm"), (20, "norm"), (30, "extra")):
    ...     _ = rep.add_flow(g, rep.add_slice(s, at, 5, k, "kernel"))
    >>> m = map_replay(rep, cap)
    >>> m.replayed, m.mapped, m.unmatched, m.phase, m.pairs[2].op
    (3, 2, 1, {'decode': 3}, 'aten::mm')
    """
    graphs = captured_graphs(capture)
    kernel_counts = [Counter(c.kernel for c in graph) for graph in graphs]
    tl = Timeline(replay)
    result = ReplayMapping(other_work=replayed_other_work(tl))
    notes = tl.rows(Activity.ANNOTATION)
    notes = notes[~tl.on_device[notes]]
    # a graph replayed many times shows the same kernels each time: match each sequence once
    seen: dict[tuple, list[CapturedLaunch | None]] = {}
    for launch, kernels in replayed_kernels(tl).items():
        result.graph_launches += 1
        result.replayed += len(kernels)
        phase = _phase_around(tl, notes, launch) or "unmarked"
        result.phase[phase] = result.phase.get(phase, 0) + len(kernels)
        names = tl.names(kernels)
        ids = [_node_id(replay, row) for row in kernels.tolist()]
        key = (tuple(names), tuple(map(repr, ids)))
        if key not in seen:
            seen[key] = _best_pairing(names, ids, graphs, kernel_counts)
        for row, node, found in zip(kernels.tolist(), ids, seen[key], strict=True):
            if found is not None:
                result.pairs[row] = found
                result.mapped += 1
                result.by_node_id += found.node_id is not None and found.node_id == node
    return result


def _node_id(trace: Trace, row: int) -> object | None:
    return (trace.slices.args[row] or {}).get(NODE_ID)


def _best_pairing(names: list[str], ids: list[object | None], graphs: list[list[CapturedLaunch]],
                  kernel_counts: list[Counter]) -> list[CapturedLaunch | None]:
    """The pairing with the capture window that matches most kernels. Windows are tried
    from the most promising (the kernels both sides have, counted by name: a bound on what
    any in-order matching finds), and no further once none left can beat the best.

    >>> graphs = [[CapturedLaunch(i, k, None, (), None, None) for i, k in enumerate(g)]
    ...           for g in ("xy", "abc")]
    >>> [c.kernel if c else None for c in _best_pairing(list("abd"), [None] * 3, graphs,
    ...                                                  [Counter(g) for g in ("xy", "abc")])]
    ['a', 'b', None]
    """
    wanted = Counter(names)
    bounds = sorted(((sum(min(n, have[name]) for name, n in wanted.items()), i)
                     for i, have in enumerate(kernel_counts)), key=lambda b: (-b[0], b[1]))
    best: list[CapturedLaunch | None] = [None] * len(names)
    found = 0
    for bound, index in bounds:
        if bound <= found:
            break
        pairing = _pair(names, ids, graphs[index])
        matched = len(pairing) - pairing.count(None)
        if matched > found:
            best, found = pairing, matched
    return best


def _pair(names: list[str], ids: list[object | None],
          graph: list[CapturedLaunch]) -> list[CapturedLaunch | None]:
    """The captured launch of each replayed kernel (None: unmatched): by node id where both
    sides have one and the names agree, the rest by name in order.

    >>> graph = [CapturedLaunch(i, k, None, (), None, None) for i, k in enumerate("abc")]
    >>> [c.position if c else None for c in _pair(list("axc"), [None] * 3, graph)]
    [0, None, 2]
    """
    by_id = {c.node_id: c for c in graph if c.node_id is not None}
    out: list[CapturedLaunch | None] = [
        found if (found := by_id.get(node)) is not None and found.kernel == name else None
        for name, node in zip(names, ids, strict=True)] if by_id else [None] * len(names)
    taken = {c.position for c in out if c is not None}
    free = [c for c in graph if c.position not in taken]
    rest = [i for i, c in enumerate(out) if c is None]
    matched = align_in_order([names[i] for i in rest], [c.kernel for c in free])
    for i, index in zip(rest, matched, strict=True):
        if index >= 0:
            out[i] = free[index]
    return out


def _phase_around(tl: Timeline, notes: np.ndarray, launch: int) -> str | None:
    """The phase named by the innermost range around ``launch`` that names one."""
    around = notes[(tl.track[notes] == tl.track[launch]) & (tl.start[notes] <= tl.start[launch])
                   & (tl.end[notes] >= tl.end[launch])]
    around = around[np.lexsort((-tl.dur[around], tl.start[around]))]
    for name in reversed(tl.names(around)):
        phase = phase_of(name)
        if phase:
            return phase
    return None


def annotate_replay(replay: Trace, capture: Trace) -> Trace:
    """A new trace: ``replay`` with each replayed kernel that a launch captured in
    ``capture`` matches carrying what captured it (:func:`with_mapping`). ``replay`` is not
    changed.

    >>> t = Trace(); _ = t.add_track("main", process=t.add_process("host"))
    >>> len(annotate_replay(t, t).diagnostics)
    0
    """
    return with_mapping(replay, map_replay(replay, capture))


def with_mapping(replay: Trace, mapping: ReplayMapping) -> Trace:
    """A new trace: ``replay`` with each mapped kernel carrying args ``captured_op``,
    ``captured_annotation``, ``captured_stack`` and ``captured_launch`` (its position in
    the capture), and the kernels left unmatched counted (``graph_replay.unmatched``).

    >>> t = Trace(); _ = t.add_track("main", process=t.add_process("host"))
    >>> gone = ReplayMapping(replayed=3, mapped=1)
    >>> with_mapping(t, gone).diagnostics.count("graph_replay.unmatched")
    2
    """
    new = replay.copy()
    for row, launch in mapping.pairs.items():
        args = dict(new.slices.args[row] or {})
        args.update({"captured_op": launch.op, "captured_annotation": launch.annotation,
                     "captured_stack": list(launch.stack), "captured_launch": launch.position})
        new.slices.set_args(row, args)
    if mapping.unmatched:
        new.diagnostics.add("graph_replay.unmatched", count=mapping.unmatched,
                            example=f"{mapping.mapped:,} of {mapping.replayed:,} replayed "
                                    "kernels mapped to a captured launch")
    return new.freeze()


def captured_annotations(tl: Timeline, rows: np.ndarray) -> dict[int, str]:
    """For those of ``rows`` launched by a graph launch and annotated by
    :func:`annotate_replay`, the annotation that captured them."""
    out: dict[int, str] = {}
    launched = rows[tl.launch_of[rows] >= 0]
    if not len(launched):
        return out
    graph = np.array([bool(GRAPH_LAUNCH.match(n)) for n in tl.names(tl.launch_of[launched])],
                     dtype=bool)
    for row in launched[graph].tolist():
        label = (tl.trace.slices.args[row] or {}).get("captured_annotation")
        if isinstance(label, str):
            out[row] = label
    return out


def by_captured_op(trace: Trace, top: int = 20) -> list[dict]:
    """GPU time of the replayed kernels per op that captured them (:func:`with_mapping`'s
    ``captured_op``), largest first; kernels captured outside every op are ``(no op)``.

    >>> from traceconv.model import ProcessKind
    >>> t = Trace(); s = t.add_track("stream", process=t.add_process("GPU", kind=ProcessKind.DEVICE))
    >>> for dur, op in ((5, "aten::mm"), (7, "aten::mm"), (3, None)):
    ...     _ = t.add_slice(s, 0, dur, "k", "kernel", {"captured_op": op, "captured_launch": 0})
    >>> [(r["op"], r["kernels"], r["gpu_ns"]) for r in by_captured_op(t)]
    [('aten::mm', 2, 12), ('(no op)', 1, 3)]
    """
    totals: dict[str, list[int]] = {}
    for row in trace.iter_slices():
        args = row.args or {}
        if "captured_launch" in args:
            item = totals.setdefault(args.get("captured_op") or "(no op)", [0, 0])
            item[0] += 1
            item[1] += row.dur
    ranked = sorted(totals.items(), key=lambda kv: (-kv[1][1], kv[0]))[:top]
    return [{"op": op, "kernels": n, "gpu_ns": ns} for op, (n, ns) in ranked]
