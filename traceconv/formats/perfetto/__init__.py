"""Perfetto TrackEvent protobuf (``.pftrace``): writer and offline validator.

:func:`write` encodes the model as TrackEvent packets by hand (see :mod:`.writer`);
:func:`check` (:mod:`.validate`) checks any ``.pftrace`` for what trace_processor would drop.
"""

from __future__ import annotations

from ...analysis.check_report import CheckReport
from ...io import Source
from .writer import write

__all__ = ["check", "sniff", "write"]


def sniff(head: bytes, source: Source) -> float:
    """A trace is a sequence of ``TracePacket`` fields (tag 0x0a); JSON is not one.

    >>> sniff(b"\\x0a\\x02P\\x01", None), sniff(b'{"traceEvents": []}', None)
    (0.5, 0.0)
    """
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head or text[:1] in (b"{", b"["):
        return 0.0
    return 0.5 if head[:1] == b"\x0a" else 0.05


def check(source: Source) -> CheckReport:
    """What trace_processor would drop or misdraw in a ``.pftrace`` (gzip or not)."""
    # imported here: the validator loads the large generated perfetto_trace_pb2 module
    from .validate import validate

    return validate(source)
