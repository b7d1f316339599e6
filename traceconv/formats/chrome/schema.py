"""Pydantic description of a Chrome Trace Event document (the JSON Schema in ``schemas/``).

The reader does not build these objects per event (too slow for millions of events); they
document the fields it understands and validate small documents in tests and ``check``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Phase = Literal["X", "B", "E", "i", "I", "R", "C", "b", "e", "n", "s", "t", "f", "M",
                "S", "T", "p", "F", "N", "O", "D", "P", "V", "v", "c", "(", ")"]


class ChromeTraceEvent(BaseModel):
    """One event of ``traceEvents``; unknown keys are kept."""

    model_config = ConfigDict(extra="allow")

    ph: Phase = Field(description="phase: X complete, B/E begin/end, i/I instant, C counter, "
                                  "b/e/n async, s/t/f flow, M metadata (others are not modelled)")
    name: str | None = None
    cat: str | None = Field(None, description="comma-separated categories")
    ts: float | None = Field(None, description="timestamp, µs (Paddle timeline.py: ns)")
    dur: float | None = Field(None, description="X duration, µs")
    pid: int | str | None = Field(None, description="process id; Kineto GPU events: device index")
    tid: int | str | None = Field(None, description="thread id; Kineto GPU events: stream id")
    id: int | str | None = Field(None, description="async / flow id")
    id2: dict[str, int | str] | None = Field(None, description="scoped id: {local|global}")
    bp: Literal["e"] | None = Field(None, description="flow binding point: enclosing slice")
    s: Literal["g", "p", "t"] | None = Field(None, description="instant scope")
    bind_id: int | str | None = None
    flow_in: bool | None = None
    flow_out: bool | None = None
    args: dict[str, Any] | None = None


class ChromeTraceDocument(BaseModel):
    """The object form of a Chrome trace, with the keys PyTorch/Kineto and Paddle add."""

    model_config = ConfigDict(extra="allow")

    traceEvents: list[ChromeTraceEvent | dict[str, Any]]
    displayTimeUnit: Literal["ms", "ns"] | None = Field(
        None, description="display hint only; ts/dur are always µs")
    schemaVersion: int | str | None = None
    baseTimeNanoseconds: int | None = Field(
        None, description="epoch ns that ts is relative to (Kineto since 2024)")
    deviceProperties: list[dict[str, Any]] | None = None
    distributedInfo: dict[str, Any] | None = None
    traceName: str | None = None
