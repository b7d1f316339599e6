"""The Perfetto reader's work grows linearly with the input for the shapes that once made it
quadratic: many distinct dotted argument names, one process per thread, TracePacketDefaults
repeated in every packet, one packet larger than the read block.

Work is counted, not timed: Python lines run plus calls made (C functions included) during
the read, or the bytes handed to the packet framing; at 1x, 2x and 4x the input each
doubling may cost at most 2.3x. Memory is measured too (tracemalloc): a read's
temporaries follow the read block, not the file.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from typing import Any

import pytest
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace as PbTrace
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import TrackEvent
from traced_peak import traced_peak

from traceconv.errors import InputError
from traceconv.formats.perfetto import reader as reader_module
from traceconv.formats.perfetto import writer
from traceconv.model import Trace

PER_DOUBLING = 2.3


def read(data: bytes) -> Trace:
    reader = reader_module.PftraceReader("scaled.pftrace")
    reader.feed(io.BytesIO(data))
    return reader.finish()


def work(step: Callable[[], Any]) -> int:
    """Python lines run and calls made (Python and C) while ``step`` runs."""
    count = 0

    def on_call(frame: Any, event: str, arg: Any) -> None:
        nonlocal count
        count += 1

    def on_line(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        count += 1
        return on_line

    before_profile, before_trace = sys.getprofile(), sys.gettrace()
    sys.setprofile(on_call)
    sys.settrace(on_line)
    try:
        step()
    finally:
        sys.settrace(before_trace)
        sys.setprofile(before_profile)
    return count


def assert_linear(measure: Callable[[int], int], sizes: tuple[int, ...]) -> None:
    measure(sizes[0])   # (first use: imports and caches)
    found = [measure(size) for size in sizes]
    ratios = [b / a for a, b in zip(found, found[1:], strict=False)]
    assert all(r <= PER_DOUBLING for r in ratios), (found, ratios)


def dotted_names(count: int) -> bytes:
    """``count`` slices, each with a dotted argument name of its own."""
    trace = Trace()
    track = trace.add_track("t", process=trace.add_process("p", pid=1), tid=1)
    for k in range(count):
        trace.add_slice(track, 10 * k, 5, "s", args={f"a{k}.b": k, "c": 1})
    out = io.BytesIO()
    writer.write(trace, out)
    return out.getvalue()


def one_process_per_thread(count: int) -> bytes:
    """``count`` processes of one thread each, one instant on each thread."""
    trace = PbTrace()
    for k in range(count):
        process = trace.packet.add(trusted_packet_sequence_id=1).track_descriptor
        process.uuid, process.process.pid = 10 + 2 * k, 100 + k
        process.process.process_name = f"p{k}"
        thread = trace.packet.add(trusted_packet_sequence_id=1).track_descriptor
        thread.uuid, thread.parent_uuid = 11 + 2 * k, 10 + 2 * k
        thread.thread.pid = thread.thread.tid = 100 + k
    for k in range(count):
        event = trace.packet.add(trusted_packet_sequence_id=1, timestamp=k).track_event
        event.type, event.track_uuid, event.name = TrackEvent.TYPE_INSTANT, 11 + 2 * k, "e"
    return trace.SerializeToString()


def repeated_defaults(count: int) -> bytes:
    """``count`` packets that each give TracePacketDefaults and an instant using them."""
    trace = PbTrace()
    track = trace.packet.add(trusted_packet_sequence_id=1, sequence_flags=1)
    track.track_descriptor.uuid, track.track_descriptor.name = 5, "t"
    for k in range(count):
        packet = trace.packet.add(trusted_packet_sequence_id=1, timestamp=k)
        packet.trace_packet_defaults.track_event_defaults.track_uuid = 5
        packet.track_event.type, packet.track_event.name = TrackEvent.TYPE_INSTANT, "e"
    return trace.SerializeToString()


@pytest.mark.slow
@pytest.mark.parametrize(("make", "sizes", "expect"), [
    (dotted_names, (250, 500, 1000), "slices"),
    (one_process_per_thread, (500, 1000, 2000), "instants"),
    (repeated_defaults, (2000, 4000, 8000), "instants"),
], ids=["dotted names", "one process per thread", "repeated packet defaults"])
def test_reading_work_is_linear(make: Callable[[int], bytes], sizes: tuple[int, ...],
                                expect: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader_module, "READ_BYTES", 4096)   # (many blocks from few events)

    def measure(size: int) -> int:
        data = make(size)
        traces: list[Trace] = []
        done = work(lambda: traces.append(read(data)))
        assert traces[0].counts()[expect] == size   # (the read is whole)
        return done

    assert_linear(measure, sizes)


def test_the_dotted_names_come_back_flat() -> None:
    args = [dict(s.args) for s in read(dotted_names(3)).iter_slices()]
    assert args == [{"a0.b": 0, "c": 1}, {"a1.b": 1, "c": 1}, {"a2.b": 2, "c": 1}]


def one_big_packet(size: int) -> bytes:
    trace = PbTrace()
    event = trace.packet.add(trusted_packet_sequence_id=1, timestamp=5).track_event
    event.type, event.track_uuid, event.name = TrackEvent.TYPE_INSTANT, 0, "x" * size
    return trace.SerializeToString()


def test_a_packet_larger_than_the_read_block_is_framed_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The bytes handed to the framing, for one packet of 16x, 32x and 64x the block."""
    block = 1 << 14
    monkeypatch.setattr(reader_module, "READ_BYTES", block)
    framed = 0
    frame_block = reader_module.frame_block

    def counting(data: bytes) -> Any:
        nonlocal framed
        framed += len(data)
        return frame_block(data)

    monkeypatch.setattr(reader_module, "frame_block", counting)

    def measure(size: int) -> int:
        nonlocal framed
        framed = 0
        data = one_big_packet(size)
        trace = read(data)
        assert trace.counts()["instants"] == 1 and "perfetto.truncated" not in trace.diagnostics
        return framed

    assert_linear(measure, (16 * block, 32 * block, 64 * block))


