"""One module per external format, registered here (one line each).

See :mod:`traceconv.registry` for what a format module provides.
"""

from ..registry import FormatInfo, register

register(FormatInfo(
    "chrome", "Chrome Trace Event JSON: PyTorch/Kineto, MegEngine Profiler, Paddle profiler "
    "and timeline.py, any catapult/Perfetto-style JSON", "traceconv.formats.chrome",
    (".json", ".trace.json"), reads=True, writes=True, aliases=("json", "kineto")))
register(FormatInfo(
    "perfetto", "Perfetto TrackEvent protobuf trace", "traceconv.formats.perfetto",
    (".pftrace", ".perfetto-trace", ".perfetto"), writes=True, aliases=("pftrace", "proto")))
register(FormatInfo(
    "svg", "Memory-flow SVG: time x address, one rectangle per memory block, live-bytes peak",
    "traceconv.formats.memflow_svg", (".svg",), writes=True, aliases=("memflow",)))
register(FormatInfo(
    "torch_memory", "PyTorch export_memory_timeline JSON (per-category totals or raw events)",
    "traceconv.formats.torch_memory", (".raw.json", ".json"), reads=True,
    aliases=("memory_timeline",)))
