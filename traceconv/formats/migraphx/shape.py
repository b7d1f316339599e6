"""MIGraphX shapes, typed: what :mod:`..migraphx_text.shapes` reads off a shape print, with
the sizes the reader derives from it."""

from __future__ import annotations

import functools

from pydantic import BaseModel, ConfigDict, Field

from ...numbers import INT64_MAX
from ..migraphx_text.shapes import shape_fields

TYPE_SIZES = {
    "bool": 1, "uint8": 1, "int8": 1, "fp8e4m3fnuz": 1, "fp8e4m3fn": 1, "fp8e5m2": 1,
    "fp8e5m2fnuz": 1, "fp4x2": 1, "half": 2, "bf16": 2, "int16": 2, "uint16": 2,
    "float": 4, "int32": 4, "uint32": 4, "double": 8, "int64": 8, "uint64": 8,
}


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
    return Shape.model_validate(shape_fields(text))
