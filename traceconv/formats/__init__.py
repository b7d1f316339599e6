"""One module per external format, registered here (one line each).

See :mod:`traceconv.registry` for what a format module provides
(:class:`~traceconv.registry.FormatModule`) and how installed packages add formats.
"""

from ..registry import FormatInfo, register

register(FormatInfo(
    "chrome", "Chrome Trace Event JSON: PyTorch/Kineto, MegEngine Profiler, Paddle profiler "
    "and timeline.py, any catapult/Perfetto-style JSON", "traceconv.formats.chrome",
    (".json", ".trace.json"), reads=True, writes=True, aliases=("json",), checks=True,
    flavoured=True))
register(FormatInfo(
    "perfetto", "Perfetto TrackEvent protobuf trace", "traceconv.formats.perfetto",
    (".pftrace", ".perfetto-trace", ".perfetto", ".pb"), reads=True, writes=True,
    aliases=("pftrace", "proto"), checks=True))
register(FormatInfo(
    "megengine", "MegEngine static-graph profile JSON (trace.get_profile(), "
    "load_network_and_run --profile) and graph.json", "traceconv.formats.megengine.profile",
    (".json",),
    reads=True, aliases=("megengine-profile",)))
register(FormatInfo(
    "summary", "per-operator summary table (profile_analyze-like), any trace",
    "traceconv.formats.summary", (".summary.txt",), writes=True))
register(FormatInfo(
    "summary-json", "per-operator summary as JSON", "traceconv.formats.summary.as_json",
    (".summary.json",), writes=True))
register(FormatInfo(
    "graphml", "op graph (ops, tensors, edges) as GraphML", "traceconv.formats.graphml",
    (".graphml",), writes=True))
register(FormatInfo(
    "dot", "op graph as Graphviz DOT", "traceconv.formats.dot", (".dot", ".gv"), writes=True))
register(FormatInfo(
    "megengine-meminfo", "MegEngine StaticMemoryInfo.json (static memory plan, logical "
    "addresses)", "traceconv.formats.megengine.meminfo", ("staticmemoryinfo.json",),
    reads=True))
register(FormatInfo(
    "megengine-memflow-svg", "MegEngine Profiler memory_flow.svg (tensor rects) as input",
    "traceconv.formats.megengine.memflow_svg", ("memory_flow.svg",), reads=True))
register(FormatInfo(
    "paddle-report", "Paddle old text Profiling Report (fluid profiler; every layout, many "
    "per log)", "traceconv.formats.paddle_report", (".txt", ".log"), reads=True))
register(FormatInfo(
    "paddle-profile", "Paddle old binary profile (fluid profiler profile_path, profiler.proto)",
    "traceconv.formats.paddle_profile", (".profile",), reads=True))
register(FormatInfo(
    "paddle-pb", "Paddle profiler protobuf export (NodeTreesProto, *.paddle_trace.pb)",
    "traceconv.formats.paddle_pb", (".paddle_trace.pb", ".pb"), reads=True))
register(FormatInfo(
    "paddle-summary", "Paddle profiler summary() tables and Perf Summary text",
    "traceconv.formats.paddle_summary", (".txt", ".log"), reads=True))
register(FormatInfo(
    "migraphx", "AMD MIGraphX program printouts, migraphx-driver perf reports and "
    "MIGRAPHX_TRACE_EVAL logs (text)", "traceconv.formats.migraphx", (".txt", ".log"),
    reads=True, aliases=("migraphx-driver", "mxr-text")))
register(FormatInfo(
    "svg", "Memory-flow SVG: time x address, one rectangle per memory block, live-bytes peak",
    "traceconv.formats.memflow_svg", (".svg",), writes=True, aliases=("memflow",)))
register(FormatInfo(
    "torch-memory", "PyTorch export_memory_timeline JSON (per-category totals or raw events)",
    "traceconv.formats.torch_memory", (".raw.json", ".json"), reads=True,
    aliases=("memory_timeline",)))
register(FormatInfo(
    "torch-snapshot", "PyTorch CUDA allocator snapshot (torch.cuda.memory._dump_snapshot "
    "pickle; read without running code)", "traceconv.formats.torch_snapshot",
    (".pickle", ".pkl"), reads=True, aliases=("memory_snapshot",)))
register(FormatInfo(
    "torch-et", "PyTorch execution trace (Chakra schema, ExecutionTraceObserver): op graph; "
    "linked to its Kineto trace when both are given", "traceconv.formats.torch_et",
    ("_et.json", ".et.json", ".json"), reads=True, aliases=("chakra", "execution-trace")))
