"""Async events of begins and ends that do not match (ends whose begins never come, ids used
again by later objects, ends before their begins, begins never ended) placed on their
objects' tracks and paired as trace_processor does it, in a time linear in the events.

``benchmarks/async_objects.py`` made 100 k such events take about a minute: each new object
looked through every track of its group for a free one, and each end through every begin
still open on its track. The placement now takes the first free track from a heap and the
pairing files each open begin under its name and category. The pairing follows
trace_processor's slice stack (an end below the top, instants on the stack); that stack is
walked whole at each event there, here not at all (many events at one time). Expected
values: the rules written out record by record in plain code below (the placement's scan
of the tracks, the slice stack walked from the top down as trace_processor walks it), and
the real trace_processor on generated Perfetto traces.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace as TraceProto
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket, TrackEvent

import traceconv
from tests.test_perfetto_legacy_async import model_slices, tp_slices
from traceconv.formats.async_tracks import LOCAL, AsyncTracks, ObjectId
from traceconv.formats.begin_end import add_paired
from traceconv.model import Trace
from traceconv.model.builder import TraceBuilder

# -- the rule, record by record ----------------------------------------------------------------


def reference_placement(events: list[tuple], separate_scopes: bool) -> list[tuple]:
    """Each event's (seq, group, number): in (time, seq) order an object keeps its track
    while it holds it; else it takes the first track of its group with no begin open,
    else a new one. ``events``: (ts, seq, phase, name, category, process, key, local)."""
    root: dict[tuple, str] = {}   # (in a protobuf trace, by the id whatever its scope)
    tracks: dict[tuple, list[list]] = {}      # group -> [object, open begins] per track
    out = []
    for _ts, seq, phase, name, _category, process, key, local in sorted(
            events, key=lambda e: (e[0], e[1])):
        group = (process if local else None,
                 root.setdefault(key[1:] if separate_scopes else key, name),
                 key[0] if separate_scopes else None)
        held = tracks.setdefault(group, [])
        number = next((i for i, (holder, _) in enumerate(held) if holder == key), None)
        if number is None:
            number = next((i for i, (_, open_) in enumerate(held) if open_ == 0), len(held))
            if number == len(held):
                held.append([key, 0])
            held[number][0] = key
        if phase == "b":
            held[number][1] += 1
        elif phase == "e" and held[number][1]:
            held[number][1] -= 1
        out.append((seq, group, number))
    return out


def reference_pairs(spans: list[tuple]) -> tuple[set, int, int]:
    """(begin seq, end seq or None) of each slice, the ends that closed nothing and the
    begins cut short, by trace_processor's slice stack written out plainly: before each
    event the stack is walked from the top; an ended slice below an open begin cuts
    everything above it once the event is past its end, else an ended slice (one not at
    the event's time, or not an instant under an instant) lets the top go. An end closes
    the latest open begin of its name and category (where the end gives them)."""
    stack: list[dict] = []
    closed: dict[int, int | None] = {}
    unmatched = cut = 0
    for ts, seq, begins, name, category in sorted(spans, key=lambda s: (s[0], s[1])):
        open_above = False
        for at in range(len(stack) - 1, -1, -1):
            if at >= len(stack):
                continue
            entry = stack[at]
            if entry["end"] is None:
                open_above = True
            elif open_above:
                if ts > entry["end"]:
                    for above in stack[at + 1:]:
                        cut += above["end"] is None
                        above["end"] = entry["end"]
                    del stack[at:]
                    open_above = False
            elif entry["end"] < ts or entry["end"] == ts and not (
                    begins is None and entry["start"] == entry["end"]):
                stack.pop()
        if begins is None:
            stack.append({"start": ts, "end": ts, "seq": seq, "name": name, "cat": category})
        elif begins:
            stack.append({"start": ts, "end": None, "seq": seq, "name": name,
                          "cat": category})
            closed[seq] = None
        else:
            for at in range(len(stack) - 1, -1, -1):
                entry = stack[at]
                if entry["end"] is None and (not name or entry["name"] == name) and (
                        not category or entry["cat"] == category):
                    entry["end"] = ts
                    closed[entry["seq"]] = seq
                    if at == len(stack) - 1:
                        stack.pop()
                    break
            else:
                unmatched += 1
    return set(closed.items()), unmatched, cut


@st.composite
def mismatched_events(draw) -> list[tuple]:
    """Events of few ids, names, categories and times (ties), in any order: begins and ends
    of one object rarely match. Each: (ts, phase, name, category, process, id space, id)."""
    return draw(st.lists(st.tuples(
        st.integers(0, 12), st.sampled_from("bben"), st.sampled_from(["Load", "Task", ""]),
        st.sampled_from(["io", "gpu", ""]), st.sampled_from([1, 2]),
        st.sampled_from([None, LOCAL, "id"]), st.integers(1, 3)), max_size=60))


def _object_id(space: str | None, value: int) -> ObjectId | None:
    return None if space is None else ObjectId(space, value, {"id": value})


@settings(derandomize=True, max_examples=100, deadline=None)
@given(mismatched_events(), st.booleans())
def test_placement_is_the_rule_record_by_record(events, separate_scopes):
    tracks = AsyncTracks(protobuf=separate_scopes)
    written = []
    for seq, (ts, phase, name, category, process, space, value) in enumerate(events):
        tracks.add(ts, phase, name, category, process, _object_id(space, value))
        key = ((category, "none", process, name) if space is None
               else (category, LOCAL, process, value) if space == LOCAL
               else (category, space, value))
        written.append((ts, seq, phase, name, category, process, key,
                        space in (LOCAL, None)))
    placed = [(i, group, number) for i, (group, number) in tracks.in_time_order()]
    assert placed == reference_placement(written, separate_scopes)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8), st.sampled_from([True, True, False, False, None]),
                          st.sampled_from(["A", "B", ""]), st.sampled_from(["x", ""])),
                max_size=80))
def test_pairing_is_the_rule_record_by_record(spans):
    spans = [(ts, seq, begins, name, category)
             for seq, (ts, begins, name, category) in enumerate(spans)]
    trace = TraceBuilder()
    track = trace.add_track("objects", process=trace.add_process("p"))
    paired = add_paired(trace, track, [(*span, None) for span in spans], by_name=True,
                        rows=True)
    instants = {seq for _, seq, begins, _, _ in spans if begins is None}
    by_row: dict[int, list[int]] = {}
    for seq, row in (paired.rows or {}).items():
        if seq not in instants:   # (an instant's row is of the instants)
            by_row.setdefault(row, []).append(seq)
    # (a slice's begin is noted before its end)
    pairs = {(seqs[0], seqs[1] if len(seqs) == 2 else None) for seqs in by_row.values()}
    assert (pairs, paired.unmatched_ends, paired.cut_short) == reference_pairs(spans)
    # (a begin cut short has no end of its own, and is no slice left open)
    assert len(paired.unclosed) == sum(end is None for _, end in pairs) - paired.cut_short
    assert len(trace.instants) == len(instants)



def _built(tracks: AsyncTracks) -> Trace:
    """The trace of one process holding ``tracks``' objects, under Chrome's codes."""
    trace = TraceBuilder()
    trace.add_process("p")
    tracks.add_to(trace, without_id="chrome.async_without_id",
                  end_without_begin="chrome.end_without_begin",
                  not_ended="chrome.begin_without_end", cut_short="chrome.async_cut_short")
    return trace.build()


def test_many_objects_never_ended_and_ends_that_close_nothing():
    """5,000 objects of one name never ended (each on a track of its own: 5,000 tracks),
    then 5,000 ends of another name on one object's track (none closes anything): counted
    from the events as written."""
    tracks = AsyncTracks()
    objects = 5_000
    for k in range(objects):
        tracks.add(k, "b", "Load", "io", 0, ObjectId("id", k, {"id": k}))
    for k in range(objects):
        tracks.add(objects + k, "e", "Save", "io", 0, ObjectId("id", 0, {"id": 0}))
    built = _built(tracks)
    assert len(built.tracks) == objects and len(built.slices) == objects
    assert built.diagnostics.count("chrome.end_without_begin") == objects
    assert built.diagnostics.count("chrome.begin_without_end") == objects


def test_many_events_at_one_time_ends_below_the_top_and_instants():
    """5,000 pairs of begins (Load, then Task above it) of one object at one time, then an
    end of each Load there (each below its Task: no cut at that time), then an instant a
    microsecond later: it cuts every Task at 0 (5,000 cut short, no length). Then 5,000
    instants of another object at one time. trace_processor walks its whole stack at each
    event; this walks none of it (counted from the events as written)."""
    tracks = AsyncTracks()
    pairs = 5_000
    for _ in range(pairs):
        tracks.add(0, "b", "Load", "io", 0, ObjectId("id", 1, {"id": 1}))
        tracks.add(0, "b", "Task", "io", 0, ObjectId("id", 1, {"id": 1}))
    for _ in range(pairs):
        tracks.add(0, "e", "Load", "io", 0, ObjectId("id", 1, {"id": 1}))
    tracks.add(1, "n", "Mark", "io", 0, ObjectId("id", 1, {"id": 1}))
    for _ in range(pairs):
        tracks.add(2, "n", "Tick", "io", 0, ObjectId("id", 2, {"id": 2}))
    built = _built(tracks)
    assert len(built.slices) == 2 * pairs and len(built.instants) == pairs + 1
    assert {s.dur for s in built.iter_slices()} == {0}
    assert built.diagnostics.count("chrome.async_cut_short") == pairs
    assert not built.diagnostics.count("chrome.begin_without_end")


# -- trace_processor the referee ---------------------------------------------------------------


def _packet(trace: TraceProto, ts: int, sequence: int):
    packet = trace.packet.add()
    packet.timestamp, packet.trusted_packet_sequence_id = ts, sequence
    return packet


@st.composite
def mismatched_legacy_trace(draw) -> bytes:
    """Legacy async events of two processes' threads in any order: four ids used over and
    over in local, global and unscoped spaces, so objects follow one another on a track;
    ends before their begins, ends of no begin, begins never ended, instants. An id keeps
    its name, category and ``id_scope`` here; ``tests/test_async_peer.py`` changes them
    from event to event."""
    trace = TraceProto()
    for pid in (1, 2):
        first = _packet(trace, 1, pid)
        first.sequence_flags = TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
        thread = first.track_descriptor
        thread.uuid, thread.thread.pid, thread.thread.tid = 200 + pid, pid, 10 + pid
    count = draw(st.integers(1, 40))
    for ts in range(2, count + 2):
        ident = draw(st.integers(1, 4))
        event = _packet(trace, ts * 1_000, draw(st.sampled_from([1, 2]))).track_event
        event.name, event.track_uuid = ("Load", "Task")[ident % 2], 0
        event.categories.append(("a", "b")[ident // 3])
        legacy = event.legacy_event
        legacy.phase = ord(draw(st.sampled_from("bben")))
        setattr(legacy, draw(st.sampled_from(["local_id", "global_id", "unscoped_id"])), ident)
        if ident == 3:
            legacy.id_scope = "frame"
        annotation = event.debug_annotations.add()
        annotation.name, annotation.int_value = "arg_n", ts
    last = _packet(trace, (count + 5) * 1_000, 1).track_event
    last.type, last.track_uuid, last.name = TrackEvent.TYPE_INSTANT, 201, "last"
    return trace.SerializeToString()


@pytest.mark.integration
@pytest.mark.slow
@settings(derandomize=True, max_examples=40, deadline=None)
@given(mismatched_legacy_trace())
def test_mismatched_legacy_events_land_as_trace_processor_places_them(
        trace_processor, tmp_path_factory, data):
    expected = tp_slices(trace_processor, data, legacy=True)
    path: Path = tmp_path_factory.mktemp("mismatched") / "trace.pftrace"
    path.write_bytes(data)
    assert model_slices(traceconv.load(path)) == Counter(
        tuple(rows) for rows in expected.values())
