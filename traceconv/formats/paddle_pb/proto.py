"""``NodeTreesProto`` of the new Paddle profiler (``dump/nodetree.proto``), enums as ints."""

from __future__ import annotations

from ..protowire import Field, message_classes
from ..protowire.counting import RowPeak

# TracerEventTypeProto; 15 was MluRuntime in the 2022 proto and is DygraphKernelLaunch in
# 3.x, 16 (StaticKernelLaunch) is new in 3.x: the version decides (see event_type_name).
EVENT_TYPES = {
    0: "Operator", 1: "Dataloader", 2: "ProfileStep", 3: "CudaRuntime", 4: "Kernel",
    5: "Memcpy", 6: "Memset", 7: "UserDefined", 8: "OperatorInner", 9: "Forward",
    10: "Backward", 11: "Optimization", 12: "Communication", 13: "PythonOp",
    14: "PythonUserDefined", 15: "DygraphKernelLaunch", 16: "StaticKernelLaunch",
}
MEM_EVENT_TYPES = {0: "Allocate", 1: "Free", 2: "ReservedAllocate", 3: "ReservedFree"}

MESSAGES: dict[str, list[Field]] = {
    "KernelEventInfoProto": [
        ("block_x", 1, "uint32"), ("block_y", 2, "uint32"), ("block_z", 3, "uint32"),
        ("grid_x", 4, "uint32"), ("grid_y", 5, "uint32"), ("grid_z", 6, "uint32"),
        ("dynamic_shared_memory", 7, "uint32"), ("static_shared_memory", 8, "uint32"),
        ("registers_per_thread", 9, "uint32"), ("local_memory_per_thread", 10, "uint32"),
        ("local_memory_total", 11, "uint32"), ("queued", 12, "uint64"),
        ("submitted", 13, "uint64"), ("completed", 14, "uint64"),
        ("blocks_per_sm", 15, "float"), ("warps_per_sm", 16, "float"),
        ("occupancy", 17, "float")],
    "MemcpyEventInfoProto": [("num_bytes", 1, "uint64"), ("copy_kind", 2, "string"),
                             ("src_kind", 3, "string"), ("dst_kind", 4, "string")],
    "MemsetEventInfoProto": [("num_bytes", 1, "uint64"), ("memory_kind", 2, "string"),
                             ("value", 3, "uint32")],
    "HostTraceEventProto": [("name", 1, "string"), ("type", 2, "enum"),
                            ("start_ns", 3, "uint64"), ("end_ns", 4, "uint64"),
                            ("process_id", 5, "uint64"), ("thread_id", 6, "uint64")],
    "MemTraceEventProto": [
        ("timestamp_ns", 1, "uint64"), ("type", 2, "enum"), ("addr", 3, "uint64"),
        ("process_id", 4, "uint64"), ("thread_id", 5, "uint64"),
        ("increase_bytes", 6, "int64"), ("place", 7, "string"),
        ("current_allocated", 8, "uint64"), ("current_reserved", 9, "uint64"),
        ("peak_allocated", 10, "uint64"), ("peak_reserved", 11, "uint64")],
    "ShapeProto": [("size", 1, "repeated uint64")],
    "ShapeVectorProto": [("shapes", 1, "repeated ShapeProto")],
    "InputShapesProto": [("key", 1, "repeated string"),
                         ("shape_vecs", 2, "repeated ShapeVectorProto")],
    "DtypeVectorProto": [("dtype", 1, "repeated string")],
    "DtypesProto": [("key", 1, "repeated string"),
                    ("dtype_vecs", 2, "repeated DtypeVectorProto")],
    "OperatorSupplementEventProto": [
        ("timestamp_ns", 1, "uint64"), ("op_type", 2, "string"), ("process_id", 3, "uint64"),
        ("thread_id", 4, "uint64"), ("input_shapes", 5, "InputShapesProto"),
        ("dtypes", 6, "DtypesProto"), ("callstack", 7, "string")],
    "CudaRuntimeTraceEventProto": [
        ("name", 1, "string"), ("start_ns", 2, "uint64"), ("end_ns", 3, "uint64"),
        ("process_id", 4, "uint64"), ("thread_id", 5, "uint64"),
        ("correlation_id", 6, "uint32"), ("callback_id", 7, "uint32")],
    "DeviceTraceEventProto": [
        ("name", 1, "string"), ("type", 2, "enum"), ("start_ns", 3, "uint64"),
        ("end_ns", 4, "uint64"), ("device_id", 5, "uint64"), ("context_id", 6, "uint64"),
        ("stream_id", 7, "uint64"), ("correlation_id", 8, "uint32"),
        ("kernel_info", 9, "KernelEventInfoProto"), ("memcpy_info", 10, "MemcpyEventInfoProto"),
        ("memset_info", 11, "MemsetEventInfoProto")],
    "OperatorSupplementEventNodeProto": [
        ("op_supplement_event", 1, "OperatorSupplementEventProto")],
    "MemTraceEventNodeProto": [("mem_event", 1, "MemTraceEventProto")],
    "DeviceTraceEventNodeProto": [("device_event", 1, "DeviceTraceEventProto")],
    "CudaRuntimeTraceEventNodeProto": [
        ("runtime_trace_event", 1, "CudaRuntimeTraceEventProto"),
        ("device_nodes", 2, "repeated DeviceTraceEventNodeProto")],
    "HostTraceEventNodeProto": [
        ("id", 1, "int64"), ("parentid", 2, "int64"),
        ("host_trace_event", 3, "HostTraceEventProto"),
        ("runtime_nodes", 4, "repeated CudaRuntimeTraceEventNodeProto"),
        ("mem_nodes", 5, "repeated MemTraceEventNodeProto"),
        ("op_supplement_nodes", 6, "repeated OperatorSupplementEventNodeProto")],
    "ThreadNodeTreeProto": [("thread_id", 1, "uint64"),
                            ("host_nodes", 2, "repeated HostTraceEventNodeProto")],
    "ExtraInfoMap": [("key", 1, "string"), ("value", 2, "string")],
    "DevicePropertyProto": [
        ("id", 1, "uint32"), ("name", 2, "string"), ("total_global_memory", 3, "uint64"),
        ("compute_major", 4, "uint32"), ("compute_minor", 5, "uint32"),
        ("max_threads_per_block", 6, "uint32"), ("max_threads_per_multiprocessor", 7, "uint32"),
        ("regs_per_block", 8, "uint32"), ("regs_per_multiprocessor", 9, "uint32"),
        ("warp_size", 10, "uint32"), ("shared_memory_per_block", 11, "uint64"),
        ("shared_memory_per_multiprocessor", 12, "uint64"), ("sm_count", 13, "uint32"),
        ("shared_memory_per_block_optin", 14, "uint64")],
    "NodeTreesProto": [
        ("version", 1, "string"), ("span_indx", 2, "uint32"),
        ("thread_trees", 3, "repeated ThreadNodeTreeProto"),
        ("extra_info", 4, "repeated ExtraInfoMap"),
        ("device_property", 5, "repeated DevicePropertyProto")],
}
_CLASSES = message_classes("paddle.platform", MESSAGES)
NodeTreesProto = _CLASSES["NodeTreesProto"]
# the peak bytes per element of the repeated fields whose elements become rows (the
# smallest element of each kind, a million read and converted to .pftrace; a little under
# the measured): traceconv.memory_check counts them before a big file is read
ROW_PEAK = RowPeak(NodeTreesProto, {
    "thread_trees.host_nodes": 840, "thread_trees.host_nodes.runtime_nodes": 320,
    "thread_trees.host_nodes.runtime_nodes.device_nodes": 420,
    "thread_trees.host_nodes.mem_nodes": 600, "thread_trees.host_nodes.op_supplement_nodes": 700})
