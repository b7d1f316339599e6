"""MegEngine's dynamic Profiler ``chrome_timeline.json`` (see formats/megengine.md §4).

One pid; host threads ``interpreter`` (Python dispatch) and ``worker`` (op execution), then
one tid per comp node (``xpux:0``, ``gpu0:0``) whose ``Kernel`` and ``HostToDevice`` events
are device time. The worker nests ``Input <id>`` / ``Output <id>`` slices (tensor details:
``id``, ``name``, ``shape`` as ``"{4,16,32,32}"``, ``dtype``) inside each op slice, whose
end args carry the op id (``__id__``); that gives the op graph. Tensors carry no address,
so no memory blocks come from this file (``memory_flow.svg`` has the addresses).
"""

from __future__ import annotations

import re
from typing import Any

from ....model import ProcessKind, Trace
from ....model.graph import add_op, add_tensor, op_node, tensor_node
from ....vocabularies.megengine import MEGENGINE_VOCABULARY
from .base import Flavour, ReadContext

MEGENGINE_FLOW_CATEGORIES = frozenset({"OpDispatch", "KernelLaunch", "TensorLink",
                                       "TensorProp"})
HOST_TO_DEVICE = "HostToDevice"
TENSOR_SLICE = re.compile(r"(Input|Output) (\d+)$")
# counter name → (unit, description); names kept as written (typos included) so they match
# MegEngine's docs and scripts.
COUNTERS = {
    "nr_op_pending": ("count", "ops dispatched but not yet executed"),
    "nr_alive_tensor": ("count", "live tensors"),
    "nr_redunant_tensor": ("count", "redundant tensors (sic: redundant)"),
    "nr_shape_infer_failure": ("count", "shape inference failures"),
    "nr_exception": ("count", "exceptions"),
    "dtr_overhead_us": ("us", "DTR overhead"),
    "device_ahead_ms": ("ms", "how far the device runs behind the host"),
    "gpu_usgae_ratio": ("%", "device busy ratio (sic: usage)"),
    "train_time_ratio": ("%", "share of the run spent in ops"),
}
ALLOC_COUNTER = re.compile(r".+_alloc_mem$")


def parse_shape(text: Any) -> tuple[int, ...] | None:
    """``"{4,16,32,32}"`` → ``(4, 16, 32, 32)``.

    >>> parse_shape("{4,16,32,32}"), parse_shape("{}"), parse_shape(None)
    ((4, 16, 32, 32), (), None)
    """
    if not isinstance(text, str) or not (text.startswith("{") and text.endswith("}")):
        return None
    inner = text[1:-1].strip()
    try:
        return tuple(int(x) for x in inner.split(",")) if inner else ()
    except ValueError:
        return None


class MegEngine(Flavour):
    """``megengine.utils.profiler.Profiler`` output (``formats=["chrome_timeline.json"]``)."""

    name = "megengine"
    framework = "MegEngine"
    device_categories = frozenset({"Kernel", HOST_TO_DEVICE})
    vocabulary = MEGENGINE_VOCABULARY

    @classmethod
    def detect(cls, envelope: dict, events: list) -> bool:
        meta = envelope.get("metadata")
        if isinstance(meta, dict) and "localTime" in meta:
            return True
        return any(isinstance(e, dict) and isinstance(e.get("cat"), str)
                   and e["cat"] in MEGENGINE_FLOW_CATEGORIES for e in events[:2000])

    def prepare(self, events: list, context: ReadContext) -> None:
        # HostToDevice copies are the only device-lane events without a category.
        for e in events:
            if isinstance(e, dict) and e.get("name") == HOST_TO_DEVICE and "cat" not in e:
                e["cat"] = HOST_TO_DEVICE

    def name_process(self, pid: Any, device: bool, meta: dict[str, Any]) -> str:
        return f"MegEngine {'device' if device else 'host'} (pid {pid})"

    def finalize(self, trace: Trace, context: ReadContext) -> None:
        _describe_counters(trace)
        tensors = _op_graph(trace)
        trace.diagnostics.add("megengine.tensor_without_address", count=tensors)


def _describe_counters(trace: Trace) -> None:
    for track in trace.tracks:
        if track.name in COUNTERS:
            track.unit, track.description = COUNTERS[track.name]
        elif ALLOC_COUNTER.match(track.name):
            track.unit, track.description = "bytes", "allocated device memory (total - free)"


def _op_graph(trace: Trace) -> int:
    """Op and tensor nodes from the worker's op slices and their Input/Output children.

    Returns the number of tensors. Device ``Kernel`` slices join their op by ``__id__``.
    """
    graph = trace.graph
    device_procs = {p.id for p in trace.processes if p.kind == ProcessKind.DEVICE}
    rows_by_track: dict[int, list[int]] = {}
    s = trace.slices
    for row, (track, args) in enumerate(zip(s.track, s.args, strict=True)):
        if args and ("__id__" in args or "id" in args):
            rows_by_track.setdefault(track, []).append(row)
    names = trace.strings.strings
    # an op is known by a slice of its own name; the interpreter's "OpDispatch" slices of
    # an op join it but do not make one (an op seen only dispatched is no node: op_slices)
    named = {op_node(args["__id__"]) for rows in rows_by_track.values() for row in rows
             if "__id__" in (args := s.args[row] or {})
             and str(args.get("__name__", names[s.name[row]])) == names[s.name[row]]}
    for track, rows in rows_by_track.items():
        device = trace.tracks[track].process in device_procs
        rows.sort(key=lambda r: (s.start[r], -s.dur[r]))
        open_ops: list[tuple[int, str]] = []  # (end, op node) of enclosing op slices
        for row in rows:
            args, start, name = s.args[row] or {}, s.start[row], names[s.name[row]]
            while open_ops and open_ops[-1][0] < start + s.dur[row]:
                open_ops.pop()
            if "__id__" in args:
                node = op_node(args["__id__"])
                if node not in named:
                    continue
                if node not in graph:
                    # the interpreter's slice is "OpDispatch"; __name__ is the op's own name
                    op_name = str(args.get("__name__", name))
                    add_op(graph, args["__id__"], op_name, op_name, slices=[])
                graph.nodes[node]["slices"].append(row)
                if not device:
                    open_ops.append((start + s.dur[row], node))
                continue
            match = TENSOR_SLICE.match(name)
            if device or not match:
                continue
            tensor = tensor_node(args["id"])
            if tensor not in graph:
                add_tensor(graph, args["id"], str(args.get("name", "")),
                           shape=parse_shape(args.get("shape")), dtype=args.get("dtype"),
                           device=args.get("device"))
            if open_ops:
                op = open_ops[-1][1]
                edge = (tensor, op) if match.group(1) == "Input" else (op, tensor)
                graph.add_edge(*edge)
    return sum(1 for _, kind in graph.nodes(data="kind") if kind == "tensor")
