"""Nsight Systems' packed process and thread ids, and the names of its enum values.

A ``globalTid`` packs the OS pid in bits 24-47 and the OS tid in bits 0-23 (bits 48 and up
tell machines / VMs apart); a ``globalPid`` is the same with the tid bits zero.
"""

from __future__ import annotations

import re

import numpy as np

_PID_SHIFT = 24
_FIELD = 0xFFFFFF


def pid_of(global_id: int | np.ndarray) -> int | np.ndarray:
    """The OS pid inside a ``globalPid`` or ``globalTid``.

    >>> pid_of(281477409407121), pid_of(281477409406976)
    (145, 145)
    """
    return (global_id >> _PID_SHIFT) & _FIELD


def tid_of(global_tid: int | np.ndarray) -> int | np.ndarray:
    """The OS tid inside a ``globalTid``.

    >>> tid_of(281477409407121)
    145
    """
    return global_tid & _FIELD


def process_of(global_tid: np.ndarray) -> np.ndarray:
    """The ``globalPid`` of each ``globalTid`` (the tid bits cleared).

    >>> process_of(np.array([281477409407121])).tolist()
    [281477409406976]
    """
    return global_tid & ~np.int64(_FIELD)


# Fallback labels for exports without ENUM_* tables (schema 2.x); the tables win when present.
MEMCPY_KINDS = {0: "Unknown", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD",
                7: "DtoA", 8: "DtoD", 9: "HtoH", 10: "PtoP", 11: "HtoD (unified)",
                12: "DtoH (unified)", 13: "DtoD (unified)"}
MEMORY_KINDS = {0: "Pageable", 1: "Pinned", 2: "Device", 3: "Array", 4: "Managed",
                5: "Device Static", 6: "Managed Static", 7: "Unknown"}
SYNC_TYPES = {0: "Unknown", 1: "Event sync", 2: "Stream wait sync", 3: "Stream sync",
              4: "Context sync"}
OVERHEAD_TYPES = {0: "Undefined", 1: "Unknown", 2: "Driver JIT compiler (CUDA)",
                  3: "Buffer flush (Profiler)", 4: "Instrumentation (Profiler)",
                  5: "Resource creation/destruction (Profiler)",
                  6: "Runtime module loading (CUDA)", 7: "Lazy function loading (CUDA)",
                  8: "Command buffer full (CUDA)"}
LAUNCH_TYPES = {0: "Unknown", 1: "Regular", 2: "Coop Single Device", 3: "Coop Multi Device"}
NO_STREAM = 0xFFFFFFFF   # the stream id of a context or event synchronisation

_VERSION_SUFFIX = re.compile(r"_v\d+(_ptsz|_ptds)?$")
_DRIVER = re.compile(r"^cu[A-Z]")


def api_name(raw: str) -> str:
    """A CUDA API name without its ABI version suffix, as ``nsys stats`` shows it.

    >>> api_name("cudaLaunchKernel_v7000"), api_name("cuMemcpyAsync_v2_ptsz"), api_name("cudaFree")
    ('cudaLaunchKernel', 'cuMemcpyAsync', 'cudaFree')
    """
    return _VERSION_SUFFIX.sub("", raw)


def api_category(name: str) -> str:
    """``cuda_driver`` for driver calls (``cuLaunchKernel``), else ``cuda_runtime``.

    >>> api_category("cuLaunchKernel"), api_category("cudaMemcpyAsync")
    ('cuda_driver', 'cuda_runtime')
    """
    return "cuda_driver" if _DRIVER.match(name) else "cuda_runtime"


def short_copy_kind(label: str) -> str:
    """The short form of an ENUM_CUDA_MEMCPY_OPER label (``Host-to-Device`` → ``HtoD``).

    >>> short_copy_kind("Host-to-Device"), short_copy_kind("Unified Device-to-Host"), short_copy_kind("PtoP")
    ('HtoD', 'DtoH (unified)', 'PtoP')
    """
    words = {"Host": "H", "Device": "D", "Array": "A", "Peer": "P"}
    unified = label.startswith("Unified ")
    parts = label.removeprefix("Unified ").split("-to-")
    if len(parts) != 2 or not all(p in words for p in parts):
        return label
    short = f"{words[parts[0]]}to{words[parts[1]]}"
    return f"{short} (unified)" if unified else short
