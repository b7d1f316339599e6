"""The exports of one engine → one :class:`~traceconv.model.Trace`.

- the layer information becomes the op graph: one op node per layer (type, tactic,
  parameters, input/output shapes, bytes moved) and one tensor node per tensor, edges
  tensor → layer (consumes) and layer → tensor (produces); engine bindings are marked;
- the profile becomes op statistics (one row per layer, ``calls`` = profiled inferences),
  drawn as an aggregate breakdown, and joined to the graph's layers by name;
- the times become a timeline: per inference an ``enqueue`` slice on the host and
  ``H2D`` / ``compute`` / ``D2H`` slices on the GPU, linked by a launch flow.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ...model import Metadata, OpStat, ProcessKind, Trace, TrackKind
from ...model.breakdown import BREAKDOWN_CATEGORY, BREAKDOWN_CLOCK, side_by_side
from ...model.builder import TraceBuilder
from ...model.graph import add_op, add_tensor
from ...numbers import located, scaled_int
from ..export_sniffing import TrtKind as Kind
from ..stated_totals import compare_total
from .parts import Part
from .schema import (
    InferenceRecord,
    Layer,
    LayerInformation,
    LayerProfile,
    TrexDevices,
    TrexMetadata,
)
from .stated import queried_devices, selected_device, stated_run

TIMES_CLOCK = "ms since trtexec started (--exportTimes)"
_DTYPES = (("fp32", "float32", 4), ("float", "float32", 4), ("fp16", "float16", 2),
           ("half", "float16", 2), ("bf16", "bfloat16", 2), ("fp8", "float8", 1),
           ("int8", "int8", 1), ("int32", "int32", 4), ("int64", "int64", 8),
           ("bool", "bool", 1), ("uint8", "uint8", 1))
_WORD = re.compile(r"[a-z0-9]+")


def dtype_of(format_text: str | None) -> tuple[str | None, int | None]:
    """The element type and its bytes named in a ``Format/Datatype`` text.

    >>> dtype_of("Channel major FP16 format where channel % 8 == 0")
    ('float16', 2)
    >>> dtype_of("Four wide channel vectorized row major Int8 format"), dtype_of(None)
    (('int8', 1), (None, None))
    """
    words = set(_WORD.findall((format_text or "").lower()))
    for word, dtype, size in _DTYPES:
        if word in words:
            return dtype, size
    return None, None


def ms_to_ns(ms: float, what: str = "time") -> int:
    """Milliseconds (as trtexec prints them) to integer nanoseconds, within int64 (NaN,
    infinity or a time past int64 is refused: a ``NumberError`` naming ``what``).

    >>> ms_to_ns(4.19666)
    4196660
    """
    return scaled_int(ms, 1_000_000, what)


# (phase, its start fields, its end fields, category): the newer field name first
_PHASES = (("H2D", ("startH2dMs", "startInMs"), ("endH2dMs", "endInMs"), "gpu_memcpy"),
           ("compute", ("startComputeMs",), ("endComputeMs",), "kernel"),
           ("D2H", ("startD2hMs", "startOutMs"), ("endD2hMs", "endOutMs"), "gpu_memcpy"))


def _field(record: Any, names: tuple[str, ...]) -> tuple[str, float | None]:
    """The first of the fields ``names`` that ``record`` has, and its value (None: none).

    >>> from types import SimpleNamespace
    >>> _field(SimpleNamespace(startH2dMs=None, startInMs=1.5), ("startH2dMs", "startInMs"))
    ('startInMs', 1.5)
    """
    for name in names:
        value = getattr(record, name)
        if value is not None:
            return name, value
    return names[0], None


class EngineBuilder:
    """Adds the exports of one engine to a new trace."""

    def __init__(self, engine: str, files: list[str]) -> None:
        self.trace = TraceBuilder(Metadata(source_format="trtexec", framework="TensorRT"))
        self.engine = engine
        self.layer_types: dict[str, str] = {}
        self.layer_nodes: dict[str, str] = {}   # layer name → op node
        self.gpu: int | None = None             # the timeline's device process
        self.trace.metadata.attributes.update({"trtexec.engine": engine,
                                               "trtexec.files": files})

    def build(self, parts: list[Part]) -> Trace:
        by_kind = {part.kind: part for part in parts}
        if "graph" in by_kind:
            document = by_kind["graph"].document
            assert isinstance(document, LayerInformation)
            self.graph(document)
        if "times" in by_kind:
            document = by_kind["times"].document
            assert isinstance(document, list)
            self.times(document)
        if "profile" in by_kind:
            document = by_kind["profile"].document
            assert isinstance(document, LayerProfile)
            self.profile(document, by_kind["profile"].file)
        self.trex_metadata(by_kind)
        self.trace.metadata.attributes["trtexec.exports"] = sorted(by_kind)
        return self.trace

    def trex_metadata(self, by_kind: dict[Kind, Part]) -> None:
        """trex's files beside the exports: their sections become attributes."""
        meta = self.trace.metadata
        attributes = meta.attributes
        for kind in ("trex-build", "trex-profile"):
            if kind in by_kind:
                document = by_kind[kind].document
                assert isinstance(document, TrexMetadata)
                attributes.update({f"trtexec.{k}": v for k, v in document.root.items()})
        meta.run = stated_run(attributes.get("trtexec.performance_summary"))
        meta.devices = selected_device(attributes.get("trtexec.device_information"))
        if "trex-device" in by_kind:
            devices = by_kind["trex-device"].document
            assert isinstance(devices, TrexDevices)
            attributes["trtexec.devices"] = [d.model_dump() for d in devices.root]
            meta.devices = queried_devices(attributes["trtexec.devices"])
            if self.gpu is not None and devices.root:
                self.trace.processes[self.gpu].labels.append(devices.root[0].Name)
        found = [k for k in by_kind if k.startswith("trex-")]
        self.trace.diagnostics.add("trtexec.trex_metadata", count=len(found),
                                   example=", ".join(found) or None)
        if found and len(found) == len(by_kind):   # (settings to join the exports' trace)
            self.trace.diagnostics.add("input.settings_only", count=len(found),
                                       example="the engine's trtexec exports (.graph.json, "
                                               ".profile.json, .timing.json)")

    # -- layer information: the op graph --------------------------------------------------

    def graph(self, info: LayerInformation) -> None:
        trace = self.trace
        graph = trace.graph
        names_only = 0
        bindings = set(info.Bindings)
        for order, layer in enumerate(info.Layers):
            if isinstance(layer, str):
                names_only += 1
                self.layer_nodes[layer] = add_op(graph, order, layer, "", order=order, slices=[])
                continue
            self.layer_types[layer.Name] = layer.LayerType
            node = add_op(graph, order, layer.Name, layer.LayerType, order=order, slices=[],
                          in_shapes=[list(t.Dimensions) for t in layer.Inputs],
                          out_shapes=[list(t.Dimensions) for t in layer.Outputs],
                          memory=self.bytes_moved(layer), computation=None,
                          **self.vendor_attrs(layer))
            self.layer_nodes[layer.Name] = node
            for tensor in layer.Inputs:
                graph.add_edge(self.tensor(tensor, bindings), node)
            for tensor in layer.Outputs:
                produced = self.tensor(tensor, bindings)
                graph.add_edge(node, produced)
                graph.nodes[produced]["owner"] = node
        trace.metadata.attributes["trtexec.bindings"] = list(info.Bindings)
        trace.diagnostics.add("trtexec.layer_names_only", count=names_only)

    def tensor(self, tensor, bindings: set[str]) -> str:  # type: ignore[no-untyped-def]
        dtype, size = dtype_of(tensor.Format)
        dims = tuple(tensor.Dimensions)
        elements = math.prod(dims) if dims and all(d >= 0 for d in dims) else None
        return add_tensor(
            self.trace.graph, tensor.Name, tensor.Name, shape=dims, dtype=dtype,
            bytes=elements * size if elements is not None and size else None,
            trt_format=tensor.Format, trt_location=tensor.Location,
            binding=tensor.Name in bindings)

    @staticmethod
    def bytes_moved(layer: Layer) -> int | None:
        """Bytes the layer reads and writes: its tensors' elements times their element size
        (vectorized formats pad channels; that padding is not counted)."""
        total = 0
        for tensor in (*layer.Inputs, *layer.Outputs):
            _, size = dtype_of(tensor.Format)
            if size is None or any(d < 0 for d in tensor.Dimensions):
                return None
            total += math.prod(tensor.Dimensions) * size
        return total

    @staticmethod
    def vendor_attrs(layer: Layer) -> dict[str, Any]:
        attrs: dict[str, Any] = {"trt_tactic": layer.TacticName, "trt_tactic_value":
                                 layer.TacticValue, "trt_origin": layer.Origin,
                                 "trt_parameter_type": layer.ParameterType}
        if layer.model_extra:
            attrs["trt_parameters"] = dict(layer.model_extra)
        return {k: v for k, v in attrs.items() if v is not None}

    # -- times: the timeline --------------------------------------------------------------

    def times(self, records: list[InferenceRecord]) -> None:
        trace = self.trace
        host = trace.add_process("trtexec (host)", kind=ProcessKind.HOST)
        enqueue = trace.add_track("enqueue", process=host, kind=TrackKind.THREAD)
        gpu = self.gpu = trace.add_process(f"GPU: {self.engine}", kind=ProcessKind.DEVICE)
        streams: dict[str, int] = {}
        order = {"H2D": 0, "compute": 1, "D2H": 2}
        zero = missing_enqueue = 0
        for index, record in enumerate(records):
            with located(f"$[{index}]"):   # (a time no trace can hold names its record)
                first_device = None
                for name, starts, ends, category in _PHASES:
                    (start_field, start), (end_field, end) = (_field(record, starts),
                                                              _field(record, ends))
                    if start is None or end is None:
                        continue
                    if end <= start and name != "compute":
                        zero += 1   # transfers disabled (--noDataTransfers) or not measured
                        continue
                    begin = ms_to_ns(start, start_field)
                    if name not in streams:
                        streams[name] = trace.add_track(name, process=gpu,
                                                        kind=TrackKind.STREAM,
                                                        sort_index=order[name])
                    row = trace.add_interval(streams[name], begin, ms_to_ns(end, end_field),
                                             name, category, {"inference": index})
                    first_device = row if first_device is None else first_device
                if record.startEnqMs is None or record.endEnqMs is None:
                    missing_enqueue += 1
                    continue
                begin = ms_to_ns(record.startEnqMs, "startEnqMs")
                args = {"inference": index, "latency_ms": record.latencyMs}
                launch = trace.add_interval(enqueue, begin,
                                            ms_to_ns(record.endEnqMs, "endEnqMs"),
                                            "enqueue", "cuda_runtime", args)
                if first_device is not None:
                    trace.add_flow(launch, first_device, "launch", "launch")
        trace.metadata.clock = TIMES_CLOCK
        trace.metadata.attributes["trtexec.inferences"] = len(records)
        trace.diagnostics.add("trtexec.zero_length_transfers", count=zero)
        trace.diagnostics.add("trtexec.no_enqueue_times", count=missing_enqueue)

    # -- profile: per-layer statistics ----------------------------------------------------

    def profile(self, profile: LayerProfile, file: str) -> None:
        trace = self.trace
        rows = profile.root
        # (a profile without its count record states no calls: unknown, not 0)
        count = next((r.count for r in rows if hasattr(r, "count")), None)
        graph = trace.graph if self.layer_nodes else None
        layer_rows = []
        unmatched = 0
        for index, record in enumerate(rows):
            if hasattr(record, "count"):
                continue
            with located(f"$[{index}]"):
                total = ms_to_ns(record.timeMs, "timeMs")
                average = ms_to_ns(record.averageMs, "averageMs")
                median = (None if record.medianMs is None
                          else ms_to_ns(record.medianMs, "medianMs"))
            layer_type = self.layer_types.get(record.name, "")
            layer_rows.append(trace.add_stat(OpStat(
                record.name, calls=count, total_ns=total, self_ns=total,
                avg_ns=average, device_ns=total, ratio=record.percentage,
                type=layer_type, section="layers",
                extra={"median_ns": median} if median is not None else {})))
            if graph is not None:
                node = self.layer_nodes.get(record.name)
                if node is None:
                    unmatched += 1
                else:
                    graph.nodes[node].update(trt_total_ns=total, trt_avg_ns=average,
                                             trt_median_ns=median,
                                             trt_percentage=record.percentage)
        trace.metadata.attributes["trtexec.profiled_inferences"] = count
        self.shares(profile, file)
        self.breakdown(layer_rows)
        trace.diagnostics.add("trtexec.profile_layer_not_in_graph", count=unmatched)


    def shares(self, profile: LayerProfile, file: str) -> None:
        """Each layer's ``percentage`` is its share of the engine's time, so a whole
        profile's layers share 100 %: a profile cut after its top layers (a ``head``, a
        partial paste) reads as one that looks whole, and the shares tell
        (:mod:`..stated_totals`). A share is given as the shortest text of the float read,
        never more digits than trtexec printed (its 6), so never a stricter judge."""
        shares = [r.percentage for r in profile.root if not hasattr(r, "count")]
        if shares and None not in shares and any(shares):
            compare_total(self.trace.diagnostics, "trtexec", f"{file} ({len(shares)} layers)",
                          100, [repr(share) for share in shares],
                          what="% of the time (percentage)")

    def breakdown(self, rows: list[int]) -> None:
        """The layers' total times side by side on a device track, so a viewer shows the
        profile and ``summary`` counts them as device time. The process says it is an
        aggregate, not a timeline; with ``--exportTimes`` the real timeline is beside it."""
        trace = self.trace
        process = trace.add_process(f"GPU: {self.engine}: per-layer profile, aggregate "
                                    "breakdown (not a timeline)", kind=ProcessKind.DEVICE)
        track = trace.add_track("layers (total time each)", process=process,
                                kind=TrackKind.STREAM,
                                description="aggregate breakdown, not a timeline")
        placed = side_by_side(trace.stats[row].total_ns for row in rows)
        for row, (start, length) in zip(rows, placed, strict=True):
            stat = trace.stats[row]
            trace.add_slice(track, start, length, stat.name, BREAKDOWN_CATEGORY, {
                "calls": stat.calls, "total_ms": stat.total_ns / 1e6,
                "avg_ms": (stat.avg_ns or 0) / 1e6, "ratio_pct": stat.ratio,
                "median_ms": None if stat.extra.get("median_ns") is None
                else stat.extra["median_ns"] / 1e6,
                "layer_type": stat.type or None})
        if trace.metadata.clock != TIMES_CLOCK:
            trace.metadata.clock = BREAKDOWN_CLOCK


def build_engine(engine: str, parts: list[Part]) -> Trace:
    """One trace from the exports of one engine."""
    return EngineBuilder(engine, [p.file for p in parts]).build(parts)
