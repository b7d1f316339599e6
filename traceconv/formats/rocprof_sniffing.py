"""How rocprof's outputs are told apart from their first bytes, without importing the
reader: the CSV header's column names, the JSON's opening, the database's tables.

Each kind is known by columns only its file has; the columns the reader needs are checked
when it reads (a file that lacks one is an error naming it, not another format).

>>> kind(b'"Index","KernelName","gpu-id","queue-id","DispatchNs","BeginNs","EndNs"\\n', None)
'v1-kernels'
>>> kind(b'"Domain","Function","Process_Id","Thread_Id","Correlation_Id"\\n', None)
'v3-api'
>>> rocprof(b'{ "traceEvents":[{}\\n,{"ph":"X","ts":"769537350099","dur":"7"', None)
0.95
>>> rocprof(b'{"traceEvents": [{"ph": "X", "ts": 1}]}', None), kind(b"a,b\\n", None)
(0.0, None)
"""

from __future__ import annotations

import csv
import re
from typing import TYPE_CHECKING

from .database_sniffing import rocpd, rocprof_v1_database
from .key_claims import KeyClaim, keys_in_head

if TYPE_CHECKING:
    from ..io import Source

# kind -> the columns that tell it (all present), and the ones that rule it out
CSV_KINDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "v1-kernels": (frozenset({"KernelName", "gpu-id"}), frozenset()),
    "stats": (frozenset({"Name", "Calls", "TotalDurationNs"}), frozenset()),
    # (the earliest rocprofv3 layout has no Dispatch_Id and no Thread_Id)
    "v3-kernels": (frozenset({"Kernel_Name", "Start_Timestamp"}), frozenset({"Counter_Name"})),
    "v3-api": (frozenset({"Domain", "Function"}), frozenset()),
    "v3-copies": (frozenset({"Direction", "Source_Agent_Id", "Destination_Agent_Id"}),
                  frozenset()),
    "v3-counters": (frozenset({"Counter_Name", "Counter_Value"}), frozenset()),
    "v3-allocations": (frozenset({"Operation", "Address", "Allocation_Size"}), frozenset()),
    "v3-scratch": (frozenset({"Operation", "Queue_Id", "Alloc_Flags"}), frozenset()),
    # (agent_info.csv: what each agent of the run is, no events)
    "v3-agent-info": (frozenset({"Logical_Node_Id", "Agent_Type", "Product_Name"}),
                      frozenset()),
}
# rocprof v1's JSON: an empty first event, then numbers as strings
_V1_JSON_OPENING = re.compile(rb'\A\s*\{\s*"traceEvents"\s*:\s*\[\s*\{\s*\}')
_STRING_TIME = re.compile(rb'"ts"\s*:\s*"\d')
_V3_JSON_OPENING = re.compile(rb'\A\s*\{\s*"rocprofiler-sdk-tool"\s*:\s*\[')
# The keys that tell the JSON outputs wherever they come (the registry's ``key_claims``)
ROCPROF_KEYS = (KeyClaim("v1-json", all_of=("traceEvents", "BeginNs"), inner=("BeginNs",)),
                KeyClaim("v3-json", all_of=("rocprofiler-sdk-tool",)))


def header_names(head: bytes) -> list[str]:
    """The column names of a CSV's first line that is not blank (quoted or not, a UTF-8 mark
    ignored).

    >>> header_names(b'\\xef\\xbb\\xbf"Name","Calls"\\r\\n1,2'), header_names(b'\\n\\nName,Calls')
    (['Name', 'Calls'], ['Name', 'Calls'])
    """
    first = head.lstrip(b"\xef\xbb\xbf").lstrip(b"\r\n").split(b"\n", 1)[0].rstrip(b"\r")
    try:
        return next(csv.reader([first.decode("utf-8")]), [])
    except (UnicodeDecodeError, csv.Error):
        return []


def csv_kind(names: list[str]) -> str | None:
    """The rocprof CSV whose header has ``names``, or None.

    >>> csv_kind(["Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage"])
    'stats'
    """
    present = set(names)
    return next((kind for kind, (needed, excluded) in CSV_KINDS.items()
                 if needed <= present and not excluded & present), None)


def kind(head: bytes, source: Source | None) -> str | None:
    """Which rocprof output ``head`` begins: a :data:`CSV_KINDS` key, ``v1-json``,
    ``v1-database``, ``v3-json``, ``v3-database`` (``rocpd``), or None.

    >>> kind(b'{"rocprofiler-sdk-tool":[{"metadata":{"node":{', None)
    'v3-json'
    """
    if rocprof_v1_database(head, source):
        return "v1-database"
    if rocpd(head, source):
        return "v3-database"
    if _V3_JSON_OPENING.match(head):
        return "v3-json"
    if _STRING_TIME.search(head) and (_V1_JSON_OPENING.match(head) or ROCPROF_KEYS[0].holds(
            keys_in_head(head, ROCPROF_KEYS))):   # (the v1 JSON's claim)
        return "v1-json"
    return csv_kind(header_names(head))


def rocprof(head: bytes, source: Source | None) -> float:
    """How sure detection is that ``head`` is a rocprof output (above Chrome's 0.9 for the
    v1 JSON, which is Chrome-like)."""
    return 0.95 if kind(head, source) else 0.0
