"""The new Paddle profiler's protobuf export (``*.paddle_trace.pb``, ``NodeTreesProto``).

One host-event tree per OS thread (explicit parent ids; a synthetic root per thread),
CUDA runtime calls with their device records, allocator records and op shapes attached to
the innermost host node. Enum values are read as integers (3.x added types 15/16).
"""

from __future__ import annotations

from ...errors import InputError
from ...io import Source
from ...model import Metadata, Trace
from ...model.builder import TraceBuilder
from .._paddle import FRAMEWORK
from ..protowire import wire_errors
from ..sniffing import paddle_pb as sniff  # noqa: F401  (this format's sniff, kept light)
from .proto import ROW_PEAK, NodeTreesProto  # noqa: F401  (ROW_PEAK: for the memory check)
from .to_trace import build_trace

# field 1 (version, a short "x.y.z" string) then field 2 (span index) or 3 (thread trees)


def read(source: Source) -> Trace:
    """Read a ``.paddle_trace.pb`` into a timeline with flows, memory blocks and counters."""
    data = source.read_bytes()
    # (thread trees and their nodes are decoded as they are reached: damage found there
    # is located the same way, and no half-built trace is returned)
    with wire_errors(source.name, "Paddle NodeTreesProto", NodeTreesProto, data):
        message = NodeTreesProto.decode(data)
        if not message.version:
            raise InputError("not a Paddle NodeTreesProto (no version field)",
                             file=source.name)
        return build_trace(message, TraceBuilder(Metadata(framework=FRAMEWORK,
                                                          source_format="paddle-pb")))
