"""Each pattern rewritten to take time linear in its line (found by the census's lines of
a pattern's own pieces, ``tests/test_regex_linear.py``) finds exactly what its former,
quadratic text found: both applied, the way the code applies them, to thousands of random
lines made of the pattern's own pieces and of real lines (fixed seed).
"""

from __future__ import annotations

import random
import re
from importlib import import_module
from typing import Any

import pytest

# the modules themselves (some share their name with a function their package exports)
(steps, trim, units, memflow_svg, op_class, graph_replay, document, reflow, nvtx, common,
 text_sniffing, paddle_summary) = (
    import_module(f"traceconv.{name}") for name in (
        "analysis.steps", "analysis.trim", "units", "formats.megengine.memflow_svg",
        "analysis.op_class", "analysis.graph_replay", "formats.migraphx.document",
        "formats.migraphx_text.reflow", "formats.nsys.nvtx", "vocabularies.common",
        "formats.text_sniffing", "formats.paddle_summary.parser"))
_MIGRAPHX_LINES = ["MIGRAPHX_TRACE_EVAL=1", "export MIGRAPHX_ENABLE_NHWC=1 \\",
                   "Percentiles (90%, 95%, 99%): (0.5ms, 0.6ms, 0.7ms)",
                   "@3 = @return(@2)@4 = hip::sync_stream", "Total time: 1.2ms"]

LINES_PER_PATTERN = 3000


def _result(pattern: re.Pattern[Any], method: str, line: Any) -> object:
    """What the code reads of ``pattern`` applied to ``line``: each match's span and
    groups; only whether it matched (``bool search``) or its groups (``groups search``)
    where the code reads no more."""
    if method == "findall":
        return pattern.findall(line)
    if method == "finditer":
        return [(m.span(), m.groups()) for m in pattern.finditer(line)]
    if method == "sub":
        return pattern.sub("\\1\n", line)
    found = getattr(pattern, method.split()[-1])(line)
    if method.startswith("bool "):
        return found is not None
    if method.startswith("groups "):
        return found and found.groups()
    return found and (found.span(), found.groups())


def _lines(pieces: list[str], real: list[str], seed: int) -> list[str]:
    """Random lines of 0 to 12 pieces (a piece or a real line, each maybe cut short)."""
    rng = random.Random(seed)
    chosen = pieces + real
    lines = []
    for _ in range(LINES_PER_PATTERN):
        parts = [rng.choice(chosen) for _ in range(rng.randrange(13))]
        parts = [p[:rng.randrange(len(p) + 1)] if rng.random() < 0.2 else p for p in parts]
        lines.append("".join(parts))
    return lines


