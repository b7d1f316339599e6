"""What the ``Place:`` line of an old Paddle profiling report says about its times.

The report's ``Total``/``Min.``/``Max.``/``Ave.`` columns hold one clock, chosen by the
profiler state when profiling started (``EnableProfiler``) and used by ``ParseEvents`` for
every event pair. Checked against Paddle's own history:

==================  ==========================  ==========================================
printed place       where                       what the times are
==================  ==========================  ==========================================
``CPU``             2017 → 2.x/3.x              host wall time (``CpuElapsedMs``)
``CUDA``            2017 → 2.x/3.x              device time from CUDA events
                                                (``CudaElapsedMs``)
``GPU``             2017 pastes (state "GPU")   the same CUDA-event device time as ``CUDA``
``All``             2018 fluid, no CPU/GPU      CUDA-event device time (``ParseEvents`` took
                    columns                     ``CudaElapsedMs`` for "CUDA" or "All")
``All``             2.x, ``CPU Time (Ratio)``   Total = CPU + GPU; the two columns give each
                    ``GPU Time (Ratio)`` columns
``CUDAPlace(0)``,   device place spellings      device time, like ``CUDA``
``GPUPlace(0)``,    (pastes, memory-report
``Place(gpu:0)``    style)
``CPUPlace``,       host place spellings        host time, like ``CPU``
``Place(cpu)``
anything else       —                           unknown: totals kept, no host/device split
==================  ==========================  ==========================================
"""

from __future__ import annotations

import re
from typing import Literal

Clock = Literal["host", "device", "both"]

_HOST = re.compile(r"^(?:CPU|CPUPlace(?:\(\))?|Place\(cpu\))$", re.I)
_DEVICE = re.compile(r"^(?:CUDA|GPU|CUDAPlace\(\d*\)|GPUPlace\(\d*\)|Place\(gpu:\d+\))$", re.I)


def place_clock(place: str | None, has_cpu_gpu_columns: bool) -> Clock | None:
    """The clock of a report's times from its ``Place:`` (None: unknown or not printed;
    a report without the line is a CPU one, which the caller decides).

    >>> [place_clock(p, False) for p in ("CPU", "GPU", "CUDA", "CUDAPlace(0)", "All", "XPU")]
    ['host', 'device', 'device', 'device', 'device', None]
    >>> place_clock("All", True)
    'both'
    """
    if place is None:
        return None
    text = place.strip()
    if _HOST.match(text):
        return "host"
    if _DEVICE.match(text):
        return "device"
    if text.lower() == "all":
        return "both" if has_cpu_gpu_columns else "device"
    return None
