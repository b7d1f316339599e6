"""rocprofv3 ``rocpd`` databases for the tests, made from real rocprofv3 CSV rows.

No public ``rocpd`` file exists (see ``../shared/samples/PROVENANCE_formats.md``), so the
tests store the rows of a real kernel trace and HIP API trace (and of memory allocation and
scratch memory traces, and a JSON's agents) the way rocprofv3 7.x does:
the tables and columns of schema version 3 as ROCm/rocprofiler-sdk publishes it
(``source/share/rocprofiler-sdk-rocpd/rocpd_tables.sql``), each name ending with a uuid,
written here with only the columns the reader or the tests look at.
"""

from __future__ import annotations

import csv
import sqlite3
from pathlib import Path

UUID = "_00000000_0000_7000_8000_00c0ffee0001"
_TABLES = {
    "rocpd_metadata": '"id" INTEGER PRIMARY KEY, "tag" TEXT, "value" TEXT',
    "rocpd_string": '"id" INTEGER PRIMARY KEY, "guid" TEXT, "string" TEXT UNIQUE',
    "rocpd_info_process": '"id" INTEGER PRIMARY KEY, "nid" INTEGER, "pid" INTEGER',
    "rocpd_info_thread": '"id" INTEGER PRIMARY KEY, "nid" INTEGER, "pid" INTEGER, "tid" INTEGER',
    "rocpd_info_agent": ('"id" INTEGER PRIMARY KEY, "nid" INTEGER, "pid" INTEGER, "type" TEXT, '
                         '"absolute_index" INTEGER, "logical_index" INTEGER, "type_index" INTEGER, '
                         '"name" TEXT, "product_name" TEXT'),
    "rocpd_info_queue": '"id" INTEGER PRIMARY KEY, "nid" INTEGER, "pid" INTEGER, "name" TEXT',
    "rocpd_info_kernel_symbol": ('"id" INTEGER PRIMARY KEY, "nid" INTEGER, "pid" INTEGER, '
                                 '"kernel_name" TEXT, "display_name" TEXT'),
    "rocpd_event": ('"id" INTEGER PRIMARY KEY, "category_id" INTEGER, '
                    '"correlation_id" INTEGER'),
    "rocpd_region": ('"id" INTEGER PRIMARY KEY, "nid" INTEGER, "pid" INTEGER, "tid" INTEGER, '
                     '"start" BIGINT, "end" BIGINT, "name_id" INTEGER, "event_id" INTEGER'),
    "rocpd_kernel_dispatch": (
        '"id" INTEGER PRIMARY KEY, "nid" INTEGER, "pid" INTEGER, "tid" INTEGER, '
        '"agent_id" INTEGER, "kernel_id" INTEGER, "dispatch_id" INTEGER, "queue_id" INTEGER, '
        '"stream_id" INTEGER, "start" BIGINT, "end" BIGINT, "private_segment_size" INTEGER, '
        '"group_segment_size" INTEGER, "workgroup_size_x" INTEGER, "workgroup_size_y" INTEGER, '
        '"workgroup_size_z" INTEGER, "grid_size_x" INTEGER, "grid_size_y" INTEGER, '
        '"grid_size_z" INTEGER, "event_id" INTEGER'),
    "rocpd_memory_allocate": ('"id" INTEGER PRIMARY KEY, "agent_id" INTEGER, "type" TEXT, '
                              '"level" TEXT, "queue_id" INTEGER, "start" BIGINT, "end" BIGINT, '
                              '"address" INTEGER, "size" INTEGER'),
    "rocpd_info_pmc": '"id" INTEGER PRIMARY KEY, "nid" INTEGER, "pid" INTEGER, "name" TEXT',
    "rocpd_pmc_event": ('"id" INTEGER PRIMARY KEY, "event_id" INTEGER, "pmc_id" INTEGER, '
                        '"value" REAL'),
}


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


# rocprofiler-sdk's operation names -> rocpd's type and level (what its generateRocpd.cpp
# stores: memtype_to_db), written out here from that source, not taken from the reader
ROCPD_OPERATIONS = {
    "MEMORY_ALLOCATION_ALLOCATE": ("ALLOC", "REAL"), "MEMORY_ALLOCATION_FREE": ("FREE", "REAL"),
    "MEMORY_ALLOCATION_VMEM_ALLOCATE": ("ALLOC", "VIRTUAL"),
    "MEMORY_ALLOCATION_VMEM_FREE": ("FREE", "VIRTUAL"),
    "SCRATCH_MEMORY_ALLOC": ("ALLOC", "SCRATCH"), "SCRATCH_MEMORY_FREE": ("FREE", "SCRATCH"),
}