# (former text, flags, the rewritten pattern, how the code applies it, its pieces, real lines)
REWRITES = [
    (r"(\d+)\s*$", 0, steps._NUMBER, "search",
     ["1", "23", "0", " ", "\t", "\n", "x", "step", "٣", "_"],
     ["ProfilerStep#12", "train step 7  ", "iteration_3\n", "Step 10 of 20"]),
    (r"^\s*([0-9]*\.?[0-9]+)\s*(ns|us|µs|ms|s)\s*$", 0, trim._TIME, "match",
     ["1", "05", ".", " ", "\t", "ns", "us", "µs", "ms", "s", "m", "\n", "x", "-"],
     ["250ms", " 1.5 s ", ".5us", "9" * 40 + "ns", "1.ms"]),
    (r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([a-zµ]*)\s*$", re.IGNORECASE,
     units._QUANTITY, "match",
     ["1", "07", ".", "e", "E", "+", "-", " ", "\t", "\n", "k", "KiB", "ms", "µs", "gb", "ſ"],
     ["1.5GiB", " 250 ms ", "2e3ns", ".5e-1 s", "4K", "1e", "1.e5"]),
    (r"(\d+)\s*([a-zA-Z]+)", 0, memflow_svg.QUANTITY, "findall",
     ["1", "240", " ", "\t", "ms", "us", "KB", "B", "x", "-", "٣", "é"],
     ["240ms 271us 397ns ", "1KB 704B ", "12 MB", "3"]),
    (r"conv\w*(backward|grad)|wgrad|dgrad", re.IGNORECASE, op_class._CLASSES[0][1],
     "bool search", ["conv", "CONV", "backward", "grad", "wgrad", "dgrad", "_", "x", " ", ":",
                     "2d", "co", "gra", "é"],
     ["aten::convolution_backward", "cudnn::conv2d_grad", "sm80_xmma_wgrad_kernel",
      "ConvolutionBackwardData", "aten::conv2d"]),
    (r"(matmul|mm|linear|gemm)\w*(backward|grad)", re.IGNORECASE, op_class._CLASSES[2][1],
     "bool search", ["matmul", "mm", "linear", "gemm", "ge", "m", "backward", "grad", "_", "x",
                     " ", ".", "MM"],
     ["aten::mm", "LinearBackward0", "matmul_grad", "ampere_sgemm_128x64_nn", "addmm_backward"]),
    (r"batch_?norm\w*(backward|grad)|bn_bw", re.IGNORECASE, op_class._CLASSES[4][1],
     "bool search", ["batch_norm", "batchnorm", "BatchNorm", "batch", "norm", "_", "backward",
                     "grad", "bn_bw", "x", " ", "."],
     ["aten::native_batch_norm_backward", "cudnn::bn_bw_1C11_kernel", "BatchNormBackward0"]),
    (r"context_(\d+).*generation_(\d+)", 0, graph_replay._VLLM_BATCH, "groups search",
     ["context_", "generation_", "1", "0", "42", "_", "x", " ", "\n", "context", "٣"],
     ["execute_context_1(128)_generation_0(0)", "execute_context_0(0)_generation_3(3)",
      "execute_model"]),
    (r"([A-Z0-9_]*MIGRAPHX[A-Z0-9_]*)=(.*?)(?:\\ ?)?$", 0, document._ENV, "match",
     ["MIGRAPHX", "MIGRAPH", "A", "_", "9", "=", "\\", " ", "x", "\n", "a"], _MIGRAPHX_LINES),
    (r"\s*[A-Z0-9_]*MIGRAPHX[A-Z0-9_]*=", 0, reflow._ENV, "match",
     ["MIGRAPHX", "MIGRAPH", "A", "_", "9", "=", " ", "\t", "x"], _MIGRAPHX_LINES),
    (r"Percentiles \(([^)]*)\):\s*\(([^)]*)\)", 0, document._TRAILER[3][0], "match",
     ["Percentiles (", "Percentiles", "(", ")", "):", ":", " ", "90%", ",", "0.5ms"],
     _MIGRAPHX_LINES),
    (r"^[^=]+?:\s*" + reflow.NUM + r"\s*(?:ms)?(?:\s*/\s*\d*\s*(?:=\s*(?:" + reflow.NUM
     + r"\s*(?:ms)?)?)?)?(?:\s*[,，]\s*(?:" + reflow.NUM + r")?)?\s*$", 0,
     reflow._SUMMARY_PREFIX, "bool match",
     ["gpu::convolution", ":", " ", "\t", "1", "0.5", "e-3", "nan", "ms", "/", "=", ",", "，",
      "-", "x", "\n"],
     ["gpu::code_object::mlir_op: 0.119ms / 3 = 0.0397ms, 18%", "hip::copy: 0.01 ms / 2 =",
      "Summary:", "add_kernel: 1.5ms, "]),
    (r"^(?:cuda|cu|hip)\w*Launch\w*Kernel", 0, common.KERNEL_LAUNCH_CALL, "search",
     ["cuda", "cu", "hip", "Launch", "Kernel", "Module", "Ex", "da", "_", " ", "x", "\n"],
     ["cudaLaunchKernel", "cuLaunchKernelEx", "cudaLaunchCooperativeKernel",
      "hipModuleLaunchKernel", "cudaGraphLaunch", "cudaMemcpyAsync"]),
    # any_line's check of its callers' patterns for a "\\s" inside a class
    (r"\[[^\]]*\\s", 0, text_sniffing._BLANK_IN_CLASS, "bool search",
     ["[", "]", "\\s", "\\", "s", "a", "^", "-", "\\S"],
     [r"^\s*Place:\s*(\S+)\s*$", r"[^\S\n]*", r"[\w\s]+"]),
    # Paddle summary's units line: an IPS unit then trailing blanks
    (r"^\s*Time Unit:\s*(\S+?),\s*IPS Unit:\s*(.+?)\s*$", 0, paddle_summary.PERF_UNITS, "match",
     ["Time Unit:", "IPS Unit:", "Time Unit: s, IPS Unit: ", ",", " ", "\t", "\n", "s",
      "steps/s", "samples/s", "x", "ms", "é"],
     ["Time Unit: s, IPS Unit: steps/s", "  Time Unit: ms,  IPS Unit: samples/s  ",
      "Time Unit: s, IPS Unit:", "Time Unit: s, IPS Unit:  ", "Time Unit: s,IPS Unit: a b "]),
]


@pytest.mark.parametrize(("former", "flags", "rewritten", "method", "pieces", "real"), REWRITES,
                         ids=[str(r[2].pattern) for r in REWRITES])
def test_a_rewritten_pattern_finds_what_its_former_text_found(
        former: str, flags: int, rewritten: re.Pattern[str], method: str,
        pieces: list[str], real: list[str]):
    old = re.compile(former, flags)
    for line in _lines(pieces, real, seed=len(former)):
        assert _result(rewritten, method, line) == _result(old, method, line), line


def test_a_return_glued_to_the_next_line_is_cut_where_the_former_pattern_cut_it():
    former = re.compile(r"(=\s*@return\([^)]*\))(?=\S)")
    pieces = ["=", " ", "@return(", "@return", "(", ")", "@2", "x", ",", "\t"]
    for line in _lines(pieces, _MIGRAPHX_LINES, seed=1):
        assert document._unglued(line) == former.sub("\\1\n", line), line


def test_the_rects_read_are_those_the_former_pattern_found():
    former = re.compile(rb"<rect\b([^>]*)>")
    pieces = ["<rect", "<rect ", "<rec", ">", " ", 'tag:type="x"', "<", "/", "a", "\n", "/>"]
    real = ['<rect x="1" tag:type="weight" tag:size="4KB"/>', "<rect/>", "<rectangle>"]
    for line in _lines(pieces, real, seed=2):
        data = line.encode()
        rewritten = []
        for found in memflow_svg.RECT.finditer(data):
            if not found[2]:
                break
            rewritten.append((found.span(), found[1]))
        assert rewritten == [(m.span(), m[1]) for m in former.finditer(data)], line


def test_the_sizes_read_are_those_the_former_pattern_searched_for():
    former = re.compile(r"sizes = (\[.*?\])(?:, \w+ = |$)")
    pieces = ["sizes = [", "sizes = ", "[", "]", "[]", ", ", "seq = ", "op_id", " = ", "1",
              "x", "\n", "[[1, 2], [3]]"]
    real = ["seq = 12, op_id = 40, sizes = [[64, 3, 224, 224], [64]], input_op_ids = [39]",
            "sizes = [[1], []]"]
    for line in _lines(pieces, real, seed=3):
        rewritten = next((m for m in nvtx._SIZES.finditer(line) if m[1] is not None), None)
        searched = former.search(line)
        assert (rewritten and (rewritten.span(), rewritten[1])) == \
            (searched and (searched.span(), searched[1])), line
