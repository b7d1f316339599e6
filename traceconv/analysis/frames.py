"""A trace as tables: one row per slice, instant, counter sample, flow, memory block or op.

The columns follow the shape of Holistic Trace Analysis' trace frames (``ts``/``dur`` int64
ns, ``name``, ``cat``, ``pid``, ``tid``, ``stream``, ``correlation``, ``external_id``,
``depth``), so that HTA-style analyses run on any reader's trace. Strings are dictionary
encoded from the trace's interned ids (pandas ``category``, Arrow ``dictionary``), so a
million rows cost no Python loop except where args must be read. Missing integers are -1
where HTA uses -1 (``stream``, ``correlation``, ``external_id``, ``pid``, ``tid``) and nulls
for memory times (``alloc_ns`` None = allocated before the trace began).

Filters are numpy masks over the columns: ``start``/``end`` (ns, keep what overlaps the
window), ``category``, ``name`` and ``track`` (ids or names; one value or several).

>>> from traceconv.model import Trace
>>> t = Trace(); p = t.add_process("python", pid=7); th = t.add_track("main", process=p, tid=7)
>>> _ = t.add_slice(th, 0, 100, "step", "user", {"correlation": 5})
>>> _ = t.add_slice(th, 10, 20, "mm", "cpu_op")
>>> table = columns(t, "slices")
>>> table["name"].labels(), table["depth"].tolist(), table["correlation"].tolist()
(['step', 'mm'], [0, 1], [5, -1])
>>> columns(t, "slices", category="cpu_op")["ts"].tolist()
[10]
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Union

import numpy as np

from ..model import Trace, TrackKind
from ..model.graph import OP
from ..model.timeline_order import timeline_order
from ..model.trace import FrameKind as Kind
from ..model.trace import Selector
from ..numbers import beyond_int64, int64

if TYPE_CHECKING:
    import pandas
    import pyarrow

KINDS: tuple[Kind, ...] = ("slices", "instants", "counters", "flows", "memory", "ops")

# the arg keys that producers use for the CUPTI correlation id and the op → kernel link id
CORRELATION_KEYS = ("correlation", "correlation id", "correlation_id")
EXTERNAL_ID_KEYS = ("External id", "external id", "external_id")
MISSING = -1


@dataclass(frozen=True)
class Coded:
    """A dictionary-encoded string column: ``codes`` index ``categories`` (unique)."""

    codes: np.ndarray
    categories: list[str]

    def labels(self) -> list[str]:
        """The column as Python strings (for small tables and tests)."""
        return [self.categories[c] for c in self.codes.tolist()]


@dataclass(frozen=True)
class Nullable:
    """An int64 column with missing values (``missing`` is True where there is none)."""

    values: np.ndarray
    missing: np.ndarray

    def tolist(self) -> list[int | None]:
        return [None if m else v for v, m in zip(self.values.tolist(), self.missing.tolist(),
                                                 strict=True)]


Column = Union[np.ndarray, Coded, Nullable, list]   # noqa: UP007 - runtime alias
Table = dict[str, Column]


def columns(trace: Trace, kind: Kind = "slices", *, args: bool | Collection[str] = False,
            start: int | None = None, end: int | None = None, category: Selector = None,
            name: Selector = None, track: Selector = None) -> Table:
    """The columns of one kind of row, filtered; ``args=True`` adds one ``args.KEY`` column
    per argument key (``args=["Input Dims"]`` only those)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}: one of {', '.join(KINDS)}")
    if kind in ("flows", "memory", "ops") and (category, name, track) != (None, None, None):
        raise ValueError(f"{kind} rows are filtered by start/end only")
    build = {"slices": _slices, "instants": _instants, "counters": _counters,
             "flows": _flows, "memory": _memory, "ops": _ops}[kind]
    table: Table = build(trace, _Filter(start, end, category, name, track), args)
    return table


@dataclass(frozen=True)
class _Filter:
    start: int | None
    end: int | None
    category: Selector
    name: Selector
    track: Selector


def slice_rows(trace: Trace, *, start: int | None = None, end: int | None = None,
               category: Selector = None, name: Selector = None,
               track: Selector = None) -> np.ndarray:
    """Row indices (int64, storage order) of the slices that pass the filters.

    >>> t = Trace(); p = t.add_process("p"); a = t.add_track("a", process=p)
    >>> for i in range(4): _ = t.add_slice(a, i * 10, 5, "x" if i % 2 else "y")
    >>> slice_rows(t, name="x").tolist(), slice_rows(t, start=12, end=31).tolist()
    ([1, 3], [1, 2, 3])
    """
    s = trace.slices
    return _rows(trace, s.numpy("start"), s.numpy("dur"), s.numpy("track"), s.numpy("name"),
                 s.numpy("category"), _Filter(start, end, category, name, track))