def build(path: Path, kernel_trace: Path, hip_trace: Path | None = None, *,
          counters: Path | None = None, allocations: tuple[Path, ...] = (),
          agents: list[dict] | None = None, version: str = "3") -> None:
    """A rocpd database at ``path`` holding the rows of the CSV files of one process run: a
    kernel trace, and its HIP (or HSA) API trace or counter collection; the rows of
    memory allocation and scratch memory CSV files; ``agents`` as a rocprofv3 JSON of the
    run lists them (``logical_node_id``, ``name``, ``product_name``)."""
    db = sqlite3.connect(path)
    for table, columns in _TABLES.items():
        db.execute(f'CREATE TABLE "{table}{UUID}" ({columns})')
    strings: dict[str, int] = {}

    def string(text: str) -> int:
        if text not in strings:
            strings[text] = len(strings) + 1
            db.execute(f'INSERT INTO "rocpd_string{UUID}" VALUES (?, ?, ?)',
                       (strings[text], UUID, text))
        return strings[text]

    def insert(table: str, *values: object) -> int:
        cursor = db.execute(f'INSERT INTO "{table}{UUID}" VALUES '
                            f'({", ".join("?" * len(values))})', values)
        return int(cursor.lastrowid or 0)

    def number(agent: str) -> int:
        return int(agent.split()[-1])

    insert("rocpd_metadata", 1, "schema_version", version)
    calls, kernels = rows(hip_trace) if hip_trace else [], rows(kernel_trace)
    samples = rows(counters) if counters else []
    memory = [r for p in allocations for r in rows(p)]
    pid = int((calls or samples)[0]["Process_Id"]) if calls or samples else 1
    process = insert("rocpd_info_process", None, 1, pid)
    threads: dict[str, int] = {}
    for tid in sorted({r["Thread_Id"] for r in calls + kernels + samples}):
        threads[tid] = insert("rocpd_info_thread", None, 1, process, int(tid))
    named = {a["logical_node_id"]: a for a in agents or ()}
    agent_ids = {}
    for logical in sorted({number(r["Agent_Id"]) for r in kernels + memory if r["Agent_Id"]}
                          | named.keys()):
        about = named.get(logical, {})
        agent_ids[logical] = insert("rocpd_info_agent", None, 1, process, "GPU", logical + 1,
                                    logical, 0, about.get("name"), about.get("product_name"))
    queues = {q: insert("rocpd_info_queue", int(q), 1, process, f"queue {q}")
              for q in sorted({r["Queue_Id"] for r in kernels})}
    symbols: dict[str, int] = {}
    for r in kernels:
        if r["Kernel_Id"] not in symbols:
            symbols[r["Kernel_Id"]] = insert("rocpd_info_kernel_symbol", int(r["Kernel_Id"]), 1,
                                             process, r["Kernel_Name"], r["Kernel_Name"])
    for r in calls:
        event = insert("rocpd_event", None, string(r["Domain"]), int(r["Correlation_Id"]))
        insert("rocpd_region", None, 1, process, threads[r["Thread_Id"]],
               int(r["Start_Timestamp"]), int(r["End_Timestamp"]), string(r["Function"]), event)
    events: dict[str, int] = {}
    for r in kernels:
        event = insert("rocpd_event", None, string("KERNEL_DISPATCH"), int(r["Correlation_Id"]))
        events[r["Dispatch_Id"]] = event
        insert("rocpd_kernel_dispatch", None, 1, process, threads[r["Thread_Id"]],
               agent_ids[number(r["Agent_Id"])], symbols[r["Kernel_Id"]], int(r["Dispatch_Id"]),
               queues[r["Queue_Id"]], int(r.get("Stream_Id", 0)), int(r["Start_Timestamp"]),
               int(r["End_Timestamp"]), int(r.get("Scratch_Size", r.get("Private_Segment_Size"))),
               int(r.get("LDS_Block_Size", r.get("Group_Segment_Size"))),
               *(int(r[f"Workgroup_Size_{a}"]) for a in "XYZ"),
               *(int(r[f"Grid_Size_{a}"]) for a in "XYZ"), event)
    pmcs: dict[str, int] = {}
    for r in samples:
        if r["Counter_Name"] not in pmcs:
            pmcs[r["Counter_Name"]] = insert("rocpd_info_pmc", None, 1, process, r["Counter_Name"])
        insert("rocpd_pmc_event", None, events[r["Dispatch_Id"]], pmcs[r["Counter_Name"]],
               float(r["Counter_Value"]))
    # as generateRocpd.cpp stores them: an agent on an ALLOC only, scratch memory with
    # address 0 and its queue, other allocations on the default queue 0
    for r in memory:
        kind, level = ROCPD_OPERATIONS[r["Operation"]]
        insert("rocpd_memory_allocate", None,
               agent_ids[number(r["Agent_Id"])] if kind == "ALLOC" else None, kind, level,
               int(r.get("Queue_Id", 0)), int(r["Start_Timestamp"]), int(r["End_Timestamp"]),
               int(r.get("Address", "0"), 16), int(r["Allocation_Size"]))
    # (made up: a free of an address allocated before the trace, as rocprofv3 stores one)
    last = int(kernels[-1]["End_Timestamp"])
    insert("rocpd_memory_allocate", None, None, "FREE", "REAL", 0, last + 2000, last + 2500,
           0x7F0000100000, 0)
    db.commit()
    db.close()
