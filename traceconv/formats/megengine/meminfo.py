"""Reader of ``StaticMemoryInfo.json`` (``--get-static-mem-info``): the static memory plan.

Addresses are *logical* offsets in the static pool and times are positions in the opr
sequence, so the trace clock is synthetic: opr ``i`` runs from ``i`` to ``i + 1`` µs on one
"opr sequence" track. Static chunks live ``[time_begin, time_end)`` (one step later when
they overwrite another chunk in place, as MegEngine's ``graph_info_analyze`` counts them);
weight chunks (laid out after the static peak) live the whole run.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

import numpy as np

from ...errors import InputError
from ...io import Source
from ...model import Metadata, ProcessKind, Trace, TrackKind
from ...model.activity import fill_activity
from ...model.builder import TraceBuilder
from ...model.memory import add_live_bytes_counters
from ...numbers import is_digit_limit, saturated_int
from ...vocabularies.megengine import MEGENGINE_VOCABULARY
from ..sniffing import megengine_meminfo as sniff  # noqa: F401  (this format's sniff, kept light)
from .clock import PROGRAM_STEP_NS as STEP_NS
from .document import load_records
from .schema import MemInfoChunkRecord, StaticMemoryInfo, StaticMemoryInfoRecords

SCHEMAS = {"megengine_static_memory_info": StaticMemoryInfo}
PROCESS = "MegEngine static plan"
POOL = "static memory plan"


# the column path's bounds: values within them cannot overflow int64 in a size or a time
_ADDRESS_BOUND = 1 << 62
_STEP_BOUND = (1 << 62) // STEP_NS
_NUMBERS = ("logic_addr_begin", "logic_addr_end", "time_begin", "time_end")


def _int(value: str, what: str, source: Source, chunk_id: str) -> int:
    """``value`` as an int of any size (the trace builder judges its range as it judges
    every reader's); an InputError naming its JSON path when it is no integer."""
    try:
        return int(value)
    except ValueError as exc:
        if is_digit_limit(exc):   # (more digits than Python reads: far past int64)
            return saturated_int(value)
        raise InputError(f"{what} is not an integer: {value!r}", file=source.name,
                         location=f"$.chunk.{chunk_id}.{what}") from None


def chunk_numbers(chunk: MemInfoChunkRecord, source: Source) -> tuple[int, int, int, int]:
    """(address, size, time_begin, time_end) of one chunk (a record that
    :class:`~.schema.MemInfoChunk` accepts), ints of any size; an InputError names the
    first that is no integer (the column path's reference: it reads chunk by chunk through
    this when a value is not a plain in-bounds integer).

    >>> from traceconv.io import Source
    >>> chunk_numbers(MemInfoChunkRecord("7", "static_mem", "2", "5", "64", "96"),
    ...               Source("s.json"))
    (64, 32, 2, 5)
    """
    begin, end, t0, t1 = (_int(getattr(chunk, name), name, source, chunk.id)
                          for name in _NUMBERS)
    return begin, end - begin, t0, t1


def _overwrites(chunk: MemInfoChunkRecord) -> bool:
    return chunk.overwrite_dest_id != "-1"


def _number_columns(chunks: list[MemInfoChunkRecord], source: Source) -> np.ndarray:
    """Rows of :func:`chunk_numbers` for every chunk (4, chunks): an int64 array when
    ``int`` reads every text into bounds where no size or time can overflow, else an
    object array of ints, read chunk by chunk (which names the first text that is no
    integer)."""
    count = len(chunks)
    try:
        begin, end, t0, t1 = (
            np.fromiter(map(int, map(attrgetter(name), chunks)), np.int64, count)
            for name in _NUMBERS)
    except (ValueError, OverflowError):
        begin = end = t0 = t1 = np.zeros(0, np.int64)
    bounded = len(begin) == count and all(
        ((column > -bound) & (column < bound)).all()
        for column, bound in ((begin, _ADDRESS_BOUND), (end, _ADDRESS_BOUND),
                              (t0, _STEP_BOUND), (t1, _STEP_BOUND)))
    if not bounded:
        numbers = np.empty((4, count), object)
        for row, chunk in enumerate(chunks):
            numbers[:, row] = chunk_numbers(chunk, source)
        return numbers
    return np.stack([begin, end - begin, t0, t1])


@dataclass
class ChunkColumns:
    """What the blocks need of the chunks, a column each (the records can go)."""

    ids: list[str]
    numbers: np.ndarray           # address, size, time_begin, time_end (4 rows)
    weight: np.ndarray            # weight chunks (the rest are static)
    overwrites: dict[int, str]    # static chunk row → the chunk it overwrites in place


def chunk_columns(chunks: list[MemInfoChunkRecord], source: Source) -> ChunkColumns:
    """The chunks' columns, their numbers read as :func:`chunk_numbers` reads them."""
    count = len(chunks)
    weight = np.fromiter((c.type == "weight_mem" for c in chunks), bool, count)
    overwrites = np.fromiter(map(_overwrites, chunks), bool, count)
    return ChunkColumns([c.id for c in chunks], _number_columns(chunks, source), weight,
                        {row: chunks[row].overwrite_dest_id
                         for row in np.flatnonzero(overwrites & ~weight).tolist()})


def add_chunk_blocks(trace: TraceBuilder, chunks: ChunkColumns,
                     opr_names: dict[int, str]) -> None:
    """Add a memory block per chunk, as columns: its logical addresses, its lifetime on the
    synthetic clock (static chunks), weight chunks living the whole run. A chunk whose
    address or size int64 cannot hold is the builder's to leave out (counted), a time past
    it the builder's to move (counted)."""
    address, size, t0, t1 = chunks.numbers
    weight, count = chunks.weight, len(chunks.ids)
    steps, step_of = np.unique(t0, return_inverse=True)
    owners = [*map(opr_names.get, steps.tolist()), None]
    names = [f"weight {i}" if w else f"chunk {i}"
             for i, w in zip(chunks.ids, weight.tolist(), strict=True)]
    args = [{"chunk": i, "time_begin": b, "time_end": e} for i, b, e in
            zip(chunks.ids, t0.tolist(), t1.tolist(), strict=True)]
    overwrites = np.zeros(count, np.int64)
    for row, target in chunks.overwrites.items():
        args[row]["overwrites"] = target
        overwrites[row] = 1
    first = len(trace.memory)
    trace.add_memory_columns(
        {"address": address, "size": size,
         "alloc_ns": np.ma.array((t0 + overwrites) * STEP_NS, mask=weight),
         "free_ns": np.ma.array(t1 * STEP_NS, mask=weight)},
        {"device": PROCESS, "pool": POOL, "name": (names, np.arange(count)),
         "owner_name": (owners, np.where(weight, len(steps), step_of.reshape(-1))),
         "category": (["activation", "weight"], weight.astype(np.intp))},
        args)
    trace.metadata.attributes["megengine.static_peak_bytes"] = _static_peak(trace, first)


def _static_peak(trace: TraceBuilder, first: int) -> int:
    """The end of the highest static (activation) block from row ``first`` on: the plan's
    static peak (an int: two int64 numbers may pass int64 in their sum)."""
    blocks = trace.memory
    static = blocks.rows_where("category", "activation".__eq__)
    static = static[static >= first]
    address, size = (blocks.numbers(name)[static].tolist() for name in ("address", "size"))
    return max((a + s for a, s in zip(address, size, strict=True)), default=0)


def read(source: Source) -> Trace:
    """Read ``StaticMemoryInfo.json`` into opr-sequence slices and logical memory blocks."""
    doc = load_records(source, StaticMemoryInfoRecords, StaticMemoryInfo)
    trace = TraceBuilder(Metadata(framework="MegEngine", clock="synthetic (program order)",
                           attributes={"megengine.time_unit": "1 µs = one opr step"}))
    process = trace.add_process(PROCESS, kind=ProcessKind.SYNTHETIC)
    track = trace.add_track("opr sequence", process=process, kind=TrackKind.SYNTHETIC)
    opr_names: dict[int, str] = {}
    for key, opr in doc.opr.items():
        opr_id = opr.id
        if not (opr_id.isascii() and opr_id.isdecimal()):
            raise InputError(f"opr id is not a sequence index: {opr_id!r}", file=source.name,
                             location=f"$.opr.{key}.id")
        opr_names[saturated_int(opr_id)] = opr.name   # (its time: the builder's to judge)
    chunks = chunk_columns(list(doc.chunk.values()), source)
    del doc   # (the records: 300 k chunks hold more than their blocks will)
    for step in sorted(opr_names):
        trace.add_interval(track, step * STEP_NS, (step + 1) * STEP_NS, opr_names[step],
                           "opr", {"sequence_index": step})
    add_chunk_blocks(trace, chunks, opr_names)
    add_live_bytes_counters(trace)
    fill_activity(trace, MEGENGINE_VOCABULARY)
    return trace
