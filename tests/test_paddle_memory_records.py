"""Paddle's allocator records (``mem_nodes`` of a ``.paddle_trace.pb``, ``mem_events`` of a
``.profile``) become memory blocks: counts and peaks known by construction, for allocations
on distinct addresses, on one reused address, frees of nothing and records with no field
set; and many records cost the same per record as a few."""

from __future__ import annotations

import cProfile
import pstats
from pathlib import Path

import pytest
from protobuf_runtime import runtime_classes

import traceconv
from traceconv.formats.paddle_pb.proto import MESSAGES as PB_MESSAGES
from traceconv.formats.paddle_profile.proto import MESSAGES as PROFILE_MESSAGES
from traceconv.model.memory import live_bytes

# the real protobuf runtime writes the inputs
NodeTreesProto = runtime_classes("paddle_memory_records_pb", PB_MESSAGES)["NodeTreesProto"]
Profile = runtime_classes("paddle_memory_records_profile", PROFILE_MESSAGES)["Profile"]
ALLOCATE, FREE = 0, 1
SIZES = [64 * (k + 1) for k in range(40)]


def _pb(tmp_path: Path, records: list[tuple[int, int, int, int]], empty: int = 0) -> Path:
    """A one-op tree whose op holds ``records`` (time, type, address, increase) and
    ``empty`` memory nodes with no field set."""
    message = NodeTreesProto(version="1.0.2")
    tree = message.thread_trees.add(thread_id=1)
    root = tree.host_nodes.add(id=0, parentid=-1).host_trace_event
    root.name, root.type, root.end_ns = "root node", 7, 2**64 - 1
    op = tree.host_nodes.add(id=1, parentid=0)
    event = op.host_trace_event
    event.name, event.type, event.start_ns, event.end_ns = "matmul dygraph", 0, 10, 10**9
    for ts, kind, address, increase in records:
        mem = op.mem_nodes.add().mem_event
        mem.timestamp_ns, mem.type, mem.addr, mem.increase_bytes = ts, kind, address, increase
        mem.place = "Place(cpu)"
    for _ in range(empty):
        op.mem_nodes.add()
    path = tmp_path / "records.paddle_trace.pb"
    path.write_bytes(message.SerializeToString())
    return path


def _profile(tmp_path: Path, intervals: list[tuple[int, int, int]], events: bool = True
             ) -> Path:
    """A ``.profile`` of ``intervals`` (alloc, free, bytes) on the CPU, after one CPU event
    (none: ``events`` False)."""
    profile = Profile(start_ns=1, end_ns=10**9)
    if events:
        profile.events.add(name="op", start_ns=5, end_ns=10)
    for start, end, size in intervals:
        profile.mem_events.add(start_ns=start, end_ns=end, bytes=size, place=1, alloc_in="op")
    path = tmp_path / "records.profile"
    path.write_bytes(profile.SerializeToString())
    return path


