"""Binding Chrome flow events (``s``/``t``/``f``, flow v2 ``bind_id``) to slices."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from ...analysis.slice_index import SliceIndex
from ...keys import factorize, first_codes
from ...model import Trace
from ...model.strings import StringTable


class FlowPoints:
    """Flow events as columns, in file order (a GPU trace holds two per kernel launch).

    Each point has a category and an id (ids are unique only within a category), a phase
    (``s`` start, ``t`` step, ``f`` finish), a place that the reader's track resolver maps
    to candidate tracks, a time, whether it binds to the enclosing slice (``bp:"e"``, ``s``
    and ``t``) or the next one to start (``f``), a name (empty: the category's), and the
    slice row when it is bound already (flow v2), else -1.

    >>> points = FlowPoints(); points.add("fwd", 1, "s", (1, 1), 10, True, "")
    >>> len(points), points.ts
    (1, [10])
    """

    __slots__ = ("categories", "enclosing", "ids", "names", "phases", "places", "rows", "ts")

    def __init__(self) -> None:
        self.categories: list[str] = []
        self.ids: list[Any] = []
        self.phases: list[str] = []
        self.places: list[Any] = []
        self.ts: list[int] = []
        self.enclosing: list[bool] = []
        self.names: list[str | None] = []
        self.rows: list[int] = []

    def __len__(self) -> int:
        return len(self.ts)

    def add(self, category: str, flow_id: Any, phase: str, place: Any, ts: int,
            enclosing: bool, name: str | None, row: int = -1) -> None:
        self.categories.append(category)
        self.ids.append(flow_id)
        self.phases.append(phase)
        self.places.append(place)
        self.ts.append(ts)
        self.enclosing.append(enclosing)
        self.names.append(name)
        self.rows.append(row)

    def extend(self, categories: list[str], ids: list[Any], phases: list[str],
               places: list[Any], ts: list[int], enclosing: list[bool],
               names: list[str | None]) -> None:
        """:meth:`add` for many unbound points at once (equal-length lists)."""
        self.categories += categories
        self.ids += ids
        self.phases += phases
        self.places += places
        self.ts += ts
        self.enclosing += enclosing
        self.names += names
        self.rows += [-1] * len(ids)

    def shift(self, offset: int) -> None:
        """Add ``offset`` to every time (the trace's time base)."""
        self.ts = (np.asarray(self.ts, dtype=np.int64) + offset).tolist()

    def chains(self) -> np.ndarray:
        """Each point's chain: the points of one (category, id), numbered in the order of
        their first point.

        >>> points = FlowPoints()
        >>> for category, flow_id in [("a", 1), ("b", 1), ("a", 1), ("a", 2)]:
        ...     points.add(category, flow_id, "s", (1, 1), 0, True, "")
        >>> points.chains().tolist()
        [0, 1, 0, 2]
        """
        one_category = len(set(self.categories)) < 2   # (the usual case: ids alone)
        keys = self.ids if one_category else zip(self.categories, self.ids, strict=True)
        return first_codes(keys)[0]

    def interned(self, strings: StringTable, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The category and name ids of ``points`` (a name left empty is the category's),
        interned in ``strings`` as they come: every category, then every name."""
        category = _interned(strings, self.categories, points)
        name = _interned(strings, self.names, points)
        return category, np.where(name == 0, category, name)


def _interned(strings: StringTable, texts: Sequence[str | None], points: np.ndarray
              ) -> np.ndarray:
    """The ids of ``texts[points]`` (0, the empty string's, for None), interning the new
    ones in that order with one call per distinct text."""
    chosen = list(map(texts.__getitem__, points.tolist()))
    ids: dict[Any, int] = strings.ids
    for text in dict.fromkeys(chosen):
        if text and text not in ids:
            strings.intern(text)
    return np.fromiter(map(ids.get, chosen, repeat(0)), dtype=np.int32, count=len(chosen))


def link_flows(trace: Trace, points: FlowPoints, tracks_of: Callable[[Any], list[int]],
               index: SliceIndex) -> None:
    """Turn flow points into model flows between the slices they bind to.

    Points with the same key form a chain in time order (file order among equal times);
    each consecutive pair of distinct bound slices becomes a flow, chains in the order of
    their first point in the file. ``tracks_of(place)`` lists the tracks a point may sit on
    (the first that binds wins); ``index`` holds the trace's slices. Points that bind to no
    slice, and chains left with a single endpoint, are counted in the diagnostics. Points
    are bound all at once per track (numpy): a GPU trace has two per kernel launch.
    """
    if not len(points):
        return
    chain = points.chains()
    ts = np.asarray(points.ts, dtype=np.int64)
    rows = _bind(points, ts, tracks_of, index)
    order = np.lexsort((np.arange(len(ts)), ts, chain))   # chain by chain, in time order
    sorted_chain = chain[order]
    bound = order[rows[order] >= 0]
    bound_rows, bound_chain = rows[bound], chain[bound]
    # a point on the slice that the previous point of its chain bound to adds no flow
    repeat = np.zeros(len(bound), dtype=bool)
    repeat[1:] = (bound_chain[1:] == bound_chain[:-1]) & (bound_rows[1:] == bound_rows[:-1])
    bound, bound_rows, bound_chain = bound[~repeat], bound_rows[~repeat], bound_chain[~repeat]
    pairs = np.flatnonzero(bound_chain[1:] == bound_chain[:-1])
    categories, names = points.interned(trace.strings, bound[pairs])
    flows = trace.flows
    flows.source.frombytes(bound_rows[pairs].tobytes())
    flows.target.frombytes(bound_rows[pairs + 1].tobytes())
    flows.category.frombytes(categories.tobytes())
    flows.name.frombytes(names.tobytes())
    _report(trace, points, order[rows[order] < 0], sorted_chain, order,
            np.bincount(bound_chain, minlength=int(chain.max()) + 1))


def _bind(points: FlowPoints, ts: np.ndarray, tracks_of: Callable[[Any], list[int]],
          index: SliceIndex) -> np.ndarray:
    """The slice row of every point (-1: none), trying its candidate tracks in turn."""
    place, places = factorize(points.places)
    candidates = [tracks_of(p) for p in places]
    rows = np.asarray(points.rows, dtype=np.int64)
    enclosing = np.asarray(points.enclosing, dtype=bool)
    for attempt in range(max(map(len, candidates), default=0)):
        track_of_place = np.array([c[attempt] if attempt < len(c) else -1 for c in candidates],
                                  dtype=np.int64)
        track = track_of_place[place]
        todo = np.flatnonzero((rows < 0) & (track >= 0))
        rows[todo] = index.bind_many(track[todo], ts[todo], enclosing[todo])
    return rows


def _report(trace: Trace, points: FlowPoints, unbound: np.ndarray,
            sorted_chain: np.ndarray, order: np.ndarray, per_chain: np.ndarray) -> None:
    """Count unbound points (example: the first in chain order) and the bound points of
    chains left with fewer than two (example: the first such chain and its first phase)."""
    diags = trace.diagnostics
    if len(unbound):
        first = int(unbound[0])
        category, flow_id = points.categories[first], points.ids[first]
        diags.add("chrome.flow_unbound", "flow events with no slice to bind to (no slice at "
                  "that time on that thread)", kind="dropped", count=len(unbound),
                  example=f"{category} id {flow_id} at {points.ts[first]} ns")
    short = np.flatnonzero(per_chain < 2)
    if len(short) and per_chain[short].any():
        chain = int(short[0])
        first = int(order[np.searchsorted(sorted_chain, chain)])
        category, flow_id = points.categories[first], points.ids[first]
        diags.add("chrome.flow_dangling", "flow events whose other end is missing (a start "
                  "with no finish or a finish with no start)", kind="dropped",
                  count=int(per_chain[short].sum()),
                  example=f"{category} id {flow_id}: only '{points.phases[first]}'")
