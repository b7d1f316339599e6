"""N legacy async events (``b``/``e``/``n`` of objects named by ids), as Chrome JSON or as a
Perfetto protobuf, to measure how placing them on their objects' tracks grows with N.

    python benchmarks/async_objects.py mismatched 100000 /tmp/mis100k.json
    python benchmarks/async_objects.py mismatched 100000 /tmp/mis100k.pftrace
    /usr/bin/time -f "%U+%S s %M KB" traceconv info /tmp/mis100k.json

Shapes (every event at a time of its own, one process, one thread):

- ``paired``: objects of distinct ids, each a begin and its end, eight open at a time;
- ``mismatched``: a quarter each of begins never ended, ends whose begins never come, an
  end before its begin (same id), and well-paired objects; the objects never ended keep
  their tracks taken, so each new object meets ever more of them;
- ``reused``: sixteen ids used over and over, begins of one name and ends of another, so
  each object's track holds a growing stack of begins its ends never close.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

Event = tuple[str, str, int]   # (phase, name, id)


def paired(n: int) -> Iterator[Event]:
    """Begin of object k, then (eight objects later) its end."""
    objects = n // 2
    for k in range(objects + 8):
        if k < objects:
            yield "b", "Load", k
        if k >= 8:
            yield "e", "Load", k - 8


def mismatched(n: int) -> Iterator[Event]:
    """Four objects of four kinds in turn: never ended, end only, end before begin, paired."""
    for k in range(n // 6):
        yield "b", "Load", 4 * k               # never ended
        yield "e", "Load", 4 * k + 1           # its begin never comes
        yield "e", "Load", 4 * k + 2           # its begin comes later
        yield "b", "Load", 4 * k + 2
        yield "b", "Load", 4 * k + 3
        yield "e", "Load", 4 * k + 3


def reused(n: int) -> Iterator[Event]:
    """Ids 0..15 over and over: a begin named ``Load`` and an end named ``Save``."""
    for k in range(n // 2):
        yield "b", "Load", k % 16
        yield "e", "Save", k % 16


SHAPES = {"paired": paired, "mismatched": mismatched, "reused": reused}


def chrome_json(events: Iterator[Event]) -> bytes:
    """The events as a Chrome JSON trace (``id``: a global id, one microsecond apart)."""
    return json.dumps({"traceEvents": [
        {"ph": phase, "name": name, "cat": "io", "id": hex(ident), "pid": 1, "tid": 1,
         "ts": ts, "args": {"n": ts}}
        for ts, (phase, name, ident) in enumerate(events, start=1)]}).encode()


def perfetto_proto(events: Iterator[Event]) -> bytes:
    """The events as a Perfetto trace: ``TrackEvent.legacy_event`` with ``unscoped_id`` on
    the sequence's thread (``track_uuid: 0``), as Chrome writes its memory dumps."""
    from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TracePacket

    trace = Trace()
    first = trace.packet.add()
    first.timestamp, first.trusted_packet_sequence_id = 1, 1
    first.sequence_flags = TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    first.track_descriptor.uuid = 10
    first.track_descriptor.thread.pid, first.track_descriptor.thread.tid = 1, 1
    for ts, (phase, name, ident) in enumerate(events, start=1):
        packet = trace.packet.add()
        packet.timestamp, packet.trusted_packet_sequence_id = ts * 1000, 1
        event = packet.track_event
        event.name, event.track_uuid = name, 0
        event.categories.append("io")
        event.legacy_event.phase = ord(phase)
        event.legacy_event.unscoped_id = ident
        annotation = event.debug_annotations.add()
        annotation.name, annotation.int_value = "n", ts
    return trace.SerializeToString()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shape", choices=sorted(SHAPES))
    parser.add_argument("events", type=int, help="about how many events")
    parser.add_argument("out", type=Path, help="a .json or .pftrace path")
    args = parser.parse_args()
    events = SHAPES[args.shape](args.events)
    args.out.write_bytes(perfetto_proto(events) if args.out.suffix == ".pftrace"
                         else chrome_json(events))


if __name__ == "__main__":
    main()
