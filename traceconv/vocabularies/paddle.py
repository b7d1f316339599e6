"""The activities of Paddle slices: its Chrome export's own categories and the Kineto-like
ones the protobuf readers give, with the runtime and collective names all producers share."""

from __future__ import annotations

import re

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

# The executors that run a static program (fluid's Executor and ParallelExecutor, 2.x's
# StandaloneExecutor and its interpreters): a run recorded inside one is a static graph
STATIC_GRAPH_NAMES = re.compile(r"ParallelExecutor|\bExecutor::Run|StandaloneExecutor|"
                                r"InterpreterCore|SSAGraphExecutor|(?:Program|Pir)Interpreter")
# One-time setup a profiled window may hold: an executor preparing its graph
# (FastThreadedSSAGraphExecutorPrepare), initialisation. (A name that ends so: the per-step
# Executor::RunPartialPreparedContext runs a context prepared once.)
SETUP_NAMES = re.compile(r"(?:Prepare|Init|Initiali[sz]e|Initiali[sz]ation)$")
