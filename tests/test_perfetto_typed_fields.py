"""Typed TrackEvent fields and source locations become args, keyed as trace_processor keys
them, and empty values stay empty through traceconv's writer (h2 report, items 1 and 11).

Inputs are real producers' files (``tests/data/perfetto/PROVENANCE.md``): a cut of a
Chromium 150 trace (typed Chrome fields, interned source locations, Chrome's extensions
with the extension descriptor Chrome writes), rebugger 0.7 (an inline source location on
every event) and tg4perfetto 0.0.6 (interned source locations). Expected values come from
the real trace_processor on the same file (its args table) and from the raw packets read
with the ``perfetto`` package's generated classes, never from traceconv's reader.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace as ProtoTrace
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TracePacket, TrackEvent
from perfetto.trace_builder.proto_builder import TraceProtoBuilder

import traceconv

DATA = Path(__file__).parent / "data" / "perfetto"
CHROMIUM = DATA / "chromium150_typed_fields_cut.pftrace"
REBUGGER = DATA / "rebugger0.7_app_cut.perfetto"
TG4PERFETTO = DATA / "tg4perfetto0.0.6_profile.perfetto-trace"
CLEARED = TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
NEEDS = TracePacket.SEQ_NEEDS_INCREMENTAL_STATE


def _flat(key: str, value: Any, out: list[tuple[str, Any]]) -> None:
    """A model arg as trace_processor's rows: a dict's entries as ``key.name``, a list's
    items as ``key[i]``; uint64 beyond int64 as the int64 it stores."""
    if isinstance(value, dict):
        for name, item in value.items():
            _flat(f"{key}.{name}", item, out)
    elif isinstance(value, list):
        for at, item in enumerate(value):
            _flat(f"{key}[{at}]", item, out)
    else:
        out.append((key, value - (1 << 64) if type(value) is int and value >= 1 << 63
                    else value))


def _model_args(trace: traceconv.Trace) -> Counter[tuple[str, Any]]:
    found: Counter[tuple[str, Any]] = Counter()
    for item in [*trace.iter_slices(), *trace.iter_instants()]:
        for key, value in (item.args or {}).items():
            rows: list[tuple[str, Any]] = []
            _flat(key, value, rows)
            found.update(rows)
    return found


def _typed_args(tp: Any) -> Counter[tuple[str, Any]]:
    """trace_processor's args of slices that are neither debug annotations nor its
    legacy-event bookkeeping: those its TrackEvent parser makes of typed fields."""
    found: Counter[tuple[str, Any]] = Counter()
    for r in tp.query(
            "select a.key k, a.value_type t, a.int_value i, a.string_value s, "
            "a.real_value r, a.display_value d from slice join args a using(arg_set_id) "
            "where a.key not like 'debug.%' and a.key not like 'legacy_event.%'"):
        value = {"int": r.i, "uint": r.i, "bool": bool(r.i), "string": r.s, "real": r.r,
                 "pointer": r.d}.get(r.t)
        found[r.k, value] += 1
    return found


def _annotation_names(path: Path) -> set[str]:
    """Every debug annotation name the file holds (inline or interned), from the packets."""
    names = set()
    for packet in ProtoTrace.FromString(path.read_bytes()).packet:
        names.update(a.name for a in packet.track_event.debug_annotations if a.name)
        names.update(e.name for e in packet.interned_data.debug_annotation_names)
    return names


@pytest.mark.integration
@pytest.mark.parametrize(("path", "values", "slices"), [
    (CHROMIUM, 6_924, 1_814), (REBUGGER, 2_406, 802), (TG4PERFETTO, 464, 116)])
def test_typed_fields_are_the_args_trace_processor_shows(trace_processor, path: Path,
                                                         values: int, slices: int):
    """Every arg trace_processor makes of a typed field is an arg of the model, under the
    same key with the same value (before: none of them; Chrome's histogram samples lost
    their name and value, rebugger's ``line`` instants everything), and the model has no
    arg that is neither one of those nor a debug annotation."""
    tp = trace_processor
    tp.load(path.read_bytes())
    theirs = _typed_args(tp)
    assert (sum(theirs.values()), tp.query(
        "select count(distinct s.id) n from slice s join args a using(arg_set_id) where "
        "a.key not like 'debug.%' and a.key not like 'legacy_event.%'")[0].n) == (values,
                                                                                 slices)
    trace = traceconv.load(path)
    ours = _model_args(trace)
    keys = {key for key, _ in theirs}
    assert Counter({kv: n for kv, n in ours.items() if kv[0] in keys}) == theirs
    names = _annotation_names(path)
    others = {key for item in [*trace.iter_slices(), *trace.iter_instants()]
              for key in item.args or {}} - {key.split("[")[0] for key in keys}
    # (besides the builder's own mark on a slice whose end is not in the input)
    assert {key for key in others if key not in names and not any(
        typed.startswith(key + ".") for typed in keys)} <= {"unfinished"}
    assert trace.diagnostics.count("perfetto.typed_field_not_read") == 0


TABLES = ("event_names", "source_locations", "histogram_names")


def _interned_walk(path: Path) -> list[tuple[TrackEvent, dict[str, dict[int, Any]]]]:
    """Each track event with its sequence's interned tables (:data:`TABLES`: iid → entry)
    at that point, as incremental state works: a cleared sequence starts empty; a packet
    that needs the state before its sequence was cleared is skipped."""
    state: dict[int, dict[str, dict[int, Any]]] = {}
    out = []
    for packet in ProtoTrace.FromString(path.read_bytes()).packet:
        sequence = packet.trusted_packet_sequence_id
        if packet.sequence_flags & CLEARED:
            state[sequence] = {table: {} for table in TABLES}
        elif packet.sequence_flags & NEEDS and sequence not in state:
            continue
        tables = state.setdefault(sequence, {table: {} for table in TABLES})
        for table in TABLES:
            tables[table].update((e.iid, e) for e in getattr(packet.interned_data, table))
        if packet.HasField("track_event"):
            out.append((packet.track_event, tables))
    return out


def _name(event: TrackEvent, tables: dict[str, dict[int, Any]]) -> str:
    return event.name or tables["event_names"][event.name_iid].name


def _began(event: TrackEvent) -> bool:
    return event.type in (TrackEvent.TYPE_SLICE_BEGIN, TrackEvent.TYPE_INSTANT)


def test_histogram_samples_keep_their_histogram_and_value():
    """Chrome's ``HistogramSample`` instants hold nothing but ``chrome_histogram_sample``:
    the histogram's name (interned by ``name_iid``) and the sample."""
    expected = Counter((tables["histogram_names"][e.chrome_histogram_sample.name_iid].name,
                        e.chrome_histogram_sample.sample)
                       for e, tables in _interned_walk(CHROMIUM)
                       if e.HasField("chrome_histogram_sample"))
    trace = traceconv.load(CHROMIUM)
    got = Counter((i.args["chrome_histogram_sample.name"],
                   i.args["chrome_histogram_sample.sample"])
                  for i in trace.iter_instants() if i.name == "HistogramSample")
    assert got == expected and sum(got.values()) == 788
    assert trace.diagnostics.count("perfetto.typed_field_not_read") == 0
    assert trace.diagnostics.count("perfetto.not_modelled.extension_descriptor") == 0


def test_interned_source_locations_and_posted_from():
    """``source_location_iid`` gives ``source.*`` and a task's ``posted_from_iid``
    ``task.posted_from.*`` (file, function, line), as trace_processor names them."""
    def location(entry: Any) -> tuple[str, str, int]:
        return entry.file_name, entry.function_name, entry.line_number

    for path, count in ((TG4PERFETTO, 116), (CHROMIUM, 87)):
        expected = Counter((_name(e, tables),
                            *location(tables["source_locations"][e.source_location_iid]))
                           for e, tables in _interned_walk(path)
                           if _began(e) and e.source_location_iid)
        trace = traceconv.load(path)
        got = Counter((item.name, item.args["source.file_name"],
                       item.args["source.function_name"], item.args["source.line_number"])
                      for item in [*trace.iter_slices(), *trace.iter_instants()]
                      if item.args and "source.file_name" in item.args)
        assert got == expected and sum(got.values()) == count
    posted = Counter(location(tables["source_locations"][e.task_execution.posted_from_iid])
                     for e, tables in _interned_walk(CHROMIUM)
                     if _began(e) and e.HasField("task_execution"))
    trace = traceconv.load(CHROMIUM)
    got = Counter((s.args["task.posted_from.file_name"], s.args["task.posted_from.function_name"],
                   s.args["task.posted_from.line_number"])
                  for s in [*trace.iter_slices(), *trace.iter_instants()]
                  if s.args and "task.posted_from.file_name" in s.args)
    assert got == posted and sum(got.values()) == 394


def test_inline_source_location_of_every_rebugger_event():
    """rebugger writes each event's file, function and line inline; its ``line``
    instants hold nothing else."""
    expected = Counter((e.name, e.source_location.file_name, e.source_location.function_name,
                        e.source_location.line_number)
                       for p in ProtoTrace.FromString(REBUGGER.read_bytes()).packet
                       if _began(e := p.track_event) and e.HasField("source_location"))
    trace = traceconv.load(REBUGGER)
    got = Counter((item.name, item.args["source_location.file_name"],
                   item.args["source_location.function_name"],
                   item.args["source_location.line_number"])
                  for item in [*trace.iter_slices(), *trace.iter_instants()]
                  if item.args and "source_location.file_name" in item.args)
    assert got == expected and sum(got.values()) == 802
    lines = [i.args for i in trace.iter_instants() if i.name == "line"]
    assert len(lines) == expected_lines(expected) and all(len(a) == 3 for a in lines)


def expected_lines(located: Counter[tuple[str, str, str, int]]) -> int:
    return sum(n for (name, *_), n in located.items() if name == "line")


def _event_with(builder: TraceProtoBuilder, ts: int, name: str, extra: bytes = b"",
                setup: Callable[[TrackEvent], object] = lambda event: None) -> None:
    """An instant on thread track 9, made by ``setup``, with ``extra`` raw bytes after
    its fields (what the generated classes cannot set: an extension)."""
    packet = TracePacket()
    packet.trusted_packet_sequence_id, packet.timestamp = 7, ts
    event = packet.track_event
    event.type, event.track_uuid, event.name = TrackEvent.TYPE_INSTANT, 9, name
    setup(event)
    body = event.SerializeToString() + extra
    packet.ClearField("track_event")
    raw = packet.SerializeToString() + b"\x5a" + bytes([len(body)]) + body   # field 11
    builder.add_packet().MergeFromString(raw)


def _proto_annotation(event: TrackEvent) -> None:
    annotation = event.debug_annotations.add()
    annotation.name, annotation.proto_type_name = "odd", "demo.Unknown"
    annotation.proto_value = b"\x08\x01"


def test_fields_that_give_no_args_are_counted(tmp_path: Path):
    """An extension that no descriptor describes, a callstack (trace_processor keeps it
    in a table of its own), an iid that was never interned and a proto value of a type
    no descriptor describes give no arg: each is counted, by name, never dropped
    silently. Four written, four counted."""
    builder = TraceProtoBuilder()
    thread = builder.add_packet()
    thread.track_descriptor.uuid = 9
    thread.track_descriptor.thread.pid, thread.track_descriptor.thread.tid = 4, 5
    _event_with(builder, 10, "extended", b"\xb8\x7c\x05")   # field 1991, varint 5
    _event_with(builder, 20, "stacked",
                setup=lambda e: setattr(e.callstack.frames.add(), "function_name", "f"))
    _event_with(builder, 30, "located", setup=lambda e: setattr(e, "source_location_iid", 9))
    _event_with(builder, 40, "odd", setup=_proto_annotation)
    path = tmp_path / "t.pftrace"
    path.write_bytes(builder.serialize())
    trace = traceconv.load(path)
    found = {d["code"]: d for d in trace.diagnostics.as_list()}["perfetto.typed_field_not_read"]
    assert found["count"] == 4 and found["kind"] == "note"
    for label in ("extension 1991", "callstack", "source_location_iid 9", "demo.Unknown"):
        assert label in found["example"]
    args = {i.name: i.args for i in trace.iter_instants()}
    assert args["located"] == {"source_location_iid": 9}   # (as trace_processor: the iid)
    assert args["odd"] == {"odd": "<proto demo.Unknown: 2 bytes>"}


@pytest.mark.integration
def test_proto_value_annotations_show_as_in_the_input(trace_processor, tmp_path: Path):
    """Chrome writes some debug annotations as a typed message (``proto_value``, its type
    interned, described by Chrome's extension descriptor): trace_processor shows its
    fields (``debug.frame_sink_id.frame_sink_id``); the model held the text
    ``<proto ?: 4 bytes>``. Every debug arg trace_processor shows on the Chromium cut it
    shows on traceconv's .pftrace of it."""
    tp = trace_processor
    query = ("select a.key k, a.display_value v from slice join args a using(arg_set_id) "
             "where a.key like 'debug.%'")
    tp.load(CHROMIUM.read_bytes())
    shown = Counter((r.k, r.v) for r in tp.query(query))
    out = tmp_path / "chromium.pftrace"
    traceconv.convert(CHROMIUM, out)
    tp.load(out.read_bytes())
    assert shown - Counter((r.k, r.v) for r in tp.query(query)) == Counter()
    assert shown["debug.frame_sink_id.frame_sink_id", "7"] == 3
    proto_valued = [a for p in ProtoTrace.FromString(CHROMIUM.read_bytes()).packet
                    for a in p.track_event.debug_annotations if a.HasField("proto_value")]
    assert len(proto_valued) == 15


JSON_EMPTY = {"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 5,
                               "args": {"none": None, "list": [], "dict": {}, "x": 1,
                                        "nested": {"none": None, "list": [], "y": 2}}}]}


