"""The activities of Paddle slices: its Chrome export's own categories and the Kineto-like
ones the protobuf readers give, with the runtime and collective names all producers share."""

from __future__ import annotations

from ..model.activity import Vocabulary
from .common import COMMON

# Slice categories of the old profiler's records (binary profile and timeline.py JSON alike).
CPU_CATEGORY, RUNTIME_CATEGORY = "cpu_op", "cuda_runtime"
KERNEL_CATEGORY, MEMCPY_CATEGORY = "kernel", "memcpy"

PADDLE_VOCABULARY = Vocabulary.union("paddle", COMMON, Vocabulary(
    "paddle",
    kernel={KERNEL_CATEGORY},
    memcpy={MEMCPY_CATEGORY},
    memset={"memset"},
    runtime={RUNTIME_CATEGORY, "cudaruntime"},
    annotation={"userdefined", "pythonuserdefined"},
    step={"profilestep"},
    dataloader={"dataloader"},
    step_names=(r"ProfileStep#?\d*",),
))
