"""A printed program resolved: modules, input references, and where every result lives.

The text gives names only; this module turns them into indices (program order = execution
order after MIGraphX's ``schedule`` pass) and reconstructs storage: which scratch region
(``load[offset=,end=](scratch)``), literal or parameter each result is stored in, following
views (alias input 0) and kernels (alias their output argument).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum

from .instruction import Instruction

VIEW_OPS = frozenset({
    "reshape", "reshape_lazy", "transpose", "slice", "broadcast", "multibroadcast", "squeeze",
    "unsqueeze", "flatten", "step", "as_shape", "hip::sync_stream", "identity",
    "gpu::reshape_dynamic",
})
"""Ops whose result is a view of input 0 (no storage of their own)."""


class Storage(str, Enum):
    """What kind of memory an instruction's result is (or is not) stored in."""

    POOL = "pool"            # the scratch buffer itself (hip_allocate_memory / @param:scratch)
    REGION = "region"        # load[offset,end] of a pool
    ALLOCATION = "allocation"  # an unplanned hip::allocate
    LITERAL = "literal"      # weights: hip_copy_literal / @literal
    PARAMETER = "parameter"  # user inputs and output buffers
    VALUE = "value"          # an uncompiled program's result: no known memory


@dataclass(slots=True)
class Node:
    """One instruction in program order with its resolved references."""

    index: int
    module: str
    instruction: Instruction
    inputs: list[int | None] = field(default_factory=list)   # None: unknown name
    storage: Storage = Storage.VALUE
    root: int | None = None          # index of the node that owns the storage
    output_arg: int | None = None    # which input a kernel writes (aliases)
    repeat: int = 0                  # earlier instructions of the same name in the module

    @property
    def key(self) -> str:
        """A stable id unique in the program: ``module/name``, and ``#2``, ``#3``... for a
        name printed again in its module (a garbled or spliced paste), whose references
        still go to the first."""
        return f"{self.module}/{self.instruction.name}" + (f"#{self.repeat + 1}"
                                                            if self.repeat else "")


@dataclass
class Program:
    """Resolved instructions plus what could not be resolved."""

    nodes: list[Node]
    unresolved: list[tuple[int, str]] = field(default_factory=list)  # (line, name)
    repeated: int = 0   # instructions whose name an earlier one of their module has

    def modules(self) -> dict[str, list[Node]]:
        out: dict[str, list[Node]] = {}
        for node in self.nodes:
            out.setdefault(node.module, []).append(node)
        return out

    def last_use(self) -> list[int]:
        """For every node, the last index at which it or any alias of it is read.

        A storage owner's entry covers every view and kernel result stored in it.
        """
        last = [n.index for n in self.nodes]
        for node in self.nodes:
            for i in node.inputs:
                if i is None:
                    continue
                owner = self.nodes[i].root
                for target in (i, owner):
                    if target is not None and last[target] < node.index:
                        last[target] = node.index
        return last


def _is_pool(ins: Instruction) -> bool:
    if ins.op == "hip::hip_allocate_memory":
        return True
    return ins.op == "@param" and (ins.parameter or "").rsplit(":", 1)[-1] in ("scratch", "memory")


def is_output_parameter(name: str) -> bool:
    """``output``, ``#output_0``, ``main:#output_12``, ``main:#output_:00012`` (develop).

    >>> is_output_parameter("main:#output_:00012"), is_output_parameter("x:0")
    (True, False)
    """
    return name.rsplit(":", 1)[-1] == "output" or "#output_" in name


def _is_output_param(ins: Instruction) -> bool:
    return ins.op == "@param" and is_output_parameter(ins.parameter or "")


def assign_modules(instructions: Iterable[Instruction]) -> list[tuple[str, Instruction]]:
    """Module of each instruction of a header-less print (perf report, trace eval).

    ``program::print`` writes module after module without headers: a ``mod:@N`` name names
    its module; bare names belong to the block they appear in, and a block ends after its
    ``@return``. Bare blocks are ``main``, except in ROCm 6.2+ prints where ``main`` itself
    is prefixed: then the bare block is the unnamed "root" module of that print.

    >>> from .instruction import parse_instruction as p
    >>> [m for m, _ in assign_modules([p("x = @param:x -> float_type, {1}, {1}"),
    ...     p("@1 = @return(x)"), p("If_4_if:@0 = neg(x) -> float_type, {1}, {1}")])]
    ['main', 'main', 'If_4_if']
    """
    instructions = list(instructions)
    main_prefixed = any(ins.module_prefix == "main" for ins in instructions)
    modules: list[str | None] = []
    current, ended, roots = None, False, 0
    waiting: list[int] = []  # 4.3-5.6: bare parameter names before their module's @N lines
    for ins in instructions:
        prefix = ins.module_prefix
        if prefix is not None:
            current = prefix
            for k in waiting:
                modules[k] = prefix
            waiting = []
        elif current is None or ended:
            if main_prefixed and ins.op == "@param":
                current = None
                waiting.append(len(modules))
            else:
                current = "main" if roots == 0 and not main_prefixed else f"root{roots or ''}"
                roots += 1
                for k in waiting:
                    modules[k] = current
                waiting = []
        ended = ins.op == "@return"
        modules.append(current)
    return [(m or "main", ins) for m, ins in zip(modules, instructions, strict=True)]


