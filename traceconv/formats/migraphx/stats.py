"""Op statistics: the printed ``Summary:`` and the same table recomputed from the lines.

``perf_report`` groups by ``attributes()["group"]`` or the op name; ``gpu::code_object``
groups as ``gpu::code_object::<symbol_name>`` since ROCm 5.3, and ``--detailed`` (6.2+)
appends ``<type(input shapes)>``. Percent is ``ceil(100·total/T)`` with T the sum of all
instruction times, so a row of tiny times still shows 1%.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import NamedTuple

from ...model import OpStat, Trace
from ..never_timed import count_never_timed
from .document import PerfReport
from .instruction import Instruction
from .shape import Shape
from .timeline import ms_to_ns


class Group(NamedTuple):
    """One recomputed Summary row."""

    name: str
    total_ms: float
    calls: int
    percent: float


def add_summary(trace: Trace, report: PerfReport, label: str,
                counts: dict[str, int]) -> None:
    """The printed Summary as ``section="summary"`` rows.

    Before ROCm 5.3 the Summary prints no counts; ``counts`` (from a whole listing's lines)
    fills them, and where it cannot (a Summary alone, a listing the paste elided) they are
    unknown (None), never 0.
    """
    for row in report.summary:
        calls = row.count if row.count is not None else counts.get(row.group)
        if math.isnan(row.total_ms):
            count_never_timed(trace.diagnostics, "migraphx", f"line {row.line}: {row.group}")
        trace.add_stat(OpStat(
            name=row.group, calls=calls, total_ns=ms_to_ns(row.total_ms) or 0,
            avg_ns=ms_to_ns(row.avg_ms if row.avg_ms is not None
                            else row.total_ms / calls if calls else None),
            device_ns=ms_to_ns(row.total_ms), ratio=row.percent,
            type=row.group.split("<", 1)[0], section="summary",
            extra={"line": row.line, "count_printed": row.count is not None,
                   **({"run": label} if label else {})}))


def partial_listing(report: PerfReport, elided: list[int]) -> str | None:
    """Why ``report``'s per-instruction lines are only part of the program its Summary
    covers, None when nothing says so: a line that elides rows among them (``...``
    before the Summary), or Summary counts that add up to more instructions than the
    lines time.

    >>> from .document import parse_document
    >>> doc = parse_document("@0 = @literal{1} -> float_type, {1}, {0}: 0.5ms, 50%\\n...\\n"
    ...                      "Summary:\\n@literal: 3.5ms / 7 = 0.5ms, 100%\\n")
    >>> partial_listing(doc.runs[0].report, doc.elided)
    "line 2 elides the instruction lines (1 timed; the Summary's counts add up to 7)"
    """
    if not report.lines or not report.summary:
        return None
    first, summary = report.lines[0].instruction.line, report.summary[0].line
    inside = [number for number in elided if first < number < summary]
    counts = [row.count for row in report.summary]
    stated = None if None in counts else sum(c for c in counts if c is not None)
    timed = sum(line.ms is not None for line in report.lines)
    if not inside and (stated is None or stated <= timed):
        return None
    where = f"line {inside[0]} elides" if inside else "the paste left out some of"
    of_summary = "" if stated is None else f"; the Summary's counts add up to {stated:,}"
    return f"{where} the instruction lines ({timed:,} timed{of_summary})"


def _dims(shape: Shape | None) -> str:
    if shape is None or shape.lens is None:
        return ""
    lens = "x".join(map(str, shape.lens))
    return lens if shape.standard else f"{lens}:{'x'.join(map(str, shape.strides or ()))}"


def group_of(ins: Instruction, inputs: list[Instruction | None], *, kernels: bool,
             detailed: bool) -> str:
    """The Summary group of an instruction in the report's style.

    >>> from .instruction import parse_instruction as p
    >>> k = p("@7 = gpu::code_object[code_object=1,symbol_name=add_kernel,](x,y) -> float_type, {2}, {1}")
    >>> group_of(k, [None, None], kernels=True, detailed=False)
    'gpu::code_object::add_kernel'
    """
    group = ins.attributes.get("group", ins.op)
    if kernels and ins.op == "gpu::code_object" and "symbol_name" in ins.attributes:
        group = f"{ins.op}::{ins.attributes['symbol_name']}"
    if detailed:
        dtype = ins.shape.type if ins.shape else ""
        shapes = ", ".join(_dims(i.shape if i else None) for i in inputs)
        group = f"{group}<{dtype}({shapes})>"
    return group


def recompute(report: PerfReport, inputs: list[list[int | None]]) -> list[Group]:
    """The Summary recomputed from the per-instruction lines, in the printed order."""
    printed = [row.group for row in report.summary]
    # Without a printed Summary (cut paste) assume the 5.3+ style, the common one today.
    kernels = not printed or any(g.startswith("gpu::code_object::") for g in printed)
    detailed = any(g.endswith(">") and "<" in g for g in printed)
    # The Hygon DCU fork prints 100·ms/T without ceil: fractional percents give it away.
    capped = all(line.percent is None or math.isnan(line.percent) or line.percent.is_integer()
                 for line in report.lines)
    lines = report.lines
    totals: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    for line, refs in zip(lines, inputs, strict=True):
        if line.ms is None or math.isnan(line.ms):   # nan: never ran (inf: past range)
            continue
        args = [lines[i].instruction if i is not None else None for i in refs]
        group = group_of(line.instruction, args, kernels=kernels, detailed=detailed)
        totals[group] += line.ms
        counts[group] += 1
    grand = sum(totals.values())
    order = sorted(totals, key=lambda g: (totals[g], counts[g], g), reverse=True)
    out = []
    for group in order:
        # (divided first: a share of a time near the largest float is no overflow)
        percent = 100 * (totals[group] / grand) if grand > 0 else 0.0
        out.append(Group(group, totals[group], counts[group],
                         float(math.ceil(percent)) if capped and math.isfinite(percent)
                         else percent))
    return out


def add_recomputed(trace: Trace, groups: list[Group], label: str) -> None:
    """Recomputed groups as ``section="recomputed"`` rows."""
    for group in groups:
        total = group.total_ms   # (past range, infinite included: the builder's rule)
        trace.add_stat(OpStat(
            name=group.name, calls=group.calls, total_ns=ms_to_ns(total) or 0,
            avg_ns=ms_to_ns(total / group.calls),
            device_ns=ms_to_ns(total), ratio=group.percent,
            type=group.name.split("<", 1)[0], section="recomputed",
            extra={"total_ms": group.total_ms, **({"run": label} if label else {})}))
