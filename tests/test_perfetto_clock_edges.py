"""ClockSnapshots whose numbers reach past int64 (a unit multiplier of 2^40, a reading near
2^64): every event is either placed where Python's exact integers put it or left out and
counted as ``perfetto.clock_beyond_int64``; never an exception, never a wrapped time."""

from __future__ import annotations

import io
import itertools

import pytest
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace as PbTrace
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TrackEvent

from traceconv.formats.perfetto.reader import PftraceReader

BOOTTIME, SEQUENCE, TRACK = 6, 1, 5
INT64 = 1 << 63


def trace_with_clock(clock: int, reading: int, unit: int, incremental: bool,
                     event_ts: int, trace_reading: int = 1000) -> bytes:
    """A snapshot linking ``clock`` (``reading`` in units of ``unit`` ns) to BOOTTIME, then
    one instant on that clock at ``event_ts``."""
    trace = PbTrace()
    snapshot = trace.packet.add(trusted_packet_sequence_id=SEQUENCE)
    snapshot.clock_snapshot.clocks.add(clock_id=BOOTTIME, timestamp=trace_reading)
    snapshot.clock_snapshot.clocks.add(clock_id=clock, timestamp=reading,
                                       unit_multiplier_ns=unit, is_incremental=incremental)
    track = trace.packet.add(trusted_packet_sequence_id=SEQUENCE)
    track.track_descriptor.uuid = TRACK
    track.track_descriptor.name = "t"
    event = trace.packet.add(trusted_packet_sequence_id=SEQUENCE, timestamp=event_ts,
                             timestamp_clock_id=clock)
    event.track_event.type = TrackEvent.TYPE_INSTANT
    event.track_event.track_uuid = TRACK
    event.track_event.name = "e"
    return trace.SerializeToString()


def expected(reading: int, unit: int, incremental: bool, event_ts: int,
             trace_reading: int = 1000) -> int | None:
    """The event's time on the trace clock in exact integers (None: it cannot be placed)."""
    snapshot = reading * unit
    if snapshot >= INT64 or unit >= INT64:
        return None
    on_clock = snapshot + event_ts * unit if incremental else event_ts
    if not -INT64 <= on_clock < INT64:
        return None
    placed = on_clock - snapshot + trace_reading
    return placed if -INT64 <= placed < INT64 else None


UNITS = [1, 3, 1 << 20, 1 << 40, (1 << 62) + 1, 1 << 63, (1 << 64) - 1]
READINGS = [0, 7, 1 << 40, (1 << 63) - 1, (1 << 64) - 1]
EVENTS = [0, 5, 1 << 30, (1 << 63) - 1]


@pytest.mark.parametrize(("clock", "incremental"), [(1, False), (64, False), (65, True)])
@pytest.mark.parametrize(("unit", "reading", "event_ts"),
                         list(itertools.product(UNITS, READINGS, EVENTS)))
def test_an_event_is_placed_exactly_or_left_out_and_counted(
        clock: int, incremental: bool, unit: int, reading: int, event_ts: int) -> None:
    reader = PftraceReader("clocks.pftrace")
    reader.feed(io.BytesIO(trace_with_clock(clock, reading, unit, incremental, event_ts)))
    trace = reader.finish()
    want = expected(reading, unit, incremental, event_ts)
    if want is None:
        assert len(trace.instants) == 0
        assert trace.diagnostics.count("perfetto.clock_beyond_int64") \
            + trace.diagnostics.count("perfetto.clock_without_snapshot") >= 1
    else:
        assert list(trace.instants.ts) == [want]
