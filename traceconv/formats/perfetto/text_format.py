"""A ``.pftrace`` as protobuf text format, packet by packet, as Perfetto's ``traceconv text``
prints it: one ``packet { ... }`` block per ``Trace.packet``, fields indented by two.

>>> import io
>>> out = io.BytesIO(); write_packets([b"\\x40\\x05\\x50\\x01"], out)
>>> print(out.getvalue().decode(), end="")
packet {
  timestamp: 5
  trusted_packet_sequence_id: 1
}
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import BinaryIO

from google.protobuf import text_format
from google.protobuf.message import DecodeError
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket

from ...analysis.check_report import CheckReport
from ...errors import InputError
from ...io import Source
from .validate import iter_packets


def write_packets(payloads: Iterable[bytes], out: BinaryIO) -> None:
    """Each packet's text block to ``out``; a packet that does not decode is written as
    its raw bytes, as text format writes unknown fields."""
    for payload in payloads:
        try:
            packet = TracePacket.FromString(payload)
            body = text_format.MessageToString(packet, indent=2, as_utf8=True)
        except DecodeError:
            escaped = text_format.CEscape(payload, as_utf8=False)
            body = f'  # a packet that does not decode as TracePacket\n  raw: "{escaped}"\n'
        out.write(b"packet {\n" + body.encode() + b"}\n")


def write_text(source: Source, out: BinaryIO) -> None:
    """Write every packet of ``source`` (gzip or not) as text; InputError when the file is
    not a sequence of packets."""
    report = CheckReport("perfetto")
    with source.open() as stream:
        write_packets((payload for _, payload in iter_packets(stream, report)), out)
    for problem in report.errors:
        if problem["code"] in ("bad_framing", "truncated"):
            raise InputError(f"not a Perfetto trace: {problem['message']}", file=source.name,
                             location=problem["example"])