def _rows(trace: Trace, ts: np.ndarray, dur: np.ndarray | None, tracks: np.ndarray,
          names: np.ndarray | None, cats: np.ndarray | None, where: _Filter) -> np.ndarray:
    keep = np.ones(len(ts), dtype=bool)
    if where.start is not None:
        keep &= (ts + dur if dur is not None else ts) >= where.start
        if dur is not None:   # a slice that ends exactly at the window start is not in it
            keep &= (ts + dur > where.start) | (dur == 0)
    if where.end is not None:
        keep &= ts < where.end
    for column, wanted in ((cats, where.category), (names, where.name)):
        if wanted is not None and column is not None:
            keep &= np.isin(column, _string_ids(trace, wanted))
    if where.track is not None:
        keep &= np.isin(tracks, _track_ids(trace, where.track))
    return np.flatnonzero(keep)


def _values(selector: Selector) -> list[int | str]:
    if isinstance(selector, int | str):
        return [selector]
    return list(selector or ())


def _string_ids(trace: Trace, selector: Selector) -> np.ndarray:
    found = (trace.strings.find(str(v)) for v in _values(selector))
    return np.asarray([i for i in found if i is not None], dtype=np.int64)


def _track_ids(trace: Trace, selector: Selector) -> np.ndarray:
    wanted = _values(selector)
    names = {v for v in wanted if isinstance(v, str)}
    ids = {v for v in wanted if isinstance(v, int)}
    ids |= {t.id for t in trace.tracks if t.name in names}
    return np.asarray(sorted(ids), dtype=np.int64)


def _coded(ids: np.ndarray, labels: list[str]) -> Coded:
    """Codes into ``labels`` (which may repeat) as codes into their unique values."""
    unique: dict[str, int] = {}
    remap = np.asarray([unique.setdefault(label, len(unique)) for label in labels] or [0],
                       dtype=np.int64)
    return Coded(remap[ids] if len(ids) else ids.astype(np.int64), list(unique) or [""])


def _strings(trace: Trace, ids: np.ndarray) -> Coded:
    return Coded(ids.astype(np.int64), trace.strings.strings)


def _track_columns(trace: Trace, tracks: np.ndarray) -> Table:
    """track id, track and process names, source pid/tid (-1 when none), and ``stream`` (the
    tid of a device stream track, -1 elsewhere, as HTA has it)."""
    procs = trace.processes
    meta = [(t.tid if t.tid is not None else MISSING,
             procs[t.process].pid if procs[t.process].pid is not None else MISSING,
             t.tid if t.kind is TrackKind.STREAM and t.tid is not None else MISSING,
             t.process) for t in trace.tracks]
    tid, pid, stream, process = (np.asarray(c, dtype=np.int64) for c in zip(*meta, strict=True)) \
        if meta else (np.zeros(0, np.int64),) * 4
    return {"track": tracks.astype(np.int64),
            "track_name": _coded(tracks, [t.name for t in trace.tracks]),
            "process": _coded(process[tracks] if len(tracks) else tracks,
                              [p.name for p in procs]),
            "pid": pid[tracks] if len(tracks) else tracks.astype(np.int64),
            "tid": tid[tracks] if len(tracks) else tracks.astype(np.int64),
            "stream": stream[tracks] if len(tracks) else tracks.astype(np.int64)}


def _slices(trace: Trace, where: _Filter, args: bool | Collection[str]) -> Table:
    s = trace.slices
    ts, dur, tracks = s.numpy("start"), s.numpy("dur"), s.numpy("track")
    names, cats = s.numpy("name"), s.numpy("category")
    depth = slice_depths(ts, dur, tracks)
    rows = _rows(trace, ts, dur, tracks, names, cats, where)
    table: Table = {"row": rows, "ts": ts[rows], "dur": dur[rows],
                    "name": _strings(trace, names[rows]), "cat": _strings(trace, cats[rows]),
                    **_track_columns(trace, tracks[rows])}
    row_args = list(_args_of(trace, "slices", rows))
    table["correlation"] = _first_int(row_args, CORRELATION_KEYS)
    table["external_id"] = _first_int(row_args, EXTERNAL_ID_KEYS)
    table["depth"] = depth[rows]
    table.update(_arg_columns(row_args, args))
    return table


def _instants(trace: Trace, where: _Filter, args: bool | Collection[str]) -> Table:
    i = trace.instants
    ts, tracks, names, cats = i.numpy("ts"), i.numpy("track"), i.numpy("name"), \
        i.numpy("category")
    rows = _rows(trace, ts, None, tracks, names, cats, where)
    table: Table = {"row": rows, "ts": ts[rows], "name": _strings(trace, names[rows]),
                    "cat": _strings(trace, cats[rows]), **_track_columns(trace, tracks[rows])}
    table.update(_arg_columns(list(_args_of(trace, "instants", rows)), args))
    return table


