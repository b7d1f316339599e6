"""Where the packets of a block of a ``.pftrace`` lie, found by the protobuf runtime in C.

A trace file is a ``Trace`` message: a run of ``packet`` fields (tag 0x0a, a varint length,
the bytes). Walking them in Python costs about half a microsecond per packet; parsing the
block as a message whose ``packet`` field is plain ``bytes`` lets the C parser do the walk
(about a tenth of that), and the places follow from the lengths.

A block read from a file usually ends inside a packet, and the C parser refuses a cut
message. So the block is parsed with padding appended: pairs ``10 00`` (field 2, varint
0) complete the cut packet whatever its length (up to the padding's size), then parse as
unknown fields, which the C parser keeps as bytes without a Python object each (empty
packets, ``0a 00``, would each be one: half a million per block); the real packets are
those that end within the block. (An odd number of padding bytes may be needed to
complete it: both alignments are tried.) The places found are checked against the bytes,
so a block this cannot frame falls back to the walk in Python.

>>> starts, ends, cut = frame_block(b"\\x0a\\x01a\\x0a\\x02bc\\x0a\\x05de")
>>> starts.tolist(), ends.tolist(), cut
([2, 5], [3, 7], 7)
"""

from __future__ import annotations

from typing import Any, BinaryIO

import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError

from ..protowire.columns import padded, varints
from ..protowire.scalar import read_varint
from .wire import varint_sizes

PADDING = 1 << 20   # a cut packet longer than this past the block's end: framed in Python


def _frames_class() -> Any:
    """A message type with one field: ``repeated bytes packet = 1``."""
    proto = descriptor_pb2.FileDescriptorProto(name="traceconv_frames.proto",
                                               package="traceconv_frames")
    message = proto.message_type.add(name="Frames")
    message.field.add(name="packet", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_BYTES,
                      label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("traceconv_frames.Frames"))


_FRAMES = _frames_class()
_PAD = b"\x10\x00" * (PADDING // 2)   # (see the module text)


def frame_block(data: bytes) -> tuple[np.ndarray, np.ndarray, int] | None:
    """(starts, ends, cut) of the complete packets at the start of ``data`` and where the
    first incomplete one begins; None when the C parser cannot frame it (then the caller
    walks in Python, which also says what is wrong)."""
    if not data:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    for tail in (b"", _PAD, b"\x00" + _PAD):
        try:
            packets = _FRAMES.FromString(data + tail if tail else data).packet
        except DecodeError:
            continue
        lengths = np.fromiter(map(len, packets), dtype=np.int64, count=len(packets))
        ends = np.cumsum(1 + varint_sizes(lengths.astype(np.uint64)) + lengths)
        whole = int(np.searchsorted(ends, len(data), "right"))
        lengths, ends = lengths[:whole], ends[:whole]
        starts = ends - lengths
        if _checked(data, starts, ends):
            return starts, ends, int(ends[-1]) if whole else 0
        return None
    return None


def _checked(data: bytes, starts: np.ndarray, ends: np.ndarray) -> bool:
    """Whether each packet's tag and length really lie just before it (a writer may encode
    a length in more bytes than needed: then these places are wrong)."""
    if not len(starts):
        return True
    heads = np.r_[0, ends[:-1]]
    buf = padded(data[:int(ends[-1])])
    if (buf[heads] != 0x0A).any():
        return False
    lengths, after = varints(buf, heads + 1)
    return bool((after == starts).all() and (lengths.astype(np.int64) == ends - starts).all())


def packet_size(data: bytes) -> int | None:
    """The size (tag and length included) of the packet that ``data`` starts with, or None
    when ``data`` does not hold its whole header (or is no packet: the framing says so).

    >>> packet_size(b"\\x0a\\xac\\x02ab"), packet_size(b"\\x0a\\xac"), packet_size(b"x")
    (303, None, None)
    """
    if not data or data[0] != 0x0A:
        return None
    try:
        length, after = read_varint(data[:11], 1)
    except ValueError:
        return None
    return after + length


def whole_packet(stream: BinaryIO, pending: bytes, block_size: int) -> bytes:
    """``pending``, the start of one packet, with the rest of that packet read from
    ``stream`` (all of it there is, when the stream ends first) in blocks of
    ``block_size`` gathered in one buffer: a packet larger than the read block is then
    joined once, not once per block (which took a 256 MiB packet 48 s).

    >>> import io
    >>> whole_packet(io.BytesIO(b"cdefgh"), b"\\x0a\\x05ab", 2)
    b'\\n\\x05abcde'
    """
    size = packet_size(pending)
    if size is None or size <= len(pending):
        return pending
    buffer = bytearray(pending)
    while len(buffer) < size:
        chunk = stream.read(min(block_size, size - len(buffer)))
        if not chunk:
            break
        buffer += chunk
    return bytes(buffer)
