"""The op graph of a TensorFlow step timeline, and the device work each op launched.

TF's ``timeline.py`` writes each op the executor ran (``cat: "Op"``) with its node name
(``args.name``), its type (``args.op``) and its inputs as the node's definition lists them
(``args.input0``, ``args.input1``...): a tensor (``node`` for output 0, ``node:k`` for
output k), or ``^node`` for a control dependency. That is the graph: an op node per node
name, a tensor node per tensor, edges producer → tensor → consumer. As TF's own timeline
does, an input renamed by a Send/Recv pair (``Mean/_13``) is the tensor before the ``/_``.
Control dependencies are no tensor: the op lists them (``tf_control_inputs``).

The GPU tracer names each record after the node that launched it (``args.name``), which
TF's ``timeline.py`` itself uses to stretch an op over its kernels (``op_time="all"``): a
device record is linked (a ``launch`` flow) to the op of that name on the executor of its
device (``/gpu:0`` is ``/job:localhost/replica:0/task:0/gpu:0``), the run of it that began
last before the record. The op's ``slices`` stay its executor runs: the op graph's critical
path times an op by its longest device slice if it has one, and a TF op spends its time on
the host (the first MatMul: 115 ms of executor time, 4 ms of kernel).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ....model import ProcessKind, Trace
from ....model.graph import add_op, add_tensor
from .tensorflow_tensors import TensorObjects, producer_of

HOST_CATEGORY = "Op"   # TF's category of every op; the flavour gives the GPU's records others


@dataclass
class OpGraph:
    """The node ids of the graph's ops (by node name) and tensors (by tensor name), and
    per op its executor slices as (the executor's TF device, start, row)."""

    ops: dict[str, str] = field(default_factory=dict)
    tensors: dict[str, str] = field(default_factory=dict)
    runs: dict[str, list[tuple[str, int, int]]] = field(default_factory=dict)


def op_graph(trace: Trace, objects: TensorObjects) -> OpGraph:
    """Add the ops of the executor slices of ``trace``, their input tensors and the tensor
    objects (size, shape, dtype from their snapshots) to its graph."""
    found = OpGraph()
    host = trace.strings.find(HOST_CATEGORY)
    s = trace.slices
    rows = [] if host is None else (s.numpy_view("category") == host).nonzero()[0].tolist()
    rows.sort(key=lambda row: int(s.start[row]))
    names = trace.strings.strings
    graph = trace.graph
    for row in rows:
        args = s.args[row] or {}
        name = args.get("name")
        if not isinstance(name, str):
            continue
        if name not in found.ops:   # (its type: the event's name, which TF writes as the
            # op type; an args.op that says otherwise is no slice's name, as the model needs)
            found.ops[name] = add_op(graph, name, name, names[s.name[row]],
                                     slices=[], order=len(found.ops))
        graph.nodes[found.ops[name]]["slices"].append(row)
        process = trace.processes[trace.tracks[s.track[row]].process]
        found.runs.setdefault(name, []).append(
            (process.name.removesuffix(" Compute"), int(s.start[row]), row))
    unrecorded, example = 0, None
    for row in rows:
        args = s.args[row] or {}
        if not isinstance(name := args.get("name"), str):
            continue
        consumer = found.ops[name]
        for index, text in enumerate(_inputs(args)):
            if text.startswith("^"):
                controls = graph.nodes[consumer].setdefault("tf_control_inputs", [])
                if text[1:] not in controls:
                    controls.append(text[1:])
                continue
            tensor = _tensor_name(text, found.ops)
            node = _tensor_node(graph, found, tensor)
            graph.add_edge(node, consumer, index=index)
            if producer_of(tensor) not in found.ops:
                unrecorded += 1
                example = example or f"{name} <- {text}"
    for written in objects.tensors:
        d = written.description
        node = _tensor_node(graph, found, written.name)
        graph.nodes[node].update(shape=d.shape, dtype=d.dtype, bytes=d.requested_bytes,
                                 device=written.device)
    graph.graph["execution_order"] = list(found.ops.values())
    trace.diagnostics.add("tensorflow.input_from_unrecorded_op", count=unrecorded,
                          example=example)
    return found


def _inputs(args: dict[str, Any]) -> list[str]:
    """The inputs an op's args list, in their order (``input0``, ``input1``...).

    >>> _inputs({"name": "mul", "input1": "split:1", "input0": "split"})
    ['split', 'split:1']
    """
    found: list[str] = []
    while isinstance(text := args.get(f"input{len(found)}"), str):
        found.append(text)
    return found


def _tensor_name(text: str, ops: dict[str, str]) -> str:
    """The tensor an input names: output 0 without its ``:0``; an input that a Send/Recv
    pair renamed (``Mean/_13``, no op of the timeline) as the tensor sent, as TF's
    timeline finds it.

    >>> ops = {"Mean": "op/Mean", "split": "op/split"}
    >>> _tensor_name("split:0", ops), _tensor_name("split:1", ops), _tensor_name("Mean/_13", ops)
    ('split', 'split:1', 'Mean')
    """
    tensor = text[:-2] if text.endswith(":0") else text
    if producer_of(tensor) not in ops and (cut := tensor.rfind("/_")) > 0:
        return tensor[:cut]
    return tensor


def _tensor_node(graph: Any, found: OpGraph, tensor: str) -> str:
    """The node of ``tensor``, added (with its producer's edge) when first named."""
    node = found.tensors.get(tensor)
    if node is None:
        node = found.tensors[tensor] = add_tensor(graph, tensor, tensor)
        producer = found.ops.get(producer_of(tensor))
        if producer is not None:
            graph.nodes[node]["owner"] = producer
            graph.add_edge(producer, node)
    return node


def link_launches(trace: Trace, graph: OpGraph, device_categories: set[str]) -> None:
    """A ``launch`` flow from each executor op to the GPU records named after it on its
    device (``device_categories``: the records that are the device's work, not its
    repeats), which join the op's slices; the records of no op are counted."""
    codes = [code for c in device_categories if (code := trace.strings.find(c)) is not None]
    s = trace.slices
    names = trace.strings.strings
    unlinked, example = 0, None
    # (node name, device) -> the starts and rows of its executor runs, in time order
    found: dict[tuple[str, str], tuple[list[int], list[int]]] = {}
    for row in np.isin(s.numpy_view("category"), codes).nonzero()[0].tolist():
        device = trace.processes[trace.tracks[s.track[row]].process]
        if device.kind is not ProcessKind.DEVICE:
            continue
        name = (s.args[row] or {}).get("name")
        if not isinstance(name, str):
            name = None
        elif (name, device.name) not in found:
            runs = [(start, run) for executor, start, run in graph.runs.get(name, ())
                    if executor.endswith(device.name)]
            found[name, device.name] = ([start for start, _ in runs], [run for _, run in runs])
        starts, rows = found.get((name, device.name), ([], [])) if name else ([], [])
        if not rows:
            unlinked += 1
            example = example or f"{device.name}: {name!r} ({names[s.name[row]]})"
            continue
        at = bisect_right(starts, int(s.start[row]))
        trace.add_flow(rows[max(at - 1, 0)], row, "launch", "launch")
    trace.diagnostics.add("tensorflow.device_record_without_op", count=unlinked,
                          example=example)
