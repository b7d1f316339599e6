"""Pydantic types of the small rpd tables read row by row (the event tables go to numpy)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RpdMetadata(BaseModel):
    """``rocpd_metadata`` as tag -> value, with the tags a reader relies on named."""

    model_config = ConfigDict(extra="allow")

    schema_version: str | None = Field(None, description="2 for today's rpd files")
    session_count: str | None = None