def test_allocations_on_distinct_addresses_then_their_frees(tmp_path):
    count = len(SIZES)
    records = [(1000 + k, ALLOCATE, 0x1000 + 0x10000 * k, size) for k, size in enumerate(SIZES)]
    records += [(5000 + k, FREE, 0x1000 + 0x10000 * k, -size) for k, size in enumerate(SIZES)]
    trace = traceconv.load(_pb(tmp_path, records))
    assert len(trace.memory) == count
    assert [(b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == [
        (size, 1000 + k, 5000 + k) for k, size in enumerate(SIZES)]
    # every block is live from the last allocation to the first free
    assert live_bytes(trace.memory).peak == (1000 + count - 1, 64 * count * (count + 1) // 2)
    assert trace.diagnostics.count("paddle_pb.free_without_alloc") == 0


def test_allocations_reusing_one_address(tmp_path):
    records = []
    for k, size in enumerate(SIZES):
        records += [(1000 + 2 * k, ALLOCATE, 0x1000, size), (1001 + 2 * k, FREE, 0x1000, -size)]
    trace = traceconv.load(_pb(tmp_path, records))
    assert [(b.address, b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == [
        (0x1000, size, 1000 + 2 * k, 1001 + 2 * k) for k, size in enumerate(SIZES)]
    assert live_bytes(trace.memory).peak[1] == max(SIZES)


def test_frees_of_nothing_are_blocks_from_the_start_and_counted(tmp_path):
    records = [(1000 + k, FREE, 0x1000 + 64 * k, -size) for k, size in enumerate(SIZES)]
    trace = traceconv.load(_pb(tmp_path, records))
    assert [(b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == [
        (size, None, 1000 + k) for k, size in enumerate(SIZES)]
    assert trace.diagnostics.count("paddle_pb.free_without_alloc") == len(SIZES)
    # all count from the first known time, the first free's, which applies at once
    assert live_bytes(trace.memory).peak == (1000, sum(SIZES) - SIZES[0])


def test_memory_nodes_with_no_field_set_are_allocations_of_nothing(tmp_path):
    trace = traceconv.load(_pb(tmp_path, [], empty=25))
    # (all at address 0, time 0: each allocation ends the block before it, its free unrecorded)
    assert [(b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == \
        [(0, 0, 0)] * 24 + [(0, 0, None)]
    assert trace.diagnostics.count("paddle_pb.alloc_without_free") == 24
    assert live_bytes(trace.memory).peak[1] == 0


def test_profile_intervals_overlapping_and_one_after_another(tmp_path):
    overlapping = [(1000 + k, 9000 - k, size) for k, size in enumerate(SIZES)]
    trace = traceconv.load(_profile(tmp_path, overlapping))
    assert len(trace.memory) == len(SIZES)
    assert live_bytes(trace.memory).peak == (1000 + len(SIZES) - 1, sum(SIZES))
    assert trace.diagnostics.count("paddle_profile.memory_addresses_guessed") == len(SIZES)
    apart = [(1000 + 10 * k, 1005 + 10 * k, size) for k, size in enumerate(SIZES)]
    assert live_bytes(traceconv.load(_profile(tmp_path, apart)).memory).peak[1] == max(SIZES)


def test_a_profile_of_memory_events_only_reads(tmp_path):
    """A ``.profile`` with ``mem_events`` and no ``events`` was an internal error: the
    absent list's times were asked of a list that knew no element type."""
    trace = traceconv.load(_profile(tmp_path, [(1000, 2000, 64), (1500, 2500, 32)],
                                    events=False))
    assert len(trace.slices) == 0
    assert [(b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == [
        (64, 1000, 2000), (32, 1500, 2500)]


def _calls_per_record(path_of, small: int) -> float:
    """Calls (Python and builtin: a count, not a time) a read makes per record more, from
    ``small`` records to four times as many."""
    calls = []
    for count in (small, 4 * small):
        path = path_of(count)
        traceconv.load(path)   # (the modules a read imports are not the records' cost)
        profile = cProfile.Profile()
        profile.runcall(traceconv.load, path)
        calls.append(pstats.Stats(profile).total_calls)
    return (calls[1] - calls[0]) / (3 * small)


@pytest.mark.slow
def test_many_memory_records_cost_the_same_per_record_as_a_few(tmp_path):
    """300 k records took 20 s (a block added through the column path, some 300 calls
    each); now about 120 calls per pb record and 90 per profile interval, at any count."""
    def pb(count: int) -> Path:
        half = count // 2
        return _pb(tmp_path, [(1000 + k, ALLOCATE, 64 * k, 64) for k in range(half)]
                   + [(10**6 + k, FREE, 64 * k, -64) for k in range(half)])

    def profile(count: int) -> Path:
        return _profile(tmp_path, [(1000 + k, 10**6 + k, 64) for k in range(count)])

    assert _calls_per_record(pb, 2_000) <= 160
    assert _calls_per_record(profile, 2_000) <= 130
