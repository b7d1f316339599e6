"""Chrome Trace Event JSON → model: the generic event loop, shared by every flavour.

This is the hot path of traceconv (a 1 M-event Kineto file is ~1 M events). Pieces of
typed records (``records.py``: slices, instants and flow points only, the bulk of a large
trace) are read a column at a time; any other piece goes through the per-event loop, which
works on plain dicts and appends to the model's typed columns through bound methods. Both
give the same rows in the same order. Everything that needs the whole file (B/E matching
of unsorted events, track names from ``M`` events that may come last, flow binding) is
deferred to :meth:`finish`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from itertools import compress, repeat
from operator import is_, not_
from typing import Any

import numpy as np

from ...errors import InputError
from ...io import Source
from ...model import Metadata, ProcessKind, Trace, TrackKind
from ...model.activity import fill_activity
from ...model.block_record import restore_blocks
from ...model.builder import TraceBuilder
from ...model.evident_streams import evident_streams
from ...model.graph_record import restore_graph
from ...model.instant_slices import instants_near
from ...model.metadata_record import carry_diagnostics, restore_metadata
from ...model.slice_index import SliceIndex
from ...model.stats_record import restore_stats
from ...numbers import NumberError, int_text, to_int64
from ...spilled_texts import text_store
from ...vocabularies.common import DEVICE_STREAM_WORDS
from ..async_tracks import AsyncTracks
from ..begin_end import add_paired
from . import written_tracks
from .async_ids import async_id, unusable
from .flavours import Flavour, ReadContext, by_name, detect
from .flows import FlowPoints, codes_of, ends_enclosing, link_flows
from .located import located_errors
from .record_keys import RecordKeys
from .records import FlowPoint, Instant, Record, Slice
from .records import Metadata as MetadataRecord
from .records import decode as decode_records
from .stream import read_document
from .times import INT64, at_int64_edge, duration_ns, time_ns

_FLOW_V2 = "bind_id"   # (the key of a flow v2 chain: with its id, apart from v1 ids)

_NUMERIC_ID = re.compile(r"-?\d+")
_OBJECT_START = ord("{")
_PLACED = frozenset({Slice, Instant, *Instant.__subclasses__()})  # on a track
_INSTANTS = frozenset({Instant, *Instant.__subclasses__()})
_FLOWS = frozenset({FlowPoint, *FlowPoint.__subclasses__()})
_SUPPORTED = frozenset("XBEiIRCbensftM")
EPOCH_NS = 10**18  # timestamps above this (2001-09-09) are on the unix epoch clock


def _text(value: Any) -> str:
    """Names and categories are strings; malformed files put numbers or objects there."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)


def _ns_column(values: list[int | float], unit: int, decimals: bool = True) -> np.ndarray | None:
    """:func:`_ns` of every value at once (``decimals=False``: ``round(value * unit)``, as
    for durations); None when one is out of the range that numpy handles exactly (the
    per-event path then reads the piece and counts what does not fit).

    >>> _ns_column([4482738043834.738, 0.0005], 1000).tolist(), _ns_column([2, 3], 1000).tolist()
    ([4482738043834738, 0], [2000, 3000])
    >>> _ns_column([1.0, 2], 1000).tolist(), _ns_column([1e300], 1000)
    ([1000, 2000], None)
    """
    kinds = set(map(type, values))
    limit = (1 << 62) // unit
    if kinds <= {float}:
        floats = np.array(values, dtype=np.float64)
        if not (np.abs(floats) < limit).all():
            return None
        if not decimals:
            return np.round(floats * unit).astype(np.int64)
        whole = np.trunc(floats)
        return whole.astype(np.int64) * unit + np.round((floats - whole) * unit).astype(np.int64)
    ints = [v if type(v) is int else None for v in values]
    if None not in ints and all(-limit < v < limit for v in ints):  # type: ignore[operator]
        return np.array(ints, dtype=np.int64) * unit
    try:
        return np.array([time_ns(v, unit) if decimals else duration_ns(v, unit) for v in values],
                        dtype=np.int64)
    except OverflowError:   # (inf: the per-event path counts it)
        return None


