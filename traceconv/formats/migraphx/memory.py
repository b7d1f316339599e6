"""Memory blocks of a unit: scratch regions with lifetimes, weights and parameters.

``memory_coloring`` turned every allocation into ``load[offset=O,end=E](scratch)``; a region
lives from its load to the last read of the load or of anything stored in it (views, the
kernel that wrote it). Regions that overlap in address have disjoint lifetimes — that is the
reuse the memory-flow picture shows. Weights (``hip_copy_literal``/``@literal``) and
parameters are separate persistent buffers, laid out at logical offsets in their own pools.
"""

from __future__ import annotations

from ...model import Diagnostics, MemoryBlock, Trace
from .program import Node, Program, Storage, is_output_parameter
from .timeline import Layout, slice_name

_PERSISTENT = {Storage.LITERAL: ("literals", "weight"), Storage.PARAMETER: ("parameters", "")}


def add_memory(trace: Trace, program: Program, layout: Layout, prefix: str,
               diagnostics: Diagnostics) -> None:
    """Add the unit's blocks, each naming its ``owner_tensor`` (how a tensor finds its
    block: :func:`traceconv.model.memory.tensor_blocks`)."""
    last = program.last_use()
    writers: dict[int, Node] = {}  # storage owner → the first kernel that writes it
    for n in program.nodes:
        if n.output_arg is not None and n.root is not None:
            writers.setdefault(n.root, n)
    offsets: dict[str, int] = {}
    for node in program.nodes:
        if node.root != node.index or node.storage in (Storage.POOL, Storage.VALUE):
            continue
        if node.storage == Storage.PARAMETER and node.module != "main":
            continue  # sub-module parameters are bound to the caller's buffers
        ins = node.instruction
        size = ins.shape.bytes if ins.shape is not None else None
        owner = f"{prefix}{node.key}"
        writer = writers.get(node.index, node)
        # the op graph (added next) names every instruction op/<prefix><key> by slice_name
        common = {"device": layout.device, "name": ins.name, "owner_tensor": f"tensor/{owner}",
                  "owner_op": f"op/{prefix}{writer.key}",
                  "owner_name": slice_name(writer.instruction), "shape": tuple(ins.shape.lens) if ins.shape
                  and ins.shape.lens is not None else None,
                  "dtype": ins.shape.dtype if ins.shape else None}
        if node.storage == Storage.REGION:
            block = _region(node, program, size, diagnostics)
            block.alloc_ns = layout.start[node.index]
            block.free_ns = layout.end[last[node.index]]
            block.category = "activation" if node.index in writers else "workspace"
        elif node.storage == Storage.ALLOCATION:
            block = _stacked(offsets, "allocations", size or 0)
            block.alloc_ns = layout.start[node.index]
            block.free_ns = layout.end[last[node.index]]
            block.category = "activation"
        else:
            pool, kind = _PERSISTENT[node.storage]
            block = _stacked(offsets, pool, size or 0)
            block.category = kind or ("output" if is_output_parameter(ins.parameter or "")
                                      else "input")
        for key, value in common.items():
            setattr(block, key, value)
        trace.add_memory_block(block)   # (one left out is counted by the builder)


def _region(node: Node, program: Program, size: int | None,
            diagnostics: Diagnostics) -> MemoryBlock:
    ins = node.instruction
    try:
        offset = int(ins.attributes["offset"])
        end = int(ins.attributes["end"])
    except (KeyError, ValueError):
        offset, end = 0, size or 0
        diagnostics.add("migraphx.load_without_offset", example=f"line {ins.line}: {ins.name}")
    if end < offset:  # a cut paste can leave "end=4" of "end=40960"
        diagnostics.add("migraphx.load_range_reversed", example=f"line {ins.line}: {ins.name}")
        end = offset + (size or 0)
    if size is not None and end - offset != size:
        diagnostics.add("migraphx.load_size_mismatch", example=f"line {ins.line}: {ins.name}")
    pool_node = program.nodes[node.inputs[0]] if node.inputs and node.inputs[0] is not None \
        else None
    args = {"instruction": ins.name, "offset": offset, "end": end}
    if pool_node is not None:
        args["buffer"] = pool_node.instruction.attributes.get("id") or \
            pool_node.instruction.name
        if pool_node.instruction.shape is not None:
            args["buffer_bytes"] = pool_node.instruction.shape.bytes
    return MemoryBlock(address=offset, size=end - offset, pool="scratch", args=args)


def _stacked(offsets: dict[str, int], pool: str, size: int) -> MemoryBlock:
    """A block at the next logical offset of ``pool`` (buffers have no printed address)."""
    address = offsets.get(pool, 0)
    offsets[pool] = address + size
    return MemoryBlock(address=address, size=size, pool=pool)
