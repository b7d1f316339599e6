"""One name per kind of operator across frameworks, for comparing runs of different sources.

``conv2d`` (Paddle), ``aten::convolution`` / ``aten::cudnn_convolution`` (PyTorch),
``ConvolutionForward`` (MegEngine) and ``gpu::convolution`` / ``mlir_convolution``
(MIGraphX) are one op class, ``convolution``. Names that match no class keep their own
name, lower-cased and without namespaces.
"""

from __future__ import annotations

import re


def _backward(stems: str) -> str:
    """A word holding one of ``stems`` and, after it, "backward" or "grad". It is tried from
    the word's start to its first stem only (if any stem in a word is followed by one, its
    first is): tried from each stem of a long word, it re-read the rest of the word.

    >>> bool(re.search(_backward("conv"), "aten::convolution_backward"))
    True
    """
    return rf"(?<!\w)(?:(?!{stems})\w)*+(?:{stems})\w*(backward|grad)"


# First match wins: the backward classes come before their forward ones.
_CLASSES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE)) for name, pattern in (
        ("convolution_backward", _backward("conv") + "|wgrad|dgrad"),
        ("convolution", r"conv"),
        ("matmul_backward", _backward("matmul|mm|linear|gemm")),
        ("matmul", r"(^|[^a-z])(mm|addmm|bmm|matmul|linear|gemm|matrixmul|dot|fc|fully_?connected)"
                   r"([^a-z]|$)|gemm|matrix_?mul"),
        ("batch_norm_backward", _backward("batch_?norm") + "|bn_bw"),
        ("batch_norm", r"batch_?norm|bn_fw"),
        ("layer_norm", r"layer_?norm"),
        ("loss", r"nll_loss|cross_?entropy|softmax_with_cross|loss"),
        ("softmax", r"softmax"),
        ("relu", r"relu"),
        ("pooling", r"pool"),
        ("embedding", r"embedding|lookup_table"),
        ("optimizer", r"adam|sgd|momentum|optimizer"),
        ("copy", r"memcpy|copy_|(^|::)to$|_to_copy|contiguous|HtoD|DtoH"),
        ("elementwise_add", r"(^|::|\.)(add|elemwise_add|elementwise_add)(_|$)"),
    ))
_NAMESPACE = re.compile(r"^(\w+::)+")


def op_class(name: str) -> str:
    """The framework-neutral class of an op or kernel name.

    >>> [op_class(n) for n in ("conv2d", "aten::convolution", "ConvolutionForward",
    ...                        "gpu::convolution")]
    ['convolution', 'convolution', 'convolution', 'convolution']
    >>> op_class("aten::mm"), op_class("MatrixMul"), op_class("aten::my_op")
    ('matmul', 'matmul', 'my_op')
    """
    for cls, pattern in _CLASSES:
        if pattern.search(name):
            return cls
    return _NAMESPACE.sub("", name).lower()
