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

    Points with the same key form a chain in time order (file order among equal times).
    Each step (``t``) and finish (``f``) is linked from the latest start or step before it
    in its chain, or when none came before from the chain's first start (stamped later on
    another clock) or its first point (a chain of finishes alone): a graph launch
    (``hipGraphLaunch``, ``cudaGraphLaunch``) has one start (or a first finish on the
    runtime call) and a finish on every kernel of the graph, and each kernel is linked to
    the launch, never kernel to kernel. Chains come in the order of their first point in
    the file. ``tracks_of(place)`` lists the tracks a point may sit on (the first that
    binds wins); ``index`` holds the trace's slices. Points that bind to no slice, and
    bound points that link nowhere (a start restarted before any finish), are counted in the
    diagnostics; a point on the slice its source is on adds nothing and is no loss. Points are bound all at
    once per track (numpy): a GPU trace has two per kernel launch.
    """
    if not len(points):
        return
    chain = points.chains()
    ts = np.asarray(points.ts, dtype=np.int64)
    rows = _bind(points, ts, tracks_of, index)
    order = np.lexsort((np.arange(len(ts)), ts, chain))   # chain by chain, in time order
    bound = order[rows[order] >= 0]
    phases = np.array([points.phases[p] for p in bound.tolist()], dtype="U1")
    sources, targets = fan_out(chain[bound], phases != "f", phases == "s")
    # a flow from a slice to itself, or a chain's second between the same slices, adds nothing
    used = np.zeros(len(bound), dtype=bool)
    used[sources] = used[targets] = True   # (also the points of a link added already)
    ends = np.stack([chain[bound[sources]], rows[bound[sources]], rows[bound[targets]]])
    keep = np.flatnonzero(ends[1] != ends[2])
    if len(keep):
        _, first = np.unique(ends[:, keep], axis=1, return_index=True)
        keep = keep[np.sort(first)]
    sources, targets = sources[keep], targets[keep]
    categories, names = points.interned(trace.strings, bound[sources])
    flows = trace.flows
    flows.source.frombytes(rows[bound[sources]].tobytes())
    flows.target.frombytes(rows[bound[targets]].tobytes())
    flows.category.frombytes(categories.tobytes())
    flows.name.frombytes(names.tobytes())
    _report(trace, points, order[rows[order] < 0], bound[~used])


def fan_out(chain: np.ndarray, starts: np.ndarray, opens: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """The (source, target) positions of the flows of points sorted chain by chain in time
    order. ``starts``: the point starts or steps a flow (``s``, ``t``), ``opens``: it only
    starts one (``s``). Every point that does not only start links from the latest start
    before it in its chain; with none before it, from the chain's first start (a finish
    stamped before its start: two clocks), else from the chain's first point (a chain of
    finishes alone).

    >>> # s f f f (a graph launch), f f (a memset: runtime call, device op), s f s f, f s, s t f
    >>> chain = np.array([0, 0, 0, 0, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4, 4])
    >>> phases = np.array(list("sfff" "ff" "sfsf" "fs" "stf"))
    >>> [p.tolist() for p in fan_out(chain, phases != "f", phases == "s")]
    [[0, 0, 0, 4, 6, 8, 11, 12, 13], [1, 2, 3, 5, 7, 9, 10, 13, 14]]
    """
    if not len(chain):
        return chain[:0], chain[:0]
    position = np.arange(len(chain))
    new_chain = np.ones(len(chain), dtype=bool)
    new_chain[1:] = chain[1:] != chain[:-1]
    chain_first = np.maximum.accumulate(np.where(new_chain, position, 0))
    latest_start = np.maximum.accumulate(np.where(starts, position, -1))
    # (the latest start before a point, not the point itself: a point is never its own source)
    before = np.concatenate(([-1], latest_start[:-1]))
    heads = np.flatnonzero(new_chain)
    first_start = np.minimum.reduceat(np.where(starts, position, len(chain)), heads)
    first_start = first_start[np.cumsum(new_chain) - 1]   # per point: its chain's
    fallback = np.where(first_start < len(chain), first_start, chain_first)
    source = np.where(before >= chain_first, before, fallback)
    target = ~opens & (source != position)
    return source[target], position[target]


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


def _report(trace: Trace, points: FlowPoints, unbound: np.ndarray, unused: np.ndarray
            ) -> None:
    """Count unbound points and bound points that no flow uses (example: the first of each
    in chain order)."""
    diags = trace.diagnostics
    if len(unbound):
        first = int(unbound[0])
        category, flow_id = points.categories[first], points.ids[first]
        diags.add("chrome.flow_unbound", "flow events with no slice to bind to (no slice at "
                  "that time on that thread)", kind="dropped", count=len(unbound),
                  example=f"{category} id {flow_id} at {points.ts[first]} ns")
    if len(unused):
        first = int(unused[0])
        category, flow_id = points.categories[first], points.ids[first]
        diags.add("chrome.flow_dangling", "flow events whose other end is missing (a start "
                  "with no finish or a finish with no start)", kind="dropped",
                  count=len(unused), example=f"{category} id {flow_id}: only "
                  f"'{points.phases[first]}'")
