"""Memory blocks of a static profile: one per non-empty ``graph_exec.mem_chunk``.

A chunk ``[dev_ptr, dev_ptr + size)`` is shared by its owner var and every var whose
memory plan names it (read-only forwards, in-place updates). It lives from the device start
of the op producing any of those vars to the device end of the last op (in ``comp_seq``
order) that reads any of them, or that produced them when nothing reads them. Persistent
vars (weights, constants) live the whole run (no alloc/free time).
"""

from __future__ import annotations

import math
from collections import defaultdict

from ...model import MemoryBlock, Trace
from ...model.graph import op_node, tensor_node
from ...numbers import shape
from .clock import PROGRAM_STEP_NS, seconds_to_ns
from .schema import MemChunkRecord, StaticProfileRecords, TimingRecord

PERSISTENT = "PERSISTENT_DEVICE_VALUE"


def _ns(seconds: float, offset: int) -> int | None:
    return seconds_to_ns(seconds) + offset if math.isfinite(seconds) else None


class _Execution:
    """Where and when each executed opr ran, and who reads and writes each var."""

    def __init__(self, doc: StaticProfileRecords, offsets: dict[str, int],
                 program_order: bool) -> None:
        exe = doc.graph_exec
        self.offsets = offsets
        self.program_order = program_order
        self.order = {opr_id: i for i, opr_id in enumerate(exe.comp_seq)}
        self.device = doc.profiler.device
        self.producer: dict[str, str] = {}
        self.readers: dict[str, list[str]] = defaultdict(list)
        for opr_id, opr in exe.operator.items():
            if opr_id not in self.order:
                continue
            for var_id in opr.output:
                self.producer[var_id] = opr_id
            for var_id in opr.input:
                self.readers[var_id].append(opr_id)

    def span(self, opr_id: str, comp_node: str) -> tuple[int | None, int | None] | None:
        """(start, end) in trace ns of the opr on ``comp_node`` (else its first place)."""
        if self.program_order:
            step = self.order[opr_id]
            return step * PROGRAM_STEP_NS, (step + 1) * PROGRAM_STEP_NS
        places = self.device.get(opr_id, {})
        place = comp_node if comp_node in places else next(iter(places), None)
        if place is None:
            return None
        t: TimingRecord = places[place]
        offset = self.offsets.get(place, 0)
        return _ns(t.start, offset), _ns(t.end, offset)


def chunk_vars(doc: StaticProfileRecords) -> dict[str, list[str]]:
    """Chunk id → var ids stored in it (by memory plan, plus alias sources' followers)."""
    members: dict[str, list[str]] = defaultdict(list)
    for var_id, var in doc.graph_exec.var.items():
        if var.mem_plan is not None:
            members[var.mem_plan.mem_chunk_id].append(var_id)
    return members


def add_memory_blocks(trace: Trace, doc: StaticProfileRecords, offsets: dict[str, int],
                      program_order: bool = False) -> None:
    """Add a :class:`MemoryBlock` per non-empty chunk; count what cannot be placed.

    Times are on the trace clock: device seconds shifted by ``offsets[comp node]``, or
    opr-sequence steps with ``program_order`` (documents without timing).
    """
    run = _Execution(doc, offsets, program_order)
    members = chunk_vars(doc)
    varz = doc.graph_exec.var
    diag = trace.diagnostics
    blocks: dict[str, MemoryBlock] = {}
    for key, chunk in doc.graph_exec.mem_chunk.items():
        if chunk.id != key:   # memory plans name the chunk by its key: the key wins
            diag.add("megengine.chunk_id_not_key", example=f"{key} (id {chunk.id})")
            chunk = MemChunkRecord(id=key, size=chunk.size, owner_var=chunk.owner_var,
                                   dev_ptr=chunk.dev_ptr)
        if chunk.size <= 0:
            diag.add("megengine.empty_chunk", example=chunk.id)
            continue
        owner = varz.get(chunk.owner_var)
        address = chunk.dev_ptr
        if address is None and owner is not None and owner.prev_dev_ptr:
            address = owner.prev_dev_ptr
            diag.add("megengine.chunk_prev_ptr", example=chunk.id)
        if address is None:
            diag.add("megengine.chunk_no_address", example=chunk.id)
            continue
        if owner is None:
            diag.add("megengine.chunk_unknown_owner",
                     example=f"{chunk.id} (owner_var {chunk.owner_var})")
            trace.add_memory_block(MemoryBlock(address, chunk.size, name=chunk.id,
                                               category="activation",
                                               args={"chunk": chunk.id}))
            continue
        block = _block(trace, run, chunk, address, members.get(chunk.id) or [chunk.owner_var],
                       doc)
        row = trace.add_memory_block(block)
        if row is not None:   # (else left out, and counted, by the builder)
            blocks[chunk.id] = trace.memory[row]
    derived = _dynamic_blocks(trace, run, doc, members)
    diag.add("megengine.dynamic_var_memory", count=derived)
    diag.add("megengine.in_place_output", count=_settle_in_place(run, doc, blocks))


