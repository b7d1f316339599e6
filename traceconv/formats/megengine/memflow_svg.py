"""Reader of the dynamic Profiler's ``memory_flow.svg``: one memory block per tensor rect.

MegEngine draws each tensor as a ``<rect>`` whose ``tag:*`` attributes carry the exact
numbers (the geometry is rounded to 100 µs × 1 MB): ``tag:address`` (hex), ``tag:size``
(``"1KB 704B "``), ``tag:layout`` (``"{10(128),128(1) Float32}"``), ``tag:produced`` /
``tag:erased`` (``"240ms 271us 397ns "``, since the profile start; empty = 0 = never
erased) and ``tag:group`` (id of the producing op). Attribute values are not XML-escaped,
so rects are read with a tolerant attribute scanner rather than an XML parser.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from ...errors import InputError
from ...io import Source
from ...model import MemoryBlock, Metadata, ProcessKind, Trace
from ...model.builder import TraceBuilder
from ...model.memory import add_live_bytes_counters
from ..sniffing import megengine_memflow_svg as sniff  # noqa: F401  (this format's sniff, kept light)
from .document import validate

PROCESS = "MegEngine device memory"
# a rect's attributes, then its ">" (group 2): a rect that no ">" ends is read to the end
# once, not again from each "<rect" in it
RECT = re.compile(rb"<rect\b([^>]*+)(>|\Z)")
# a name starts after a non-name character and is read whole: findall tried each letter
# of a long word as a name's start, and each shorter name from it
ATTR = re.compile(rb'(?<![\w:.-])([\w:.-]++)="([^"]*+)"')
# "{10(128),128(1) Float32}": the dims, then the type (the last word). The dims end where
# no blank and no word could have been the type's instead, so a long run of blanks or of
# letters is read once, not once per place it could have started the type.
LAYOUT = re.compile(r"\{(.*?)(?:(?<!\s)\s+|(?<![\w\s]))(\w++)\}")
DIM = re.compile(r"(?<!\d)(\d++)\(")
# a number is read from its first digit only (each digit of a long run was a start)
QUANTITY = re.compile(r"(?<!\d)(\d++)\s*+([a-zA-Z]++)")
TIME_UNITS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}
SIZE_UNITS = {"GB": 1 << 30, "MB": 1 << 20, "KB": 1 << 10, "B": 1}


class MemflowRect(BaseModel):
    """The ``tag:*`` attributes of one tensor rect, as written (strings)."""

    type: str = Field(description='"tensor"')
    name: str = ""
    address: str = Field(description="hex address, %p")
    size: str = Field(description='size2str, e.g. "1KB 704B "')
    layout: str = Field("", description='"{shape(stride),... dtype}"')
    produced: str = Field("", description='time2str since profile start, e.g. "1ms 5us "')
    erased: str = Field("", description="time2str; empty when 0 (never erased)")
    duration: str = ""
    group: str | None = Field(None, description="id of the producing op")


class MemflowDocument(BaseModel):
    """A ``memory_flow.svg``: its tensor rects."""

    rects: list[MemflowRect]


SCHEMAS = {"megengine_memory_flow_svg": MemflowDocument}


def quantity(text: str, units: dict[str, int]) -> int:
    """Sum of MegEngine's ``"<n><unit> "`` parts.

    >>> quantity("240ms 271us 397ns ", TIME_UNITS), quantity("1KB 704B ", SIZE_UNITS)
    (240271397, 1728)
    >>> quantity("", TIME_UNITS)
    0
    """
    total = 0
    for number, unit in QUANTITY.findall(text):
        if unit not in units:
            raise ValueError(f"unknown unit {unit!r} in {text!r}")
        total += int(number) * units[unit]
    return total


def parse_layout(layout: str) -> tuple[tuple[int, ...] | None, str | None]:
    """Shape and dtype of ``TensorLayout::to_string``.

    >>> parse_layout("{10(128),128(1) Float32}")
    ((10, 128), 'Float32')
    >>> parse_layout("{ Int32}")
    ((), 'Int32')
    """
    m = LAYOUT.fullmatch(layout.strip())
    if not m:
        return None, None
    dims = DIM.findall(m.group(1))
    return tuple(int(d) for d in dims), m.group(2)


def read_rects(data: bytes) -> list[dict[str, str]]:
    """The ``tag:`` attributes of every rect that is a tensor (the background has none)."""
    rects = []
    for m in RECT.finditer(data):
        if not m[2]:
            break
        attrs = {k.decode(): v.decode("utf-8", "replace") for k, v in ATTR.findall(m.group(1))}
        if attrs.get("tag:type"):
            rects.append({k[4:]: v for k, v in attrs.items() if k.startswith("tag:")})
    return rects


def rect_block(rect: MemflowRect) -> MemoryBlock:
    shape, dtype = parse_layout(rect.layout)
    erased = quantity(rect.erased, TIME_UNITS)
    return MemoryBlock(
        int(rect.address, 16), quantity(rect.size, SIZE_UNITS),
        quantity(rect.produced, TIME_UNITS), erased or None, device=PROCESS,
        # the SVG names the producing op by id only, and brings no op graph
        name=rect.name, owner_name=f"op {rect.group}" if rect.group else None,
        category="tensor", shape=shape, dtype=dtype,
        args={"layout": rect.layout} | ({"group": rect.group} if rect.group else {}))


def read(source: Source) -> Trace:
    """Read a ``memory_flow.svg`` into memory blocks and a live-bytes counter."""
    data = source.read_bytes()
    if b"<svg" not in data[:4096]:
        raise InputError("not an SVG document", file=source.name, location=1)
    doc = validate(MemflowDocument, {"rects": read_rects(data)}, source)
    trace = TraceBuilder(Metadata(framework="MegEngine", clock="process-relative",
                           attributes={"megengine.clock": "ns since the profile start, "
                                       "device time"}))
    trace.add_process(PROCESS, kind=ProcessKind.DEVICE)
    for index, rect in enumerate(doc.rects):
        try:
            trace.add_memory_block(rect_block(rect))
        except ValueError as exc:
            raise InputError(str(exc), file=source.name,
                             location=f"$.rects[{index}]") from None
    if not data.rstrip().endswith(b"</svg>"):   # cut: the rects after the cut are gone
        trace.diagnostics.add("megengine_memflow.truncated", example=f"ends at byte {len(data)}")
    add_live_bytes_counters(trace)
    return trace