def resolve(items: Iterable[tuple[str, Instruction]]) -> Program:
    """Resolve names to indices and reconstruct storage for ``(module, instruction)`` pairs.

    >>> from .instruction import parse_instruction as p
    >>> prog = resolve([("main", p(t)) for t in (
    ...     "@1 = hip::hip_allocate_memory[shape=int8_type, {64}, {1},id=main:scratch] -> int8_type, {64}, {1}",
    ...     "@2 = load[offset=0,end=32](@1) -> float_type, {8}, {1}",
    ...     "@3 = gpu::relu(@2,@2) -> float_type, {8}, {1}")])
    >>> [(n.storage.value, n.root) for n in prog.nodes]
    [('pool', 0), ('region', 1), ('region', 1)]
    """
    program = Program([])
    scoped: dict[tuple[str, str], int] = {}
    repeats: dict[tuple[str, str], int] = {}
    printed: dict[str, int] = {}
    for module, ins in items:  # names first: perf reports print modules in hash-map order
        node = Node(len(program.nodes), module, ins)
        program.nodes.append(node)
        if (module, ins.name) in scoped:
            program.repeated += 1
            node.repeat = repeats[(module, ins.name)] = repeats.get((module, ins.name), 0) + 1
        scoped.setdefault((module, ins.name), node.index)
        printed.setdefault(ins.name, node.index)
    for node in program.nodes:
        for name in node.instruction.inputs:
            index = scoped.get((node.module, name), printed.get(name))
            if index is None:  # 6.2+ prints main bare or prefixed depending on the root
                alt = name[5:] if name.startswith("main:") else f"main:{name}"
                index = printed.get(alt)
            if index is not None and program.nodes[index].instruction.op == "@return":
                index = None   # a @return has no result to read (a garbled paste)
            if index is None:
                program.unresolved.append((node.instruction.line, name))
            node.inputs.append(index)
    placed: set[int] = set()
    for node in program.nodes:
        _place(program.nodes, node, placed)
    return program


def _place(nodes: list[Node], node: Node, placed: set[int]) -> None:
    """Set ``storage``/``root``/``output_arg`` of ``node`` from its op and its inputs."""
    if node.index in placed:
        return
    placed.add(node.index)
    for i in node.inputs:  # a forward reference (another module printed later) goes first
        if i is not None and i > node.index:
            _place(nodes, nodes[i], placed)
    ins = node.instruction
    first = node.inputs[0] if node.inputs else None
    if _is_pool(ins):
        node.storage, node.root = Storage.POOL, node.index
    elif ins.op == "load":
        node.storage, node.root = Storage.REGION, node.index
    elif ins.op in ("hip::allocate", "allocate"):
        node.storage, node.root = Storage.ALLOCATION, node.index
    elif ins.op in ("hip::hip_copy_literal", "@literal"):
        node.storage, node.root = Storage.LITERAL, node.index
    elif ins.op == "@param":
        node.storage, node.root = Storage.PARAMETER, node.index
    elif ins.op in VIEW_OPS and first is not None:
        node.storage, node.root = nodes[first].storage, nodes[first].root
    elif not ins.op.startswith("@") and node.inputs:
        arg = _output_arg(ins, len(node.inputs))
        target = node.inputs[arg]
        if target is not None:
            source = nodes[target]
            owner = nodes[source.root] if source.root is not None else None
            writable = source.storage in (Storage.REGION, Storage.ALLOCATION) or (
                owner is not None and _is_output_param(owner.instruction))
            if writable:
                node.storage, node.root, node.output_arg = source.storage, source.root, arg


def _output_arg(ins: Instruction, count: int) -> int:
    """The input a kernel writes: ``output_arg`` (6.4+ code_object) or the last one."""
    try:
        arg = int(ins.attributes.get("output_arg", "-1"))
    except ValueError:
        arg = -1
    return arg if 0 <= arg < count else count - 1
