"""Typed description of Paddle's old text "Profiling Report" (fluid ``profiler_helper.h``).

One :class:`ReportLog` holds every report found in a log; each :class:`ProfilingReport` is
one ``Profiling Report`` banner with its header, overhead and memcpy summaries and the
Event Summary rows; :class:`MemoryReport` is the ``Memory Profiling Report`` that follows
a group. Times are milliseconds exactly as printed (``None`` for ``nan``/``inf``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

Place = str   # "CPU", "CUDA", "All", "GPU" (2017), "CUDAPlace(0)"...: see places.py


class EventRow(BaseModel):
    """One Event Summary row. ``depth`` is the indentation level (2 spaces per level)."""

    name: str = Field(description="printed name without indentation, e.g. 'conv2d/compute'")
    depth: int = Field(0, ge=0)
    parent: int | None = Field(None, description="index of the enclosing row in the report")
    thread: int | None = Field(None, description="N of a 'threadN::' prefix on this row or an ancestor")
    calls: int
    total_ms: float | None
    cpu_ms: float | None = Field(None, description="'CPU Time (Ratio)' column (Place: All only)")
    cpu_ratio: float | None = None
    gpu_ms: float | None = Field(None, description="'GPU Time (Ratio)' column (Place: All only)")
    gpu_ratio: float | None = None
    min_ms: float | None
    max_ms: float | None
    ave_ms: float | None
    ratio: float | None = Field(description="'Ratio.' column: a fraction (0..1), not percent")
    ratio_text: str | None = Field(None, description="the Ratio. cell as printed: its digits "
                                   "are the precision the shares are judged by")
    reorder_marked: bool = Field(False, description="ratio printed with a '*' (ext/int_reorder)")
    children_left_out: bool = Field(
        False, description="rows were left out (elided, lost, cut) while this row was open")
    line: int | None = Field(None, description="1-based line of the row in the log")


class OverheadSummary(BaseModel):
    """``Total time`` with its Computation / Framework overhead split (ms, ratio in %)."""

    total_ms: float | None
    computation_ms: float | None = None
    computation_ratio_pct: float | None = None
    framework_ms: float | None = None
    framework_ratio_pct: float | None = None
    parallel_executor: bool = Field(False, description="the ParallelExecutor variant")
    elapsed_ms: float | None = None
    accumulated_ms: float | None = None
    lines: dict[str, int] = Field(default_factory=dict,
                                  description="1-based line each value was read from, by field")


class MemcpyRow(BaseModel):
    """``GpuMemcpy`` / ``GpuMemcpyAsync`` / ``GpuMemcpySync`` line of the GpuMemCpy Summary."""

    name: str
    calls: int
    total_ms: float | None
    ratio_pct: float | None
    line: int | None = Field(None, description="1-based line in the log")


class MemoryRow(BaseModel):
    """One row of the Memory Profiling Report (``Place(gpu:0):matmul``...)."""

    event: str
    alloc_calls: int
    alloc_mb: float | None
    free_calls: int
    free_mb: float | None
    line: int | None = Field(None, description="1-based line in the log")


class MemoryReport(BaseModel):
    rows: list[MemoryRow] = Field(default_factory=list)
    line: int = Field(description="1-based line of the banner in the log")
    group: int = Field(0, description="the profiling window it closes")


class ProfilingReport(BaseModel):
    """One ``Profiling Report``: header, optional summaries, the Event Summary rows."""

    line: int = Field(description="1-based line of the banner in the log")
    group: int = Field(0, description="profiling window: merged + per-thread + memory reports")
    merged: bool = Field(False, description="'Note! This Report merge all thread info into one.'")
    place: Place | None = None
    time_unit: str = "ms"
    sorted_by: str | None = None
    overhead: OverheadSummary | None = None
    memcpy: list[MemcpyRow] = Field(default_factory=list)
    has_cpu_gpu_columns: bool = False
    columns: list[str] = Field(default_factory=list,
                               description="Event Summary columns after Event (a paste may "
                                           "cut the header after any of them)")
    implicit: bool = Field(False, description="no banner: the paste started inside a report")
    events: list[EventRow] = Field(default_factory=list)


class ReportLog(BaseModel):
    """Every report group found in one text (a bare report or a whole training log)."""

    reports: list[ProfilingReport] = Field(default_factory=list)
    memory: list[MemoryReport] = Field(default_factory=list)
