"""Pydantic types of the small nsys export tables that describe the run (not the events).

Event tables are read straight into numpy columns (:mod:`.events`); these few rows
(export metadata, GPUs, session start) are validated one by one, every field optional: a
schema version that drops or renames a column leaves it None instead of failing the read.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class GpuInfo(BaseModel):
    """One row of ``TARGET_INFO_GPU``."""

    model_config = ConfigDict(extra="ignore")

    id: int
    name: str | None = None
    busLocation: str | None = None
    chipName: str | None = None
    totalMemory: int | None = Field(None, description="bytes")
    memoryBandwidth: int | None = Field(None, description="bytes per second")
    clockRate: int | None = Field(None, description="Hz")
    smCount: int | None = None
    computeMajor: int | None = None
    computeMinor: int | None = None
    uuid: str | None = None


class SessionStart(BaseModel):
    """``TARGET_INFO_SESSION_START_TIME``: the wall clock at the session's time zero."""

    model_config = ConfigDict(extra="ignore")

    utcEpochNs: int | None = None
    utcTime: str | None = None
    localTime: str | None = None


class NsysExport(BaseModel):
    """What a reader takes from an export besides its events: ``META_DATA_EXPORT`` (called
    ``EXPORT_META_DATA`` before schema 3.x) as name/value pairs, the GPUs and the session
    start."""

    export: dict[str, str] = Field(default_factory=dict, description=(
        "EXPORT_PRODUCT_VERSION, EXPORT_SCHEMA_VERSION, ... as written"))
    gpus: list[GpuInfo] = Field(default_factory=list)
    session_start: SessionStart | None = None
