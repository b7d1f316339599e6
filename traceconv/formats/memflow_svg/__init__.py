"""Memory-flow SVG writer: time × address, one rectangle per memory block.

Draws ``trace.memory`` from any reader: x is time, y is a gap-compressed address axis,
every rectangle has a ``<title>`` tooltip, a live-bytes curve with its peak runs along the
top, and a legend explains the colours. The file is plain SVG (no script) and opens in any
browser. Options are the fields of :class:`MemflowOptions`.

>>> import io
>>> from traceconv.model import MemoryBlock, Trace
>>> trace = Trace(); _ = trace.add_memory_block(MemoryBlock(0x1000, 256, 0, 10_000))
>>> out = io.BytesIO(); write(trace, out, color_by="category", width=800, height=400)
>>> out.getvalue()[:5]
b'<?xml'
"""

from __future__ import annotations

from typing import Any, BinaryIO

from ...model import Trace
from .draw import render, svg_text
from .selection import COLOR_BY, HEIGHT_RANGE, WIDTH_RANGE, MemflowOptions, checked_options

__all__ = ["COLOR_BY", "HEIGHT_RANGE", "WIDTH_RANGE", "MemflowOptions", "render", "svg_text",
           "write"]

WRITE_OPTIONS = MemflowOptions   # the names write()'s **options may use


def write(trace: Trace, out: BinaryIO, **options: Any) -> None:
    """Write the memory-flow SVG of ``trace`` to ``out`` (options: :class:`MemflowOptions`)."""
    checked = checked_options(trace, **options)
    out.write(b'<?xml version="1.0" encoding="utf-8" ?>\n')
    out.write(svg_text(trace, checked).encode("utf-8"))
    out.write(b"\n")
