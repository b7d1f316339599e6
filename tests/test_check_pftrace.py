"""The .pftrace validator flags each mistake trace_processor hides (perfetto.md §2.4)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TrackEvent

from tests.protobuf_runtime import perfetto_text_trace
from traceconv.formats.perfetto.validate import validate_bytes

BEGIN, END = TrackEvent.TYPE_SLICE_BEGIN, TrackEvent.TYPE_SLICE_END
INSTANT, COUNTER = TrackEvent.TYPE_INSTANT, TrackEvent.TYPE_COUNTER
THREAD, COUNTER_TRACK = 11, 22


class Builder:
    """Broken traces, packet by packet, with the official classes."""

    def __init__(self) -> None:
        self.trace = Trace()
        self.first = True

    def descriptor(self, uuid: int | None = None, *, parent: int | None = None,
                   counter: bool = False, pid: int | None = None, name: str = "t") -> Builder:
        p = self.trace.packet.add()
        p.trusted_packet_sequence_id = 1
        d = p.track_descriptor
        if uuid is not None:
            d.uuid = uuid
        if parent is not None:
            d.parent_uuid = parent
        if pid is not None:
            d.process.pid = pid
        else:
            d.name = name
        if counter:
            d.counter.SetInParent()
        return self

    def tracks(self) -> Builder:
        return self.descriptor(THREAD).descriptor(COUNTER_TRACK, counter=True)

    def event(self, ts: int | None, kind: int, track: int = THREAD, *, name_iid: int = 0,
              seq: int = 2, flags: int | None = None, intern: str | None = None,
              flow: int = 0, terminating: int = 0, clock: int = 0,
              value: int | None = None) -> Builder:
        p = self.trace.packet.add()
        if seq:
            p.trusted_packet_sequence_id = seq
        if ts is not None:
            p.timestamp = ts
        if clock:
            p.timestamp_clock_id = clock
        if flags is None:
            flags = 3 if self.first else 2
        self.first = False
        p.sequence_flags = flags
        if intern:
            entry = p.interned_data.event_names.add()
            entry.iid, entry.name = name_iid, intern
        e = p.track_event
        e.type, e.track_uuid = kind, track
        if name_iid:
            e.name_iid = name_iid
        if flow:
            e.flow_ids.append(flow)
        if terminating:
            e.terminating_flow_ids.append(terminating)
        if value is not None:
            e.counter_value = value
        return self

    def data(self) -> bytes:
        return self.trace.SerializeToString()


def codes(data: bytes) -> tuple[set[str], set[str]]:
    report = validate_bytes(data)
    return {e["code"] for e in report.errors}, {w["code"] for w in report.warnings}


def test_a_correct_trace_is_ok():
    data = (Builder().tracks().event(10, BEGIN, name_iid=1, intern="step")
            .event(20, INSTANT, name_iid=1).event(30, END)
            .event(40, COUNTER, COUNTER_TRACK, value=5).data())
    report = validate_bytes(data)
    assert report.ok and not report.warnings
    assert report.counts == {"packets": 6, "tracks": 2, "slices": 1, "instants": 1,
                             "counter_values": 1, "flows": 0}


CASES = {
    "end_without_begin": (lambda b: b.event(10, END), "error"),
    "unterminated_slice": (lambda b: b.event(10, BEGIN).event(5, END).event(20, BEGIN),
                           "warning"),
    "unknown_name_iid": (lambda b: b.event(10, INSTANT, name_iid=7), "error"),
    "undeclared_track_uuid": (lambda b: b.event(10, INSTANT, track=999), "warning"),
    "needs_incremental_state_before_cleared": (lambda b: b.event(10, INSTANT, flags=2), "error"),
    "counter_on_non_counter_track": (lambda b: b.event(10, COUNTER, value=1), "error"),
    "slice_on_counter_track": (lambda b: b.event(10, INSTANT, COUNTER_TRACK), "error"),
    "terminating_flow_without_start": (lambda b: b.event(10, INSTANT, terminating=5),
                                       "warning"),
    "flow_with_single_endpoint": (lambda b: b.event(10, INSTANT, flow=5), "warning"),
    "track_event_missing_sequence_id": (lambda b: b.event(10, INSTANT, seq=0), "error"),
    "track_event_missing_timestamp": (lambda b: b.event(None, INSTANT), "error"),
    "clock_without_snapshot": (lambda b: b.event(10, INSTANT, clock=64), "error"),
    "counter_without_value": (lambda b: b.event(10, COUNTER, COUNTER_TRACK), "error"),
    "parent_uuid_not_declared": (lambda b: b.descriptor(33, parent=44), "error"),
    "descriptor_without_uuid": (lambda b: b.descriptor(None), "error"),
    "conflicting_descriptor": (lambda b: b.descriptor(THREAD, counter=True), "error"),
    "descriptor_cycle": (lambda b: b.descriptor(50, parent=51).descriptor(51, parent=50),
                         "error"),
}


@pytest.mark.parametrize("code", sorted(CASES))
def test_each_mistake_is_flagged(code):
    build, severity = CASES[code]
    errors, warnings = codes(build(Builder().tracks()).data())
    assert code in (errors if severity == "error" else warnings), (errors, warnings)


def test_a_track_renamed_later_is_the_same_track():
    """Chrome declares a thread again once it knows its name: trace_processor renames it."""
    errors, warnings = codes(Builder().tracks().descriptor(THREAD, name="other").data())
    assert "conflicting_descriptor" not in errors


@pytest.mark.integration
def test_chromium_incremental_clock_replays_as_trace_processor_reads_it(trace_processor):
    """A real Chromium trace (deltas on an incremental clock that its descriptors step):
    the replay finds what trace_processor finds, not thousands of misplaced ENDs."""
    path = Path(__file__).parent / "data" / "perfetto" / "chromium150_headless_startup_cut.pftrace"
    report = validate_bytes(path.read_bytes())
    errors = {e["code"]: e["count"] for e in report.errors}
    trace_processor.load(path.read_bytes())
    unended = trace_processor.query(   # (legacy async events: legacy_async_not_replayed here)
        "select count(*) n from slice s join track t on s.track_id = t.id where s.dur = -1 "
        "and t.type != 'legacy_async_process_slice'")[0].n
    assert "slice_depth_over_512" not in errors and "conflicting_descriptor" not in errors
    assert errors.get("end_without_begin", 0) <= 3   # (the file's own: ends of cut begins)
    warnings = {w["code"]: w["count"] for w in report.warnings}
    assert warnings["unterminated_slice"] == unended


def test_600_nested_begins_exceed_depth_512():
    b = Builder().tracks()
    for depth in range(600):
        b.event(depth, BEGIN)
    for depth in range(600):
        b.event(10_000 + depth, END)
    report = validate_bytes(b.data())
    errors = {e["code"]: e["count"] for e in report.errors}
    assert errors == {"slice_depth_over_512": 88}
    assert report.counts["slices"] == 512


def test_an_instant_at_depth_512_is_dropped_too():
    b = Builder().tracks()
    for depth in range(512):
        b.event(depth, BEGIN)
    b.event(600, INSTANT)
    errors = {e["code"]: e["count"] for e in validate_bytes(b.data()).errors}
    assert errors == {"slice_depth_over_512": 1}


def test_clock_declared_by_a_snapshot_is_fine():
    b = Builder().tracks()
    snapshot = b.trace.packet.add()
    snapshot.trusted_packet_sequence_id = 1
    for clock_id in (6, 64):
        clock = snapshot.clock_snapshot.clocks.add()
        clock.clock_id, clock.timestamp = clock_id, 0
    errors, _ = codes(b.event(10, INSTANT, clock=64).data())
    assert not errors


def test_framing_errors():
    good = Builder().tracks().event(10, INSTANT).data()
    assert "truncated" in codes(good[:-3])[0]
    assert "bad_framing" in codes(b"\x12\x00" + good)[0]


def test_interning_resets_on_cleared():
    data = (Builder().tracks().event(10, INSTANT, name_iid=1, intern="a")
            .event(20, INSTANT, name_iid=1, flags=3).data())   # cleared again: iid 1 unknown
    assert "unknown_name_iid" in codes(data)[0]


def test_flows_are_counted_by_links():
    data = (Builder().tracks().event(10, BEGIN, flow=9).event(20, END)
            .event(30, BEGIN, terminating=9).event(40, END).data())
    report = validate_bytes(data)
    assert report.ok and not report.warnings and report.counts["flows"] == 1


def test_check_cli_exit_status_and_json(tmp_path):
    bad = tmp_path / "bad.pftrace.gz"
    bad.write_bytes(gzip.compress(Builder().tracks().event(10, END).data()))
    run = subprocess.run([sys.executable, "-m", "traceconv", "check", str(bad), "--json"],
                         capture_output=True, text=True)
    assert run.returncode == 1
    result = json.loads(run.stdout)
    assert result["ok"] is False and result["format"] == "perfetto"
    assert [e["code"] for e in result["errors"]] == ["end_without_begin"]
    assert set(result) == {"ok", "format", "counts", "errors", "warnings"}
    good = tmp_path / "good.pftrace"
    good.write_bytes(Builder().tracks().event(10, INSTANT).data())
    run = subprocess.run([sys.executable, "-m", "traceconv", "check", str(good)],
                         capture_output=True, text=True)
    assert run.returncode == 0 and "OK" in run.stdout


# Perfetto's own diff test of flows on TrackEvents given by legacy phases (test/
# trace_processor/diff_tests/parser/track_event/flow_events_track_event.textproto): X
# slices with ``duration_us``, I and i instants, and an X (FlowSlice2End) that partially
# overlaps the X open on its thread. The real trace_processor (v52, the harness's) loads 7
# slices, 3 instants (slices of no length) and 7 flows, and drops that X
# (slice_drop_overlapping_complete_event).
FLOW_EVENTS = Path(__file__).parent / "data" / "perfetto" / "perfetto_flow_events_track_event.textproto"


def test_legacy_phases_are_replayed_as_trace_processor_loads_them():
    report = validate_bytes(perfetto_text_trace(FLOW_EVENTS))
    assert {k: report.counts[k] for k in ("slices", "instants", "flows")} == {
        "slices": 7, "instants": 3, "flows": 7}
    assert {e["code"]: e["count"] for e in report.errors} == {"overlapping_slice": 1}
    assert "unsupported_event_type" not in {w["code"] for w in report.warnings}


@pytest.mark.integration
def test_legacy_phases_counts_are_trace_processors(trace_processor):
    data = perfetto_text_trace(FLOW_EVENTS)
    report = validate_bytes(data)
    trace_processor.load(data)
    loaded = trace_processor.query("select count(*) n from slice")[0].n
    flows = trace_processor.query("select count(*) n from flow")[0].n
    dropped = trace_processor.query("select value from stats where name = "
                                    "'slice_drop_overlapping_complete_event'")[0].value
    assert report.counts["slices"] + report.counts["instants"] == loaded
    assert report.counts["flows"] == flows
    assert {e["code"]: e["count"] for e in report.errors} == {"overlapping_slice": dropped}
