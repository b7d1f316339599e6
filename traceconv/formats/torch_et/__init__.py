"""PyTorch execution traces (Chakra schema; ``torch.profiler.ExecutionTraceObserver``).

An execution trace lists every op a step ran, with its input and output tensors (ids,
storage, shape, dtype, strides) but no durations. Alone it reads as an op graph without
times (:mod:`.graph`). Given beside the Kineto trace of the same run
(``traceconv info TRACE ET``), :func:`traceconv.analysis.link_et.link_execution_trace`
joins the two by record-function id: op nodes then carry host and device time.

"""

from __future__ import annotations

from ...errors import InputError
from ...io import Source
from ...model import Metadata, Trace
from ...model.builder import TraceBuilder
from ..sniffing import torch_et as sniff  # noqa: F401  (this format's sniff, kept light)


def read(source: Source) -> Trace:
    """Read an execution trace into an op graph (no timeline: it has no durations)."""
    document = source.read_json()
    if not isinstance(document, dict) or not isinstance(document.get("nodes"), list):
        raise InputError("not an execution trace: expected an object with a 'nodes' list",
                         file=source.name, location="$.nodes")
    trace = TraceBuilder(Metadata(source_format="torch-et", framework="PyTorch",
                           source_version=str(document.get("schema", "")) or None,
                           clock="none (execution trace: op order only)"))
    trace.metadata.attributes.update(
        {k: document[k] for k in ("pid", "time", "start_ts", "finish_ts") if k in document})
    from .graph import GraphBuilder  # (networkx: not loaded to sniff other files)

    builder = GraphBuilder(trace.graph, trace.diagnostics)
    builder.add_nodes(document["nodes"])
    if builder.skipped["structure"]:
        trace.diagnostics.add("torch_et.structure_nodes", count=builder.skipped["structure"])
    trace.diagnostics.add("torch_et.malformed", count=builder.skipped["malformed"])
    trace.diagnostics.add("torch_et.duplicate_id", count=builder.skipped["duplicate_id"])
    return trace
