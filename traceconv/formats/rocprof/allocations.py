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

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import numpy as np

from ...model.block_pairing import key_codes, pair_events
from ...model.block_table import coded_column
from ...model.builder import TraceBuilder
from ...model.memory import add_live_bytes_counters
from .csv_table import Table
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


def add_allocations(trace: TraceBuilder, tables: Sequence[Table]) -> None:
    """A block per ``ALLOC`` (from its end), freed at the start of the next ``FREE`` of its
    level and address (scratch memory: of its queue), paired as columns by the rule of
    every allocator log (:func:`~traceconv.model.block_pairing.pair_events`); frees of
    no allocation, other operations and allocations that state no size are counted here,
    blocks whose address or size is no number int64 holds by the builder's rule
    (``model.memory_block_unreadable``).

    >>> t = TraceBuilder()
    >>> add_allocations(t, [Table("m.csv", list(COLUMNS), [
    ...     ["MEMORY_ALLOCATION_ALLOCATE", "Agent 1", "0x0000000000001000", "64", "", "",
    ...      "10", "12"],
    ...     ["MEMORY_ALLOCATION_FREE", "", "0x1000", "0", "", "", "30", "31"],
    ...     ["SCRATCH_MEMORY_ALLOC", "Agent 1", "", "4096", "", "2", "40", "45"],
    ...     ["SCRATCH_MEMORY_FREE", "Agent 1", "", "0", "", "2", "50", "51"]])])
    >>> [(b.address, b.size, b.alloc_ns, b.free_ns, b.device, b.pool) for b in t.memory]
    [(4096, 64, 12, 30, 'agent 1', 'REAL'), (0, 4096, 45, 50, 'agent 1', 'SCRATCH')]
    """
    if _add_blocks(trace, tables):   # (its records' columns gone: the counters need memory)
        add_live_bytes_counters(trace)


def _add_blocks(trace: TraceBuilder, tables: Sequence[Table]) -> bool:
    """Add the blocks of the records of ``tables`` (see :func:`add_allocations`); whether
    there were any."""
    def cells(name: str, parse: Callable[[object], object] = lambda cell: cell) -> list:
        return [parse(cell) for table in tables for cell in table.column(name)]

    starts = cells("Start_Timestamp", integer)
    kinds, levels = _operations(tables)
    scratch = [level == "SCRATCH" for level in levels]
    places = [queue if on_queue else at for queue, at, on_queue in zip(
        cells("Queue_Id", integer), cells("Address", address), scratch, strict=True)]
    # the records paired: timed, placed ALLOCs and FREEs; a number int64 cannot hold is
    # the builder's to judge (model.memory_block_unreadable), once the records are paired
    events = sorted((row for row, (start, kind, place) in enumerate(zip(
        starts, kinds, places, strict=True))
        if start is not None and place is not None and kind in ("ALLOC", "FREE")),
        key=starts.__getitem__)
    allocates = np.array([kinds[row] == "ALLOC" for row in events], dtype=bool)
    ends = cells("End_Timestamp", integer)
    times = _times(trace, [ends[row] if allocating and ends[row] is not None else starts[row]
                           for row, allocating in zip(events, allocates.tolist(),
                                                      strict=True)])
    del ends
    paired = pair_events((key_codes([levels[row] for row in events]),
                          key_codes([places[row] for row in events])), allocates)
    paired.count(trace.diagnostics, "rocprof")
    # a size as stated: a number, else its text (the builder's to judge); None: no size
    sizes = cells("Allocation_Size", _size)
    # an ALLOC that states no size (an older scratch file has no such column) ends the open
    # block of its place, but neither its block nor the free ending it is read
    unstated = allocates & np.array([sizes[row] is None for row in events], dtype=bool)
    trace.diagnostics.add("rocprof.allocation_not_read", count=len(starts) - len(events)
                          + int(np.count_nonzero(unstated)) + paired.frees_ending(unstated))
    blocks = paired.block_events()
    blocks = blocks[~unstated[blocks]]
    rows = [events[k] for k in blocks.tolist()]
    alloc_ns, free_ns = paired.block_times(times, blocks)
    on_queue = [scratch[row] for row in rows]
    block_allocates = paired.allocates[blocks]
    agents, agent_of = coded_column(  # (a few distinct cells: not held one per record)
        cell for table in tables for cell in table.column("Agent_Id"))
    trace.add_memory_columns(
        {"address": np.array([0 if queue else places[row] for row, queue in zip(
            rows, on_queue, strict=True)], dtype=object),
         # (a FREE that states no size: the block from the start has 0 bytes)
         "size": np.array([0 if (size := sizes[row]) is None else size for row in rows],
                          dtype=object),
         "alloc_ns": alloc_ns, "free_ns": free_ns},
        {"device": coded_column(_device(agents[agent]) for agent in agent_of[rows].tolist()),
         "pool": coded_column(levels[row] for row in rows),
         "category": coded_column(
             "scratch" if queue else "allocation" if allocating else "allocated before trace"
             for queue, allocating in zip(on_queue, block_allocates.tolist(), strict=True))},
        [{"queue": places[row]} if queue else None for row, queue in zip(
            rows, on_queue, strict=True)])
    return bool(rows)


def _size(cell: object) -> object:
    """A size cell as the builder takes it: the integer it states, else its text; None
    when it states nothing.

    >>> _size("64"), _size(" "), _size(None), _size("0x40"), _size(str(2**64)) == 2**64
    (64, None, None, '0x40', True)
    """
    number = integer(cell)
    if number is not None:
        return number
    return None if cell is None or not str(cell).strip() else cell


@lru_cache(maxsize=1024)   # (a few agents, named on every record)
def _device(agent: object) -> str:
    """The device a block's agent cell names (an empty cell: none)."""
    return device_name(V3, agent)[0] if agent else ""


def _operations(tables: Sequence[Table]) -> tuple[list[str], list[str]]:
    """Per record, its type and level (:func:`operation`), worked out once per distinct
    pair of cells."""
    found: dict[tuple[object, object], tuple[str, str]] = {}
    pairs = [found.get(cells) or found.setdefault(cells, operation(
        {"Operation": cells[0], "Level": cells[1]}))
        for table in tables
        for cells in zip(table.column("Operation"), table.column("Level"), strict=True)]
    return [kind for kind, _ in pairs], [level for _, level in pairs]


def _times(trace: TraceBuilder, values: list[int]) -> np.ndarray:
    """``values`` (ints of any size) within the trace's time range (:meth:`TraceBuilder.time`)."""
    try:
        return trace.times(np.array(values, dtype=np.int64))
    except OverflowError:   # (beyond int64: one by one)
        return np.array([trace.time(value) for value in values], dtype=np.int64)
