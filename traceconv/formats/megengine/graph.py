"""The op graph of a static profile: operator and var nodes of ``graph_exec``.

Op nodes are the *executed* oprs (``comp_seq``), in the document's operator order (which
``profile_analyze`` uses for ties); oprs that only fed static shape inference are not
executed and appear as the ``static_producer`` of their vars instead. Every var is a tensor
node. Edges come from ``operator[].input`` (tensor → op, attribute ``index``) and
``operator[].output`` (op → tensor); the owner of a var is the op listing it as an output.
Read-only forwards and forced updates are tensor attributes naming the source tensor node.

Op nodes carry what per-op analysis needs, in the units of :mod:`traceconv.model.graph`:
``device_spans`` / ``host_spans`` (``{place: OpSpan}``, int ns on the trace clock, device
places shifted like their slices; host ``kern`` -1 = no kernel = ``kernel_ns`` None), plus
``source_seconds`` (``{"device"|"host": {place: (start, kern, end)}}``, the source's float
seconds, unshifted: ``profile_analyze`` sums those, and its printed digits depend on the
sub-nanosecond parts that int ns round away),
``computation``, ``memory``, ``in_shapes``, ``out_shapes``, ``in_layouts``, ``param``,
``order`` (position in ``comp_seq``), ``waits_for`` (tensors awaited from other comp nodes)
and ``internal_profile`` (``opr_internal_pf``, opaque; empty in open-source builds).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ...model import Trace
from ...model.graph import OpSpan, add_op, add_tensor, op_node, tensor_node
from ...numbers import shape
from .clock import seconds_to_ns
from .schema import StaticProfileRecords, TimingRecord, VarRecord


def shapes_text(shapes: Iterable[Iterable[int]]) -> str:
    """Shapes as MegEngine prints them: ``{d0,d1,...}`` per tensor.

    >>> shapes_text([[4, 16, 32, 32], [32, 16, 3, 3], []])
    '{4,16,32,32} {32,16,3,3} {}'
    """
    return " ".join("{" + ",".join(map(str, shape)) + "}" for shape in shapes)


def _seconds(timings: dict[str, TimingRecord]) -> dict[str, tuple[float, float, float]]:
    return {place: (t.start, t.kern, t.end) for place, t in timings.items()}


def _spans(timings: dict[str, TimingRecord], offsets: dict[str, int]) -> dict[str, OpSpan]:
    """Source seconds as int-ns spans on the trace clock (non-finite timings left out; the
    timeline reader counts them)."""
    spans = {}
    for place, t in timings.items():
        if math.isfinite(t.start) and math.isfinite(t.end):
            shift = offsets.get(place, 0)
            kernel = (seconds_to_ns(t.kern) + shift
                      if math.isfinite(t.kern) and t.kern >= 0 else None)
            spans[place] = OpSpan(seconds_to_ns(t.start) + shift, seconds_to_ns(t.end) + shift,
                                  kernel)
    return spans


def _waits(spec: dict[str, dict[str, list[str]]] | None) -> list[str]:
    """Tensor nodes an opr waits for from other comp nodes (``waiting_spec.*.dev_ready``)."""
    return [tensor_node(v) for place in (spec or {}).values()
            for v in place.get("dev_ready", ())]


def var_shape(var_id: str, var: VarRecord) -> tuple[int, ...] | None:
    """The var's shape from its memory plan, else from static shape inference."""
    where = f"$.graph_exec.var.{var_id}"
    if var.mem_plan is not None:
        return shape(var.mem_plan.layout.shape, f"{where}.mem_plan.layout.shape")
    tag = var.static_infer_tags.get("SHAPE")
    if tag is not None and isinstance(tag.inferred_result, list):
        return shape(tag.inferred_result, f"{where}.static_infer_tags.SHAPE.inferred_result")
    return None


def add_graph(trace: Trace, doc: StaticProfileRecords, rows: dict[str, list[int]],
              offsets: dict[str, int] | None = None) -> None:
    """Fill ``trace.graph`` from ``doc.graph_exec`` (slice rows per opr id from the timeline;
    ``offsets``: ns added to each device comp node's times, as for its slices)."""
    graph, exe, prof = trace.graph, doc.graph_exec, doc.profiler
    order = {opr_id: i for i, opr_id in enumerate(exe.comp_seq)}
    for var_id, var in exe.var.items():
        plan = var.mem_plan
        add_tensor(graph, var_id, var.name, shape=var_shape(var_id, var),
                   dtype=plan.layout.dtype if plan else None, comp_node=var.comp_node,
                   dev_ptr=var.dev_ptr, flags=list(var.flag),
                   mem_chunk=plan.mem_chunk_id if plan else None,
                   offset_byte=plan.offset_byte if plan else None)
        for attr, src in (("readonly_fwd_src", var.mem_readonly_fwd_src),
                          ("force_update_src", var.force_update_src)):
            if src is not None:
                graph.nodes[tensor_node(var_id)][attr] = tensor_node(src)
    unknown_vars = 0
    for opr_id, opr in exe.operator.items():
        if opr_id not in order:
            for var_id in opr.output:
                if tensor_node(var_id) in graph:
                    graph.nodes[tensor_node(var_id)]["static_producer"] = opr.name
            continue
        fp = prof.opr_footprint.get(opr_id)
        node = add_op(graph, opr_id, opr.name, opr.type, order=order[opr_id],
                      slices=rows.get(opr_id, []),
                      device_spans=_spans(prof.device.get(opr_id, {}), offsets or {}),
                      host_spans=_spans(prof.host.get(opr_id, {}), {}),
                      source_seconds={"device": _seconds(prof.device.get(opr_id, {})),
                                       "host": _seconds(prof.host.get(opr_id, {}))},
                      computation=fp.computation if fp else None,
                      memory=fp.memory if fp else None,
                      in_shapes=fp.in_shapes if fp else None,
                      out_shapes=fp.out_shapes if fp else None,
                      in_layouts=fp.in_layouts if fp else None,
                      param=fp.param if fp else None, extra=opr.extra,
                      waits_for=_waits(opr.waiting_spec),
                      internal_profile=prof.opr_internal_pf.get(opr_id))
        for index, var_id in enumerate(opr.input):
            if var_id in exe.var:
                graph.add_edge(tensor_node(var_id), node, index=index)
            else:
                unknown_vars += 1
        for index, var_id in enumerate(opr.output):
            if var_id in exe.var:
                graph.add_edge(node, tensor_node(var_id), index=index)
                graph.nodes[tensor_node(var_id)]["owner"] = node
            else:
                unknown_vars += 1
    graph.graph["execution_order"] = [op_node(i) for i in exe.comp_seq if i in exe.operator]
    trace.diagnostics.add("megengine.unknown_var", count=unknown_vars)
    trace.diagnostics.add("megengine.unexecuted_opr",
                          count=len(exe.operator) - sum(1 for i in exe.operator if i in order))
