"""rocprofv3's memory allocation and scratch memory records (``memory_allocation_trace.csv``,
``scratch_memory_trace.csv``, the rocpd ``rocpd_memory_allocate`` table, which holds both)
paired into memory blocks, with live-bytes counters: one rule for every file.

A record is put in rocpd's words, as rocprofiler-sdk itself does when it writes the
database: a type (``ALLOC``, ``FREE``, ``ASYNC_RECLAIM``...) and a level (``REAL``,
``VIRTUAL``, ``SCRATCH``). The CSV's ``MEMORY_ALLOCATION_ALLOCATE`` is ``ALLOC`` ``REAL``,
``MEMORY_ALLOCATION_VMEM_FREE`` ``FREE`` ``VIRTUAL``, ``SCRATCH_MEMORY_ALLOC`` ``ALLOC``
``SCRATCH``. A ``FREE`` ends the open ``ALLOC`` of its level and address; scratch memory
has no address (rocpd stores 0): it is one buffer per queue, so its ``FREE`` ends the open
``ALLOC`` of its queue. rocprofv3 records no agent on a ``FREE`` (the CSV leaves the cell
empty, rocpd stores NULL), so a block's device is its ``ALLOC``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...model import MemoryBlock
from ...model.block_pairing import BlockPairing
from ...model.builder import TraceBuilder
from ...model.memory import add_live_bytes_counters
from .dispatches import V3, device_name
from .values import address, integer

# the record layout every file is read into (the CSV's column names; Level: rocpd's own)
COLUMNS = ("Operation", "Agent_Id", "Address", "Allocation_Size", "Level", "Queue_Id",
           "Start_Timestamp", "End_Timestamp")
# operation-name prefixes of the CSV files and JSON -> rocpd's level, in rocprofiler-sdk's
# order (memtype_to_db: a VMEM_ operation is VIRTUAL)
_LEVELS = (("MEMORY_ALLOCATION_VMEM_", "VIRTUAL"), ("MEMORY_ALLOCATION_", "REAL"),
           ("SCRATCH_MEMORY_", "SCRATCH"))


def operation(record: Mapping[str, object]) -> tuple[str, str]:
    """The type and level of a record, in rocpd's words (a rocpd row states both).

    >>> operation({"Operation": "MEMORY_ALLOCATION_ALLOCATE"})
    ('ALLOC', 'REAL')
    >>> operation({"Operation": "MEMORY_ALLOCATION_VMEM_FREE"})
    ('FREE', 'VIRTUAL')
    >>> operation({"Operation": "SCRATCH_MEMORY_ASYNC_RECLAIM"})
    ('ASYNC_RECLAIM', 'SCRATCH')
    >>> operation({"Operation": "FREE", "Level": "SCRATCH"})
    ('FREE', 'SCRATCH')
    """
    name, level = str(record.get("Operation", "")), str(record.get("Level") or "")
    if level:
        return name, level
    for prefix, level in _LEVELS:
        if name.startswith(prefix):
            kind = name.removeprefix(prefix)
            return ("ALLOC" if kind == "ALLOCATE" else kind), level
    return name, ""


def add_allocations(trace: TraceBuilder, records: Iterable[Mapping[str, object]]) -> None:
    """A block per ``ALLOC`` (from its end), freed at the start of the next ``FREE`` of its
    level and address (scratch memory: of its queue); frees of no allocation, other
    operations and blocks without a size or beyond int64 are counted.

    >>> t = TraceBuilder()
    >>> add_allocations(t, [
    ...     {"Operation": "MEMORY_ALLOCATION_ALLOCATE", "Agent_Id": "Agent 1",
    ...      "Address": "0x0000000000001000", "Allocation_Size": "64",
    ...      "Start_Timestamp": "10", "End_Timestamp": "12"},
    ...     {"Operation": "MEMORY_ALLOCATION_FREE", "Agent_Id": "", "Address": "0x1000",
    ...      "Allocation_Size": "0", "Start_Timestamp": "30", "End_Timestamp": "31"},
    ...     {"Operation": "SCRATCH_MEMORY_ALLOC", "Agent_Id": "Agent 1", "Queue_Id": "2",
    ...      "Allocation_Size": "4096", "Start_Timestamp": "40", "End_Timestamp": "45"},
    ...     {"Operation": "SCRATCH_MEMORY_FREE", "Agent_Id": "Agent 1", "Queue_Id": "2",
    ...      "Allocation_Size": "0", "Start_Timestamp": "50", "End_Timestamp": "51"}])
    >>> [(b.address, b.size, b.alloc_ns, b.free_ns, b.device, b.pool) for b in t.memory]
    [(4096, 64, 12, 30, 'agent 1', 'REAL'), (0, 4096, 45, 50, 'agent 1', 'SCRATCH')]
    """
    pairs = BlockPairing("rocprof")
    not_read = 0
    timed = [(integer(r.get("Start_Timestamp")), r) for r in records]
    for start, record in sorted(((s, r) for s, r in timed if s is not None),
                                key=lambda pair: pair[0]):
        kind, level = operation(record)
        scratch = level == "SCRATCH"
        place = integer(record.get("Queue_Id")) if scratch else address(record.get("Address"))
        key = (level, place)
        if place is None or kind not in ("ALLOC", "FREE"):
            not_read += 1
            continue
        at = 0 if scratch else place   # (a scratch buffer: offset 0 of its own pool)
        if kind == "ALLOC":
            end, size = integer(record.get("End_Timestamp")), integer(record.get("Allocation_Size"))
            if size is None or not (0 <= at < 2**63 and 0 <= size < 2**63):
                pairs.alloc(key, trace.time(start), None)
                not_read += 1
                continue
            opened = trace.time(end if end is not None else start)
            pairs.alloc(key, opened, _block(record, level, at, size, place, opened, None))
        elif not 0 <= at < 2**63:
            not_read += 1
        elif not pairs.free(key, freed := trace.time(start)):
            pairs.allocated_before(_block(record, level, at, _size(record), place, None, freed))
    not_read += pairs.unread_frees + sum(1 for s, _ in timed if s is None)
    blocks = pairs.blocks
    trace.add_memory_blocks(blocks)
    pairs.count(trace.diagnostics)
    trace.diagnostics.add("rocprof.allocation_not_read", count=not_read)
    if blocks:
        add_live_bytes_counters(trace)


def _block(record: Mapping[str, object], level: str, at: int, size: int, place: int,
           alloc_ns: int | None, free_ns: int | None) -> MemoryBlock:
    """A block at ``at`` of ``level`` (scratch memory: of queue ``place``); ``alloc_ns``
    None: a FREE of memory allocated before the trace."""
    scratch = level == "SCRATCH"
    agent = record.get("Agent_Id")
    return MemoryBlock(at, size, alloc_ns, free_ns,
                       device=device_name(V3, agent)[0] if agent else "", pool=level,
                       category="scratch" if scratch else
                       "allocation" if alloc_ns is not None else "allocated before trace",
                       args={"queue": place} if scratch else {})


def _size(record: Mapping[str, object]) -> int:
    """A FREE's size: rocprofv3 mostly writes 0 there (unknown), kept as the block's size."""
    size = integer(record.get("Allocation_Size"))
    return size if size is not None and 0 <= size < 2**63 else 0
