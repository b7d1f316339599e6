"""A ``.pftrace`` as protobuf text format, packet by packet, as Perfetto's ``traceconv text``
prints it: one ``packet { ... }`` block per ``Trace.packet``, fields indented by two; a field
the schema does not know is printed by its number.

>>> import io
>>> out = io.BytesIO(); write_packets([(0, b"\\x40\\x05\\x50\\x01")], out, "t.pftrace")
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

from ...errors import InputError
from ...io import Source
from ...model.check_report import CheckReport
from .validate import iter_packets


def write_packets(packets: Iterable[tuple[int, bytes]], out: BinaryIO, name: str) -> None:
    """Each packet's text block to ``out``; InputError (naming ``name`` and the byte
    offset) at a packet that does not decode."""
    for offset, payload in packets:
        try:
            packet = TracePacket.FromString(payload)
        except DecodeError:
            raise InputError("not a Perfetto trace: a packet does not decode as TracePacket",
                             file=name, location=f"byte offset {offset}") from None
        # (fields this Perfetto schema does not know, Chrome's TrackEvent extensions among
        # them, as their numbers: what the bytes hold is shown, not left out)
        body = text_format.MessageToString(packet, indent=2, as_utf8=True,
                                           print_unknown_fields=True)
        out.write(b"packet {\n" + body.encode() + b"}\n")


def write_text(source: Source, out: BinaryIO) -> None:
    """Write every packet of ``source`` (gzip or not) as text; InputError when the file is
    not a sequence of packets."""
    report = CheckReport("perfetto")
    with source.open() as stream:
        write_packets(iter_packets(stream, report), out, source.name)
    for problem in report.errors:
        if problem["code"] in ("bad_framing", "truncated"):
            raise InputError(f"not a Perfetto trace: {problem['message']}", file=source.name,
                             location=problem["example"])