def _object_texts(records: Sequence[Slice | Instant]) -> tuple[bytes, np.ndarray] | None:
    """The records' args texts, each followed by a comma, and their sizes (0: no args)
    as ``ArgsColumn.extend_json`` takes them; None when one is not a JSON object (``null``,
    a list, a number: the per-event loop keeps and counts those).

    >>> import msgspec
    >>> texts, sizes = _object_texts([Instant(ts=1, args=msgspec.Raw(b'{"a": 1}')), Instant(ts=2)])
    >>> texts, sizes.tolist()
    (b'{"a": 1},', [8, 0])
    >>> _object_texts([Instant(ts=1, args=msgspec.Raw(b'[1]'))]) is None
    True
    """
    texts = [r.args for r in records]
    sizes = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts))
    present: list[Any] = list(filter(None, texts))
    if not present:
        return b"", sizes
    present.append(b"")   # (a comma after the last text too, in the one copy the join makes)
    joined = b",".join(present)
    size = sizes[sizes > 0] + 1
    first = np.cumsum(size) - size
    if (np.frombuffer(joined, dtype=np.uint8)[first] != _OBJECT_START).any():
        return None
    return joined, sizes


def _normal_id(value: Any) -> Any:
    """Kineto writes some tids as strings ("25738") and others as ints: make them agree.
    Digits past int64 stay text, in time linear in their length (an id the model holds is
    an int64; ``int()`` of 5,000 digits raises).

    >>> _normal_id("25738"), _normal_id("9" * 5000) == "9" * 5000, _normal_id(7)
    (25738, True, 7)
    """
    if isinstance(value, str) and _NUMERIC_ID.fullmatch(value):
        try:
            return int_text(value, "id")
        except NumberError:
            return value
    return value


