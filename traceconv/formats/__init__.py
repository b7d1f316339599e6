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
    "migraphx", "AMD MIGraphX program printouts, migraphx-driver perf reports and "
    "MIGRAPHX_TRACE_EVAL logs (text)", "traceconv.formats.migraphx", (".txt", ".log"),
    reads=True, aliases=("migraphx-driver", "mxr-text")))
