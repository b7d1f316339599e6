"""Drawing the memory-flow picture with svgwrite.

Layout (pixels)::

    title
    live-bytes curve per device, peak marked            ┐
    ─────────────────────────────────────────────────── │ legend
    address │ one rectangle per block, regions stacked   │ column
    axis    │ bottom-up with zig-zag breaks              │
            └── time axis ──────────────────────────────┘

Every block rectangle carries a ``<title>`` tooltip. When more rectangles than
``max_rects`` would be drawn, blocks smaller than a cell in both directions are merged into
one rectangle per cell (cells grow until the budget holds) and the legend says how many.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import svgwrite
from svgwrite.container import Group

from ...markup import xml_safe
from ...model import MemoryBlock, Trace
from ...model.clock import is_logical
from ...model.memory import LiveBytes, live_bytes
from ...units import format_bytes, format_duration
from .colors import Coloring, color_blocks
from .layout import BREAK_PX, AddressAxis, Region, TimeAxis, address_axis
from .selection import MemflowOptions, Selection, select, select_reserved
from .units import nice_step, time_unit_for

MIN_WIDTH = 1.0    # px: zero-duration blocks stay visible
MIN_HEIGHT = 1.0   # px: tiny blocks in a big region stay visible
MERGED_COLOR = "#4d4d4d"
RESERVED_FILL = "#e3ebf5"     # allocator segments: a pale background the blocks sit on
RESERVED_STROKE = "#9db3cf"
LEGEND_ROW = 26   # px per legend entry (label line + count line)
CURVE_COLORS = ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#e377c2")
STYLE = """
text { font: 11px sans-serif; fill: #222; }
.title { font-size: 15px; font-weight: bold; }
.small { font-size: 10px; fill: #555; }
.region { paint-order: stroke; stroke: white; stroke-width: 3px; }
.axis { stroke: #444; stroke-width: 1; fill: none; }
.grid { stroke: #e4e4e4; stroke-width: 1; }
.break { stroke: #888; stroke-width: 1; fill: none; stroke-dasharray: 3 2; }
.peak { stroke: #d62728; stroke-width: 1; stroke-dasharray: 4 3; }
rect.b:hover, rect.m:hover { stroke: #000; stroke-width: 1.5; }
rect.m { stroke: #4d4d4d; stroke-width: 0.25; }
rect.r { stroke-width: 0.75; }
"""


@dataclass(frozen=True)
class Frame:
    """Pixel boxes of the picture's parts."""

    width: int
    height: int
    left: float = 118
    legend_width: float = 250
    curve_top: float = 44
    curve_height: float = 86
    bottom_margin: float = 46

    @property
    def right(self) -> float:
        return self.width - self.legend_width - 16

    @property
    def plot_top(self) -> float:
        return self.curve_top + self.curve_height + 22

    @property
    def plot_bottom(self) -> float:
        return self.height - self.bottom_margin

    @property
    def legend_rows(self) -> int:
        """Legend entries that fit beside the plot above the notes."""
        return max(3, int((self.plot_bottom - self.plot_top - 100) // LEGEND_ROW))


@dataclass(frozen=True)
class Clock:
    """How trace times read on this picture: relative to ``origin``, in ``unit`` on the axis."""

    origin: int
    unit: str = "ns"
    scale: int = 1
    logical: bool = False   # times are sequence numbers (a logical clock): no durations

    def at(self, t: int) -> str:
        return f"entry {t:,}" if self.logical else format_duration(t - self.origin)


def render(trace: Trace, options: MemflowOptions) -> svgwrite.Drawing:
    """The memory-flow drawing of ``trace`` (``drawing.tostring()`` gives the SVG text).

    >>> from traceconv.model import MemoryBlock
    >>> t = Trace(); _ = t.add_memory_block(MemoryBlock(0x1000, 4096, 0, 1_000, name="x<1>"))
    >>> svg = render(t, MemflowOptions()).tostring()
    >>> svg.count('class="b"'), "x&lt;1&gt;" in svg
    (1, True)
    """
    sel = select(trace, options)
    reserved = select_reserved(trace, options, sel)
    frame = Frame(options.width, options.height)
    lo, hi = sel.window
    clock = (Clock(sel.origin, "entries", 1, logical=True) if is_logical(trace.metadata.clock)
             else Clock(sel.origin, *time_unit_for(hi - lo)))
    times = TimeAxis(lo, hi, frame.left, frame.right)
    axis, reserved_axis = _shared_axis(sel, reserved, frame)
    coloring = color_blocks(sel.blocks, options.color_by, trace.graph, frame.legend_rows,
                            (lambda n: f"{n:,} entries") if clock.logical else format_duration)

    drawing = svgwrite.Drawing(size=(options.width, options.height), debug=False)
    drawing.viewbox(0, 0, options.width, options.height)   # scales when embedded
    title = options.title or f"Memory flow · {trace.metadata.source_file or 'trace'}"
    drawing.set_desc(title=title)                           # the browser tab's name
    drawing.defs.add(drawing.style(STYLE))
    drawing.add(drawing.rect((0, 0), (options.width, options.height), fill="white"))
    drawing.add(drawing.text(title, insert=(frame.left, 22), class_="title"))

    _draw_region_bands(drawing, axis, frame)
    _draw_reserved(drawing, reserved, reserved_axis, times, clock, options.max_rects)
    merged = _draw_blocks(drawing, trace, sel, axis, times, coloring, clock, options.max_rects)
    _draw_address_axis(drawing, axis, sel, frame)
    _draw_time_axis(drawing, times, clock, frame, trace.metadata.clock)
    peaks = _draw_live_bytes(drawing, sel, times, frame, clock)
    _draw_legend(drawing, sel, axis, coloring, merged, peaks, frame, reserved)
    return drawing


def _shared_axis(sel: Selection, reserved: Selection, frame: Frame
                 ) -> tuple[AddressAxis, AddressAxis]:
    """One address axis for blocks and reservations (regions cover both), viewed per set."""
    axis = address_axis(np.concatenate((sel.space, reserved.space)),
                        np.concatenate((sel.address, reserved.address)),
                        np.concatenate((sel.size, reserved.size)),
                        frame.plot_top, frame.plot_bottom)
    n = len(sel)
    return (AddressAxis(axis.regions, axis.region_of[:n], axis.skipped),
            AddressAxis(axis.regions, axis.region_of[n:], axis.skipped))


def _draw_reserved(drawing: svgwrite.Drawing, reserved: Selection, axis: AddressAxis,
                   times: TimeAxis, clock: Clock, budget: int) -> None:
    """Reservations (allocator segments) as a pale background, the largest first; past a
    quarter of the rectangle budget the smallest are left out (the legend says how many)."""
    group = drawing.add(drawing.g(id="reserved"))
    if not len(reserved):
        return
    x0 = np.asarray(times.x(reserved.start))
    width = np.maximum(np.asarray(times.x(reserved.end)) - x0, MIN_WIDTH)
    top, bottom = axis.y_range(reserved.address, reserved.size)
    height = np.maximum(bottom - top, MIN_HEIGHT)
    order = np.argsort(-reserved.size, kind="stable")[:max(1, budget // 4)]
    for i in order.tolist():
        block = reserved.blocks[i]
        rect = drawing.rect((round(float(x0[i]), 2), round(float(bottom[i] - height[i]), 2)),
                            (round(float(width[i]), 2), round(float(height[i]), 2)),
                            fill=RESERVED_FILL, stroke=RESERVED_STROKE, class_="r")
        rect.set_desc(title="reserved " + block_tooltip(block, Trace(), clock))
        group.add(rect)
    reserved.left_out["reserved ranges beyond the budget"] = len(reserved) - len(order)


def svg_text(trace: Trace, options: MemflowOptions) -> str:
    """The SVG document text, with characters that XML cannot hold shown by their stand-ins
    (:func:`traceconv.markup.xml_safe`: names from traces can hold them).

    >>> from traceconv.model import MemoryBlock
    >>> t = Trace(); _ = t.add_memory_block(MemoryBlock(0, 64, 0, 9, name="a\x08b"))
    >>> "a\u2408b" in svg_text(t, MemflowOptions())
    True
    """
    return xml_safe(render(trace, options).tostring())


# -- blocks -------------------------------------------------------------------------------

def _draw_blocks(drawing: svgwrite.Drawing, trace: Trace, sel: Selection, axis: AddressAxis,
                 times: TimeAxis, coloring: Coloring, clock: Clock, budget: int) -> tuple[int, int]:
    """Draw every block (or cell of merged blocks); returns (blocks merged, cells drawn)."""
    group = drawing.add(drawing.g(id="blocks"))
    if not len(sel):
        return 0, 0
    x0 = np.asarray(times.x(sel.start))
    raw_width = np.asarray(times.x(sel.end)) - x0
    top, bottom = axis.y_range(sel.address, sel.size)
    raw_height = bottom - top
    alone, cells = _merge_subpixel(x0, bottom, raw_width, raw_height, axis.region_of,
                                   sel.size, coloring.entry_of, budget)
    width = np.maximum(raw_width, MIN_WIDTH)
    height = np.maximum(raw_height, MIN_HEIGHT)
    y = bottom - height
    colors = [coloring.entries[i].color for i in coloring.entry_of.tolist()]
    order = np.flatnonzero(alone)
    order = order[np.argsort(-sel.size[order], kind="stable")]   # small blocks on top
    for i in order.tolist():
        rect = drawing.rect((round(float(x0[i]), 2), round(float(y[i]), 2)),
                            (round(float(width[i]), 2), round(float(height[i]), 2)),
                            fill=colors[i], class_="b")
        rect.set_desc(title=block_tooltip(sel.blocks[i], trace, clock))
        group.add(rect)
    for cell in cells:
        rect = drawing.rect((cell.x, cell.y), (cell.side, cell.side), class_="m",
                            fill=coloring.entries[cell.entry].color)
        rect.set_desc(title=f"{cell.blocks:,} blocks merged into this cell "
                            f"({format_bytes(cell.bytes)} in all), each smaller than "
                            f"{cell.side:g} px; coloured as the blocks holding most bytes")
        group.add(rect)
    return int((~alone).sum()), len(cells)


@dataclass(frozen=True)
class Cell:
    """A square of merged sub-pixel blocks, coloured as the blocks holding most of its bytes."""

    x: float
    y: float
    side: float
    blocks: int
    bytes: int
    entry: int


def _merge_subpixel(x: np.ndarray, bottom: np.ndarray, width: np.ndarray, height: np.ndarray,
                    region: np.ndarray, size: np.ndarray, entry: np.ndarray, budget: int
                    ) -> tuple[np.ndarray, list[Cell]]:
    """Which blocks to draw alone, and the cells that the others merge into.

    Cells start at 1 px and double until blocks drawn alone plus cells fit ``budget``.
    """
    side = 1.0
    while len(x) > budget and side <= 256:
        small = (width < side) & (height < side)
        keys = np.stack((region, np.floor(x / side), np.floor(bottom / side)), axis=1)[small]
        unique, inverse = np.unique(keys, axis=0, return_inverse=True)
        if (~small).sum() + len(unique) <= budget or side == 256:
            inverse = inverse.ravel()
            n, kinds = len(unique), int(entry.max()) + 1
            counts = np.bincount(inverse, minlength=n).tolist()
            by_entry = np.bincount(inverse * kinds + entry[small], weights=size[small],
                                   minlength=n * kinds).reshape(n, kinds)
            nbytes = by_entry.sum(axis=1).tolist()
            dominant = by_entry.argmax(axis=1).tolist()
            cells = [Cell(cx * side, cy * side, side, count, int(b), e)
                     for (_, cx, cy), count, b, e in zip(unique.tolist(), counts, nbytes,
                                                         dominant, strict=True)]
            return ~small, cells
        side *= 2
    return np.ones(len(x), bool), []


def block_tooltip(block: MemoryBlock, trace: Trace, clock: Clock) -> str:
    """The tooltip text of one block: what it is, where, how big, and when.

    >>> b = MemoryBlock(0x7f00, 2048, 1_000, 3_000, device="cpu", name="conv1:o0",
    ...                 shape=(4, 128), dtype="float32", category="activation")
    >>> print(block_tooltip(b, Trace(), Clock(0)))
    conv1:o0
    0x7f00 – 0x8700 · 2 KiB (2,048 B) · cpu
    shape (4, 128) float32 · activation
    alloc 1 µs → free 3 µs · lifetime 2 µs
    """
    lines = [_block_name(block)]
    if block.owner_name is not None:
        node = trace.graph.nodes.get(block.owner_op) if block.owner_op is not None else None
        op_type = (node or {}).get("type")
        lines.append(f"owner op: {block.owner_name}" + (f" ({op_type})" if op_type else ""))
    place = " / ".join(x for x in (block.device, block.pool) if x)
    lines.append(f"{block.address:#x} – {block.end_address:#x} · {format_bytes(block.size)} "
                 f"({block.size:,} B)" + (f" · {place}" if place else ""))
    facts = []
    if block.shape is not None:
        facts.append(f"shape {tuple(block.shape)}" + (f" {block.dtype}" if block.dtype else ""))
    elif block.dtype:
        facts.append(block.dtype)
    if block.category:
        facts.append(block.category)
    if facts:
        lines.append(" · ".join(facts))
    alloc = "before the start" if block.alloc_ns is None else clock.at(block.alloc_ns)
    free = "never" if block.free_ns is None else clock.at(block.free_ns)
    span = (None if block.alloc_ns is None or block.free_ns is None
            else block.free_ns - block.alloc_ns)
    life = ("" if span is None else f" · lifetime {span} entries" if clock.logical
            else f" · lifetime {format_duration(span)}")
    lines.append(f"alloc {alloc} → free {free}{life}")
    return "\n".join(lines)


def _block_name(block: MemoryBlock, unnamed: str = "(unnamed block)") -> str:
    return block.name or block.owner_tensor or unnamed


# -- axes ---------------------------------------------------------------------------------

def _draw_region_bands(drawing: svgwrite.Drawing, axis: AddressAxis, frame: Frame) -> None:
    """Alternating light bands behind the regions, so each address range reads as a unit."""
    group = drawing.add(drawing.g(id="regions"))
    for i, region in enumerate(axis.regions):
        group.add(drawing.rect((frame.left, round(region.y_top, 2)),
                               (round(frame.right - frame.left, 2),
                                round(region.y_bottom - region.y_top, 2)),
                               fill="#f7f7f7" if i % 2 else "#fbfbfb"))


def _draw_address_axis(drawing: svgwrite.Drawing, axis: AddressAxis, sel: Selection,
                       frame: Frame) -> None:
    group = drawing.add(drawing.g(id="address-axis"))
    left = frame.left
    group.add(drawing.line((left, frame.plot_top), (left, frame.plot_bottom), class_="axis"))
    previous: Region | None = None
    for region in axis.regions:
        height = region.y_bottom - region.y_top
        step = nice_step(region.span, max(1, int(height / 36)), base=2)
        offset = step
        while offset < region.span and height > 30:
            y = round(float(region.y(region.low + offset)), 2)
            if y < region.y_top + 10:   # keep clear of the next region's address label
                break
            group.add(drawing.line((left - 4, y), (left, y), class_="axis"))
            group.add(drawing.text(f"+{format_bytes(offset)}", insert=(left - 6, y + 3),
                                   text_anchor="end", class_="small"))
            offset += step
        group.add(drawing.line((left - 8, region.y_bottom), (left, region.y_bottom),
                               class_="axis"))
        group.add(drawing.text(f"{region.low:#x}", insert=(left - 6, region.y_bottom - 2),
                               text_anchor="end"))
        device, pool = sel.spaces[region.space]
        name = " / ".join(x for x in (device, pool) if x) or "memory"
        label = drawing.text(f"{_shorten(name, 48)} · {format_bytes(region.span)}",
                             insert=(frame.right - 4, region.y_top + 11), text_anchor="end",
                             class_="small region")
        label.set_desc(title=f"{name}: {region.low:#x} – {region.high:#x}")
        group.add(label)
        if previous is not None:
            _draw_break(drawing, group, previous, region, frame)
        previous = region
    group.add(drawing.text("address", insert=(12, frame.plot_top - 6), class_="small"))


def _draw_break(drawing: svgwrite.Drawing, group: Group, below: Region, above: Region,
                frame: Frame) -> None:
    """A zig-zag across the plot where address space is left out."""
    y = below.y_top - BREAK_PX / 2
    points, x, up = [], frame.left - 10, True
    while x <= frame.right:
        points.append((round(x, 1), round(y + (-2.5 if up else 2.5), 1)))
        x, up = x + 6, not up
    group.add(drawing.polyline(points, class_="break"))
    if below.space == above.space:
        gap = format_bytes(above.low - below.high)
        note = drawing.text(f"⋯ {gap} skipped", insert=(frame.left + 4, y + 3), class_="small")
    else:
        note = drawing.text("⋯ next address space", insert=(frame.left + 4, y + 3),
                            class_="small")
    group.add(note)


def _draw_time_axis(drawing: svgwrite.Drawing, times: TimeAxis, clock: Clock, frame: Frame,
                    clock_name: str) -> None:
    group = drawing.add(drawing.g(id="time-axis"))
    y = frame.plot_bottom
    group.add(drawing.line((frame.left, y), (frame.right, y), class_="axis"))
    span = times.end - times.start
    # Integer ticks relative to the origin: epoch nanoseconds do not survive float maths.
    step = max(1, int(nice_step(span / clock.scale, max(2, int((frame.right - frame.left) / 90)))
                      * clock.scale))
    rel = -(-(times.start - clock.origin) // step) * step
    while clock.origin + rel <= times.end:
        x = round(float(times.x(clock.origin + rel)), 2)
        group.add(drawing.line((x, frame.plot_top), (x, y), class_="grid"))
        group.add(drawing.line((x, y), (x, y + 5), class_="axis"))
        group.add(drawing.text(f"{rel / clock.scale:g}", insert=(x, y + 17),
                               text_anchor="middle"))
        rel += step
    what = f"time ({clock.unit}) since the first event"
    if clock.logical:   # an order, not a time: say what the numbers count
        what = f"{clock.unit} since the first event · {clock_name}"
    elif clock_name.startswith("synthetic"):   # e.g. one op per µs in program order
        what += f" · {clock_name} clock"
    group.add(drawing.text(what, insert=((frame.left + frame.right) / 2, y + 34),
                           text_anchor="middle", class_="small"))


# -- live bytes ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Peak:
    device: str
    time: int
    bytes: int
    alive: list[int]   # indices into the selection, biggest first
    color: str
    row: int           # which label line along the top of the curve panel


def device_live_bytes(sel: Selection) -> dict[str, tuple[LiveBytes, np.ndarray]]:
    """Per device: the live-bytes step function inside the window, and its blocks' indices."""
    lo, hi = sel.window
    out = {}
    devices = sorted({sel.spaces[s][0] for s in sel.space.tolist()})
    for device in devices:
        rows = np.flatnonzero(np.array([sel.spaces[s][0] == device for s in sel.space.tolist()]))
        curve = live_bytes((sel.blocks[i] for i in rows.tolist()), start=lo, end=hi)
        out[device] = (_clip(curve, lo), rows)
    return out


def _clip(curve: LiveBytes, lo: int) -> LiveBytes:
    """Fold the changes before ``lo`` into one level at ``lo``."""
    before = int(np.searchsorted(curve.times, lo, side="right"))
    if before <= 1:
        return curve
    times = np.concatenate(([lo], curve.times[before:]))
    levels = np.concatenate((curve.bytes[before - 1:before], curve.bytes[before:]))
    return LiveBytes(times.astype(np.int64), levels, curve.beyond_int64)


def _draw_live_bytes(drawing: svgwrite.Drawing, sel: Selection, times: TimeAxis, frame: Frame,
                     clock: Clock) -> list[Peak]:
    group = drawing.add(drawing.g(id="live-bytes"))
    top, height = frame.curve_top, frame.curve_height
    bottom = top + height
    group.add(drawing.line((frame.left, bottom), (frame.right, bottom), class_="axis"))
    curves = device_live_bytes(sel)
    ceiling = max((int(c.bytes.max()) for c, _ in curves.values() if len(c.bytes)), default=0)
    group.add(drawing.text(format_bytes(ceiling), insert=(frame.left - 6, top + 4),
                           text_anchor="end", class_="small"))
    group.add(drawing.text("0", insert=(frame.left - 6, bottom), text_anchor="end",
                           class_="small"))
    group.add(drawing.text("live bytes", insert=(12, top - 6), class_="small"))
    peaks: list[Peak] = []
    for n, (device, (curve, rows)) in enumerate(curves.items()):
        if not len(curve.times):
            continue
        color = CURVE_COLORS[n % len(CURVE_COLORS)]
        xs = np.asarray(times.x(np.append(curve.times, times.end)))
        ys = bottom - curve.bytes / max(ceiling, 1) * height
        group.add(drawing.path(_step_path(xs, ys), stroke=color, fill="none",
                               stroke_width=1.2, id=f"curve-{n}"))
        peak_time, peak_bytes = curve.peak
        alive = _alive_at(sel, rows, peak_time)
        peaks.append(Peak(device, peak_time, peak_bytes, alive, color, len(peaks)))
        _draw_peak(drawing, group, sel, times, frame, clock, peaks[-1], ceiling)
    return peaks


def _step_path(xs: np.ndarray, ys: np.ndarray) -> str:
    """An SVG path for a step function, at most a few points per pixel column."""
    columns = np.floor(xs[:-1]).astype(np.int64)
    if len(columns) > 4 * (columns.max() - columns.min() + 1):
        starts = np.flatnonzero(np.append(True, columns[1:] != columns[:-1]))
        highs = np.maximum.reduceat(-ys, starts) * -1   # smallest y = highest level
        ends = np.append(starts[1:], len(ys)) - 1
        xs = np.append(xs[starts], xs[-1])
        ys = np.ravel(np.column_stack((highs, ys[ends])))
        xs = np.ravel(np.column_stack((xs[:-1], xs[:-1] + 0.5)))
        xs = np.append(xs, xs[-1] + 0.5)
    parts = [f"M{xs[0]:.2f},{ys[0]:.2f}"]
    for i in range(1, len(ys)):
        parts.append(f"H{xs[i]:.2f}V{ys[i]:.2f}")
    parts.append(f"H{xs[-1]:.2f}")
    return "".join(parts)


def _alive_at(sel: Selection, rows: np.ndarray, t: int) -> list[int]:
    """Blocks of ``rows`` alive at ``t`` (alloc ≤ t < free), biggest first."""
    blocks = sel.blocks
    alive = [i for i in rows.tolist()
             if (blocks[i].alloc_ns is None or blocks[i].alloc_ns <= t)
             and (blocks[i].free_ns is None or blocks[i].free_ns > t)]
    return sorted(alive, key=lambda i: -blocks[i].size)


def _draw_peak(drawing: svgwrite.Drawing, group: Group, sel: Selection, times: TimeAxis,
               frame: Frame, clock: Clock, peak: Peak, ceiling: int) -> None:
    x = round(float(times.x(peak.time)), 2)
    y = frame.curve_top + frame.curve_height * (1 - peak.bytes / max(ceiling, 1))
    marker = drawing.g(class_="peak-marker", data_device=peak.device,
                       data_peak_bytes=str(peak.bytes), data_peak_time_ns=str(peak.time),
                       data_alive_blocks=str(len(peak.alive)))
    marker.add(drawing.line((x, frame.curve_top), (x, frame.plot_bottom), class_="peak"))
    marker.add(drawing.circle((x, round(y, 2)), 3.5, fill=peak.color))
    where = f"{_shorten(peak.device, 32)} " if peak.device else ""
    label = (f"{where}peak {format_bytes(peak.bytes)} at {clock.at(peak.time)} · "
             f"{len(peak.alive)} blocks alive")
    anchor = "end" if x > (frame.left + frame.right) / 2 else "start"
    label_y = frame.curve_top + 12 + 13 * peak.row   # one line per device, no overlaps
    marker.add(drawing.text(label, insert=(x + (-8 if anchor == "end" else 8), label_y),
                            text_anchor=anchor, style=f"fill: {peak.color}", class_="region"))
    shown = peak.alive[:20]
    lines = [label, *(f"{format_bytes(b.size):>10}  {_block_name(b, hex(b.address))}"
                      for b in (sel.blocks[i] for i in shown))]
    if len(peak.alive) > len(shown):
        lines.append(f"… and {len(peak.alive) - len(shown)} more")
    marker.set_desc(title="\n".join(lines))
    group.add(marker)


# -- legend -------------------------------------------------------------------------------

def _draw_legend(drawing: svgwrite.Drawing, sel: Selection, axis: AddressAxis,
                 coloring: Coloring, merged: tuple[int, int], peaks: list[Peak],
                 frame: Frame, reserved: Selection) -> None:
    group = drawing.add(drawing.g(id="legend"))
    x = frame.width - frame.legend_width + 10
    y = frame.plot_top
    group.add(drawing.text(f"colour: {coloring.title}", insert=(x, y), class_="title"))
    y += 18
    for entry in coloring.entries:
        group.add(drawing.rect((x, y - 9), (12, 12), fill=entry.color))
        text = drawing.text(_shorten(entry.label, 30), insert=(x + 18, y + 1))
        text.set_desc(title=f"{entry.label}: {entry.blocks:,} blocks, {format_bytes(entry.bytes)}")
        group.add(text)
        group.add(drawing.text(f"{entry.blocks:,} blocks · {format_bytes(entry.bytes)} allocated",
                               insert=(x + 18, y + 12), class_="small"))
        y += LEGEND_ROW
    if len(reserved):
        group.add(drawing.rect((x, y - 9), (12, 12), fill=RESERVED_FILL, stroke=RESERVED_STROKE))
        group.add(drawing.text("reserved (allocator segments)", insert=(x + 18, y + 1)))
        # the most reserved at once: a segment that grows or shrinks is a range per size,
        # so the ranges' sum would count it again at each change
        lo, hi = reserved.window
        peak = _clip(live_bytes(reserved.blocks, start=lo, end=hi), lo).bytes.max(initial=0)
        group.add(drawing.text(f"{len(reserved):,} ranges · {format_bytes(int(peak))} "
                               "at the peak", insert=(x + 18, y + 12), class_="small"))
        y += LEGEND_ROW
    blocks_merged, cells = merged
    if cells:
        group.add(drawing.rect((x, y - 9), (12, 12), fill="white", stroke=MERGED_COLOR,
                               stroke_dasharray="2 1"))
        group.add(drawing.text(f"{blocks_merged:,} sub-pixel blocks", insert=(x + 18, y + 1)))
        group.add(drawing.text(f"merged into {cells:,} cells", insert=(x + 18, y + 12),
                               class_="small"))
        y += LEGEND_ROW
    notes = [f"{len(sel):,} of {sel.total:,} blocks drawn"
             + (f" ({len(sel) - blocks_merged:,} alone)" if cells else "")]
    notes += [f"{n:,} {reason}" for reason, n in (*sel.left_out.items(),
                                                  *reserved.left_out.items()) if n]
    if len(axis.regions) > 1:
        notes.append(f"address axis: {len(axis.regions)} regions"
                     + ("," if axis.skipped else ""))
    if axis.skipped:
        notes.append(f"  {format_bytes(axis.skipped)} of gaps skipped")
    for peak in peaks:
        notes.append(f"peak {format_bytes(peak.bytes)}"
                     + (f" on {_shorten(peak.device, 30)}" if peak.device else ""))
    y += 8
    for note in notes:
        group.add(drawing.text(note, insert=(x, y), class_="small"))
        y += 14


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
