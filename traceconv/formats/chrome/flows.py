"""Binding Chrome flow events (``s``/``t``/``f``, flow v2 ``bind_id``) to slices."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...analysis.slice_index import SliceIndex
from ...model import Trace


@dataclass(slots=True)
class FlowPoint:
    """One flow event: where it is, and how it binds (``row`` set when bound already)."""

    key: tuple            # (category, id): ids are unique only within a category
    phase: str            # "s" start, "t" step, "f" finish
    place: Any            # what the reader's track resolver maps to candidate tracks
    ts: int
    enclosing: bool       # bind to the enclosing slice (bp:"e", s and t) or the next one (f)
    seq: int              # position in the file, to order points with equal timestamps
    name: str = ""
    row: int | None = None


def link_flows(trace: Trace, points: list[FlowPoint], tracks_of: Callable[[Any], list[int]],
               index: SliceIndex) -> None:
    """Turn flow points into model flows between the slices they bind to.

    Points with the same (category, id) form a chain in time order; each consecutive pair of
    bound slices becomes a flow. ``tracks_of(point.place)`` lists the tracks a point may sit
    on (the first that binds wins); ``index`` holds the trace's slices. Chains with a single endpoint and points that bind to
    no slice are counted in the diagnostics.
    """
    if not points:
        return
    chains: dict[tuple, list[FlowPoint]] = defaultdict(list)
    for point in points:
        chains[point.key].append(point)
    diags = trace.diagnostics
    unbound = dangling = 0
    unbound_example = dangling_example = None
    for (category, flow_id), chain in chains.items():
        chain.sort(key=lambda p: (p.ts, p.seq))
        rows = []
        for point in chain:
            row = point.row
            for track in tracks_of(point.place) if row is None else ():
                row = index.bind(track, point.ts, point.enclosing)
                if row is not None:
                    break
            if row is None:
                unbound += 1
                unbound_example = unbound_example or f"{category} id {flow_id} at {point.ts} ns"
            elif not rows or rows[-1][0] != row:
                rows.append((row, point))
        if len(rows) < 2:
            dangling += len(rows)
            dangling_example = dangling_example or f"{category} id {flow_id}: only '{chain[0].phase}'"
            continue
        for (src, point), (dst, _) in zip(rows, rows[1:], strict=False):
            trace.add_flow(src, dst, category, point.name)
    diags.add("chrome.flow_unbound", "flow events with no slice to bind to (no slice at that "
              "time on that thread)", kind="dropped", count=unbound,
              example=unbound_example)
    diags.add("chrome.flow_dangling", "flow events whose other end is missing (a start with no "
              "finish or a finish with no start)", kind="dropped", count=dangling,
              example=dangling_example)
