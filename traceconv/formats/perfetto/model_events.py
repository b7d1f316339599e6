"""The reader's last step: the track events kept, as the model's slices, instants, counter
samples and flows (see :mod:`.reader` for the rules, :mod:`.slice_matching` for the pairing).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ...model.instant_slices import instants_as_slices
from ...model.timeline_order import timeline_order
from . import model_attribute
from .arg_store import OBJECT
from .dotted_names import DottedNames
from .event_kinds import ASYNC, BEGIN, COMPLETE, COUNTER, END, INSTANT
from .legacy_async import add_legacy_async
from .merged_args import laid_out, merged_rows
from .slice_matching import link_flows, pair_slices
from .track_tree import TrackMap

if TYPE_CHECKING:
    from .reader import PftraceReader

LIMIT = 1 << 63


def _column(values: Any, dtype: Any) -> np.ndarray:
    return np.frombuffer(values, dtype=dtype) if len(values) else np.zeros(0, dtype=dtype)


def _of_kind(values: Any, dtype: Any, kind: np.ndarray, code: int, rows: np.ndarray
             ) -> np.ndarray:
    """The values of events ``rows``, all of type ``code``, from a column that holds one
    value per event of that type, in event order.

    >>> from array import array
    >>> _of_kind(array("q", [5, 7]), np.int64, np.array([COUNTER, BEGIN, COUNTER]),
    ...          COUNTER, np.array([2])).tolist()
    [7]
    """
    number = np.cumsum(kind == code) - 1   # per event: its place among those of its type
    return _column(values, dtype)[number[rows]]


def build_events(reader: PftraceReader, tracks: TrackMap, shift: int,
                 model: dict[str, Any] | None) -> None:
    """Fill ``reader.trace`` from ``reader.events``."""
    events, diagnostics = reader.events, reader.diagnostics
    raw = _column(events.ts, np.uint64)
    kind = _column(events.type, np.int8)
    keep = raw < np.uint64(1 << 63)
    diagnostics.add("perfetto.timestamp_beyond_int64", count=int((~keep).sum()),
                    example=f"{int(raw[~keep][0])}" if (~keep).any() else None)
    ts = raw.astype(np.int64)
    del raw
    keep &= to_trace_clock(reader, ts, _column(events.clock, np.int64))
    events.release("ts", "clock", "packet")   # (each column goes once used: see release)
    ts -= shift
    uuid = _column(events.track, np.uint64)
    known = np.array(sorted(tracks.track), dtype=np.uint64)
    model_track = np.array([tracks.track[int(u)] for u in known.tolist()] + [-1], np.int64)
    place = np.minimum(np.searchsorted(known, uuid), len(known))
    track = model_track[place]
    diagnostics.add("perfetto.track_parent_not_declared", count=int((keep & (track < 0)).sum()))
    keep &= track >= 0
    on_counter = np.isin(uuid, np.array(list(tracks.counters), dtype=np.uint64))
    counter_rows = np.flatnonzero(keep & (kind == COUNTER) & on_counter)
    diagnostics.add("perfetto.counter_on_slice_track",
                    count=int((keep & (kind == COUNTER) & ~on_counter).sum()))
    diagnostics.add("perfetto.slice_on_counter_track",
                    count=int((keep & (kind != COUNTER) & on_counter).sum()))
    timeline = np.flatnonzero(keep & (kind != COUNTER) & ~on_counter)
    reader.dotted = DottedNames(model["dotted"] if model else (), groups=reader.group_names)
    _counters(reader, tracks, counter_rows, kind, uuid, track, ts)
    del uuid, on_counter, counter_rows
    events.release("track", "value", "generation")
    slice_of = _slices(reader, timeline, kind, ts, place, track, model)
    _flows(reader, slice_of, ts, keep, model)


def to_trace_clock(reader: PftraceReader, ts: np.ndarray, clock: np.ndarray) -> np.ndarray:
    """Move timestamps on other clocks onto the trace clock (in place) through the nearest
    earlier ClockSnapshot; returns which events could be placed."""
    placed = np.ones(len(ts), dtype=bool)
    offsets = reader.clock_offsets()
    for clock_id in np.unique(clock).tolist():
        if clock_id == reader.trace_clock:
            continue
        rows = np.flatnonzero(clock == clock_id)
        if clock_id in reader.incremental_clocks:
            placed[rows] &= _accumulate(reader, ts, rows, clock_id)
        pairs = sorted(offsets.get(clock_id, []))
        if not pairs:
            placed[rows] = False
            reader.diagnostics.add("perfetto.clock_without_snapshot", count=len(rows),
                                   example=f"clock {clock_id & 0xFFFFFFFF}")
            continue
        readings = np.array([p[0] for p in pairs], dtype=np.int64)
        at = np.maximum(np.searchsorted(readings, ts[rows], "right") - 1, 0)
        offset = np.array([p[1] - p[0] for p in pairs], dtype=np.int64)[at]
        moved = ts[rows] + offset   # (wraps where the sum does not fit: those not placed)
        fits = ~(((offset > 0) & (moved < ts[rows])) | ((offset < 0) & (moved > ts[rows])))
        reader.diagnostics.add("perfetto.clock_beyond_int64", count=int((~fits).sum()))
        placed[rows] &= fits
        ts[rows] = moved
    return placed


def _accumulate(reader: PftraceReader, ts: np.ndarray, rows: np.ndarray,
                clock: int) -> np.ndarray:
    """Timestamps on an incremental clock (each the delta from the previous packet's on
    it, in its units: the other packets' too, such as track descriptors), in place, as
    readings of that clock in ns: from the latest ClockSnapshot before them, which gives
    the base. Returns which rows had a snapshot before them."""
    packets = _column(reader.events.packet, np.int64)[rows]
    other_packets, other_ts = reader.steps.on(clock)
    bases = reader.incremental_clocks[clock]
    if not len(other_packets) and (np.diff(packets) > 0).all():   # a packet a row, in order
        before, fits = _summed(ts, rows, packets, bases)
    else:
        # one step per packet, in file order: the events' and the other packets' (an
        # event's extra counter values are rows of its packet, added after the block)
        stepped, first, row_step = np.unique(np.r_[packets, other_packets], return_index=True,
                                             return_inverse=True)
        readings = np.r_[ts[rows], other_ts][first]
        all_before, all_fits = _summed(readings, np.arange(len(stepped)), stepped, bases)
        row_step = row_step.ravel()[:len(rows)]
        ts[rows] = readings[row_step]
        before, fits = all_before[row_step], all_fits[row_step]
    reader.diagnostics.add("perfetto.incremental_clock_before_snapshot",
                           count=int((~before).sum()))
    reader.diagnostics.add("perfetto.clock_beyond_int64", count=int((before & ~fits).sum()))
    return before & fits


def _summed(ts: np.ndarray, rows: np.ndarray, packets: np.ndarray,
            bases: list[tuple[int, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """The running sums of :func:`_accumulate`, in place, over ``rows`` of ``ts`` (in file
    order, ``packets`` their packet numbers); returns which rows had a snapshot before
    them and which sums fit int64."""
    starts = np.array([b[0] for b in bases], dtype=np.int64)
    segment = np.searchsorted(starts, packets, "right") - 1
    placed = segment >= 0
    segment = np.maximum(segment, 0)
    base = np.array([b[1] for b in bases], dtype=np.int64)[segment]
    unit = np.array([b[2] for b in bases], dtype=np.int64)[segment]
    first = np.r_[True, segment[1:] != segment[:-1]]
    head = np.maximum.accumulate(np.where(first, np.arange(len(rows)), 0))   # segment start
    rough = ts[rows].astype(np.float64) * unit
    rough_steps = np.cumsum(rough)
    if (np.abs(base + rough_steps - (rough_steps - rough)[head]) < 2.0 ** 62).all():
        delta = ts[rows] * unit   # (int64 suffices: no sum comes near its edges)
        steps = np.cumsum(delta)
        ts[rows] = base + steps - (steps - delta)[head]
        return placed, np.ones(len(rows), dtype=bool)
    # a hostile file: the same sums in Python's integers, which do not wrap
    delta = ts[rows].astype(object) * unit.astype(object)
    steps = np.cumsum(delta)
    reading = (base.astype(object) + steps - (steps - delta)[head]).tolist()
    fits = np.array([-LIMIT <= r < LIMIT for r in reading], dtype=bool)
    ts[rows] = [r if ok else 0 for r, ok in zip(reading, fits.tolist(), strict=True)]
    return placed, fits


def running_sums(deltas: np.ndarray, generation: np.ndarray) -> np.ndarray:
    """An incremental counter's readings from its ``deltas`` (in the order read), as
    trace_processor sums them: apart for each (sequence, generation) ``generation`` names,
    from 0 again each time a sequence clears its incremental state, however the sequences
    writing to the track interleave.

    >>> running_sums(np.array([100., 50., 10., 5.]), np.array([1, 2, 1, 2])).tolist()
    [100.0, 50.0, 110.0, 55.0]
    >>> running_sums(np.array([1., 2., 4.]), np.array([1, 1, 3])).tolist()
    [1.0, 3.0, 4.0]
    """
    order = np.argsort(generation, kind="stable")
    grouped = deltas[order]
    sums = np.cumsum(grouped)
    first = np.r_[True, generation[order][1:] != generation[order][:-1]]
    head = np.maximum.accumulate(np.where(first, np.arange(len(order)), 0))
    readings = np.empty_like(grouped)
    readings[order] = sums - (sums - grouped)[head]
    return readings


def _counters(reader: PftraceReader, tracks: TrackMap, rows: np.ndarray, kind: np.ndarray,
              uuid: np.ndarray, track: np.ndarray, ts: np.ndarray) -> None:
    values = _of_kind(reader.events.value, np.float64, kind, COUNTER, rows)
    multiplier = np.ones(len(rows))
    for key, counter in tracks.counters.items():
        on = uuid[rows] == np.uint64(key)
        multiplier[on] = counter.multiplier
        if counter.incremental and on.any():
            picked = np.flatnonzero(on)
            generation = _of_kind(reader.events.generation, np.int64, kind, COUNTER,
                                  rows[picked])
            values[picked] = running_sums(values[picked], generation)
    table = reader.trace.counters
    table.track.frombytes(track[rows].astype(np.int32).tobytes())
    table.ts.frombytes(ts[rows].astype(np.int64).tobytes())
    table.value.frombytes((values * multiplier).astype(np.float64).tobytes())


def _slices(reader: PftraceReader, rows: np.ndarray, kind: np.ndarray, ts: np.ndarray,
            place: np.ndarray, track: np.ndarray, model: dict[str, Any] | None) -> np.ndarray:
    """Slices and instants from the events ``rows``; returns per event the slice row it
    made or closed (-1 for others)."""
    events, diagnostics, trace = reader.events, reader.diagnostics, reader.trace
    order = rows[np.lexsort((rows, ts[rows], place[rows]))]
    delta = np.where(kind[order] == BEGIN, 1, np.where(kind[order] == END, -1, 0))
    pairs = pair_slices(place[order], delta)
    diagnostics.add("perfetto.end_without_begin", count=len(pairs.unmatched_ends))
    begin_event = order[pairs.begins]
    end_event = np.where(pairs.ends >= 0, order[np.maximum(pairs.ends, 0)], -1)
    complete = rows[kind[rows] == COMPLETE]
    starts_at = np.r_[begin_event, complete]
    start = ts[starts_at]
    # a BEGIN never ended: no length here, the builder's rule ends it (not_ended below)
    not_ended = np.r_[end_event < 0, np.zeros(len(complete), dtype=bool)]
    end = np.r_[ts[np.where(end_event >= 0, end_event, begin_event)],
                ts[complete] + _of_kind(events.duration, np.int64, kind, COMPLETE, complete)]
    events.release("duration")
    dur = np.maximum(end - start, 0)
    slice_track = track[starts_at]
    # (a slice never ended outlasts every other that starts with it: first among them)
    row_order = timeline_order(slice_track, start,
                               np.where(not_ended, np.iinfo(np.int64).min, -dur))
    not_ended = not_ended[row_order]
    chosen = starts_at[row_order]
    closers = np.r_[end_event, np.full(len(complete), -1)][row_order]
    names = _column(events.name, np.int32)
    categories = _column(events.category, np.int32)
    columns = {"track": slice_track[row_order], "start": start[row_order],
               "dur": dur[row_order], "name": names[chosen], "category": categories[chosen]}
    # (the pairing's arrays go before the args' values are made: they are the peak)
    del order, delta, pairs, begin_event, end_event, starts_at, start, end, dur, slice_track
    del row_order
    key_sets, sets, values = _args_of(reader, chosen, closers)
    trace.slices.extend_sets(key_sets, sets, values, **columns)
    del values, columns
    trace.not_ended(np.flatnonzero(not_ended), "perfetto.slice_not_ended")
    slice_of = np.full(len(kind), -1, dtype=np.int64)
    slice_of[chosen] = np.arange(len(chosen))
    closed = closers >= 0
    slice_of[closers[closed]] = np.flatnonzero(closed)
    instants = rows[kind[rows] == INSTANT]
    instants = instants[timeline_order(track[instants], ts[instants], np.zeros(len(instants),
                                                                              np.int64))]
    key_sets, sets, values = _args_of(reader, instants, np.full(len(instants), -1))
    first = len(trace.instants)
    trace.instants.extend_sets(key_sets, sets, values, track=track[instants],
                               ts=ts[instants], name=names[instants],
                               category=categories[instants])
    # an instant that carries a flow is a slice of no length (the model links slices)
    flowing = np.concatenate([p[:, 0] for p in events.flows if len(p)] or [np.zeros(0, int)])
    point = np.flatnonzero(np.isin(instants, flowing))
    slice_of[instants[point]] = instants_as_slices(trace, first + point)
    legacy = rows[np.isin(kind[rows], list(ASYNC))]
    if len(legacy):
        slice_events, slice_rows, instant_events, instant_rows = add_legacy_async(
            trace, legacy, events.async_ids, kind, ts, track, names, categories,
            _arg_dicts(reader, legacy))
        slice_of[slice_events] = slice_rows
        point = np.flatnonzero(np.isin(instant_events, flowing))
        slice_of[instant_events[point]] = instants_as_slices(trace, instant_rows[point])
    return slice_of


def _arg_dicts(reader: PftraceReader, chosen: np.ndarray) -> Iterator[dict | None]:
    """The args of events ``chosen`` one dict each (None: none), as :func:`_args_of`
    makes them, one at a time (a dict is kept no longer than its event needs it)."""
    key_sets, sets, values = _args_of(reader, chosen, np.full(len(chosen), -1))
    taken = iter(values)
    for k in sets.tolist():
        # (zip takes a key first: it stops at the last key without taking one value more)
        yield dict(zip(key_sets[k], taken)) if k >= 0 else None  # noqa: B905


def _args_of(reader: PftraceReader, chosen: np.ndarray, closers: np.ndarray
             ) -> tuple[list[tuple[str, ...]], np.ndarray, list[Any]]:
    """The args of events ``chosen`` as key sets, key-set numbers (-1 for none) and the
    values one row after another; rows that need more than their own annotations (args
    on their END too, a name given twice, a dotted name the writer nested) are made by
    :mod:`.merged_args`, and all rows' values then put in place together."""
    events = reader.events
    texts = reader.interned.texts
    key_sets = events.key_sets
    sets, positions = events.positions(chosen)
    where = np.where(sets >= 0, sets, len(key_sets))
    special = np.array([len(set(k)) != len(k) for k in key_sets] + [False], dtype=bool)[where]
    arg_set = _column(events.arg_set, np.int32)
    with_end = (closers >= 0) & (arg_set[np.maximum(closers, 0)] >= 0)
    special |= with_end
    if reader.dotted:
        heads = reader.dotted.heads
        nested = np.array([any(key in heads for key in k) for k in key_sets]
                          + [False], dtype=bool)
        special |= nested[where]
    if reader.nested_objects:   # rows with a marked group among their values
        values = events.values
        marked = (np.frombuffer(values.kind, np.uint8)[positions] == OBJECT) & np.isin(
            np.frombuffer(values.bits, np.uint64)[positions],
            np.array(reader.nested_objects, dtype=np.uint64))
        widths = np.array([len(k) for k in key_sets] + [0], dtype=np.int64)
        special[np.repeat(np.arange(len(chosen)), widths[where])[marked]] = True
    rows = np.flatnonzero(special)
    if not len(rows):
        return key_sets, sets, events.values.python(positions, texts)
    widths = np.array([len(k) for k in key_sets] + [0], dtype=np.int64)
    sizes = widths[where]
    in_special = np.repeat(special, sizes)   # per value: whether its row is remade
    ends = closers[rows[with_end[rows]]]
    end_sets, end_positions = events.positions(ends)
    end_values = iter(events.values.python(end_positions, texts))
    # (each END takes as many values as its key set has keys: the iterator is shared)
    end_args = [list(zip(key_sets[k], end_values, strict=False)) for k in end_sets.tolist()]
    end_of = np.cumsum(with_end[rows]) - 1   # a remade row's place among those with an END
    made = merged_rows(key_sets, sets[rows],
                       events.values.python(positions[in_special], texts), with_end[rows],
                       lambda k: end_args[end_of[k]], reader.dotted)
    key_sets, made_sets, made_values = laid_out(key_sets, made)
    sets = sets.copy()
    sets[rows] = made_sets
    # every row's values, in row order: the others' as stored, the remade rows' as made
    new_sizes = np.array([len(k) for k in key_sets] + [0], dtype=np.int64)[
        np.where(sets >= 0, sets, len(key_sets))]
    remade = np.repeat(special, new_sizes)
    out = np.empty(len(remade), dtype=object)
    out[~remade] = events.values.objects_at(positions[~in_special], texts)
    out[remade] = np.fromiter(made_values, dtype=object, count=len(made_values))
    return key_sets, sets, out.tolist()


def _flows(reader: PftraceReader, slice_of: np.ndarray, ts: np.ndarray, keep: np.ndarray,
           model: dict[str, Any] | None) -> None:
    trace, diagnostics = reader.trace, reader.diagnostics
    parts = [p for p in reader.events.flows if len(p)]
    if not parts:
        return
    flows = np.concatenate(parts)
    event, ids, ends = flows[:, 0], flows[:, 1], flows[:, 2].astype(bool)
    placed = keep[event] & (slice_of[event] >= 0)
    diagnostics.add("perfetto.flow_endpoint_not_slice", count=int((~placed).sum()))
    event, ids, ends = event[placed], ids[placed], ends[placed]
    position = np.lexsort((event, ts[event]))
    rank = np.empty(len(event), dtype=np.int64)
    rank[position] = np.arange(len(event))
    sources, targets, orphans = link_flows(rank, ids, ends)
    if model and model["backwards"]:   # (the earlier end came first: the writer's target)
        turned = np.isin(ids[targets], np.array(model["backwards"], dtype=np.int64))
        sources[turned], targets[turned] = targets[turned], sources[turned]
    diagnostics.add("perfetto.flow_end_without_start", count=orphans)
    source_rows, target_rows = slice_of[event[sources]], slice_of[event[targets]]
    labels = model_attribute.flow_labels(model.get("flows", [])) if model else []
    intern = trace.strings.intern
    distinct = {label: k for k, label in enumerate(dict.fromkeys(labels))}
    strings = np.array([(intern(c), intern(n)) for c, n in distinct] + [(0, 0)],
                       dtype=np.int64).reshape(-1, 2)
    # the label of flow id i is labels[i - 1]; other ids have none (the last row: 0, 0)
    label_of = np.r_[len(distinct), np.fromiter(map(distinct.__getitem__, labels),
                                                dtype=np.int64, count=len(labels))]
    flow_ids = ids[targets]
    known = (flow_ids > 0) & (flow_ids <= len(labels))
    chosen = label_of[np.where(known, flow_ids, 0)]
    table = trace.flows
    for column, values in ((table.source, source_rows), (table.target, target_rows),
                           (table.category, strings[chosen, 0]), (table.name, strings[chosen, 1])):
        column.frombytes(np.ascontiguousarray(values, dtype=column.typecode).tobytes())
