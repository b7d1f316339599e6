"""The activities of Nsight Systems slices: Kineto's category names (the reader uses them
for CUDA API calls, kernels and copies) plus the OS runtime calls (``os_runtime``)."""

from __future__ import annotations

from ..model.activity import Vocabulary
from .kineto import KINETO_VOCABULARY

NSYS_VOCABULARY = Vocabulary.union("nsys", KINETO_VOCABULARY, Vocabulary(
    "nsys", runtime={"os_runtime"}))
