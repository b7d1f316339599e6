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
    "paddle_report", "Paddle old text Profiling Report (fluid profiler; every layout, many "
    "per log)", "traceconv.formats.paddle_report", (".txt", ".log"), reads=True))
register(FormatInfo(
    "paddle_profile", "Paddle old binary profile (fluid profiler profile_path, profiler.proto)",
    "traceconv.formats.paddle_profile", (".profile",), reads=True))
register(FormatInfo(
    "paddle_pb", "Paddle profiler protobuf export (NodeTreesProto, *.paddle_trace.pb)",
    "traceconv.formats.paddle_pb", (".paddle_trace.pb", ".pb"), reads=True))
register(FormatInfo(
    "paddle_summary", "Paddle profiler summary() tables and Perf Summary text",
    "traceconv.formats.paddle_summary", (".txt", ".log"), reads=True))
