"""MIGraphX shape prints: static, tuple, dynamic (three textual forms) and symbolic.

``src/shape.cpp operator<<`` writes ``float_type, {1, 64}, {64, 1}``; tuples as
``[shape, shape]``; dynamic shapes as ``dynamic, float_type, {dd, ...}`` where a dynamic
dimension is ``[1, 4, 0]`` (ROCm 5.3-5.5), ``[ 1, 4, {2, 4} ]`` (5.6-7.2) or a fixed
``N`` / ``[1..4]`` (develop 2026). Symbolic dimensions (develop) keep their text.
"""

from __future__ import annotations

import functools
import re

from pydantic import BaseModel, ConfigDict, Field

from ...numbers import INT64_MAX, to_int64
from .brackets import split_top

TYPE_SIZES = {
    "bool": 1, "uint8": 1, "int8": 1, "fp8e4m3fnuz": 1, "fp8e4m3fn": 1, "fp8e5m2": 1,
    "fp8e5m2fnuz": 1, "fp4x2": 1, "half": 2, "bf16": 2, "int16": 2, "uint16": 2,
    "float": 4, "int32": 4, "uint32": 4, "double": 8, "int64": 8, "uint64": 8,
}
_TYPE_TOKEN = re.compile(r"\s*(?:dynamic|\w+_type)\s*$")


class DynamicDim(BaseModel):
    """One dimension of a dynamic shape: a range with optional optimal values."""

    min: int
    max: int
    optimals: list[int] = Field(default_factory=list)


class Shape(BaseModel):
    """A parsed shape print; ``text`` is the print as it appeared."""

    # frozen: one instance stands for every print of the same text (a program repeats a
    # few shapes thousands of times; see parse_shape)
    model_config = ConfigDict(frozen=True)

    text: str
    type: str = Field(description="element type as printed, e.g. float_type, tuple_type")
    lens: list[int] | None = Field(None, description="None for dynamic or symbolic shapes")
    strides: list[int] | None = None
    dynamic_dims: list[DynamicDim] | None = None
    symbolic: list[str] | None = Field(None, description="dimension texts that are not integers")
    sub_shapes: list[Shape] = Field(default_factory=list)

    @property
    def dtype(self) -> str:
        """The element type without ``_type`` (``float``)."""
        return self.type.removesuffix("_type")

    @property
    def bytes(self) -> int | None:
        """``type_size × element_space`` as MIGraphX computes it (None when unknown, or
        :attr:`too_large`).

        >>> parse_shape("float_type, {1, 128}, {0, 1}").bytes
        512
        """
        size = self._bytes()
        return None if size is None or size > INT64_MAX else size

    @property
    def too_large(self) -> bool:
        """The byte size passes int64 (dimensions or strides garbled): no buffer is that big.

        >>> s = parse_shape("float_type, {4294967296, 4294967296}, {4294967296, 1}")
        >>> s.too_large, s.bytes
        (True, None)
        """
        size = self._bytes()
        return size is not None and size > INT64_MAX

    def _bytes(self) -> int | None:
        if self.sub_shapes:
            parts = [s._bytes() for s in self.sub_shapes]
            return None if None in parts else sum(p for p in parts if p is not None)
        size = TYPE_SIZES.get(self.dtype)
        if size is None or self.lens is None or self.strides is None:
            return None
        if any(n == 0 for n in self.lens):
            return 0
        return size * (1 + sum((n - 1) * s for n, s in zip(self.lens, self.strides, strict=False)))

    @property
    def standard(self) -> bool:
        """Packed row-major strides (what ``--detailed`` prints without strides)."""
        if self.lens is None or self.strides is None:
            return False
        expected, step = [], 1
        for n in reversed(self.lens):
            expected.append(step)
            step *= n
        return self.strides == expected[::-1]


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


def _dynamic_dim(text: str) -> DynamicDim:
    text = text.strip()
    if not text.startswith("["):
        return DynamicDim(min=_int(text), max=_int(text))
    inner = text[1:-1].strip()
    if ".." in inner:
        low, high = inner.split("..", 1)
        return DynamicDim(min=_int(low), max=_int(high))
    parts = [p.strip() for p in split_top(inner)]
    if len(parts) < 2 or not text.endswith("]"):   # a paste cut inside the dimension
        raise ValueError(f"incomplete dynamic dimension: {text!r}")
    opts: list[int] = []
    if len(parts) > 2:
        opt = parts[2]
        opts = _ints(opt)[0] or [] if opt.startswith("{") else [_int(opt)]
        opts = [o for o in opts if o]  # the old single form prints 0 for "no optimum"
    return DynamicDim(min=_int(parts[0]), max=_int(parts[1]), optimals=opts)


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


def parse_shape(text: str) -> Shape:
    """Parse one shape print; raises ValueError on text that is not a shape.

    >>> s = parse_shape("half_type, {1, 28, 28}, {784, 28, 1}"); (s.dtype, s.lens, s.bytes)
    ('half', [1, 28, 28], 1568)
    >>> parse_shape("dynamic, float_type, {[ 1, 4, {2, 4} ], [3, 3, 0]}").dynamic_dims[0].max
    4
    >>> len(parse_shape("[float_type, {2, 3}, {3, 1}, int64_type, {2}, {1}]").sub_shapes)
    2
    >>> parse_shape("float_type, {2}, {1}") is parse_shape(" float_type, {2}, {1}")
    True
    """
    return _parsed(text.strip())


@functools.lru_cache(maxsize=1 << 14)
def _parsed(text: str) -> Shape:
    """:func:`parse_shape` of stripped text, once per distinct text (errors are not kept)."""
    if text.startswith("["):
        inner = text[1:-1] if text.endswith("]") else text[1:]
        subs = [parse_shape(p) for p in split_tuple(inner)]
        return Shape(text=text, type="tuple_type", sub_shapes=subs)
    parts = [p.strip() for p in split_top(text)]
    if parts and parts[0] == "dynamic":
        if len(parts) < 3 or not parts[2].startswith("{") or not parts[2].endswith("}"):
            raise ValueError(f"not a (complete) dynamic shape: {text!r}")
        dims = [_dynamic_dim(d) for d in split_top(parts[2].strip()[1:-1]) if d.strip()]
        return Shape(text=text, type=parts[1], dynamic_dims=dims)
    if len(parts) != 3 or not parts[0].endswith("_type") or not parts[1].startswith("{"):
        raise ValueError(f"not a shape: {text!r}")
    lens, sym = _ints(parts[1])
    strides, sym_strides = _ints(parts[2])
    return Shape(text=text, type=parts[0], lens=lens, strides=strides,
                 symbolic=(sym or []) + (sym_strides or []) or None)
