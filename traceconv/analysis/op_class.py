"""One name per kind of operator across frameworks, for comparing runs of different sources.

``conv2d`` (Paddle), ``aten::convolution`` / ``aten::cudnn_convolution`` (PyTorch),
``ConvolutionForward`` (MegEngine) and ``gpu::convolution`` / ``mlir_convolution``
(MIGraphX) are one op class, ``convolution``. Names that match no class keep their own
name, lower-cased and without namespaces.
"""

from __future__ import annotations

import re

# First match wins: the backward classes come before their forward ones. A backward class
# is tried from a word's start to its first stem only (a word matches if any stem in it is
# followed by "backward"/"grad", so if its first one is): each stem of a long word as a
# start re-read the rest of the word.
_CLASSES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.IGNORECASE)) for name, pattern in (
        ("convolution_backward", r"(?<!\w)(?:(?!conv)\w)*+conv\w*(backward|grad)|wgrad|dgrad"),
        ("convolution", r"conv"),
        ("matmul_backward", r"(?<!\w)(?:(?!matmul|mm|linear|gemm)\w)*+(matmul|mm|linear|gemm)"
                            r"\w*(backward|grad)"),
        ("matmul", r"(^|[^a-z])(mm|addmm|bmm|matmul|linear|gemm|matrixmul|dot|fc|fully_?connected)"
                   r"([^a-z]|$)|gemm|matrix_?mul"),
        ("batch_norm_backward", r"batch_?norm\w*(backward|grad)|bn_bw"),
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