class ChromeReader:
    """Builds a :class:`Trace` from chunks of Chrome trace events."""

    def __init__(self, source_name: str, envelope: dict[str, Any], flavour: Flavour,
                 unit_ns: int) -> None:
        self.trace = TraceBuilder(Metadata(source_format="chrome", framework=flavour.framework))
        self.flavour = flavour
        self.unit = unit_ns
        self.context = ReadContext(envelope, source_name)
        self.seq = 0
        self._tracks: dict[tuple, int] = {}           # raw (device, pid, tid) -> track
        self._record_keys = RecordKeys()
        self._canonical: dict[tuple, int] = {}        # normalised key -> track
        self._processes: dict[tuple, int] = {}        # (device, pid) -> process
        self._raw_ids: dict[int, tuple] = {}          # track -> (device, pid, tid)
        self._counter_tracks: dict[tuple, int] = {}
        self._special_tracks: dict[tuple, int] = {}
        self._spans: dict[int, list[tuple]] = defaultdict(list)  # B/E (Spans), in finish()
        self._async = AsyncTracks()
        self.flow_points = FlowPoints()
        self._dropped: dict[str, list] = defaultdict(lambda: [0, None])
        # (a file traceconv wrote: each process and thread it lists is one, device work or
        # not, and its lane threads fold into their home threads)
        self._written_ids = written_tracks.written_ids(envelope.get("traceconv"))
        self._lane_homes = written_tracks.lane_homes(envelope.get("traceconv"))
        for table in (self.trace.slices, self.trace.instants):
            store = text_store()   # the args' texts on disk (a big trace: --spill-args)
            if store is not None:
                table.args.keep_texts_in(store)

    # -- tracks -----------------------------------------------------------------------

    def _process(self, device: bool, pid: Any) -> int:
        key = (device, pid)
        found = self._processes.get(key)
        if found is None and (pid,) in self._written_ids:
            found = self._processes.get((not device, pid))
            if found is not None:
                self._processes[key] = found
        if found is None:
            kind = ProcessKind.DEVICE if device else ProcessKind.HOST
            found = self._processes[key] = self.trace.add_process(
                str(pid), kind=kind, pid=pid if isinstance(pid, int) else None)
        return found

    def track(self, device: bool, pid: Any, tid: Any) -> int:
        """The track of raw (pid, tid); numeric strings and ints share one track."""
        raw = (device, pid, tid)
        found = self._tracks.get(raw)
        if found is None:
            pid, tid = _normal_id(pid), _normal_id(tid)
            key = (device, pid, tid)
            found = self._canonical.get(key)
            if found is None and (pid, tid) in self._written_ids:
                found = self._canonical.get((not device, pid, tid))
            home = self._lane_homes.get((pid, tid)) if found is None else None
            if found is not None:
                self._canonical[key] = found
            elif home is not None:
                found = self._canonical[key] = self.track(device, pid, home)
            elif found is None:
                kind = TrackKind.STREAM if device else TrackKind.THREAD
                found = self.trace.add_track(str(tid), process=self._process(device, pid),
                                             kind=kind, tid=tid if isinstance(tid, int) else None)
                self._canonical[key] = found
                self._raw_ids[found] = key
            self._tracks[raw] = found
        return found

    def _named_track(self, key: tuple, name: str, process: int, kind: TrackKind,
                     **extra: Any) -> int:
        found = self._special_tracks.get(key)
        if found is None:
            found = self._special_tracks[key] = self.trace.add_track(
                name, process=process, kind=kind, **extra)
        return found

    def _global_track(self) -> int:
        process = self._processes.get(("global",))
        if process is None:
            process = self._processes[("global",)] = self.trace.add_process(
                "Global events", kind=ProcessKind.SYNTHETIC)
        return self._named_track(("global",), "global instants", process, TrackKind.GLOBAL)

    # -- events -----------------------------------------------------------------------

    def drop(self, code: str, example: Any) -> None:
        entry = self._dropped[code]
        entry[0] += 1
        if entry[1] is None:
            entry[1] = example

    def read(self, events: list, base_index: int) -> None:
        """Add one chunk of events (``base_index`` = index of the first in traceEvents)."""
        if events and isinstance(events[0], Record):
            if self._read_records(events):
                return
            events = [record.as_dict() for record in events]
        self.flavour.prepare(events, self.context)
        trace, unit = self.trace, self.unit
        device_cats = self.flavour.device_categories
        intern, ids = trace.strings.intern, trace.strings.ids
        s = trace.slices
        add_track, add_start, add_dur = s.track.append, s.start.append, s.dur.append
        add_name, add_cat, add_args = s.name.append, s.category.append, s.args.append
        add_instant = trace.instants.append
        tracks, track = self._tracks, self.track
        for offset, e in enumerate(events):
            try:
                ph = e.get("ph")
                if ph == "X" and e.get("name") != "[memory]":
                    cat = e.get("cat", "")
                    if type(cat) is not str:
                        cat = _text(cat)
                    t = tracks.get((cat in device_cats, e.get("pid"), e.get("tid")))
                    if t is None:
                        t = track(cat in device_cats, e.get("pid"), e.get("tid"))
                    dur = e.get("dur")
                    if dur is None:
                        self.drop("chrome.x_without_dur", base_index + offset)
                        dur = 0
                    ts = e["ts"]
                    if type(ts) is int:  # exact: epoch µs × 1000 is beyond a double's 2^53
                        start = ts * unit
                    else:  # see _ns: whole and fraction apart keep the written decimals
                        whole = int(ts)
                        start = whole * unit + round((ts - whole) * unit)
                    try:
                        add_start(start)
                    except OverflowError:   # past int64: the builder's (see _ns)
                        add_start(time_ns(ts, unit))
                    duration = dur * unit if type(dur) is int else round(dur * unit)
                    try:
                        add_dur(duration)
                    except OverflowError:   # past int64: the builder's (see duration_ns)
                        add_dur(at_int64_edge(duration))
                    add_track(t)
                    name = e.get("name") or ""
                    if type(name) is not str:
                        name = _text(name)
                    add_name(ids.get(name) or intern(name))
                    add_cat(ids.get(cat) or intern(cat))
                    args = e.get("args")
                    add_args(args if args is None or type(args) is dict else self._wrap(args))
                    if "bind_id" in e:
                        self._flow_v2(e, len(s.args) - 1, t)
                elif ph in ("i", "I", "R") or ph == "X":  # X here means a [memory] event
                    if ph == "X":
                        self.drop("chrome.memory_event_as_slice", base_index + offset)
                    cat = e.get("cat", "")
                    if type(cat) is not str:
                        cat = _text(cat)
                    scope = e.get("s", "t")
                    if scope == "g":
                        t = self._global_track()
                    elif scope == "p":
                        process = self._process(cat in device_cats, _normal_id(e.get("pid")))
                        t = self._named_track(("p", process), "process instants", process,
                                              TrackKind.SYNTHETIC)
                    else:
                        t = tracks.get((cat in device_cats, e.get("pid"), e.get("tid")))
                        if t is None:
                            t = track(cat in device_cats, e.get("pid"), e.get("tid"))
                    name = e.get("name") or ""
                    if type(name) is not str:
                        name = _text(name)
                    if "bind_id" in e and (e.get("flow_in") or e.get("flow_out")):
                        # trace_processor binds flow v2 to slices only: linked by neither
                        self.drop("chrome.flow_on_instant", base_index + offset)
                    args = e.get("args")
                    add_instant(t, time_ns(e["ts"], unit), ids.get(name) or intern(name),
                                ids.get(cat) or intern(cat),
                                args if args is None or type(args) is dict else self._wrap(args))
                elif ph in ("s", "t", "f"):
                    self._flow_point(e, ph, device_cats)
                elif ph in ("B", "E"):
                    cat = _text(e.get("cat"))
                    t = track(cat in device_cats, e.get("pid"), e.get("tid"))
                    self._spans[t].append(   # (a Span's fields, as a tuple: quicker)
                        (time_ns(e["ts"], unit), self._next_seq(), ph == "B",
                         _text(e.get("name")), cat, self._args(e)))
                elif ph == "C":
                    self._counter(e)
                elif ph in ("b", "e", "n"):
                    self._add_async(e, ph)
                elif ph == "M":
                    self._metadata(e)
                elif not e:
                    self.drop("chrome.empty_event", base_index + offset)
                elif ph is None:
                    self.drop("chrome.missing_phase", base_index + offset)
                else:
                    self.drop(f"chrome.unsupported_phase.{ph}", base_index + offset)
            except (KeyError, TypeError, AttributeError, ValueError, OverflowError):
                self._malformed(e, base_index + offset)

    def _read_records(self, records: list[Record]) -> bool:
        """A piece of typed records, a column at a time: the rows the per-event loop gives,
        in the same order (tracks and strings are new in file order too). False, with no
        row added, when a time is out of range, a slice is a ``[memory]`` event or args
        are not an object: the loop then reads the piece."""
        kinds = list(map(type, records))
        present = set(kinds)
        placed: list[Any] = records   # slices and instants
        placed_kinds = kinds
        if not present <= _PLACED:
            keep = list(map(_PLACED.__contains__, kinds))
            placed, placed_kinds = list(compress(records, keep)), list(compress(kinds, keep))
        if Slice not in present:
            slices, instants, is_slice = [], placed, None
        elif present.isdisjoint(_INSTANTS):
            slices, instants, is_slice = placed, [], None
        else:
            is_slice = list(map(is_, placed_kinds, repeat(Slice)))
            slices = list(compress(placed, is_slice))
            instants = list(compress(placed, map(not_, is_slice)))
        flows: list[Any] = (list(compress(records, map(_FLOWS.__contains__, kinds)))
                            if present & _FLOWS else [])   # flow points
        starts = _ns_column([r.ts for r in placed], self.unit)
        durations = _ns_column([r.dur for r in slices], self.unit, decimals=False)
        flow_ts = _ns_column([r.ts for r in flows], self.unit)
        slice_args, instant_args = _object_texts(slices), _object_texts(instants)
        if (starts is None or durations is None or flow_ts is None or slice_args is None
                or instant_args is None):
            return False
        tracks, names, categories = self._record_keys.columns(placed, self._resolve)
        columns = {"track": tracks, "start": starts, "name": names, "category": categories}
        # (a piece of one kind, the usual case, is not cut by a mask)
        slice_rows = None if is_slice is None else np.array(is_slice, dtype=bool)
        by_slice = columns if slice_rows is None else {k: v[slice_rows]
                                                       for k, v in columns.items()}
        # (tracks and strings made so far are those the loop makes: reading the piece
        # again, it makes no new ones)
        memory = self.trace.strings.find("[memory]")
        if slices and memory is not None and (by_slice["name"] == memory).any():
            return False   # a [memory] slice: the loop reads it as an instant
        if slices:
            self.trace.slices.extend_json(*slice_args, dur=durations, **by_slice)
        if instants:
            by_instant = columns if slice_rows is None else {
                k: v[~slice_rows] for k, v in columns.items()}
            by_instant["ts"] = by_instant.pop("start")
            self.trace.instants.extend_json(*instant_args, **by_instant)
        if flows:
            self._record_flows(flows, flow_ts)
        if MetadataRecord in present:
            for r in compress(records, map(is_, kinds, repeat(MetadataRecord))):
                self._metadata(r.as_dict())
        return True

    def _resolve(self, key: tuple[Any, Any, Any, Any]) -> tuple[int, int, int]:
        """Track, name id and category id of a record's (name, category, pid, tid)."""
        name, category, pid, tid = key
        intern = self.trace.strings.intern
        name_id, category_id = intern(name or ""), intern(category or "")
        device = category in self.flavour.device_categories
        return self.track(device, pid, tid), name_id, category_id

    def _record_flows(self, flows: list[FlowPoint], ts: np.ndarray) -> None:
        """Add a piece's flow points (``ts``: their times in ns) as the loop adds them, as
        columns: categories, names and places are looked at once per distinct value."""
        points, synonyms = self.flow_points, self.flavour.flow_categories
        places = [(r.pid, r.tid) for r in flows]
        phase = np.frombuffer("".join([r.phase for r in flows]).encode(), dtype=np.uint8)
        points.extend(
            [r.id for r in flows], ts, phase,
            ends_enclosing(phase, lambda finish: [r.bp for r in compress(flows, finish.tolist())]),
            codes_of(places, lambda p: points.place_code((_normal_id(p[0]), _normal_id(p[1])))),
            points.text_codes([r.cat for r in flows],
                              lambda c: synonyms.get(c or "", c or "")),
            points.text_codes([r.name for r in flows]))

    def _args(self, e: dict) -> dict | None:
        args = e.get("args")
        return args if args is None or type(args) is dict else self._wrap(args)

    def _wrap(self, args: Any) -> dict:
        """``args`` must be an object; keep any other value under the key "args"."""
        self.drop("chrome.args_not_object", repr(args)[:80])
        return {"args": args}

    def _next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def _malformed(self, event: Any, index: int) -> None:
        """Undo a half-added slice row and count the event."""
        s = self.trace.slices
        n = len(s.args)
        for column in (s.track, s.start, s.dur, s.name, s.category, s.activity):
            del column[n:]
        if not isinstance(event, dict):
            self.drop("chrome.event_not_object", f"$.traceEvents[{index}]")
        elif "ts" not in event:
            self.drop("chrome.missing_timestamp", f"$.traceEvents[{index}]")
        else:
            self.drop("chrome.malformed_event", f"$.traceEvents[{index}]")

    def _flow_point(self, e: dict, ph: str, device_cats: frozenset[str]) -> None:
        # Flow events carry no device category: the track (host thread or device stream of
        # the same raw ids) is chosen when binding, in finish().
        place = (_normal_id(e.get("pid")), _normal_id(e.get("tid")))
        enclosing = ph != "f" or e.get("bp") == "e"
        cat = _text(e.get("cat"))
        cat = self.flavour.flow_categories.get(cat, cat)
        hash((e["id"], place))  # unhashable ids are malformed events (TypeError is caught)
        self.flow_points.add(cat, e["id"], ph, place, time_ns(e["ts"], self.unit), enclosing,
                             _text(e.get("name")))

    def _flow_v2(self, e: dict, row: int, track: int) -> None:
        # A flow v2 is its bind_id alone, whatever the categories of the slices it joins
        # (trace_processor links a cpu_op to a kernel by it); its ids are not v1 ids.
        flow_id = (_FLOW_V2, e["bind_id"])
        hash(flow_id)
        ts = time_ns(e["ts"], self.unit)
        for flag, phase in (("flow_in", "f"), ("flow_out", "s")):
            if e.get(flag):
                self.flow_points.add("", flow_id, phase, track, ts, True,
                                     _text(e.get("name")), row)

    def _counter(self, e: dict) -> None:
        pid = _normal_id(e.get("pid"))
        ts = time_ns(e["ts"], self.unit)
        name = _text(e.get("name"))
        if e.get("id") is not None:
            name = f"{name} id: {e['id']}"
        args = self._args(e) or {}
        process = self._process(False, pid)
        for key, value in args.items():
            if isinstance(value, str):
                try:
                    value = float(value)
                except ValueError:
                    value = None
            if not isinstance(value, int | float) or isinstance(value, bool):
                self.drop("chrome.counter_not_numeric", f"{name}.{key}={value!r}")
                continue
            series = name if key == "value" or len(args) == 1 and key == name else f"{name} {key}"
            t = self._counter_tracks.get((process, series))
            if t is None:
                t = self._counter_tracks[(process, series)] = self.trace.add_track(
                    series, process=process, kind=TrackKind.COUNTER)
            self.trace.add_counter(t, ts, value)

    def _add_async(self, e: dict, ph: str) -> None:
        # (placed in finish(): a track's objects follow each other in time)
        oid = async_id(e)
        if unusable(oid):
            self.drop("chrome.async_id_unusable", oid.fields if oid else None)
        self._async.add(time_ns(e["ts"], self.unit), ph, _text(e.get("name")), _text(e.get("cat")),
                        self._process(False, _normal_id(e.get("pid"))), oid,
                        self._args(e), self._next_seq())

    def _metadata(self, e: dict) -> None:
        kind = e.get("name")
        args = self._args(e) or {}
        pid, tid = _normal_id(e.get("pid")), _normal_id(e.get("tid"))
        ctx = self.context
        if kind in ("process_name", "process_labels", "process_sort_index"):
            meta = ctx.process_meta.setdefault(pid, {})
        elif kind in ("thread_name", "thread_sort_index"):
            meta = ctx.thread_meta.setdefault((pid, tid), {})
        else:
            self.drop("chrome.metadata_ignored", kind)
            return
        if kind.endswith("sort_index"):
            value = args.get("sort_index")   # beyond int64 or not a number: malformed
            meta["sort_index"] = None if value is None else to_int64(value, "sort_index")
        elif kind == "process_labels":
            labels = args.get("labels")
            meta.setdefault("labels", []).extend(
                x.strip() for x in str(labels).split(",") if x.strip())
        else:
            new = str(args.get("name", "")).strip()
            old = meta.get("name")
            if old and new and old != new and new not in old.split(" / "):
                self.drop("chrome.metadata_conflict", f"{kind} {pid}/{tid}: {old!r} vs {new!r}")
                meta["name"] = f"{old} / {new}"
            elif new:
                meta["name"] = new

    # -- whole-file steps -----------------------------------------------------------------

    def finish(self) -> Trace:
        """Match begin/end pairs, name tracks, bind flows and apply the time base."""
        self._match_spans()
        self._place_async()
        self._guess_device_streams()
        self._name_tracks()
        self._written_tracks()
        self._apply_time_base()
        # (every event is in, on its final clock: the ends of the B never closed now, for
        # the flows bound to slices by time below)
        self.trace.end_not_ended()
        # slices and times are final now: the index binds flows (to instants too, as
        # trace_processor does), then a flavour's first step may use it without them and
        # let it go (context.take_slice_index)
        index = SliceIndex(self.trace, instants=instants_near(self.trace, self.flow_points.ts)
                           if len(self.flow_points) else False)
        link_flows(self.trace, self.flow_points, self._flow_tracks, index)
        self.context.slice_index = index.slices_only()
        del index
        self.flavour.finalize(self.trace, self.context)
        self.context.slice_index = None
        if self.flavour.vocabulary is not None:
            fill_activity(self.trace, self.flavour.vocabulary)
        self._report()
        self.trace.metadata.attributes.update(self.context.envelope)
        self._written_record()
        self.trace.metadata.attributes["flavour"] = self.flavour.name
        return self.trace

    def _flow_tracks(self, place: Any) -> list[int]:
        """Candidate tracks of a flow point: a track id, or the device stream and the host
        thread with the point's raw (pid, tid)."""
        if isinstance(place, int):
            return [place]
        return [t for device in (True, False)
                if (t := self._canonical.get((device, *place))) is not None]

    def _place_async(self) -> None:
        """The async events on their objects' tracks, as slices and instants (one rule for
        every reader: :mod:`traceconv.formats.async_tracks`)."""
        self._async.add_to(self.trace, without_id="chrome.async_without_id",
                           end_without_begin="chrome.end_without_begin",
                           not_ended="chrome.begin_without_end",
                           cut_short="chrome.async_cut_short")
        self._async = AsyncTracks()

    def _match_spans(self) -> None:
        """Pair B with E per thread in time order as trace_processor's slice tracker pairs
        them (:mod:`traceconv.formats.begin_end`): an E closes the latest open B of its name
        and category where it gives them (a B of no name: any), a B closed below open ones
        cuts them at the next event after its end (``chrome.thread_cut_short``); a B never
        closed is the builder's to end (:meth:`TraceBuilder.not_ended`)."""
        unmatched_end = cut_short = 0
        unclosed: list[int] = []
        for t, spans in self._spans.items():
            paired = add_paired(self.trace, t, spans, by_name=True, unnamed_begins_any=True)
            cut_short += paired.cut_short
            unmatched_end += paired.unmatched_ends
            unclosed += paired.unclosed
        self.trace.diagnostics.add("chrome.end_without_begin", count=unmatched_end)
        self.trace.diagnostics.add("chrome.thread_cut_short", count=cut_short)
        self.trace.not_ended(unclosed, "chrome.begin_without_end")
        self._spans.clear()

    def _guess_device_streams(self) -> None:
        """A thread of no category that is evidently a device stream (one rule for every
        reader: :func:`~traceconv.model.evident_streams.evident_streams`) becomes a stream
        of the device of its pid, as if its events had a device category; counted
        (``chrome.device_track_guessed``), with the thread and the evidence."""
        guessed = [(found, self._raw_ids[found.track])
                   for found in evident_streams(self.trace, DEVICE_STREAM_WORDS)
                   if found.track in self._raw_ids
                   and (True, *self._raw_ids[found.track][1:]) not in self._canonical]
        moving = {found.track for found, _ in guessed}
        tracks, processes = self.trace.tracks, self.trace.processes
        for _, (_, pid, _) in guessed:   # a process of streams only is the device itself
            host = self._processes.get((False, pid))
            if (host is not None and (True, pid) not in self._processes
                    and all(t.id in moving for t in tracks if t.process == host)):
                self._processes[(True, pid)] = self._processes.pop((False, pid))
                processes[host].kind = ProcessKind.DEVICE
        for found, (_, pid, tid) in guessed:
            track = tracks[found.track]
            track.process, track.kind = self._process(True, pid), TrackKind.STREAM
            del self._canonical[(False, pid, tid)]
            self._canonical[(True, pid, tid)] = found.track
            self._raw_ids[found.track] = (True, pid, tid)
        if guessed:
            found, (_, pid, tid) = guessed[0]
            self.trace.diagnostics.add("chrome.device_track_guessed", count=len(guessed),
                                       example=f"pid {pid} tid {tid}: {found.evidence()}")

    def _name_tracks(self) -> None:
        trace, ctx, flavour = self.trace, self.context, self.flavour
        for (device, *rest), process_id in self._processes.items():
            if device == "global":
                continue
            pid = rest[0]
            meta = ctx.process_meta.get(pid, {})
            process = trace.processes[process_id]
            process.name = flavour.name_process(pid, bool(device), meta)
            process.labels = list(meta.get("labels", ()))
            process.sort_index = meta.get("sort_index")
        for track_id, (device, pid, tid) in self._raw_ids.items():
            meta = ctx.thread_meta.get((pid, tid), {})
            t = trace.tracks[track_id]
            t.name = flavour.name_thread(pid, tid, device, meta)
            t.sort_index = meta.get("sort_index")

    def _written_tracks(self) -> None:
        """A file traceconv wrote says what its processes and tracks were (kinds, units,
        names, pids and tids: :mod:`.written_tracks`): they are so again, an async track's
        thread an async track, no thread's work."""
        unread = written_tracks.restore(
            self.trace, self.context.envelope.get("traceconv"), processes=self._processes,
            threads=self._canonical, counters=self._counter_tracks,
            global_track=self._special_tracks.get(("global",)))
        self.trace.diagnostics.add("chrome.written_record_unread", count=unread)

    def _written_record(self) -> None:
        """A file traceconv wrote keeps the trace's metadata, the first reading's
        diagnostics (:mod:`~traceconv.model.metadata_record`), its op statistics
        (:mod:`~traceconv.model.stats_record`), its memory blocks and reservations
        (:mod:`~traceconv.model.block_record`), its op graph
        (:mod:`~traceconv.model.graph_record`) and the source's values of the
        envelope keys the writer sets (``baseTimeNanoseconds``): they are the trace's again."""
        written = self.context.envelope.get("traceconv")
        if isinstance(written, dict):
            meta = self.trace.metadata
            restore_metadata(meta, written)
            carry_diagnostics(self.trace.diagnostics, written.get("diagnostics"))
            restore_stats(self.trace, written.get("stats"))
            restore_blocks(self.trace, written)
            restore_graph(self.trace, written.get("graph"))
            if isinstance(written.get("envelope"), dict):
                meta.attributes.update(written["envelope"])

    def _apply_time_base(self) -> None:
        """Add the envelope's base (Kineto's baseTimeNanoseconds) and name the clock."""
        meta, trace = self.trace.metadata, self.trace
        base = self.context.envelope.get("baseTimeNanoseconds")
        flow_ts = self.flow_points.ts
        edges = [*(trace.time_range or ()),
                 *((int(flow_ts.min()), int(flow_ts.max())) if len(flow_ts) else ())]
        if isinstance(base, int) and base and not (-INT64 <= base < INT64 and (
                not edges or min(edges) + base >= -INT64 and max(edges) + base < INT64)):
            self.drop("chrome.time_base_out_of_range", "$.baseTimeNanoseconds")
        elif isinstance(base, int) and base:
            meta.clock_base_ns = base
            for table, column in ((trace.slices, "start"), (trace.instants, "ts"),
                                  (trace.counters, "ts")):
                values = getattr(table, column)
                if len(values):   # in place (the view is gone before the column grows)
                    np.add(np.frombuffer(values, dtype=np.int64), base,
                           out=np.frombuffer(values, dtype=np.int64))
            self.flow_points.shift(base)
        bounds = trace.time_range
        meta.clock = "unix epoch" if bounds and bounds[0] >= EPOCH_NS else "relative"

    def _report(self) -> None:
        # kinds and texts: traceconv/model/diagnostic_codes.py
        for code, (count, example) in self._dropped.items():
            if isinstance(example, int):
                example = f"$.traceEvents[{example}]"
            self.trace.diagnostics.add(code, count=count, example=example)


