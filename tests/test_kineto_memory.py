"""Kineto ``[memory]`` events → memory blocks, checked against a pairing written here from
the raw JSON: per (device type, device id, address), in time order, an alloc opens a block
and the next free closes it."""

from __future__ import annotations

import gzip
import json
from collections import defaultdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from tests.conftest import CUDA_STREAMS as STREAMS
from tests.conftest import CUDA_TRACES as TRACES
from tests.conftest import DATA

CUDA = DATA / "torch" / "cuda_h100"


def reference_pairing(path: Path) -> tuple[int, int, int, int]:
    """(blocks a free ends, frees with no earlier alloc, allocs open at the end, blocks the
    next alloc of their address ends: its free unrecorded) from the raw events."""
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    per_address = defaultdict(list)
    for e in events:
        if e.get("name") == "[memory]":
            a = e["args"]
            per_address[(a["Device Type"], a["Device Id"], a["Addr"])].append(
                (e["ts"], a["Bytes"]))
    paired = orphan_frees = open_allocs = ended_by_alloc = 0
    for records in per_address.values():
        is_open = False
        for _ts, size in sorted(records, key=lambda r: r[0]):
            if size > 0:
                ended_by_alloc += is_open
                is_open = True
            elif is_open:
                paired += 1
                is_open = False
            else:
                orphan_frees += 1
        open_allocs += is_open
    return paired, orphan_frees, open_allocs, ended_by_alloc


@pytest.mark.slow
@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name.split(".")[0])
def test_blocks_pair_like_the_allocator(path):
    paired, orphan_frees, open_allocs, ended_by_alloc = reference_pairing(path)
    trace = traceconv.load(path)
    blocks = trace.memory
    assert sum(b.alloc_ns is not None and b.free_ns is not None
               for b in blocks) == paired + ended_by_alloc
    assert sum(b.alloc_ns is None for b in blocks) == orphan_frees
    assert sum(b.free_ns is None for b in blocks) == open_allocs
    assert len(blocks) == paired + orphan_frees + open_allocs + ended_by_alloc
    assert trace.diagnostics.count("kineto.alloc_without_free") == ended_by_alloc
    assert all(b.free_ns >= b.alloc_ns for b in blocks
               if b.alloc_ns is not None and b.free_ns is not None)
    assert trace.diagnostics.count("kineto.free_without_alloc") == orphan_frees


def test_issue_numbers():
    """The counts the issue states: 603 pairs on the compiled GPT, 639 blocks on ResNet-18."""
    assert reference_pairing(DATA / "torch" / "gpt_compile_bf16_cuda.pt.trace.json.gz") == (603, 0, 0, 0)
    gpt = traceconv.load(DATA / "torch" / "gpt_compile_bf16_cuda.pt.trace.json.gz")
    assert len(gpt.memory) == 603 and all(b.alloc_ns and b.free_ns for b in gpt.memory)
    assert len(traceconv.load(DATA / "torch" / "resnet18_train_cuda.pt.trace.json.gz").memory) == 639


def test_owner_is_the_op_around_the_alloc_on_its_thread():
    path = STREAMS
    events = json.loads(gzip.decompress(path.read_bytes()))["traceEvents"]
    ops = [e for e in events if e.get("cat") == "cpu_op"]
    expected = []
    for e in sorted((e for e in events if e.get("name") == "[memory]"
                     and e["args"]["Bytes"] > 0), key=lambda e: e["ts"]):
        around = [o for o in ops if o["tid"] == e["tid"] and o["pid"] == e["pid"]
                  and o["ts"] <= e["ts"] <= o["ts"] + o["dur"]]
        expected.append(min(around, key=lambda o: o["dur"])["name"] if around else None)
    blocks = sorted((b for b in traceconv.load(path).memory if b.alloc_ns is not None),
                    key=lambda b: b.alloc_ns)
    assert [b.owner_name for b in blocks] == expected


def _allocator_blocks(events: list[dict]) -> tuple[list[tuple], int]:
    """The blocks, in the order their first event comes in time, that an allocator's
    bookkeeping gives: an alloc opens its address (ending the block still open there, whose
    free went unrecorded), a free closes the open one or, with none open, is a block
    allocated before the trace; and how many blocks an alloc ended."""
    blocks: list[list] = []
    open_blocks: dict[tuple, list] = {}
    ended_by_alloc = 0
    for e in sorted(events, key=lambda e: e["ts"]):
        a = e["args"]
        key = (a["Device Type"], a["Device Id"], a["Addr"])
        if a["Bytes"] > 0:
            if key in open_blocks:
                open_blocks[key][3] = e["ts"] * 1000
                ended_by_alloc += 1
            open_blocks[key] = [a["Addr"], a["Bytes"], e["ts"] * 1000, None]
            blocks.append(open_blocks[key])
        elif key in open_blocks:
            open_blocks.pop(key)[3] = e["ts"] * 1000
        else:
            blocks.append([a["Addr"], -a["Bytes"], None, e["ts"] * 1000])
    return [tuple(b) for b in blocks], ended_by_alloc


