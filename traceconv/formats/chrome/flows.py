"""Binding Chrome flow events (``s``/``t``/``f``, flow v2 ``bind_id``) to slices."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import repeat
from operator import eq
from typing import Any

import numpy as np

from ...keys import first_codes, first_places
from ...model import Trace
from ...model.instant_slices import bound_slices
from ...model.slice_index import SliceIndex
from ...model.strings import StringTable
from ...model.typed_arrays import extend_typed

_FINISH = ord("f")
_START = ord("s")


class FlowPoints:
    """Flow events as numpy columns, in file order (a GPU trace holds two per kernel launch).

    Each point has a category and an id (ids are unique only within a category), a phase
    (``s`` start, ``t`` step, ``f`` finish, as its byte), a place that the reader's track
    resolver maps to candidate tracks, a time, whether it binds to the enclosing slice
    (``bp:"e"``, ``s`` and ``t``) or the next one to start (``f``), a name (empty: the
    category's), and the slice row when it is bound already (flow v2), else -1. Places,
    categories and names are kept as codes into ``places`` and ``texts`` (their distinct
    values in first-seen order), the columns as one numpy array per piece of the file
    (:meth:`extend`; single points from :meth:`add` are gathered into one).

    >>> points = FlowPoints(); points.add("fwd", 1, "s", (1, 1), 10, True, "")
    >>> len(points), points.ts.tolist(), points.places, points.texts
    (1, [10], [(1, 1)], ['fwd', ''])
    """

    __slots__ = ("_codes", "_columns", "_pending", "ids", "places", "texts")

    #: the columns, in the order of a piece's arrays
    COLUMNS = ("ts", "phase", "enclosing", "place", "category", "name", "row")
    _TYPES = (np.int64, np.uint8, bool, np.int32, np.int32, np.int32, np.int64)

    def __init__(self) -> None:
        self.ids: list[Any] = []
        self.places: list[Any] = []
        self.texts: list[str | None] = []
        self._codes: tuple[dict[Any, int], dict[Any, int]] = ({}, {})   # places, texts
        self._columns: list[list[np.ndarray]] = [[] for _ in self.COLUMNS]
        self._pending: list[list[Any]] = [[] for _ in self.COLUMNS]

    def __len__(self) -> int:
        return len(self.ids)

    def place_code(self, place: Any) -> int:
        """The code of a (normalised) place, new ones numbered as they come."""
        return _code(self._codes[0], self.places, place)

    def text_codes(self, texts: list[Any], normal: Callable[[Any], Any] | None = None
                   ) -> np.ndarray:
        """The codes of ``texts`` (``normal`` applied to each distinct one first)."""
        codes, distinct = self._codes[1], self.texts
        return codes_of(texts, lambda t: _code(codes, distinct, t if normal is None
                                               else normal(t)))

    def add(self, category: str, flow_id: Any, phase: str, place: Any, ts: int,
            enclosing: bool, name: str | None, row: int = -1) -> None:
        codes, texts = self._codes[1], self.texts
        self.ids.append(flow_id)
        for column, value in zip(self._pending, (
                ts, ord(phase), enclosing, self.place_code(place), _code(codes, texts, category),
                _code(codes, texts, name), row), strict=True):
            column.append(value)

    def extend(self, ids: list[Any], ts: np.ndarray, phase: np.ndarray, enclosing: np.ndarray,
               place: np.ndarray, category: np.ndarray, name: np.ndarray) -> None:
        """:meth:`add` for a piece of unbound points at once (equal-length columns; place,
        category and name as codes)."""
        self._flush()
        self.ids += ids
        for column, values in zip(self._columns, (
                ts, phase, enclosing, place, category, name,
                np.full(len(ids), -1, dtype=np.int64)), strict=True):
            column.append(values)

    def _flush(self) -> None:
        """Move the points :meth:`add` gathered into a piece of columns."""
        if self._pending[0]:
            for column, values, kind in zip(self._columns, self._pending, self._TYPES,
                                            strict=True):
                column.append(np.array(values, dtype=kind))
                values.clear()

    def column(self, name: str) -> np.ndarray:
        """One column of every point (the pieces joined, once)."""
        self._flush()
        pieces = self._columns[self.COLUMNS.index(name)]
        if len(pieces) != 1:
            kind = self._TYPES[self.COLUMNS.index(name)]
            pieces[:] = [np.concatenate(pieces) if pieces else np.zeros(0, dtype=kind)]
        return pieces[0]

    @property
    def ts(self) -> np.ndarray:
        return self.column("ts")

    def shift(self, offset: int) -> None:
        """Add ``offset`` to every time (the trace's time base)."""
        ts = self.ts
        ts += offset

    def chains(self) -> np.ndarray:
        """Each point's chain: the points of one (category, id), numbered in the order of
        their first point.

        >>> points = FlowPoints()
        >>> for category, flow_id in [("a", 1), ("b", 1), ("a", 1), ("a", 2)]:
        ...     points.add(category, flow_id, "s", (1, 1), 0, True, "")
        >>> points.chains().tolist()
        [0, 1, 0, 2]
        """
        category = self.column("category")
        one_category = not len(category) or (category == category[0]).all()   # (the usual)
        keys: Iterable[Any] = (self.ids if one_category
                               else zip(category.tolist(), self.ids, strict=True))
        return first_codes(keys)[0]

    def interned(self, strings: StringTable, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The category and name ids of ``points`` (a name left empty is the category's),
        interned in ``strings`` as they come: every category, then every name."""
        category = self._interned(strings, self.column("category")[points])
        name = self._interned(strings, self.column("name")[points])
        return category, np.where(name == 0, category, name)

    def _interned(self, strings: StringTable, codes: np.ndarray) -> np.ndarray:
        """The string ids of text ``codes`` (0, the empty string's, for None), interning
        the new texts in the order they first come."""
        distinct, first = np.unique(codes, return_index=True)
        ids: dict[Any, int] = strings.ids
        for code in distinct[np.argsort(first)].tolist():
            text = self.texts[code]
            if text and text not in ids:
                strings.intern(text)
        lookup = np.zeros(len(self.texts), dtype=np.int32)
        lookup[distinct] = [ids.get(self.texts[c], 0) for c in distinct.tolist()]
        return lookup[codes]

    def describe(self, point: int) -> tuple[str, Any, int, str]:
        """Category, id, time and phase of one point (for a diagnostic's example)."""
        return (str(self.texts[int(self.column("category")[point])]), self.ids[point],
                int(self.ts[point]), chr(self.column("phase")[point]))


def _code(codes: dict[Any, int], distinct: list[Any], value: Any) -> int:
    """The code of ``value`` among ``distinct`` (appended when new)."""
    code = codes.get(value)
    if code is None:
        code = codes[value] = len(distinct)
        distinct.append(value)
    return code


def codes_of(values: list[Any], code_of: Callable[[Any], int]) -> np.ndarray:
    """The code of each value, ``code_of`` called once per distinct value, in first-seen
    order.

    >>> codes_of(["b", "a", "b"], {"a": 1, "b": 2}.get).tolist()
    [2, 1, 2]
    """
    if values and values.count(values[0]) == len(values):   # (one value: the usual case)
        return np.full(len(values), code_of(values[0]), dtype=np.int32)
    seen: dict[Any, int] = {}
    firsts = first_places(values, seen)
    lookup = np.zeros(len(values), dtype=np.int32)
    lookup[list(seen.values())] = [code_of(value) for value in seen]
    return lookup[firsts]


def ends_enclosing(phase: np.ndarray, bind_points: Callable[[np.ndarray], list[Any]]
                   ) -> np.ndarray:
    """Whether each point binds to its enclosing slice: starts and steps do, finishes only
    with ``bp`` "e" (``bind_points(is_finish)``: the ``bp`` values of the finishes).

    >>> ends_enclosing(np.frombuffer(b"sff", np.uint8), lambda f: ["e", None]).tolist()
    [True, True, False]
    """
    finish = phase == _FINISH
    enclosing = ~finish
    if finish.any():
        enclosing[finish] = np.fromiter(map(eq, bind_points(finish), repeat("e")), dtype=bool)
    return enclosing


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
    binds wins); ``index`` holds the trace's slices, and its instants as slices of no length
    when built with them (trace_processor binds flows to instants: an instant a flow ends
    on is made a slice). Points that bind to no slice, and
    bound points that link nowhere (a start restarted before any finish), are counted in the
    diagnostics; a point on the slice its source is on adds nothing and is no loss. Points are bound all at
    once per track (numpy): a GPU trace has two per kernel launch.
    """
    if not len(points):
        return
    chain = points.chains()
    ts = points.ts
    rows = _bind(points, ts, tracks_of, index)
    order = np.lexsort((np.arange(len(ts)), ts, chain))   # chain by chain, in time order
    bound = order[rows[order] >= 0]
    phases = points.column("phase")[bound]
    sources, targets = fan_out(chain[bound], phases != _FINISH, phases == _START)
    # a chain's second flow between the same slices adds nothing; a flow from a slice to
    # itself (both points inside it) draws no arrow: counted
    used = np.zeros(len(bound), dtype=bool)
    used[sources] = used[targets] = True   # (also the points of a link added already)
    ends = np.stack([chain[bound[sources]], rows[bound[sources]], rows[bound[targets]]])
    keep = np.flatnonzero(ends[1] != ends[2])
    looped = len(sources) - len(keep)
    if looped:
        category, flow_id, _, _ = points.describe(int(bound[sources[ends[1] == ends[2]][0]]))
        trace.diagnostics.add("chrome.flow_within_one_slice", count=looped,
                              example=f"{category} id {flow_id}")
    if len(keep):
        _, first = np.unique(ends[:, keep], axis=1, return_index=True)
        keep = keep[np.sort(first)]
    sources, targets = sources[keep], targets[keep]
    categories, names = points.interned(trace.strings, bound[sources])
    # (an end on an instant makes it a slice: the model links slices)
    ends = bound_slices(trace, ends[1:, keep], index.instant_base)
    flows = trace.flows
    extend_typed(flows.source, ends[0])
    extend_typed(flows.target, ends[1])
    extend_typed(flows.category, categories)
    extend_typed(flows.name, names)
    unbound = order[rows[order] < 0]
    # an end left alone because its chain's other end bound to nothing is that flow's loss,
    # counted once as unbound: not a flow whose other end is missing from the file
    alone = bound[~used]
    _report(trace, points, unbound, alone[~np.isin(chain[alone], chain[unbound])])


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
    place = points.column("place")
    candidates = [tracks_of(p) for p in points.places]
    rows = points.column("row").copy()
    enclosing = points.column("enclosing")
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
        category, flow_id, ts, _ = points.describe(int(unbound[0]))
        diags.add("chrome.flow_unbound", count=len(unbound),
                  example=f"{category} id {flow_id} at {ts} ns")
    if len(unused):
        category, flow_id, _, phase = points.describe(int(unused[0]))
        diags.add("chrome.flow_dangling", count=len(unused),
                  example=f"{category} id {flow_id}: only '{phase}'")
