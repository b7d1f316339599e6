"""The ``XSpace`` protobuf (``tsl/profiler/protobuf/xplane.proto``) as a field table.

Transcribed field numbers only (no generated code): maps (``event_metadata``,
``stat_metadata``) are written on the wire as repeated ``{key = 1, value = 2}`` entries, so
they are declared that way. Decoded by :mod:`traceconv.formats.protowire` (lines, events and
stats when the reader reaches them).
"""

from __future__ import annotations

from ..protowire import Field, message_classes
from ..protowire.counting import RowPeak

MESSAGES: dict[str, list[Field]] = {
    "XStat": [("metadata_id", 1, "int64"), ("double_value", 2, "double"),
              ("uint64_value", 3, "uint64"), ("int64_value", 4, "int64"),
              ("str_value", 5, "string"), ("bytes_value", 6, "bytes"),
              ("ref_value", 7, "uint64")],
    "XEvent": [("metadata_id", 1, "int64"), ("offset_ps", 2, "int64"),
               ("duration_ps", 3, "int64"), ("stats", 4, "repeated XStat"),
               ("num_occurrences", 5, "int64")],
    "XLine": [("id", 1, "int64"), ("name", 2, "string"), ("timestamp_ns", 3, "int64"),
              ("events", 4, "repeated XEvent"), ("duration_ps", 9, "int64"),
              ("display_id", 10, "int64"), ("display_name", 11, "string")],
    "XEventMetadata": [("id", 1, "int64"), ("name", 2, "string"), ("metadata", 3, "bytes"),
                       ("display_name", 4, "string"), ("stats", 5, "repeated XStat"),
                       ("child_id", 6, "repeated int64")],
    "XStatMetadata": [("id", 1, "int64"), ("name", 2, "string"), ("description", 3, "string")],
    "EventMetadataEntry": [("key", 1, "int64"), ("value", 2, "XEventMetadata")],
    "StatMetadataEntry": [("key", 1, "int64"), ("value", 2, "XStatMetadata")],
    "XPlane": [("id", 1, "int64"), ("name", 2, "string"), ("lines", 3, "repeated XLine"),
               ("event_metadata", 4, "repeated EventMetadataEntry"),
               ("stat_metadata", 5, "repeated StatMetadataEntry"),
               ("stats", 6, "repeated XStat")],
    "XSpace": [("planes", 1, "repeated XPlane"), ("errors", 2, "repeated string"),
               ("warnings", 3, "repeated string"), ("hostnames", 4, "repeated string")],
}
_CLASSES = message_classes("xprof", MESSAGES)
XSpace = _CLASSES["XSpace"]
XPlane = _CLASSES["XPlane"]
XStat = _CLASSES["XStat"]
# the peak bytes per element of the repeated fields whose elements become rows (the
# smallest element of each kind, a million read and converted to .pftrace; a little under
# the measured): traceconv.memory_check counts them before a big file is read
ROW_PEAK = RowPeak(XSpace, {"planes.lines.events": 160})