ROWS = st.lists(st.tuples(st.integers(0, 30), st.sampled_from([64, 128, 512]),
                         st.integers(-2, 2).filter(bool),
                         st.sampled_from([(1, 0), (1, 1), (0, -1)]), st.integers(0, 2)),
                min_size=1, max_size=40)   # ([]: an error)


def _memory_events(rows: list[tuple]) -> list[dict]:
    return [{"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1,
             "tid": tid, "ts": ts, "args": {"Addr": addr, "Bytes": sign * 256,
                                            "Device Type": kind[0], "Device Id": kind[1]}}
            for ts, addr, sign, kind, tid in rows]


def _read_blocks(tmp_path_factory, events: list[dict]) -> traceconv.Trace:
    path = tmp_path_factory.mktemp("memory") / "t.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return traceconv.load(path, format="chrome")


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(ROWS)
def test_pairing_matches_the_allocator_bookkeeping(tmp_path_factory, rows):
    """Random alloc/free sequences over a few addresses, devices and threads, ties in time
    included: the blocks are those the allocator's own bookkeeping gives, in order."""
    events = _memory_events(rows)
    trace = _read_blocks(tmp_path_factory, events)
    expected, ended_by_alloc = _allocator_blocks(events)
    assert [(b.address, b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == expected
    assert trace.diagnostics.count("kineto.free_without_alloc") == sum(
        b[2] is None for b in expected)
    assert trace.diagnostics.count("kineto.alloc_without_free") == ended_by_alloc


def test_memory_events_without_any_slice_pair_and_have_no_owner(tmp_path_factory):
    """A trace (a time window cut out of a bigger one) of [memory] events and no slice: they
    pair as the allocator's bookkeeping does, and no block has an owner."""
    events = _memory_events([(0, 64, 1, (1, 0), 0), (5, 64, -1, (1, 0), 1),
                             (7, 128, -1, (1, 0), 0), (9, 512, 2, (0, -1), 2)])
    trace = _read_blocks(tmp_path_factory, events)
    assert [(b.address, b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == \
        _allocator_blocks(events)[0]
    assert {b.owner_name for b in trace.memory} == {None}


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(ROWS, st.integers(0, 30))
def test_one_malformed_event_leaves_the_pairing_of_the_others(tmp_path_factory, rows, ts):
    """An event whose Device Id is a list (read value by value then, not as int columns)
    is counted and left out; the other events pair as the allocator's bookkeeping does."""
    events = _memory_events(rows)
    odd = {**_memory_events([(ts, 64, 1, (1, 0), 0)])[0]}
    odd["args"] = {**odd["args"], "Device Id": [0]}
    trace = _read_blocks(tmp_path_factory, [*events, odd])
    assert [(b.address, b.size, b.alloc_ns, b.free_ns) for b in trace.memory] == \
        _allocator_blocks(events)[0]
    assert trace.diagnostics.count("kineto.malformed_memory_event") == 1


def test_allocator_totals_at_the_int64_edge_stay_there(tmp_path):
    """``Total Allocated`` and ``Total Reserved`` stated as 2**63 - 1 (int64's largest,
    written by hand) are held as counter doubles, which round them to 2**63: read back as
    whole numbers they stay 2**63 - 1 (numbers.int64_of_floats), where numpy's cast wrapped
    them to -2**63 and ``advise`` reported a negative peak."""
    from traceconv.analysis.memory_moment import memory_report
    from traceconv.model.memory import allocator_series

    edge = 2**63 - 1
    args = {"Device Type": 1, "Device Id": 0, "Addr": 4096, "Total Reserved": edge}
    events = [{"ph": "X", "name": "aten::empty", "cat": "cpu_op", "pid": 1, "tid": 1,
               "ts": 1, "dur": 10},
              *({"ph": "i", "s": "t", "name": "[memory]", "cat": "cpu_instant_event",
                 "pid": 1, "tid": 1, "ts": ts, "args": dict(args, **change)}
                for ts, change in ((2, {"Bytes": 512, "Total Allocated": edge}),
                                   (20, {"Bytes": -512, "Total Allocated": 0})))]
    path = tmp_path / "edge.pt.trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    trace = traceconv.load(path)
    times, reserved, allocated = allocator_series(trace)
    assert (times.tolist(), reserved.tolist(), allocated.tolist()) == (
        [2_000, 20_000], [edge, edge], [edge, 0])
    (device,) = memory_report(trace)["devices"]
    assert device["allocated_by_allocator_bytes"] == edge
