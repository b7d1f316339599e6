"""One MIGraphX instruction line as plain fields, in every dialect from ROCm 3.5 to 7.2 and
the DCU fork.

``instruction::print`` writes::

    var " = " op ["[" attrs "]"] [literal] ["(" inputs ")"] [", [" modules "]"]
        [" -> " shape] [", target_id=" N] [" # " debug symbols]

The op part may be custom (``@param:NAME``, ``@literal{...}``, ``@comment: text``); old
``gpu::code_object`` prints (ROCm 4.2-4.5) never close their ``[``. The fields are those of
:class:`traceconv.formats.migraphx.instruction.Instruction`, but for the shape, kept as its
text (``shape_text``; absent when it is no whole shape, which makes the line truncated).
"""

from __future__ import annotations

import re
from sys import intern
from typing import Any

from ..line_patterns import UP_TO_LAST_VISIBLE
from .brackets import closing, find_top, split_top
from .shapes import shape_fields

VAR = re.compile(rf"\s*([^\s=]+)\s*=\s*(\S{UP_TO_LAST_VISIBLE})\s*$")
_OPNAME = re.compile(r"[^\[({\s,]+")
_TARGET = re.compile(r",\s*target_id=(\d+)$")


def parse_attributes(text: str) -> dict[str, str]:
    """Split an attribute list at depth 0, each ``key=value`` at its first ``=``.

    >>> parse_attributes("code_object=6184,symbol_name=k,global=1792,local=256,")
    {'code_object': '6184', 'symbol_name': 'k', 'global': '1792', 'local': '256'}
    >>> parse_attributes("op=convolution[padding={3, 3},stride={2, 2}],algo=1")["op"]
    'convolution[padding={3, 3},stride={2, 2}]'
    """
    out: dict[str, str] = {}
    last: str | None = None
    for part in split_top(text, tight=True):
        if not part:  # code_object prints end with a trailing ','
            continue
        key, sep, value = part.partition("=")
        if sep and key and " " not in key:
            out[intern(key)] = value
            last = key
        elif last is not None:  # a raw string value that itself held a comma
            out[last] += "," + part
        else:
            out[intern(part)] = ""
    return {key: intern(value) for key, value in out.items()}


def _split_tail(rest: str) -> tuple[str, str | None, int | None, list[str]]:
    """Peel debug symbols, target_id and the shape off the end of ``rest``."""
    symbols: list[str] = []
    hash_at = find_top(rest, " # ", last=True)
    if hash_at >= 0:
        symbols = [s.strip() for s in rest[hash_at + 3:].split(",") if s.strip()]
        rest = rest[:hash_at]
    target = None
    if m := _TARGET.search(rest):
        target, rest = int(m.group(1)), rest[:m.start()]
    arrow = find_top(rest, "->")
    if arrow < 0:  # an unclosed code_object '[' keeps the arrow at depth 1
        arrow = rest.rfind(" -> ")
    shape = None
    if arrow >= 0:
        shape, rest = rest[arrow + 2:].strip(), rest[:arrow].rstrip()
    return rest, shape, target, symbols


def instruction_fields(line: str, number: int = 0) -> dict[str, Any]:
    """The fields of one instruction print (without a perf tail); ValueError if it is not one.

    >>> i = instruction_fields("@8 = load[offset=6272,end=31360](@1) -> float_type, {1, 8}, {8, 1}")
    >>> i["op"], i["attributes"], i["inputs"], i["shape_text"]
    ('load', {'offset': '6272', 'end': '31360'}, ['@1'], 'float_type, {1, 8}, {8, 1}')
    >>> instruction_fields("main:#output_0 = @param:main:#output_0 -> float_type, {1}, {1}")["parameter"]
    'main:#output_0'
    >>> instruction_fields("@7 = if(@6), [If_4_if, If_4_else] -> [float_type, {2}, {1}]")["module_inputs"]
    ['If_4_if', 'If_4_else']
    >>> instruction_fields("@3 = add(@1,@2) -> float_type, {2")["truncated"]
    True
    """
    m = VAR.fullmatch(line)
    if not m:
        raise ValueError("not an instruction line (no 'name = op')")
    name, rest = m.groups()
    rest, shape_text, target, symbols = _split_tail(rest)
    fields: dict[str, Any] = {"name": intern(name), "target_id": target, "line": number}
    if symbols:
        fields["debug_symbols"] = symbols
    if shape_text:
        try:
            shape_fields(shape_text)
            fields["shape_text"] = shape_text
        except ValueError:
            fields["truncated"] = True
    if rest.startswith("@param:"):
        return {**fields, "op": "@param", "parameter": intern(rest[7:].strip())}
    if rest.startswith("@comment:"):
        return {**fields, "op": "@comment", "comment": rest[9:].strip()}
    op_match = _OPNAME.match(rest)
    if not op_match:
        raise ValueError("no op name after '='")
    op, pos = op_match.group(), op_match.end()
    if rest.startswith("[", pos):
        end = closing(rest, pos)
        if end < 0:  # ROCm 4.2-4.5 code_object: attrs end with ',' and the inputs follow
            end = find_top(rest[pos + 1:], ",(") + pos + 1
            fields["unclosed_attributes"] = end > pos
            if not fields["unclosed_attributes"]:
                end = len(rest)
                fields["truncated"] = True
            fields["attributes"] = parse_attributes(rest[pos + 1:end + 1])
            pos = end + 1
        else:
            fields["attributes"] = parse_attributes(rest[pos + 1:end])
            pos = end + 1
    if rest.startswith("{", pos):
        end = closing(rest, pos)
        fields["literal"] = rest[pos + 1:end if end >= 0 else len(rest)]
        fields["truncated"] = fields.get("truncated", False) or end < 0
        pos = len(rest) if end < 0 else end + 1
    if rest.startswith("(", pos):
        end = closing(rest, pos)
        body = rest[pos + 1:end if end >= 0 else len(rest)]
        fields["inputs"] = [intern(x.strip()) for x in body.split(",") if x.strip()]
        fields["truncated"] = fields.get("truncated", False) or end < 0
        pos = len(rest) if end < 0 else end + 1
    tail = rest[pos:].strip()
    if tail.startswith(","):
        mods = tail[1:].strip()
        if mods.startswith("["):
            end = closing(mods, 0)
            fields["module_inputs"] = [x.strip() for x in mods[1:end if end >= 0 else None]
                                       .split(",") if x.strip()]
            tail = mods[end + 1:].strip() if end >= 0 else ""
    if tail:
        raise ValueError(f"unexpected text after the op: {tail[:40]!r}")
    if shape_text is None and op != "@return":
        fields["truncated"] = True
    fields["op"] = intern(op)
    return fields