def _trust_written_devices(flavour: Flavour, envelope: dict) -> None:
    """A file traceconv wrote lists the categories it put on device processes: they stay
    device work on reading (round trips are idempotent)."""
    written = envelope.get("traceconv")
    if not isinstance(written, dict):
        return
    categories = written.get("device_categories")
    if isinstance(categories, list):
        flavour.device_categories = flavour.device_categories | {
            c for c in categories if isinstance(c, str)}


def read_chrome(source: Source, flavour: str | None = None) -> Trace:
    """Read a Chrome trace (any flavour, or the one named) from ``source`` into a
    :class:`Trace`."""
    return _read_events(source, flavour).finish()


def _read_events(source: Source, forced: str | None = None) -> ChromeReader:
    with source.open() as stream, located_errors(source, stream):
        doc = read_document(stream)
        if not doc.has_events_key:
            keys = ", ".join(list(doc.envelope)[:5]) or "none"
            raise InputError(f'a Chrome trace object needs a "traceEvents" array (keys '
                             f"here: {keys})", file=source.name, location="$")
        chunks = iter(doc.chunks)
        first = next(chunks, [])
        flavour = by_name(forced) if forced else detect(doc.envelope, first)
        _trust_written_devices(flavour, doc.envelope)
        reader = ChromeReader(source.name, doc.envelope, flavour,
                              flavour.time_unit_ns(first))
        reader.read(first, 0)
        index = len(first)
        if flavour.takes_records():
            doc.records = decode_records
        for chunk in chunks:
            reader.read(chunk, index)
            index += len(chunk)
            source.read_events(index)   # for a progress bar
        if not index:   # an empty trace is an export that went wrong: say so
            raise InputError("no trace events (the event array is empty)", file=source.name,
                             location="$.traceEvents" if doc.has_events_key and
                             isinstance(doc.envelope, dict) and doc.envelope else "$")
    reader.trace.diagnostics.add("chrome.duplicate_trace_events", count=doc.duplicate_events)
    reader.trace.diagnostics.add("chrome.envelope_value_skipped", count=len(doc.skipped_keys),
                                 example=", ".join(doc.skipped_keys[:3]) or None)
    if doc.truncated:
        reader.trace.diagnostics.add("chrome.truncated_array")
    return reader
