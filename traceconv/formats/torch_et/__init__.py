"""PyTorch execution traces (Chakra schema; ``torch.profiler.ExecutionTraceObserver``).

An execution trace lists every op a step ran, with its input and output tensors (ids,
storage, shape, dtype, strides) but no durations. Alone it reads as an op graph without
times (:mod:`.graph`). Given beside the Kineto trace of the same run
(``traceconv info TRACE ET``), :func:`traceconv.analysis.link_et.link_execution_trace`
joins the two by record-function id: op nodes then carry host and device time.

>>> sniff(b'{"schema": "1.1.1-chakra.0.0.4", "pid": 418, "nodes": [', None)
0.95
>>> sniff(b'{"traceEvents": []}', None)
0.0
"""

from __future__ import annotations

import re

import orjson

from ...errors import InputError
from ...io import Source
from ...model import Metadata, Trace

_HEAD = re.compile(rb'^\s*\{[^\[]{0,400}"(schema|nodes)"\s*:')
# What execution-trace nodes hold, in every published layout: Chakra 1.0.2+ (ctrl_deps,
# inputs/outputs objects, attrs list) and the flat 1.0.1 one (parent, rf_id, op_schema,
# input_shapes ... at the node's top level), and the names of the process/thread root nodes
_NODE_KEYS = re.compile(rb'"(ctrl_deps|attrs|rf_id|fw_parent|fw_tid|seq_id|op_schema|'
                        rb'input_shapes|input_types|output_shapes|output_types)"\s*:')
_ROOT_NODE = re.compile(rb'\[pytorch\|profiler\|execution_(?:trace|graph)\|')


def sniff(head: bytes, source: Source | None) -> float:
    """A JSON object with ``schema`` / ``nodes`` near the start whose nodes carry
    execution-trace keys of any schema (1.0.1 flat keys through 1.1.1 Chakra), a root node
    or a Chakra schema string (Chrome JSON has ``traceEvents`` instead).

    >>> sniff(b'{"nodes": [{"name": "aten::add", "id": 5, "parent": 4, "rf_id": 3, '
    ...       b'"op_schema": "", "inputs": [], "input_shapes": []}]}', None)
    0.95
    >>> sniff(b'{"schema": "1.0.1", "nodes": [{"id": 1, "name": "x"}]}', None)
    0.0
    """
    if not _HEAD.match(head) or b'"traceEvents"' in head or b'"nodes"' not in head:
        return 0.0
    keys = {m.group(1) for m in _NODE_KEYS.finditer(head)}
    if b"chakra" in head or _ROOT_NODE.search(head) or len(keys) >= 2:
        return 0.95
    return 0.0


def read(source: Source) -> Trace:
    """Read an execution trace into an op graph (no timeline: it has no durations)."""
    try:
        document = orjson.loads(source.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc}", file=source.name) from None
    if not isinstance(document, dict) or not isinstance(document.get("nodes"), list):
        raise InputError("not an execution trace: expected an object with a 'nodes' list",
                         file=source.name, location="$.nodes")
    trace = Trace(Metadata(source_format="torch-et", framework="PyTorch",
                           source_version=str(document.get("schema", "")) or None,
                           clock="none (execution trace: op order only)"))
    trace.metadata.attributes.update(
        {k: document[k] for k in ("pid", "time", "start_ts", "finish_ts") if k in document})
    from .graph import GraphBuilder  # (networkx: not loaded to sniff other files)

    builder = GraphBuilder(trace.graph)
    builder.add_nodes(document["nodes"])
    if builder.skipped["structure"]:
        trace.diagnostics.add("torch_et.structure_nodes", "process/thread root nodes of the "
                              "execution trace (structure, not ops)", kind="note",
                              count=builder.skipped["structure"])
    trace.diagnostics.add("torch_et.malformed", "nodes, parent ids, argument lists or "
                          "attribute entries of the wrong type (a node without an integer id "
                          "is skipped; a bad parent, argument list or attribute entry is left "
                          "out)", kind="dropped",
                          count=builder.skipped["malformed"])
    return trace
