"""MIGraphX shape prints as plain fields: static, tuple, dynamic (three textual forms) and
symbolic.

``src/shape.cpp operator<<`` writes ``float_type, {1, 64}, {64, 1}``; tuples as
``[shape, shape]``; dynamic shapes as ``dynamic, float_type, {dd, ...}`` where a dynamic
dimension is ``[1, 4, 0]`` (ROCm 5.3-5.5), ``[ 1, 4, {2, 4} ]`` (5.6-7.2) or a fixed
``N`` / ``[1..4]`` (develop 2026). Symbolic dimensions (develop) keep their text. The
fields are those of :class:`traceconv.formats.migraphx.shape.Shape`.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ...numbers import to_int64
from .brackets import split_top

_TYPE_TOKEN = re.compile(r"\s*(?:dynamic|\w+_type)\s*$")


def _ints(block: str) -> tuple[list[int] | None, list[str] | None]:
    """``{1, 2}`` → ([1, 2], None); non-integer entries give (None, texts)."""
    inner = block.strip().removeprefix("{").removesuffix("}").strip()
    items = [x.strip() for x in split_top(inner)] if inner else []
    try:
        return [_int(x) for x in items], None
    except ValueError:
        return None, items


def _int(text: str) -> int:
    """One shape number; beyond int64 is not a dimension (``NumberError`` is a ValueError).

    >>> _int(" 7 "), _ints("{99999999999999999999, 2}")
    (7, (None, ['99999999999999999999', '2']))
    """
    return to_int64(int(text), "shape dimension")


def _dynamic_dim(text: str) -> dict[str, Any]:
    text = text.strip()
    if not text.startswith("["):
        return {"min": _int(text), "max": _int(text)}
    inner = text[1:-1].strip()
    if ".." in inner:
        low, high = inner.split("..", 1)
        return {"min": _int(low), "max": _int(high)}
    parts = [p.strip() for p in split_top(inner)]
    if len(parts) < 2 or not text.endswith("]"):   # a paste cut inside the dimension
        raise ValueError(f"incomplete dynamic dimension: {text!r}")
    opts: list[int] = []
    if len(parts) > 2:
        opt = parts[2]
        opts = _ints(opt)[0] or [] if opt.startswith("{") else [_int(opt)]
        opts = [o for o in opts if o]  # the old single form prints 0 for "no optimum"
    return {"min": _int(parts[0]), "max": _int(parts[1]), "optimals": opts}


def split_tuple(inner: str) -> list[str]:
    """Split the inside of a tuple print into sub-shape texts (each starts at a type token).

    >>> split_tuple("float_type, {2}, {1}, int64_type, {2}, {1}")
    ['float_type, {2}, {1}', 'int64_type, {2}, {1}']
    """
    out: list[list[str]] = []
    for part in split_top(inner):
        if _TYPE_TOKEN.fullmatch(part) and not (out and out[-1][-1].strip() == "dynamic"):
            out.append([part])
        elif out:
            out[-1].append(part)
    return [",".join(p).strip() for p in out]


def shape_fields(text: str) -> dict[str, Any]:
    """The fields of one shape print (sub-shapes and dynamic dimensions as fields too);
    raises ValueError on text that is not a (complete) shape. Do not change what it
    returns: one dict stands for every print of the same text.

    >>> shape_fields("half_type, {1, 28}, {28, 1}")
    {'text': 'half_type, {1, 28}, {28, 1}', 'type': 'half_type', 'lens': [1, 28], 'strides': [28, 1], 'symbolic': None}
    >>> shape_fields("dynamic, float_type, {[ 1, 4, {2, 4} ]}")["dynamic_dims"]
    [{'min': 1, 'max': 4, 'optimals': [2, 4]}]
    >>> shape_fields("float_type, {1, 2")
    Traceback (most recent call last):
    ...
    ValueError: not a shape: 'float_type, {1, 2'
    """
    return _fields(text.strip())


@functools.lru_cache(maxsize=1 << 14)   # a program repeats a few shapes thousands of times
def _fields(text: str) -> dict[str, Any]:
    """:func:`shape_fields` of stripped text, once per distinct text (errors are not kept)."""
    if text.startswith("["):
        inner = text[1:-1] if text.endswith("]") else text[1:]
        return {"text": text, "type": "tuple_type",
                "sub_shapes": [shape_fields(p) for p in split_tuple(inner)]}
    parts = [p.strip() for p in split_top(text)]
    if parts and parts[0] == "dynamic":
        if len(parts) < 3 or not parts[2].startswith("{") or not parts[2].endswith("}"):
            raise ValueError(f"not a (complete) dynamic shape: {text!r}")
        dims = [_dynamic_dim(d) for d in split_top(parts[2].strip()[1:-1]) if d.strip()]
        return {"text": text, "type": parts[1], "dynamic_dims": dims}
    if len(parts) != 3 or not parts[0].endswith("_type") or not parts[1].startswith("{"):
        raise ValueError(f"not a shape: {text!r}")
    lens, sym = _ints(parts[1])
    strides, sym_strides = _ints(parts[2])
    return {"text": text, "type": parts[0], "lens": lens, "strides": strides,
            "symbolic": (sym or []) + (sym_strides or []) or None}