def test_a_big_packet_cut_short_is_counted_as_truncated() -> None:
    """Cut inside a packet longer than a read block: counted after the whole packets
    before it; with none before it, the file holds no whole packet: one error at byte 0."""
    data = one_big_packet(3 * reader_module.READ_BYTES)
    with pytest.raises(InputError, match="no whole packet") as caught:
        read(data[:-10])
    assert caught.value.location == "byte offset 0"
    small = one_big_packet(1000)
    trace = read(small + data[:-10])
    assert trace.diagnostics.count("perfetto.truncated") == 1


def plain_slices(count: int) -> bytes:
    """``count`` begin/end pairs on one declared track (the smallest events a trace has)."""
    trace = PbTrace()
    track = trace.packet.add(trusted_packet_sequence_id=1).track_descriptor
    track.uuid, track.name = 5, "t"
    for k in range(count):
        for phase, at in ((TrackEvent.TYPE_SLICE_BEGIN, 10 * k), (TrackEvent.TYPE_SLICE_END,
                                                                   10 * k + 5)):
            event = trace.packet.add(trusted_packet_sequence_id=1, timestamp=at).track_event
            event.type, event.track_uuid, event.name = phase, 5, "s"
    return trace.SerializeToString()


def test_small_events_take_memory_by_the_block_not_by_the_file():
    """Hostile round s14, class 13: 100k plain slices (3.3 MB) took 209 MB, the wire fields
    of the whole file decoded as one 4 MiB block (about 45x the block in temporaries). With
    blocks of 1 MiB the temporaries of a 2 MB file are halved: 98 MB measured at 4 MiB,
    50 MB at 1 MiB."""
    data = plain_slices(60_000)
    assert len(data) > 2 * reader_module.READ_BYTES
    trace, peak = traced_peak(lambda: read(data))
    assert len(trace.slices) == 60_000
    assert peak < 64 << 20, peak
