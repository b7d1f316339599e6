"""The activities of PyTorch profiler (Kineto) slices, by Kineto's categories and names."""

from __future__ import annotations

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
