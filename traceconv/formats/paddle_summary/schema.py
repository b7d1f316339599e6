"""Typed description of the new Paddle profiler's text output.

``Profiler.summary()`` prints titled tables (Device, Overview, Model, Distribution,
Operator, Kernel, Memory Manipulation, UserDefined, Memory Summary - <Place>); a
``timer_only`` run prints a ``Perf Summary`` and ``step_info()`` lines. Cells are kept as
printed strings keyed by their column header; the reader interprets the columns it knows.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class SummaryRow(BaseModel):
    name: str
    depth: int = Field(0, ge=0, description="indentation level (2 spaces per level)")
    parent: int | None = Field(None, description="index of the enclosing row in the table")
    thread: str | None = Field(None, description="'All threads merged' or an OS thread id")
    cells: dict[str, str] = Field(description="column header → printed cell")
    line: int
    children_left_out: bool = Field(
        False, description="rows were left out (elided, lost, cut) while this row was open")


class SummaryTable(BaseModel):
    title: str = Field(description="e.g. 'Operator Summary', 'Memory Summary - Place(cpu)'")
    line: int
    time_unit: str | None = None
    notes: dict[str, str] = Field(default_factory=dict,
                                  description="'Peak Allocated Memory' and similar lines")
    headers: list[list[str]] = Field(default_factory=list)
    rows: list[SummaryRow] = Field(default_factory=list)


class PerfSummary(BaseModel):
    """``Perf Summary`` of a ``timer_only`` run (times in ``time_unit``)."""

    line: int
    reader_ratio_pct: float | None = None
    time_unit: str | None = None
    ips_unit: str | None = None
    metrics: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="reader_cost / batch_cost / ips → avg, max, min")


class StepInfo(BaseModel):
    """One ``step_info()`` line: `` reader_cost: 0.02409 s batch_cost: 0.10086 s ips: ...``."""

    line: int
    reader_cost: float
    batch_cost: float
    unit: str
    ips: float | None = None
    ips_unit: str | None = None


class SummaryDocument(BaseModel):
    tables: list[SummaryTable] = Field(default_factory=list)
    perf: list[PerfSummary] = Field(default_factory=list)
    steps: list[StepInfo] = Field(default_factory=list)
