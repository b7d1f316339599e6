"""The activities of MIGraphX slices: code objects are kernels, literal copies are copies;
the program's bookkeeping (``@param``, ``load``, ``check_context``, allocations) and views
(``reshape``, ``transpose``: no kernel runs) are other work, never kernels."""

from __future__ import annotations

from ..model.activity import Vocabulary
from .common import COMMON

MIGRAPHX_VOCABULARY = Vocabulary.union("migraphx", COMMON, Vocabulary(
    "migraphx",
    kernel={"migraphx.kernel"},
    other={"migraphx.builtin", "migraphx.view"},
    memcpy_names=("copy_literal",),
))
