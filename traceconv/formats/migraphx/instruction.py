"""One MIGraphX instruction line, typed: the fields :mod:`..migraphx_text.instructions` reads
off the print, with its shape parsed."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...model.frozen import FrozenDict, FrozenList
from ..migraphx_text.instructions import instruction_fields
from .shape import Shape, parse_shape

# One read-only empty dict and list for every instruction printed without attributes,
# module inputs or debug symbols (most of them): a program has hundreds of thousands.
_NO_ATTRIBUTES: FrozenDict[str, str] = FrozenDict()
_NONE: FrozenList[str] = FrozenList()


@dataclass(slots=True)
class Instruction:
    """A parsed instruction line (no perf timing; see ``document.PerfLine``). The fields
    are those of :class:`.schema.Instruction`, which says what each means; a slotted class
    because a large program has hundreds of thousands of them. Names, op names and
    attribute texts are interned: a program repeats them, and an input is the very string
    of the result it names."""

    name: str
    op: str
    attributes: dict[str, str] = field(default_factory=lambda: _NO_ATTRIBUTES)
    parameter: str | None = None
    literal: str | None = None
    comment: str | None = None
    inputs: list[str] = field(default_factory=list)
    module_inputs: list[str] = field(default_factory=lambda: _NONE)
    shape: Shape | None = None
    target_id: int | None = None
    debug_symbols: list[str] = field(default_factory=lambda: _NONE)
    unclosed_attributes: bool = False
    truncated: bool = False
    line: int = 0

    @property
    def module_prefix(self) -> str | None:
        """The module named in the result name (``main`` for ``main:@3``), else None."""
        head, sep, tail = self.name.rpartition(":@")
        return head if sep and tail.isdecimal() else None


def parse_instruction(line: str, number: int = 0) -> Instruction:
    """Parse one instruction print (without a perf tail); ValueError if it is not one.

    >>> i = parse_instruction("@8 = load[offset=6272,end=31360](@1) -> float_type, {1, 8}, {8, 1}")
    >>> i.op, i.attributes, i.inputs, i.shape.lens
    ('load', {'offset': '6272', 'end': '31360'}, ['@1'], [1, 8])
    """
    fields = instruction_fields(line, number)
    shape_text = fields.pop("shape_text", None)
    return Instruction(shape=None if shape_text is None else parse_shape(shape_text), **fields)
