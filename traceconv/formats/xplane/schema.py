"""The ``XSpace`` document (``xplane.proto``) as pydantic models, for its JSON Schema.

The reader decodes the protobuf with the field table of :mod:`.proto` (same field names);
these models describe the document for ``schemas/xplane_xspace.schema.json`` and validate
one in its JSON form (``MessageToDict`` with ``preserving_proto_field_name``).

>>> XSpaceDocument.model_validate({"planes": [{"name": "/host:CPU", "lines": [
...     {"id": 7, "name": "main", "timestamp_ns": 100, "events": [
...         {"metadata_id": 1, "offset_ps": 5000, "duration_ps": 2000}]}]}]}).planes[0].name
'/host:CPU'
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

_INT = int | str   # 64-bit integers are strings in protobuf's JSON mapping


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")


class XStat(_Message):
    """One stat: ``metadata_id`` names it (``XStatMetadata``); one value is set."""

    metadata_id: _INT = 0
    double_value: float | None = None
    uint64_value: _INT | None = None
    int64_value: _INT | None = None
    str_value: str | None = None
    bytes_value: str | None = Field(None, description="base64 (a serialized proto)")
    ref_value: _INT | None = Field(None, description="id of the XStatMetadata whose name "
                                   "is the value")


class XEvent(_Message):
    metadata_id: _INT = 0
    offset_ps: _INT | None = Field(None, description="from the line's timestamp_ns")
    num_occurrences: _INT | None = Field(None, description="aggregated events (no time)")
    duration_ps: _INT = 0
    stats: list[XStat] = []


class XLine(_Message):
    id: _INT = 0
    display_id: _INT = 0
    name: str = ""
    display_name: str = ""
    timestamp_ns: _INT = 0
    duration_ps: _INT = 0
    events: list[XEvent] = []


class XEventMetadata(_Message):
    id: _INT = 0
    name: str = ""
    display_name: str = ""
    metadata: str = Field("", description="base64 (a serialized proto, e.g. an HloProto)")
    stats: list[XStat] = []
    child_id: list[_INT] = []


class XStatMetadata(_Message):
    id: _INT = 0
    name: str = ""
    description: str = ""


class XPlane(_Message):
    id: _INT = 0
    name: str = ""
    lines: list[XLine] = []
    event_metadata: dict[str, XEventMetadata] = {}
    stat_metadata: dict[str, XStatMetadata] = {}
    stats: list[XStat] = []


class XSpaceDocument(_Message):
    """``tensorflow.profiler.XSpace``: the planes of one host."""

    planes: list[XPlane] = []
    errors: list[str] = []
    warnings: list[str] = []
    hostnames: list[str] = []
