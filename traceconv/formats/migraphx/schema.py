"""The typed schema of what the MIGraphX reader parses: one model per kind of line and block.

These pydantic models are the documented form of the format (``schemas/migraphx_document
.schema.json`` is generated from :class:`Document`) and validate a parsed document. The
reader does not build them line by line: a 50 MB perf log holds about 400,000 instruction
prints, and a validated model per line cost most of the memory of reading one. It builds
the slotted classes of :mod:`.instruction` and :mod:`.document` instead, with the same
field names (``tests/test_migraphx_schema.py`` checks both); :func:`validated` turns a
parsed document into this form.

>>> from .document import parse_document
>>> doc = validated(parse_document("@0 = add(x,y) -> float_type, {2}, {1}: 0.5ms, 100%\\n"))
>>> type(doc).__name__, doc.runs[0].report.lines[0].instruction.op
('Document', 'add')
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from pydantic import BaseModel, Field

from .shape import Shape


class Instruction(BaseModel):
    """A parsed instruction line (no perf timing; see ``report.PerfLine``)."""

    name: str = Field(description="the result name as printed: @3, main:@3, x, main:#output_0")
    op: str = Field(description="op name: add, gpu::code_object, @param, @literal, @return")
    attributes: dict[str, str] = Field(default_factory=dict, description="raw value texts")
    parameter: str | None = Field(None, description="the name after @param:")
    literal: str | None = Field(None, description="the values inside @literal{...}")
    comment: str | None = None
    inputs: list[str] = Field(default_factory=list)
    module_inputs: list[str] = Field(default_factory=list)
    shape: Shape | None = None
    target_id: int | None = None
    debug_symbols: list[str] = Field(default_factory=list)
    unclosed_attributes: bool = Field(False, description="code_object print without ']'")
    truncated: bool = Field(False, description="the line ends before the print is complete")
    line: int = 0

    @property
    def module_prefix(self) -> str | None:
        """The module named in the result name (``main`` for ``main:@3``), else None."""
        head, sep, tail = self.name.rpartition(":@")
        return head if sep and tail.isdecimal() else None


class PerfLine(BaseModel):
    """A per-instruction line of a perf report: the instruction and its mean time."""

    instruction: Instruction
    ms: float | None = Field(description="common_average of the per-instruction times; nan if "
                             "never run, None for the untimed @return")
    percent: float | None = Field(description="ceil(100·ms/T) upstream; uncapped in the DCU fork")
    ms_text: str | None = Field(None, description="ms as printed: its digits are the "
                                "precision the stated totals are judged by")


class SummaryRow(BaseModel):
    """One ``Summary:`` line: ``group: total ms[ / count = avg ms], pct%``."""

    group: str
    total_ms: float
    total_ms_text: str = Field(description="total_ms as printed (its precision)")
    count: int | None = Field(None, description="printed since ROCm 5.3")
    avg_ms: float | None = None
    percent: float
    line: int


class Trailer(BaseModel):
    """The numbers after the summary (all ms unless named otherwise)."""

    batch_size: int | None = None
    rate: float | None = None
    rate_unit: str | None = Field(None, description="'/sec' (<= 5.7) or 'inferences/sec'")
    total_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    mean_ms: float | None = None
    median_ms: float | None = None
    percentiles_ms: dict[str, float] = Field(default_factory=dict)
    instructions_ms: float | None = None
    instructions_ms_text: str | None = Field(None, exclude=True, description="instructions_ms "
                                             "as printed (its precision; not dumped: the "
                                             "number is)")
    overhead_ms: float | None = None
    overhead_calculated_ms: float | None = Field(None, description="total - instructions")
    overhead_percent: float | None = None
    overhead_calculated_percent: float | None = None


class PerfReport(BaseModel):
    """The output of ``program::perf_report``."""

    line: int
    lines: list[PerfLine] = Field(default_factory=list)
    summary: list[SummaryRow] = Field(default_factory=list)
    trailer: Trailer = Field(default_factory=Trailer)


class EvalRecord(BaseModel):
    """One ``MIGRAPHX_TRACE_EVAL`` record: ``Run instruction:`` and what follows it."""

    instruction: Instruction | None = Field(None, description="None: 'not part of program'")
    text: str
    host_ms: float | None = Field(None, description="t1: until the op returned")
    device_ms: float | None = Field(None, description="t2: until ctx.finish()")
    output: list[str] = Field(default_factory=list, description="Output/Min value lines, raw")
    line: int


class Listing(BaseModel):
    """A printed program: modules in print order (name None when the print had no header)."""

    line: int
    header: Literal["none", "Module main:", "module:"] = "none"
    modules: dict[str, list[Instruction]] = Field(default_factory=dict)
    pass_name: str | None = Field(None, description="MIGRAPHX_TRACE_COMPILE 'Pass:' name")

    @property
    def instructions(self) -> list[Instruction]:
        return [i for body in self.modules.values() for i in body]


class Run(BaseModel):
    """One driver invocation (or one pasted report): what it printed, in order."""

    line: int
    version: str | None = None
    command: str | None = None
    model_file: str | None = None
    complete_s: float | None = None
    messages: list[str] = Field(default_factory=list, description="driver chatter lines")
    environment: dict[str, str] = Field(default_factory=dict)
    listings: list[Listing] = Field(default_factory=list)
    report: PerfReport | None = None
    eval_records: list[EvalRecord] = Field(default_factory=list)
    closed: bool = False

    @property
    def empty(self) -> bool:
        return not (self.listings or self.report or self.eval_records)


class Document(BaseModel):
    """Everything :func:`parse_document` found in one file."""

    runs: list[Run] = Field(default_factory=list)
    unparsed: list[tuple[int, str]] = Field(default_factory=list,
                                            description="(line number, text) not understood")
    elided: list[int] = Field(default_factory=list, description="lines that are '...' elisions "
                              "(or '#' remarks among a block's rows)")
    first_elided: tuple[int, str] | None = None
    wrapped: list[int] = Field(default_factory=list,
                               description="lines joined to the line they continue")
    untitled_summary: int = Field(0, description="Summary rows pasted without 'Summary:'")
    foreign: int = Field(0, description="lines that are no MIGraphX output (prose, markup, "
                                        "shell commands around a paste)")
    first_foreign: tuple[int, str] | None = None
    other_report: tuple[int, str, int] | None = Field(
        None, description="where another tool's report starts among the foreign lines: its "
                          "line, its format, the foreign lines from there on (not read)")
    table_cut: str | None = Field(None, description="where the input ended inside a block "
                                                    "(a cut file or paste), if it did")


def plain(value: Any) -> Any:
    """A parsed value (slotted classes, lists, dicts) as plain dicts and lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def validated(document: object) -> Document:
    """A document from :func:`~.document.parse_document` as the typed, validated model."""
    return Document.model_validate(plain(document))
