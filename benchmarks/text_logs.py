"""Large text logs grown from the bundled samples, for the text-report benchmarks and the
memory-scaling tests: a ``migraphx-driver perf`` log, a program printout, a
``MIGRAPHX_TRACE_EVAL`` log, a Paddle Profiling Report and a Paddle ``summary()``.

A large model's perf log is one long program, not many reports: the driver prints the
compiled program (``module: "main"`` and one line per instruction), then the same
instructions again, each with its mean time and percent, then one ``Summary:`` of the
groups and the trailer. So the MIGraphX logs repeat the *body* of the bundled ResNet-like
report (its residual blocks) ``copies`` times with fresh ``@N`` numbers, fresh literal ids,
kernel names and code-object sizes that vary from copy to copy, and seeded per-line times;
every copy reads the program input, and the head (pooling, dense layer, output) reads the
last copy. Percent, Summary and trailer are recomputed the way ``perf_report`` computes
them (``ceil(100·ms/T)``, groups sorted by total, count and name), so the log is
self-consistent.

>>> from pathlib import Path
>>> text = migraphx_perf_log(2)
>>> text.count("Running performance report"), text.count("Summary:")
(1, 1)
>>> len(text) > 2 * len(Path(MIGRAPHX_SOURCE).read_text()) * 0.9
True
"""

from __future__ import annotations

import math
import random
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIGRAPHX_SOURCE = ROOT / "samples" / "migraphx" / "synthetic_resnet_perf_rocm7.2.txt"
PADDLE_REPORT_SOURCE = ROOT / "samples" / "paddle" / "report_legacy_CPU_OpDetail.txt"
PADDLE_SUMMARY_SOURCE = ROOT / "samples" / "paddle" / "summary_small_2.6.2.txt"

_NAME = re.compile(r"@(\d+)\b")
_LITERAL = re.compile(r"(@literal:)(\d+)")
_SYMBOL = re.compile(r"(symbol_name=)(\w+)")
_CODE_OBJECT = re.compile(r"(code_object=)(\d+)")
_PERF_TAIL = re.compile(r": ([-\d.e+]+)ms, [\d.]+%$")
# fused-op endings seen in large models' kernel names: copies differ in their kernels
_FUSED = ("", "_mul", "_add", "_mul_add", "_clip", "_sigmoid_mul", "_convert", "_where",
          "_tanh", "_gelu", "_add_add", "_dequantizelinear", "_neg_exp", "_rsqrt_mul")


class _Template:
    """The bundled perf report cut into driver header, prologue, body, head and footer."""

    def __init__(self, path: Path = MIGRAPHX_SOURCE) -> None:
        lines = path.read_text().splitlines()
        start = lines.index('module: "main"')
        end = lines.index("", start)
        self.header = [x for x in lines[:start] if not x.startswith("#")]
        listing = lines[start + 1:end]
        perf = lines.index("Running performance report ... ")
        times = [float(_PERF_TAIL.search(x)[1]) if _PERF_TAIL.search(x) else None
                 for x in lines[perf + 1:perf + 1 + len(listing)]]
        self.between = lines[end:perf + 1]            # blank lines, "Allocating params ..."
        summary = lines.index("Summary:", perf)
        trailer = lines.index("", summary)
        self.footer = lines[trailer + 8:]             # timestamp and Complete line
        # the body runs from the first weight to the last residual block's closing kernel
        first = next(k for k, x in enumerate(listing) if "hip_copy_literal" in x)
        last = max(k for k, x in enumerate(listing) if "symbol_name=add_relu_kernel" in x)
        self.prologue = list(zip(listing[:first], times[:first], strict=True))
        self.body = list(zip(listing[first:last + 1], times[first:last + 1], strict=True))
        self.head = list(zip(listing[last + 1:], times[last + 1:], strict=True))
        self.first_number = int(_NAME.match(listing[first])[1])
        self.literals = sum("@literal:" in x for x, _ in self.body)


def _renumber(text: str, shift: int, first: int, literal_shift: int) -> str:
    text = _NAME.sub(lambda m: f"@{int(m[1]) + shift}" if int(m[1]) >= first else m[0], text)
    return _LITERAL.sub(lambda m: f"{m[1]}{int(m[2]) + literal_shift}", text)


def _instructions(copies: int, seed: int) -> tuple[list[str], list[str], list[float | None]]:
    """(driver header, instruction lines, mean ms per line) of a ``copies``-body program."""
    t = _Template()
    rng = random.Random(seed)
    size = len(t.body)
    lines: list[str] = []
    times: list[float | None] = []
    for text, ms in t.prologue:
        lines.append(text)
        times.append(ms)
    for copy in range(copies):
        fused = _FUSED[copy % len(_FUSED)]
        for text, ms in t.body:
            text = _renumber(text, copy * size, t.first_number, copy * t.literals)
            text = _SYMBOL.sub(lambda m, end=fused: f"{m[1]}{m[2]}{end}", text)
            text = _CODE_OBJECT.sub(lambda m: f"{m[1]}{int(m[2]) + rng.randrange(-900, 900)}",
                                    text)
            lines.append(text)
            times.append(None if ms is None else ms * rng.uniform(0.7, 1.4))
    shift = (copies - 1) * size
    for text, ms in t.head:
        lines.append(_renumber(text, shift, t.first_number, (copies - 1) * t.literals))
        times.append(ms)
    return t.header, lines, times


