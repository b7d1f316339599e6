"""rocprofv3 ``--output-format json`` (``{"rocprofiler-sdk-tool": [{...}, ...]}``, one
document per profiled process): its buffer records put into the same tables as the CSV
files (:mod:`.v3`), so they read the same way.

=====================================  ===============================================
record                                 becomes
=====================================  ===============================================
``kernel_dispatch``                    a dispatch (agent by its ``logical_node_id``,
                                       queue handle, name from ``kernel_symbols``: the
                                       one the CSV and rocpd give, :func:`kernel_name`)
``agents``                             their product and name as labels of the
                                       device's process (``agent 2``)
``hip_api``, ``hsa_api``,              a call on its thread of the document's ``pid``
``marker_api``, ``rccl_api``           (name from ``strings.buffer_records``)
other buffer and callback records      counted (``rocprof.record_not_read``)
=====================================  ===============================================
"""

from __future__ import annotations

from typing import Any

from ...errors import InputError
from ...io import Source
from .csv_table import Table
from .v3 import AGENT_COLUMNS, REQUIRED, Part

TOOL = "rocprofiler-sdk-tool"
API_RECORDS = ("hip_api", "hsa_api", "marker_api", "rccl_api")
_KERNEL_COLUMNS = (*REQUIRED["v3-kernels"], "Correlation_Id", "Dispatch_Id", "Kernel_Id",
                   "Thread_Id", "Private_Segment_Size", "Group_Segment_Size",
                   "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z",
                   "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z")
_API_COLUMNS = ("Domain", "Function", "Thread_Id", "Start_Timestamp", "End_Timestamp",
                "Process_Id", "Correlation_Id")


def load_parts(source: Source) -> tuple[list[Part], dict[str, int]]:
    """The kernel and API tables of every process document, with its agents; ``{record
    kind: count}`` of the records not read.

    >>> parts, skipped = load_parts(Source("tests/data/rocprof/tracelens_908_cut.rocprofv3.json.gz"))
    >>> [(p.kind, len(p.table.rows)) for p in parts], skipped
    ([('v3-kernels', 300), ('v3-agents', 10)], {})
    """
    document = source.read_json()
    processes = document.get(TOOL) if isinstance(document, dict) else None
    if not isinstance(processes, list):
        raise InputError(f"no {TOOL!r} list", file=source.name, location="$")
    kernels: list[list[str]] = []
    calls: list[list[str]] = []
    agents: list[list[str]] = []
    skipped: dict[str, int] = {}
    for at, process in enumerate(processes):
        where = f"$.{TOOL}[{at}]"
        if not isinstance(process, dict):
            raise InputError("a process document that is not an object", file=source.name,
                             location=where)
        try:
            kernels += _kernel_rows(process)
            calls += _call_rows(process)
            agents += [[str(a.get("logical_node_id", a["id"]["handle"])), str(a.get("name", "")),
                        str(a.get("product_name", ""))] for a in process.get("agents") or ()]
        except (KeyError, TypeError, IndexError, AttributeError) as exc:
            raise InputError(f"a record without its field {exc}", file=source.name,
                             location=where) from None
        for group in ("buffer_records", "callback_records"):
            for kind, records in (process.get(group) or {}).items():
                if kind != "kernel_dispatch" and kind not in API_RECORDS and records:
                    skipped[kind] = skipped.get(kind, 0) + len(records)
    parts = [Part("v3-kernels", Table(source.name, list(_KERNEL_COLUMNS), kernels)),
             Part("v3-api", Table(source.name, list(_API_COLUMNS), calls))]
    parts = [p for p in parts if p.table.rows]
    if parts:   # (what the agents are matters only to the records read)
        parts.append(Part("v3-agents", Table(source.name, list(AGENT_COLUMNS), agents)))
    return parts, skipped


def _kernel_rows(process: dict[str, Any]) -> list[list[str]]:
    agents = {a["id"]["handle"]: a.get("logical_node_id", a["id"]["handle"])
              for a in process.get("agents") or ()}
    names = {k["kernel_id"]: kernel_name(k) for k in process.get("kernel_symbols") or ()}
    rows = []
    for record in (process.get("buffer_records") or {}).get("kernel_dispatch") or ():
        info = record["dispatch_info"]
        agent = info["agent_id"]["handle"]
        group, grid = info.get("workgroup_size") or {}, info.get("grid_size") or {}
        rows.append([str(v) for v in (
            agents.get(agent, agent), info["queue_id"]["handle"],
            names.get(info["kernel_id"], f"kernel {info['kernel_id']}"),
            record["start_timestamp"], record["end_timestamp"],
            record["correlation_id"]["internal"], info.get("dispatch_id", ""), info["kernel_id"],
            record.get("thread_id", ""), info.get("private_segment_size", ""),
            info.get("group_segment_size", ""), *(group.get(a, "") for a in "xyz"),
            *(grid.get(a, "") for a in "xyz"))])
    return rows


def kernel_name(symbol: dict[str, Any]) -> str:
    """A kernel's name as rocprofv3 writes it in the CSV's ``Kernel_Name`` and rocpd's
    ``display_name``: ``formatted_kernel_name`` (demangled, without ``.kd``; shortened under
    ``--truncate-kernels``). A symbol without it falls back on ``demangled_kernel_name``,
    then on the symbol itself (``kernel_name``). (``truncated_kernel_name``, written with
    the other two, drops the arguments: never the name.)

    >>> kernel_name({"kernel_name": "_Z7vecCopyPdS_S_ii.kd",
    ...              "formatted_kernel_name": "vecCopy(double*, double*, double*, int, int)"})
    'vecCopy(double*, double*, double*, int, int)'
    >>> kernel_name({"kernel_name": "_Z1fv.kd"})
    '_Z1fv.kd'
    """
    return next((str(symbol[k]) for k in ("formatted_kernel_name", "demangled_kernel_name",
                                          "kernel_name") if symbol.get(k)), "")


def _call_rows(process: dict[str, Any]) -> list[list[str]]:
    kinds = (process.get("strings") or {}).get("buffer_records") or []
    pid = (process.get("metadata") or {}).get("pid", "")
    rows = []
    for name in API_RECORDS:
        for record in (process.get("buffer_records") or {}).get(name) or ():
            kind, operation = record["kind"], record["operation"]
            domain = kinds[kind] if 0 <= kind < len(kinds) else {}
            operations = domain.get("operations") or []
            function = (operations[operation] if 0 <= operation < len(operations)
                        else f"operation {operation}")
            rows.append([str(v) for v in (
                domain.get("kind", name.upper()), function, record["thread_id"],
                record["start_timestamp"], record["end_timestamp"], pid,
                record["correlation_id"]["internal"])])
    return rows