def _counters(trace: Trace, where: _Filter, args: bool | Collection[str]) -> Table:
    c = trace.counters
    ts, tracks = c.numpy("ts"), c.numpy("track")
    rows = _rows(trace, ts, None, tracks, None, None, where)
    return {"row": rows, "ts": ts[rows], "value": c.numpy("value")[rows],
            **_track_columns(trace, tracks[rows]),
            "unit": _coded(tracks[rows], [t.unit or "" for t in trace.tracks])}


def _flows(trace: Trace, where: _Filter, args: bool | Collection[str]) -> Table:
    f, s = trace.flows, trace.slices
    source, target = f.numpy("source"), f.numpy("target")
    starts, tracks = s.numpy("start"), s.numpy("track")
    source_ts, target_ts = starts[source], starts[target]
    keep = np.ones(len(source), dtype=bool)
    if where.start is not None:
        keep &= target_ts >= where.start
    if where.end is not None:
        keep &= source_ts < where.end
    rows = np.flatnonzero(keep)
    return {"row": rows, "source": source[rows], "target": target[rows],
            "cat": _strings(trace, f.numpy("category")[rows]),
            "name": _strings(trace, f.numpy("name")[rows]),
            "source_ts": source_ts[rows], "target_ts": target_ts[rows],
            "source_track": tracks[source][rows], "target_track": tracks[target][rows]}


def _nullable(values: list[int | None]) -> Nullable:
    missing = np.asarray([v is None for v in values], dtype=bool)
    return Nullable(np.asarray([v or 0 for v in values], dtype=np.int64), missing)


def _memory(trace: Trace, where: _Filter, args: bool | Collection[str]) -> Table:
    blocks = trace.memory
    alloc = _nullable([b.alloc_ns for b in blocks])
    free = _nullable([b.free_ns for b in blocks])
    keep = np.ones(len(blocks), dtype=bool)
    if where.start is not None:
        keep &= free.missing | (free.values > where.start)
    if where.end is not None:
        keep &= alloc.missing | (alloc.values < where.end)
    rows = np.flatnonzero(keep)
    kept = [blocks[r] for r in rows.tolist()]

    def text(field: str) -> Coded:
        labels = [getattr(b, field) or "" for b in kept]
        unique = sorted(set(labels))
        index = {label: n for n, label in enumerate(unique)}
        return Coded(np.asarray([index[x] for x in labels], dtype=np.int64), unique or [""])

    table: Table = {
        "row": rows, "address": np.asarray([b.address for b in kept], dtype=np.int64),
        "size": np.asarray([b.size for b in kept], dtype=np.int64),
        "alloc_ns": Nullable(alloc.values[rows], alloc.missing[rows]),
        "free_ns": Nullable(free.values[rows], free.missing[rows]),
        "device": text("device"), "pool": text("pool"), "name": text("name"),
        "category": text("category"), "owner_op": text("owner_op"),
        "owner_name": text("owner_name"), "owner_tensor": text("owner_tensor")}
    table.update(_arg_columns([b.args for b in kept], args))
    return table


def _ops(trace: Trace, where: _Filter, args: bool | Collection[str]) -> Table:
    """One row per operator node: id, name, type, and each other scalar attribute."""
    nodes = [(node, data) for node, data in trace.graph.nodes(data=True) if data.get("kind") == OP]
    table: Table = {"node": [node for node, _ in nodes],
                    "name": [str(data.get("name", "")) for _, data in nodes],
                    "type": [str(data.get("type", "")) for _, data in nodes]}
    keys = sorted({k for _, data in nodes for k, v in data.items()
                   if k not in ("kind", "name", "type") and isinstance(v, int | float | str)})
    for key in keys:
        values = [data.get(key) for _, data in nodes]
        table[key] = values if any(isinstance(v, str) for v in values) else _numbers(values)
    return table


def _numbers(values: list[Any]) -> Column:
    """A column of numbers: int64 when every one is an int it holds, the values as they
    are when an int is beyond it (no double rounds it), else float64.

    >>> _numbers([1, None]).values.tolist(), _numbers([1, 2**70]), _numbers([1, 2.5]).tolist()
    ([1, 0], [1, 1180591620717411303424], [1.0, 2.5])
    """
    if any(beyond_int64(v) for v in values):
        return values
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values if v is not None):
        return _nullable(values)
    return np.asarray([np.nan if v is None else v for v in values], dtype=np.float64)


