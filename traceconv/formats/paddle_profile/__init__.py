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
from ...model.builder import TraceBuilder
from .._paddle import FRAMEWORK
from ..protowire import wire_errors
from ..sniffing import paddle_profile as sniff  # noqa: F401  (this format's sniff, kept light)
from .proto import ROW_PEAK, Profile  # noqa: F401  (ROW_PEAK: for the memory check)
from .to_trace import build_trace


def read(source: Source) -> Trace:
    """Read an old Paddle binary profile into a timeline with flows and memory blocks."""
    data = source.read_bytes()
    with wire_errors(source.name, "Paddle profile (profiler.proto)", Profile, data):
        profile = Profile.decode(data)
        if not profile.events and not profile.mem_events:
            raise InputError("Paddle profile holds no events", file=source.name)
        return build_trace(profile, TraceBuilder(Metadata(framework=FRAMEWORK,
                                                          source_format="paddle-profile")))
