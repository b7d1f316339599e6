"""Memory allocations (rocprofv3's memory allocation records: ``ALLOC`` / ``FREE`` with an
address, a size and an agent) paired into memory blocks, with live-bytes counters."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...model import MemoryBlock
from ...model.builder import TraceBuilder
from ...model.memory import add_live_bytes_counters
from .dispatches import V3, device_name
from .values import integer

COLUMNS = ("Operation", "Agent_Id", "Address", "Allocation_Size", "Level", "Start_Timestamp",
           "End_Timestamp")


def add_allocations(trace: TraceBuilder, records: Iterable[Mapping[str, object]]) -> None:
    """A block per ``ALLOC`` (from its end), freed at the start of the next ``FREE`` of its
    agent and address; frees of no allocation, other operations and blocks beyond int64 are
    counted.

    >>> t = TraceBuilder()
    >>> add_allocations(t, [
    ...     {"Operation": "ALLOC", "Agent_Id": "1", "Address": "4096", "Allocation_Size": "64",
    ...      "Level": "REAL", "Start_Timestamp": "10", "End_Timestamp": "12"},
    ...     {"Operation": "FREE", "Agent_Id": "1", "Address": "4096", "Allocation_Size": "0",
    ...      "Level": "REAL", "Start_Timestamp": "30", "End_Timestamp": "31"}])
    >>> b = t.memory[0]; (b.address, b.size, b.alloc_ns, b.free_ns, b.device)
    (4096, 64, 12, 30, 'agent 1')
    """
    open_blocks: dict[tuple[str, int], MemoryBlock] = {}
    blocks: list[MemoryBlock] = []
    unpaired = other = outside = 0
    timed = [(integer(r.get("Start_Timestamp")), r) for r in records]
    for start, record in sorted(((s, r) for s, r in timed if s is not None),
                                key=lambda pair: pair[0]):
        operation = str(record.get("Operation", ""))
        device, _ = device_name(V3, record.get("Agent_Id", ""))
        address, size = integer(record.get("Address")), integer(record.get("Allocation_Size"))
        if address is None or operation not in ("ALLOC", "FREE"):
            other += 1
        elif operation == "ALLOC":
            end = integer(record.get("End_Timestamp"))
            if size is None or not (0 <= address < 2**63 and 0 <= size < 2**63):
                outside += 1
                continue
            block = MemoryBlock(address, size, trace.time(end if end is not None else start),
                                None, device=device, pool=str(record.get("Level", "")),
                                category="allocation")
            open_blocks[(device, address)] = block
            blocks.append(block)
        elif (found := open_blocks.pop((device, address), None)) is not None:
            found.free_ns = trace.time(start)
        else:
            unpaired += 1
    other += sum(1 for s, _ in timed if s is None)
    trace.add_memory_blocks(blocks)
    diagnostics = trace.diagnostics
    diagnostics.add("rocprof.free_without_allocation", count=unpaired)
    diagnostics.add("rocprof.allocation_not_read", count=other + outside)
    if blocks:
        add_live_bytes_counters(trace)