def _args_of(trace: Trace, kind: Literal["slices", "instants"],
             rows: np.ndarray) -> Iterator[dict[str, Any]]:
    """The args of ``rows`` through the public accessors (their storage is the model's)."""
    get = trace.slice if kind == "slices" else trace.instant
    for row in rows.tolist():
        yield get(row).args or {}


def _first_int(row_args: list[dict[str, Any]], keys: tuple[str, ...]) -> np.ndarray:
    """Per row, the first of ``keys`` whose value is an int that int64 holds (an id numpy
    can link; one beyond it stays in the row's args only), else :data:`MISSING`.

    >>> _first_int([{"a": 2**70, "b": 7}, {"a": True}, None], ("a", "b")).tolist()
    [7, -1, -1]
    """
    out = np.full(len(row_args), MISSING, dtype=np.int64)
    for n, found in enumerate(row_args):
        for key in keys:
            number = int64(found.get(key)) if found else None
            if number is not None:
                out[n] = number
                break
    return out


def _arg_columns(row_args: list[dict[str, Any]], wanted: bool | Collection[str]) -> Table:
    if wanted is False:
        return {}
    keys = (sorted({k for found in row_args if found for k in found}) if wanted is True
            else list(wanted))   # type: ignore[arg-type]
    return {f"args.{key}": [found.get(key) if found else None for found in row_args]
            for key in keys}


def slice_depths(ts: np.ndarray, dur: np.ndarray, tracks: np.ndarray) -> np.ndarray:
    """Nesting depth of every slice on its track (0 = outermost), in storage order.

    A slice is inside the open slices that started before it and end after its start
    (partial overlaps count as nested, as a viewer's lane would show them).

    >>> slice_depths(np.array([0, 1, 2, 50]), np.array([100, 10, 3, 5]), np.zeros(4, int))
    array([0, 1, 2, 1])
    """
    order = timeline_order(tracks, ts, -dur)
    depth = np.zeros(len(ts), dtype=np.int64)
    ends: list[int] = []
    current = None
    for row, track, start, end in zip(order.tolist(), tracks[order].tolist(),
                                      ts[order].tolist(), (ts + dur)[order].tolist(),
                                      strict=True):
        if track != current:
            ends, current = [], track
        if ends and min(ends) <= start:   # closed slices leave, wherever they are open
            ends = [e for e in ends if e > start]
        depth[row] = len(ends)
        ends.append(end)
    return depth


def require(module: str, extra: str = "pandas") -> Any:
    """Import an optional dependency, or say how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{module} is needed for this: pip install 'traceconv[{extra}]' "
                          f"(or pip install {module})") from None


def to_pandas(table: Table) -> pandas.DataFrame:
    """``table`` as a DataFrame: strings as ``category``, missing integers as ``Int64``."""
    pd = require("pandas")
    data: dict[str, Any] = {}
    for key, column in table.items():
        if isinstance(column, Coded):
            data[key] = pd.Categorical.from_codes(column.codes, categories=column.categories)
        elif isinstance(column, Nullable):
            data[key] = pd.arrays.IntegerArray(column.values, column.missing)
        else:
            data[key] = column
    return pd.DataFrame(data)


def to_arrow(table: Table) -> pyarrow.Table:
    """``table`` as an Arrow table: strings as ``dictionary``, missing integers as nulls."""
    pa = require("pyarrow")
    data: dict[str, Any] = {}
    for key, column in table.items():
        if isinstance(column, Coded):
            data[key] = pa.DictionaryArray.from_arrays(
                pa.array(column.codes, pa.int32()), pa.array(column.categories, pa.string()))
        elif isinstance(column, Nullable):
            data[key] = pa.array(column.values, mask=column.missing)
        else:
            data[key] = pa.array(column)
    return pa.table(data)



def pandas_frame(trace: Trace, kind: Kind = "slices", **filters: Any) -> pandas.DataFrame:
    """What :meth:`Trace.to_pandas <traceconv.model.Trace.to_pandas>` returns (it is
    registered as its implementation): :func:`columns` as a DataFrame."""
    return to_pandas(columns(trace, kind, **filters))


def arrow_table(trace: Trace, kind: Kind = "slices", **filters: Any) -> pyarrow.Table:
    """What :meth:`Trace.to_arrow <traceconv.model.Trace.to_arrow>` returns: :func:`columns`
    as an Arrow table.

    >>> t = Trace(); p = t.add_process("python", pid=7)
    >>> _ = t.add_slice(t.add_track("main", process=p, tid=7), 0, 100, "step")
    >>> arrow_table(t, "slices", name="step").column("ts").to_pylist()
    [0]
    """
    return to_arrow(columns(trace, kind, **filters))
