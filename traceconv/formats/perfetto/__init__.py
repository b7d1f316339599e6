"""Perfetto TrackEvent protobuf (``.pftrace``): reader, writer and offline validator.

:func:`read` (:mod:`.reader`) streams a trace into the model; :func:`write` encodes the
model as TrackEvent packets by hand (see :mod:`.writer`); :func:`check` (:mod:`.validate`)
checks any ``.pftrace`` for what trace_processor would drop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...analysis.check_report import CheckReport
from ...io import Source
from .writer import write

if TYPE_CHECKING:
    from ...model import Trace

__all__ = ["check", "read", "sniff", "write"]
_MAX_SNIFFED = 8   # packets of the head decoded to decide


def sniff(head: bytes, source: Source) -> float:
    """How sure the head is a sequence of ``Trace.packet`` fields holding TracePackets:
    0.8 when the complete packets in it decode as TracePackets, 0.3 when they are framed as
    packets the protobuf runtime does not decode, 0.05 for a head that only starts with the
    packet tag, 0 for text (JSON after a newline, whose code is the tag).

    >>> sniff(b"\\x0a\\x02P\\x01", None), sniff(b'{"traceEvents": []}', None)
    (0.8, 0.0)
    """
    if head[:1] != b"\x0a":   # (0x0a is also a newline: JSON may start so, see below)
        return 0.0
    packets = _head_packets(head)
    if not packets:
        return 0.05
    # imported here: the generated module is large, and most inputs are not protobuf
    from google.protobuf.message import DecodeError
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

    if not packets[0] or packets[0][:1] in (b"{", b"["):   # a JSON text after a newline
        return 0.0
    for payload in packets:
        try:
            packet = TracePacket.FromString(payload)
        except DecodeError:   # framed as packets, but past what the runtime decodes (nested
            return 0.3        # over its recursion limit, ...): trace_processor may still load it
        if not packet.ListFields():
            return 0.05
    return 0.8


def _head_packets(head: bytes) -> list[bytes]:
    """The complete packets at the start of ``head`` (at most a few); [] when the framing
    breaks before the head's end."""
    from .wire import read_varint

    packets: list[bytes] = []
    pos = 0
    while pos < len(head) and len(packets) < _MAX_SNIFFED:
        if head[pos] != 0x0A:
            return []
        try:
            length, start = read_varint(head, pos + 1)
        except ValueError:
            return packets
        if start + length > len(head):
            return packets
        packets.append(head[start:start + length])
        pos = start + length
    return packets


def read(source: Source) -> Trace:
    """Read a ``.pftrace`` (gzip or not) into the model (see :mod:`.reader`)."""
    from .reader import read as read_pftrace

    return read_pftrace(source)


def check(source: Source) -> CheckReport:
    """What trace_processor would drop or misdraw in a ``.pftrace`` (gzip or not)."""
    # imported here: the validator loads the large generated perfetto_trace_pb2 module
    from .validate import validate

    return validate(source)
