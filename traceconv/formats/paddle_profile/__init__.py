"""Paddle's old binary profile (``profile_path``, ``paddle.platform.proto.Profile``).

What the fluid device tracer writes (see the format notes, §B): CPU ``RecordEvent`` rows
with their '/'-joined annotation path (``device_id`` = block depth, ``sub_device_id`` =
profiler thread index), CUDA runtime calls (``device_id`` -1, API name in
``detail_info``), GPU kernels and memcpys (``device_id`` = GPU, ``sub_device_id`` =
stream) and ``mem_events`` (alloc → free intervals without addresses). Records are not
time-sorted and ``Profile.start_ns/end_ns`` are garbage on CPU builds, so neither is
trusted.
"""

from __future__ import annotations

from ...errors import InputError
from ...io import Source
from ...model import Metadata, Trace
from .._paddle import FRAMEWORK
from .proto import Profile
from .to_trace import build_trace


def sniff(head: bytes, source: Source) -> float:
    """A ``Profile`` starts with field 1 (an ``Event``) whose own field 1 is a name."""
    if len(head) < 4 or head[0] != 0x0A:
        return 0.0
    length, pos = _varint(head, 1)
    if length is None or pos >= len(head) or head[pos] != 0x0A:
        return 0.0
    name_len, start = _varint(head, pos + 1)
    if not name_len or name_len > length:
        return 0.0
    name = head[start:start + min(name_len, 64)]
    if not name.isascii() or not name.decode("ascii", "replace").isprintable():
        return 0.0
    return 0.6 if source is not None and source.stem_name.endswith(".profile") else 0.4


def _varint(data: bytes, pos: int) -> tuple[int | None, int]:
    value = shift = 0
    while pos < len(data) and shift < 64:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if not byte & 0x80:
            return value, pos
        shift += 7
    return None, pos


def read(source: Source) -> Trace:
    """Read an old Paddle binary profile into a timeline with flows and memory blocks."""
    data = source.read_bytes()
    try:
        profile = Profile.FromString(data)
    except Exception as exc:  # the protobuf runtime raises DecodeError or RuntimeError
        raise InputError(f"not a Paddle profile (profiler.proto): {exc}",
                         file=source.name) from None
    if not profile.events and not profile.mem_events:
        raise InputError("Paddle profile holds no events", file=source.name)
    trace = build_trace(profile, Trace(Metadata(framework=FRAMEWORK,
                                                source_format="paddle-profile")))
    return trace