def _group(line: str) -> str:
    """The Summary group of an instruction line (ROCm 5.3+: code objects by kernel)."""
    op = line.split(" = ", 1)[1]
    if op.startswith("@param:"):
        return "@param"
    symbol = _SYMBOL.search(op)
    name = re.match(r"[^\[({\s]+", op)[0]
    return f"{name}::{symbol[2]}" if symbol and name == "gpu::code_object" else name


def migraphx_perf_log(copies: int, seed: int = 26) -> str:
    """A ROCm 7.2 ``migraphx-driver perf`` log of a program ``copies`` bodies long.

    >>> log = migraphx_perf_log(3)
    >>> sum(line.endswith("%") for line in log.splitlines()) > 3 * 290
    True
    """
    t = _Template()
    header, lines, times = _instructions(copies, seed)
    total = sum(ms for ms in times if ms is not None)
    out = [*header, 'module: "main"', *lines, *t.between]
    groups: dict[str, list[float]] = defaultdict(list)
    for text, ms in zip(lines, times, strict=True):
        if ms is None:   # @return: no time, and the Summary follows on the next line
            out.append(text)
            continue
        out.append(f"{text}: {ms:.6g}ms, {math.ceil(100 * ms / total):g}%")
        groups[_group(text)].append(ms)
    out.append("Summary:")
    rows = sorted(((sum(v), len(v), g) for g, v in groups.items()), reverse=True)
    out += [f"{g}: {s:.6g}ms / {n} = {s / n:.6g}ms, {math.ceil(100 * s / total):g}%"
            for s, n, g in rows]
    wall = total * 0.96
    out += ["", "Batch size: 1", f"Rate: {1000 / wall:.6g} inferences/sec",
            f"Total time: {wall:.6g}ms (Min: {wall * 0.97:.6g}ms, Max: {wall * 1.35:.6g}ms, "
            f"Mean: {wall * 1.01:.6g}ms, Median: {wall:.6g}ms)",
            f"Percentiles (90%, 95%, 99%): ({wall * 1.02:.6g}ms, {wall * 1.04:.6g}ms, "
            f"{wall * 1.2:.6g}ms)",
            f"Total instructions time: {total:.6g}ms",
            f"Overhead time: {wall * 0.07:.6g}ms, {wall - total:.6g}ms",
            f"Overhead: 7%, {round(100 * (wall - total) / wall)}%", *t.footer]
    return "\n".join(out) + "\n"


def migraphx_listing(copies: int, seed: int = 26) -> str:
    """The compiled program alone, as ``migraphx-driver compile`` prints it."""
    header, lines, _ = _instructions(copies, seed)
    return "\n".join([*header, 'module: "main"', *lines, ""]) + "\n"


def migraphx_trace_eval(copies: int, seed: int = 26) -> str:
    """A ``MIGRAPHX_TRACE_EVAL=1 migraphx-driver run`` log: the program, then one
    ``Run instruction:`` record with its ``Time: t1ms, t2ms`` per evaluated instruction."""
    header, lines, times = _instructions(copies, seed)
    rng = random.Random(seed + 1)
    out = [*header, 'module: "main"', *lines, "", "Allocating params ... "]
    for text, ms in zip(lines, times, strict=True):
        if ms is None:
            continue   # @return is never evaluated
        host = ms * rng.uniform(0.2, 0.9)
        out += [f"Run instruction: {text}", f"Time: {host:.6g}ms, {ms:.6g}ms"]
    return "\n".join(out) + "\n"


def _training_log(source: Path, copies: int, seed: int) -> str:
    """A training log that prints ``source``'s report ``copies`` times (once per epoch, as a
    profiler stopped every epoch prints it), each copy's numbers varied, with the
    trainer's own lines between them."""
    rng = random.Random(seed)
    text = source.read_text()
    number = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")
    out = []
    for epoch in range(copies):
        scale = rng.uniform(0.8, 1.25)
        out.append(f"[epoch {epoch}] step 100/100 loss {rng.uniform(0.1, 2):.4f} "
                   f"lr 0.001 ips {rng.uniform(50, 90):.2f} samples/s")
        out.append(number.sub(
            lambda m, k=scale: f"{float(m[0]) * k:.{len(m[0].split('.')[1])}f}", text))
    return "\n".join(out) + "\n"


def paddle_report_log(copies: int, seed: int = 26) -> str:
    """A log with ``copies`` old-profiler Profiling Reports (one per epoch)."""
    return _training_log(PADDLE_REPORT_SOURCE, copies, seed)


def paddle_summary_log(copies: int, seed: int = 26) -> str:
    """A log with ``copies`` ``Profiler.summary()`` prints (one per epoch)."""
    return _training_log(PADDLE_SUMMARY_SOURCE, copies, seed)