@pytest.mark.integration
def test_empty_values_show_as_the_input_shows_them(trace_processor, tmp_path: Path):
    """A JSON null, [] or {} and a Perfetto annotation with no value show no arg in
    trace_processor; traceconv's .pftrace of them showed "null", "[]", "{}" (the Chromium
    cut's 15 annotations without a value). They show none now, and still read back as
    they were."""
    tp = trace_processor
    source = tmp_path / "in.json"
    source.write_text(json.dumps(JSON_EMPTY))
    out = tmp_path / "in.pftrace"
    traceconv.convert(source, out)
    tp.load(source.read_bytes())
    shown = Counter(r.k.removeprefix("args.") for r in tp.query("select key k from args "
                                                                "where key like 'args.%'"))
    tp.load(out.read_bytes())
    written = Counter(r.k.removeprefix("debug.") for r in tp.query(
        "select key k from args where key like 'debug.%'"))
    assert written == shown == Counter({"x": 1, "nested.y": 1})
    again = traceconv.load(out)
    assert [s.args for s in again.iter_slices()] == [JSON_EMPTY["traceEvents"][0]["args"]]

    empty = sum(a.WhichOneof("value") is None and not a.dict_entries and not a.array_values
                for p in ProtoTrace.FromString(CHROMIUM.read_bytes()).packet
                for a in p.track_event.debug_annotations)
    spelled = ("select count(*) n from args where key like 'debug.%' "
               "and display_value in ('null', '[]', '{}')")
    tp.load(CHROMIUM.read_bytes())
    before = tp.query(spelled)[0].n
    out = tmp_path / "chromium.pftrace"
    traceconv.convert(CHROMIUM, out)
    tp.load(out.read_bytes())
    assert (empty, tp.query(spelled)[0].n) == (15, before)
