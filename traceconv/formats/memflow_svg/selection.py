"""Which memory blocks a picture shows, and their drawn extent as numpy columns.

The renderer works on arrays, not on :class:`MemoryBlock` objects, so that a trace with tens
of thousands of blocks lays out in milliseconds. Blocks with no alloc time start at the left
edge of the window and blocks that never free run to its right edge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ...errors import FormatError
from ...model import MemoryBlock, Trace
from ...model.block_table import BlockTable
from ...outputs import inputs_named

ColorBy = Literal["lifetime", "op-type", "category", "owner"]
COLOR_BY: tuple[str, ...] = ("lifetime", "op-type", "category", "owner")
# The picture's sides in pixels, least and most: every axis, tick row and break line is
# drawn across them, so a side of 10^26 pixels would never finish drawing.
WIDTH_RANGE, HEIGHT_RANGE = (400, 100_000), (300, 100_000)

NO_BLOCKS = ("no memory blocks in this trace (its reader found no allocations); see "
             "`traceconv info`")


@dataclass(frozen=True)
class MemflowOptions:
    """What to draw and how big.

    ``start``/``end`` bound the time window in trace-clock nanoseconds (default: the span of
    the blocks); ``device``/``pool`` keep only blocks whose device/pool equals the value;
    ``min_size`` drops smaller blocks (the default 1 hides empty blocks); ``max_rects`` is
    the number of rectangles above which sub-pixel blocks are merged into cells.
    """

    device: str | None = None
    pool: str | None = None
    start: int | None = None
    end: int | None = None
    min_size: int = 1
    color_by: ColorBy = "lifetime"
    width: int = 1600
    height: int = 900
    max_rects: int = 20_000
    title: str | None = None

    def __post_init__(self) -> None:
        if self.color_by not in COLOR_BY:
            raise ValueError(f"color_by must be one of {', '.join(COLOR_BY)}")
        if not (WIDTH_RANGE[0] <= self.width <= WIDTH_RANGE[1]
                and HEIGHT_RANGE[0] <= self.height <= HEIGHT_RANGE[1]):
            raise ValueError(f"the picture needs {WIDTH_RANGE[0]} to {WIDTH_RANGE[1]:,} pixels "
                             f"across and {HEIGHT_RANGE[0]} to {HEIGHT_RANGE[1]:,} down, not "
                             f"{self.width} x {self.height}")
        if self.start is not None and self.end is not None and self.end <= self.start:
            raise ValueError("the time window ends before it starts")


def checked_options(trace: Trace, **options: object) -> MemflowOptions:
    """``options`` as :class:`MemflowOptions`, refused with a clear error when the picture
    would be empty for a reason the caller can fix (no blocks at all, an unknown device or
    pool, a bad size or window). Device and pool names match regardless of case
    (``cuda:0`` picks a trace's ``CUDA:0``) when that leaves one name.

    >>> t = Trace(); _ = t.add_memory_block(MemoryBlock(0, 64, 0, 10, device="CUDA:0"))
    >>> checked_options(t, device="cuda:0").device
    'CUDA:0'
    >>> checked_options(t, device="cuda:1")
    Traceback (most recent call last):
    ...
    traceconv.errors.FormatError: no memory blocks on device 'cuda:1' (the trace has: 'CUDA:0')
    """
    if not trace.memory:
        raise FormatError(NO_BLOCKS, file=inputs_named(trace))
    for field_name in ("device", "pool"):
        value = options.get(field_name)
        values, codes = trace.memory.coded(field_name)
        known = sorted({values[code] for code in np.unique(codes).tolist()})
        if isinstance(value, str) and value not in known:
            same = [k for k in known if isinstance(k, str) and k.casefold() == value.casefold()]
            if len(same) == 1:
                value = options[field_name] = same[0]
        if value is not None and value not in known:
            raise FormatError(f"no memory blocks on {field_name} {value!r} (the trace has: "
                              f"{', '.join(repr(k) for k in known)})",
                              file=inputs_named(trace))
    try:
        return MemflowOptions(**options)  # type: ignore[arg-type]
    except ValueError as exc:
        raise FormatError(str(exc)) from None


@dataclass
class Selection:
    """The blocks to draw, as parallel columns, plus what was left out and why."""

    blocks: list[MemoryBlock]
    spaces: list[tuple[str, str]]     # (device, pool) address spaces, in first-seen order
    space: np.ndarray                 # int64 index into spaces, per block
    address: np.ndarray               # int64
    size: np.ndarray                  # int64
    start: np.ndarray                 # int64 drawn start (alloc, or the window start)
    end: np.ndarray                   # int64 drawn end (free, or the window end)
    window: tuple[int, int]
    origin: int                       # time shown as 0 on the axis
    total: int                        # blocks in the trace
    left_out: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.blocks)


def known_times(blocks: BlockTable) -> np.ndarray:
    """The alloc and free times of ``blocks`` that are known.

    >>> known_times(BlockTable([MemoryBlock(0, 8, None, 4), MemoryBlock(0, 8, 2, 6)])).tolist()
    [2, 4, 6]
    """
    return np.concatenate([blocks.numbers(name)[blocks.known(name)]
                           for name in ("alloc_ns", "free_ns")])


def time_origin(trace: Trace) -> int:
    """The time the picture's axis shows as 0: the first block event or trace event."""
    span, times = trace.time_range, known_times(trace.memory)
    return min([*([int(times.min())] if len(times) else []), *([span[0]] if span else [])],
               default=0)


def select(trace: Trace, options: MemflowOptions) -> Selection:
    """The blocks of ``trace`` that ``options`` keep, clipped to the time window.

    >>> t = Trace()
    >>> for addr, size, a, f in [(0, 64, 0, 10), (64, 0, 5, 6), (128, 32, 20, None)]:
    ...     _ = t.add_memory_block(MemoryBlock(addr, size, a, f, device="cpu"))
    >>> s = select(t, MemflowOptions(end=15))
    >>> len(s), s.window, s.left_out
    (1, (0, 15), {'smaller than the minimum size': 1, 'outside the time window': 1})
    """
    times = known_times(trace.memory)
    if not len(times):
        times = known_times(trace.reservations)
    lo = options.start if options.start is not None else int(times.min()) if len(times) else 0
    hi = options.end if options.end is not None else int(times.max()) if len(times) else lo + 1
    if hi <= lo:
        hi = lo + 1
    return _pick(trace.memory, options, (lo, hi), time_origin(trace), {})


def select_reserved(trace: Trace, options: MemflowOptions, blocks: Selection) -> Selection:
    """The reservations (allocator segments) to draw behind ``blocks``, in the same window
    and address spaces (a reservation can open a new space: ``blocks.spaces`` grows).

    >>> t = Trace(); _ = t.add_memory_block(MemoryBlock(64, 32, 5, 8, device="gpu"))
    >>> _ = t.add_reservation(MemoryBlock(0, 1024, 0, None, device="gpu"))
    >>> r = select_reserved(t, MemflowOptions(), select(t, MemflowOptions()))
    >>> len(r), r.start.tolist(), r.end.tolist(), r.spaces
    (1, [5], [8], [('gpu', '')])
    """
    spaces = dict(zip(blocks.spaces, range(len(blocks.spaces)), strict=True))
    reserved = _pick(trace.reservations, options, blocks.window, blocks.origin, spaces)
    blocks.spaces[:] = reserved.spaces
    return reserved


def _pick(blocks: BlockTable, options: MemflowOptions, window: tuple[int, int],
          origin: int, spaces: dict[tuple[str, str], int]) -> Selection:
    """The blocks that ``options`` keep inside ``window``, as columns (``spaces`` grows),
    decided a column at a time; each block left out is counted under the first reason
    that applies, the reasons in the order their first block comes."""
    lo, hi = window
    values, device = blocks.coded("device")
    pool = blocks.coded("pool")[1]
    size = blocks.numbers("size")
    alloc, alloc_known = blocks.numbers("alloc_ns"), blocks.known("alloc_ns")
    free, free_known = blocks.numbers("free_ns"), blocks.known("free_ns")
    undecided = np.ones(len(blocks), dtype=bool)
    reasons: list[tuple[str, np.ndarray]] = []
    for reason, out in (
            (f"not on device {options.device}", None if options.device is None
             else ~_is(values, device, options.device)),
            (f"not in pool {options.pool}", None if options.pool is None
             else ~_is(values, pool, options.pool)),
            ("smaller than the minimum size", size < options.min_size),
            ("outside the time window", (alloc_known & (alloc > hi)) | (free_known & (free < lo)))):
        if out is not None:
            reasons.append((reason, undecided & out))
            undecided &= ~out
    firsts = sorted((int(np.argmax(out)), reason, int(out.sum()))
                    for reason, out in reasons if out.any())
    left_out = {reason: count for _, reason, count in firsts}
    kept = np.flatnonzero(undecided)
    pairs = [(values[d], values[p]) for d, p in zip(device[kept].tolist(), pool[kept].tolist(),
                                                    strict=True)]
    space = [spaces.setdefault(pair, len(spaces)) for pair in pairs]
    return Selection(
        blocks.rows(kept.tolist()), list(spaces),
        np.asarray(space, np.int64), blocks.numbers("address")[kept], size[kept],
        np.where(alloc_known[kept], np.maximum(alloc[kept], lo), lo),
        np.where(free_known[kept], np.minimum(free[kept], hi), hi),
        (lo, hi), origin, len(blocks), left_out)


def _is(values: list[Any], codes: np.ndarray, wanted: str) -> np.ndarray:
    """Per code, whether its value is ``wanted``."""
    return np.isin(codes, [code for code, value in enumerate(values) if value == wanted])
