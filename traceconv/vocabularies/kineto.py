"""The activities of PyTorch profiler (Kineto) slices, by Kineto's categories and names."""

from __future__ import annotations

from typing import Any

from ..model.activity import Vocabulary
from .common import COMMON

# runtime / driver calls that may launch device work (their flows lead to kernels)
LAUNCH_CATEGORIES = frozenset({"cuda_runtime", "cuda_driver", "xpu_runtime", "xpu_driver",
                               "mtia_runtime", "privateuse1_runtime", "privateuse1_driver"})
KINETO_VOCABULARY = Vocabulary.union("kineto", COMMON, Vocabulary(
    "kineto",
    kernel={"kernel"},
    memcpy={"gpu_memcpy"},
    memset={"gpu_memset"},
    device_annotation={"gpu_user_annotation", "cuda_profiler_range"},
    device_sync={"cuda_sync", "cuda_event", "xpu_sync"},
    runtime=LAUNCH_CATEGORIES | {"hip_runtime"},
    annotation={"user_annotation"},
    python={"python_function"},
    overhead={"overhead"},          # Kineto's own work (trace buffer requests)
    profiler={"trace"},             # the "PyTorch Profiler (N)" span: the recording
    step_names=(r"ProfilerStep#?\d*",),
))

# c10::DeviceType values that appear in [memory] events.
DEVICE_TYPES = {0: "CPU", 1: "CUDA", 6: "HIP", 9: "XLA", 12: "XPU", 13: "MPS", 19: "MTIA",
                20: "PrivateUse1"}
# the memory torch's key_averages counts: host (CPU, MKLDNN, IDEEP), device (CUDA, HIP,
# PrivateUse1)
COUNTED_MEMORY_TYPES = frozenset({0, 4, 5, 1, 6, 20})


def memory_device_name(kind: Any, index: Any) -> str:
    """The name of the device of a ``[memory]`` event's (Device Type, Device Id): a memory
    block's ``device``.

    >>> memory_device_name(1, 0), memory_device_name(0, -1), memory_device_name(4, 2)
    ('CUDA:0', 'CPU', 'device type 4:2')
    """
    name = DEVICE_TYPES.get(kind, f"device type {kind}")
    return name if not isinstance(index, int) or index < 0 else f"{name}:{index}"


def counted_memory(device: str) -> bool:
    """Whether a memory block of ``device`` (named by :func:`memory_device_name`) is memory
    that torch's ``key_averages`` counts in an op's self memory.

    >>> counted_memory("CUDA:0"), counted_memory("device type 5"), counted_memory("XLA:1")
    (True, True, False)
    """
    return device.partition(":")[0] in _COUNTED_NAMES


_COUNTED_NAMES = frozenset(memory_device_name(kind, -1) for kind in COUNTED_MEMORY_TYPES)
