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
from ...numbers import NumberError, to_int64
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


def _int(value: str | int, what: str, source: Source, chunk_id: str) -> int:
    """``value`` as an int within int64 (the model's addresses, sizes and ns)."""
    where = f"$.chunk.{chunk_id}.{what}"
    try:
        return to_int64(int(value), what)
    except NumberError as exc:
        raise InputError(str(exc), file=source.name, location=where) from None
    except ValueError:
        raise InputError(f"{what} is not an integer: {value!r}", file=source.name,
                         location=where) from None


def chunk_numbers(chunk: MemInfoChunkRecord, source: Source) -> tuple[int, int, int, int]:
    """(address, size, time_begin, time_end) of one chunk (a record that
    :class:`~.schema.MemInfoChunk` accepts), each checked as the model holds it, and its
    alloc and free times (static chunks) too; an InputError names the first that does not
    fit (the column path's reference: it reads chunk by chunk through this when a value is
    not a plain in-bounds integer).

    >>> from traceconv.io import Source
    >>> chunk_numbers(MemInfoChunkRecord("7", "static_mem", "2", "5", "64", "96"),
    ...               Source("s.json"))
    (64, 32, 2, 5)
    """
    chunk_id = chunk.id
    begin = _int(chunk.logic_addr_begin, "logic_addr_begin", source, chunk_id)
    end = _int(chunk.logic_addr_end, "logic_addr_end", source, chunk_id)
    t0 = _int(chunk.time_begin, "time_begin", source, chunk_id)
    t1 = _int(chunk.time_end, "time_end", source, chunk_id)
    size = _int(end - begin, "logic_addr_end", source, chunk_id)
    if chunk.type != "weight_mem":
        _int((t0 + _overwrites(chunk)) * STEP_NS, "time_begin", source, chunk_id)
        _int(t1 * STEP_NS, "time_end", source, chunk_id)
    return begin, size, t0, t1


def _overwrites(chunk: MemInfoChunkRecord) -> bool:
    return chunk.overwrite_dest_id != "-1"


def _number_columns(chunks: list[MemInfoChunkRecord], source: Source) -> np.ndarray:
    """Rows of :func:`chunk_numbers` for every chunk, as an int64 array (4, chunks). Texts
    that ``int`` reads into bounds where no size or time can overflow are read as columns;
    otherwise chunk by chunk, which names the first chunk that does not fit."""
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
        return np.array([chunk_numbers(c, source) for c in chunks], np.int64).reshape(-1, 4).T
    return np.stack([begin, end - begin, t0, t1])


@dataclass
class ChunkColumns:
    """What the blocks need of the chunks, a column each (the records can go)."""

    ids: list[str]
    numbers: np.ndarray           # address, size, time_begin, time_end (4 rows)
    weight: np.ndarray            # weight chunks (the rest are static)
    overwrites: dict[int, str]    # static chunk row → the chunk it overwrites in place


def chunk_columns(chunks: list[MemInfoChunkRecord], source: Source) -> ChunkColumns:
    """The chunks' columns, their numbers checked as :func:`chunk_numbers` checks them."""
    count = len(chunks)
    weight = np.fromiter((c.type == "weight_mem" for c in chunks), bool, count)
    overwrites = np.fromiter(map(_overwrites, chunks), bool, count)
    return ChunkColumns([c.id for c in chunks], _number_columns(chunks, source), weight,
                        {row: chunks[row].overwrite_dest_id
                         for row in np.flatnonzero(overwrites & ~weight).tolist()})


def add_chunk_blocks(trace: TraceBuilder, chunks: ChunkColumns,
                     opr_names: dict[int, str]) -> None:
    """Add a memory block per chunk, as columns: its logical addresses, its lifetime on the
    synthetic clock (static chunks), weight chunks living the whole run."""
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
    trace.memory.extend_columns(
        {"address": address, "size": size,
         "alloc_ns": np.ma.array((t0 + overwrites) * STEP_NS, mask=weight),
         "free_ns": np.ma.array(t1 * STEP_NS, mask=weight)},
        {"device": PROCESS, "pool": POOL, "name": (names, np.arange(count)),
         "owner_name": (owners, np.where(weight, len(steps), step_of.reshape(-1))),
         "category": (["activation", "weight"], weight.astype(np.intp))},
        args)
    statics = (address + size)[~weight]
    trace.metadata.attributes["megengine.static_peak_bytes"] = \
        int(statics.max()) if len(statics) else 0


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
        try:   # the step is the opr's time: it must fit the model's int64 ns
            to_int64((int(opr_id) + 1) * STEP_NS, "opr id")
        except NumberError as exc:
            raise InputError(str(exc), file=source.name, location=f"$.opr.{key}.id") from None
        opr_names[int(opr_id)] = opr.name
    chunks = chunk_columns(list(doc.chunk.values()), source)
    del doc   # (the records: 300 k chunks hold more than their blocks will)
    for step in sorted(opr_names):
        trace.add_slice(track, step * STEP_NS, STEP_NS, opr_names[step], "opr",
                        {"sequence_index": step})
    add_chunk_blocks(trace, chunks, opr_names)
    add_live_bytes_counters(trace)
    fill_activity(trace, MEGENGINE_VOCABULARY)
    return trace
