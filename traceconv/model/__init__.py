"""traceconv's common, graph-aware trace model (no file I/O, no vendor knowledge)."""

from .columns import CounterSample, Flow, Instant, Slice
from .diagnostics import Diagnostic, Diagnostics
from .entities import MemoryBlock, OpStat, Process, ProcessKind, Track, TrackKind
from .graph import OP, TENSOR, add_op, add_tensor, op_node, tensor_node
from .strings import StringTable
from .trace import DeviceInfo, Metadata, StatedRun, Trace

__all__ = [
    "OP", "TENSOR", "CounterSample", "DeviceInfo", "Diagnostic", "Diagnostics", "Flow", "Instant",
    "MemoryBlock", "Metadata", "OpStat", "Process", "ProcessKind", "Slice", "StatedRun", "StringTable",
    "Track", "TrackKind", "Trace", "add_op", "add_tensor", "op_node", "tensor_node",
]
