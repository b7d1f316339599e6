"""``paddle.platform.proto.Profile`` (fluid ``profiler.proto``; ``phi.proto`` copy adds XPU)."""

from __future__ import annotations

from ..protowire import Field, message_classes
from ..protowire.counting import RowPeak

EVENT_CPU, EVENT_GPU_KERNEL = 0, 1
CUDA_RUNTIME_DEVICE = -1          # Event.device_id of a CUDA runtime API record
PLACES = {0: "gpu", 1: "cpu", 2: "cudapinned", 3: "xpu"}

MESSAGES: dict[str, list[Field]] = {
    "MemCopy": [("bytes", 1, "uint64")],
    "Event": [("name", 1, "string"), ("start_ns", 2, "uint64"), ("end_ns", 3, "uint64"),
              ("device_id", 5, "int64"), ("sub_device_id", 6, "int64"),
              ("memcopy", 7, "MemCopy"), ("type", 8, "enum"), ("detail_info", 9, "string")],
    "MemEvent": [("start_ns", 1, "uint64"), ("end_ns", 2, "uint64"), ("bytes", 3, "uint64"),
                 ("place", 4, "enum"), ("thread_id", 5, "uint64"), ("device_id", 6, "uint32"),
                 ("alloc_in", 7, "string"), ("free_in", 8, "string")],
    "Profile": [("events", 1, "repeated Event"), ("start_ns", 2, "uint64"),
                ("end_ns", 3, "uint64"), ("mem_events", 4, "repeated MemEvent")],
}
_CLASSES = message_classes("paddle.platform.proto", MESSAGES)
Profile = _CLASSES["Profile"]
# the peak bytes per element of the repeated fields whose elements become rows (the
# smallest element of each kind, a million read and converted to .pftrace; a little under
# the measured): traceconv.memory_check counts them before a big file is read
ROW_PEAK = RowPeak(Profile, {"events": 240, "mem_events": 640})
