"""The activities of MIGraphX slices: code objects are kernels, literal copies are copies."""

from __future__ import annotations

from ..model.activity import Vocabulary
from .common import COMMON

MIGRAPHX_VOCABULARY = Vocabulary.union("migraphx", COMMON, Vocabulary(
    "migraphx",
    kernel={"migraphx.kernel"},
    memcpy_names=("copy_literal",),
))
