"""Reader of ``StaticMemoryInfo.json`` (``--get-static-mem-info``): the static memory plan.

Addresses are *logical* offsets in the static pool and times are positions in the opr
sequence, so the trace clock is synthetic: opr ``i`` runs from ``i`` to ``i + 1`` µs on one
"opr sequence" track. Static chunks live ``[time_begin, time_end)`` (one step later when
they overwrite another chunk in place, as MegEngine's ``graph_info_analyze`` counts them);
weight chunks (laid out after the static peak) live the whole run.
"""

from __future__ import annotations

from typing import Any

from ...errors import InputError
from ...io import Source
from ...model import MemoryBlock, Metadata, ProcessKind, Trace, TrackKind
from ...model.activity import fill_activity
from ...model.builder import TraceBuilder
from ...model.memory import add_live_bytes_counters
from ...numbers import NumberError, to_int64
from ...vocabularies.megengine import MEGENGINE_VOCABULARY
from ..sniffing import megengine_meminfo as sniff  # noqa: F401  (this format's sniff, kept light)
from .clock import PROGRAM_STEP_NS as STEP_NS
from .document import load_json, validate
from .schema import MemInfoChunk, StaticMemoryInfo

SCHEMAS = {"megengine_static_memory_info": StaticMemoryInfo}
PROCESS = "MegEngine static plan"
POOL = "static memory plan"


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


def chunk_block(chunk: MemInfoChunk, opr_names: dict[int, str], source: Source) -> MemoryBlock:
    """The memory block of one chunk (logical address, lifetime on the synthetic clock)."""
    begin = _int(chunk.logic_addr_begin, "logic_addr_begin", source, chunk.id)
    end = _int(chunk.logic_addr_end, "logic_addr_end", source, chunk.id)
    t0 = _int(chunk.time_begin, "time_begin", source, chunk.id)
    t1 = _int(chunk.time_end, "time_end", source, chunk.id)
    size = _int(end - begin, "logic_addr_end", source, chunk.id)
    args: dict[str, Any] = {"chunk": chunk.id, "time_begin": t0, "time_end": t1}
    if chunk.type == "weight_mem":
        return MemoryBlock(begin, size, device=PROCESS, pool=POOL,
                           name=f"weight {chunk.id}",
                           category="weight", args=args)
    overwrites = chunk.overwrite_dest_id != "-1"
    if overwrites:
        args["overwrites"] = chunk.overwrite_dest_id
    owner = opr_names.get(t0)
    return MemoryBlock(begin, size, _int((t0 + overwrites) * STEP_NS, "time_begin", source,
                                         chunk.id),
                       _int(t1 * STEP_NS, "time_end", source, chunk.id),
                       device=PROCESS, pool=POOL, name=f"chunk {chunk.id}", owner_name=owner,
                       category="activation", args=args)


def read(source: Source) -> Trace:
    """Read ``StaticMemoryInfo.json`` into opr-sequence slices and logical memory blocks."""
    doc = validate(StaticMemoryInfo, load_json(source), source)
    trace = TraceBuilder(Metadata(framework="MegEngine", clock="synthetic (program order)",
                           attributes={"megengine.time_unit": "1 µs = one opr step"}))
    process = trace.add_process(PROCESS, kind=ProcessKind.SYNTHETIC)
    track = trace.add_track("opr sequence", process=process, kind=TrackKind.SYNTHETIC)
    opr_names: dict[int, str] = {}
    for key, opr in doc.opr.items():
        if not (opr.id.isascii() and opr.id.isdigit()):
            raise InputError(f"opr id is not a sequence index: {opr.id!r}", file=source.name,
                             location=f"$.opr.{key}.id")
        try:   # the step is the opr's time: it must fit the model's int64 ns
            to_int64((int(opr.id) + 1) * STEP_NS, "opr id")
        except NumberError as exc:
            raise InputError(str(exc), file=source.name, location=f"$.opr.{key}.id") from None
        opr_names[int(opr.id)] = opr.name
    for step in sorted(opr_names):
        trace.add_slice(track, step * STEP_NS, STEP_NS, opr_names[step], "opr",
                        {"sequence_index": step})
    for chunk in doc.chunk.values():
        trace.add_memory_block(chunk_block(chunk, opr_names, source))
    statics = [b.end_address for b in trace.memory if b.category != "weight"]
    trace.metadata.attributes["megengine.static_peak_bytes"] = max(statics, default=0)
    add_live_bytes_counters(trace)
    fill_activity(trace, MEGENGINE_VOCABULARY)
    return trace