def _dynamic_blocks(trace: Trace, run: _Execution, doc: StaticProfileRecords,
                    members: dict[str, list[str]]) -> int:
    """For a profile whose activations were all allocated at run time (``jit.trace``,
    ``load_and_run`` without ``--embed-input``: chunks hold only weights, if any), a block
    per var whose last run left a device range (``prev_dev_ptr``..``prev_dev_ptr_end``).
    Vars that forward another var's memory (read-only forwards, in-place updates) share
    its block. A statically planned profile is left as its chunks say (as MegEngine's own
    memory flow draws it)."""
    exe = doc.graph_exec
    if any(chunk.size > 0 and chunk.owner_var in exe.var
           and PERSISTENT not in exe.var[chunk.owner_var].flag
           for chunk in exe.mem_chunk.values()):
        return 0
    planned = {var_id for var_ids in members.values() for var_id in var_ids}
    count = 0
    for var_id, var in doc.graph_exec.var.items():
        if (var_id in planned or var.mem_readonly_fwd_src or var.force_update_src
                or not var.prev_dev_ptr or not var.prev_dev_ptr_end
                or var.prev_dev_ptr_end <= var.prev_dev_ptr or var_id not in run.producer):
            continue
        chunk = MemChunkRecord(id=f"var{var_id}", size=var.prev_dev_ptr_end - var.prev_dev_ptr,
                               owner_var=var_id, dev_ptr=var.prev_dev_ptr)
        block = _block(trace, run, chunk, var.prev_dev_ptr, [var_id], doc)
        block.args["derived_from"] = "prev_dev_ptr"
        trace.add_memory_block(block)
        count += 1
    return count


def _settle_in_place(run: _Execution, doc: StaticProfileRecords,
                     blocks: dict[str, MemoryBlock]) -> int:
    """Start each output block that overlaps an input block of its op when that input ends.

    MegEngine lets an opr write its output over an input it reads last (``overwrite_dest``
    in the static plan): the two chunks share addresses, and the output's life begins when
    the input's ends (at the op's end). Returns how many blocks moved.
    """
    exe, moved = doc.graph_exec, 0
    for chunk_id, block in blocks.items():
        producer = run.producer.get(exe.mem_chunk[chunk_id].owner_var)
        if producer is None or block.alloc_ns is None:
            continue
        for var_id in exe.operator[producer].input:
            plan = exe.var[var_id].mem_plan if var_id in exe.var else None
            source = blocks.get(plan.mem_chunk_id) if plan else None
            if (source is None or source is block or source.free_ns is None
                    or not (source.address < block.end_address
                            and block.address < source.end_address)
                    or not block.alloc_ns < source.free_ns <= (block.free_ns or 0)):
                continue
            block.alloc_ns = source.free_ns
            moved += 1
            break
    return moved


def _block(trace: Trace, run: _Execution, chunk: MemChunkRecord, address: int,
           var_ids: list[str], doc: StaticProfileRecords) -> MemoryBlock:
    owner = doc.graph_exec.var[chunk.owner_var]
    plan = owner.mem_plan
    producer = run.producer.get(chunk.owner_var)
    opr_type = doc.graph_exec.operator[producer].type if producer else ""
    node = op_node(producer) if producer else None
    persistent = PERSISTENT in owner.flag
    category = ("weight" if persistent else
                "workspace" if owner.name.endswith(":workspace") else "activation")
    alloc_ns = free_ns = None
    if not persistent:
        alloc_ns, free_ns = _lifetime(trace, run, chunk, var_ids, owner.comp_node)
    return MemoryBlock(
        address, chunk.size, alloc_ns, free_ns, device=owner.comp_node, pool="",
        name=owner.name, owner_op=node if node in trace.graph else None,
        owner_name=doc.graph_exec.operator[producer].name if producer else None,
        owner_tensor=tensor_node(chunk.owner_var), category=category,
        shape=shape(plan.layout.shape, f"$.graph_exec.var.{chunk.owner_var}.mem_plan.layout"
                    ".shape") if plan else None,
        dtype=plan.layout.dtype if plan else None,
        args={"chunk": chunk.id, "vars": len(var_ids), "producer_type": opr_type})


def _lifetime(trace: Trace, run: _Execution, chunk: MemChunkRecord, var_ids: list[str],
              comp_node: str) -> tuple[int | None, int | None]:
    writers = [run.producer[v] for v in var_ids if v in run.producer]
    if not writers:
        trace.diagnostics.add("megengine.chunk_unexecuted_owner", example=chunk.id)
        return None, None
    first = min(writers, key=run.order.__getitem__)
    readers = [op for v in var_ids for op in run.readers.get(v, ())] or writers
    last = max(readers, key=run.order.__getitem__)
    begin, end = run.span(first, comp_node), run.span(last, comp_node)
    if begin is None or end is None:
        trace.diagnostics.add("megengine.chunk_untimed", example=chunk.id)
        return None, None
    alloc, free = begin[0], end[1]
    if alloc is not None and free is not None and free < alloc:
        free = alloc
    return alloc, free
