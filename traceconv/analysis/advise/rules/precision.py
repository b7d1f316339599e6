"""``no-mixed-precision``: fp32 matrix kernels on a tensor-core GPU and no fp16/bf16 anywhere."""

from __future__ import annotations

import re

import numpy as np

from ....model import Trace
from ....model.graph import OP
from ....model.groups import grouped
from ...activity import Activity, Timeline
from ..context import Context
from ..finding import Finding
from ..rule import Rule
from . import pct

MATRIX_SHARE = 0.10   # GEMM/conv kernels must be at least this share of kernel time
MATRIX_KERNEL = re.compile(r"gemm|conv|xmma|cutlass|cublas|nvjet|wgrad|dgrad|fprop|"
                           r"mat(?:rix)?_?mul|mlir_dot|\bdot\b|implicit", re.IGNORECASE)
LOW_PRECISION = re.compile(r"bf16|bfloat16|fp16|f16|half|h884|h1688|h16816|hmma|_h_|e4m3|"
                           r"e5m2|fp8|int8|\bi8\b|float16", re.IGNORECASE)
_ARG_KEYS = ("Input type", "dtype", "dtypes", "Input Type")


def _tensor_core_gpu(ctx: Context) -> bool | None:
    """True/False when the trace records the device's compute capability, else None."""
    majors = [d.compute_major for d in ctx.trace.metadata.devices
              if d.compute_major is not None]
    return None if not majors else max(majors) >= 7   # Volta (7.0) brought tensor cores


def _low_precision_anywhere(ctx: Context, kernel_names: list[str]) -> str | None:
    """Where fp16/bf16/fp8 shows up (kernel names, op dtypes, graph tensors), or None."""
    for name in kernel_names:
        if LOW_PRECISION.search(name):
            return f"kernel {name[:80]}"
    tl = ctx.timeline
    args = ctx.trace.slices.args
    for row in tl.rows(Activity.HOST_OP).tolist():
        a = args[row]
        if a:
            for key in _ARG_KEYS:
                if key in a and LOW_PRECISION.search(str(a[key])):
                    return f"op {tl.names(np.array([row]))[0]} ({key})"
    for node, dtype in ctx.trace.graph.nodes(data="dtype"):
        if dtype and LOW_PRECISION.search(str(dtype)):
            return f"tensor {node} ({dtype})"
    return None


def op_types(trace: Trace) -> dict[int, str]:
    """Slice row → the type of the graph op it executed (the graph's ``type`` and
    ``slices`` attributes), for the rows whose op states a type.

    >>> from traceconv.model import Trace
    >>> from traceconv.model.graph import add_op
    >>> t = Trace(); _ = add_op(t.graph, 1, "conv1.weight", "ImmutableTensor", slices=[4, 5])
    >>> op_types(t)
    {4: 'ImmutableTensor', 5: 'ImmutableTensor'}
    """
    found: dict[int, str] = {}
    for _, attrs in trace.graph.nodes(data=True):
        kind = attrs.get("type")
        if attrs.get("kind") == OP and kind and isinstance(attrs.get("slices"), list):
            found.update(dict.fromkeys(attrs["slices"], str(kind)))
    return found


def _what_each_kernel_is(ctx: Context, kernels: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Per kernel row, an index into a list of texts that say what it computes: the type of
    the graph op it executed where the trace has one (MegEngine names a kernel after its
    op's output, ``conv1.weight``, a parameter tensor), else the kernel's name."""
    types = op_types(ctx.trace) if ctx.trace.graph.number_of_nodes() else {}
    strings = ctx.trace.strings.strings
    names = ctx.timeline.name[kernels].tolist()
    texts = [types.get(row) or strings[name] for row, name in zip(
        kernels.tolist(), names, strict=True)]
    unique, inverse = np.unique(np.array(texts, dtype=object), return_inverse=True) \
        if texts else (np.zeros(0, object), np.zeros(0, np.int64))
    return inverse, [str(text) for text in unique.tolist()]


def _stream_time(tl: Timeline, rows: np.ndarray) -> int:
    """Time of ``rows`` summed over streams, each stream's counted once where its rows
    nest (a MegEngine opr's device slice holds its own ``kernel`` part)."""
    return sum(tl.union(rows[positions]).total for _, positions in grouped(tl.track[rows]))


def _no_mixed_precision(ctx: Context) -> list[Finding]:
    tensor_cores = _tensor_core_gpu(ctx)
    if tensor_cores is False:
        return []
    tl = ctx.timeline
    kernels = tl.rows(Activity.KERNEL)
    # judge each distinct kernel (or op type) once: a long run repeats a few hundred names
    inverse, unique = _what_each_kernel_is(ctx, kernels)
    strings = ctx.trace.strings.strings
    if _low_precision_anywhere(ctx, unique) is not None:
        return []
    is_matrix = np.array([bool(MATRIX_KERNEL.search(n)) for n in unique], dtype=bool)
    matrix = is_matrix[inverse] if len(kernels) else np.zeros(0, bool)
    total = _stream_time(tl, kernels)
    matrix_ns = _stream_time(tl, kernels[matrix]) if len(kernels) else 0
    share = matrix_ns / total if total else 0.0
    if share < MATRIX_SHARE:
        return []
    matrix_names = list(dict.fromkeys(strings[i] for i in tl.name[kernels[matrix]].tolist()))
    tf32 = any("tf32" in n.lower() for n in matrix_names)
    return [Finding(
        "no-mixed-precision", "medium" if tensor_cores else "info",
        f"GEMM/convolution kernels are {pct(share)} of kernel time and all run in fp32"
        + (" (TF32)" if tf32 else ""),
        {"matrix_kernel_ns": matrix_ns, "kernel_ns": total, "share": round(share, 4),
         "matrix_kernels": int(matrix.sum()), "tf32": tf32,
         "tensor_core_gpu": tensor_cores},
        {"kernels": matrix_names[:8]},
        "No fp16/bf16 anywhere in the run: try automatic mixed precision "
        "(torch.autocast(device_type='cuda', dtype=torch.bfloat16), paddle.amp.auto_cast) "
        "to run matrix math on tensor cores at twice the fp32/TF32 rate or more.")]


RULES = (
    Rule("no-mixed-precision", ("kernels",), _no_mixed_precision,
         "GEMM/conv kernel share of kernel time (a kernel judged by the type of the graph op "
         "it executed, else by its name) when no kernel name, op input dtype or graph "
         "tensor shows fp16/bf16/fp8, on a GPU with tensor cores (compute capability ≥ 7)",
         f"matrix kernels ≥ {MATRIX_SHARE:.0%} of kernel time (info when the GPU is unknown)",
         "PyTorch AMP recipe; NVIDIA mixed-precision training guide"),
)
