"""``traceconv memory`` on the memory sources other than allocator snapshots (those:
tests/test_memory_command.py): allocated at the first peak equals a replay written here from
each file's plain data (JSON, SQL, protobuf wire), summing allocations and frees by hand.

No real Nsight Systems export with ``CUDA_GPU_MEMORY_USAGE_EVENTS`` rows is at hand (the
bundled and shared ones were captured without ``--cuda-memory-usage``): nsys is checked on
rows generated into a copy of a real export, in the table's own columns.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import sqlite3
import struct
from collections import defaultdict
from contextlib import closing
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from tests.conftest import SAMPLES
from tests.test_memory_command import BUNDLED, first_peak, live_at, plain_document, replay
from traceconv.analysis.memory_moment import memory_report
from traceconv.cli import app

RAW_TIMELINE = SAMPLES / "torch" / "cnn_memory_timeline.raw.json.gz"
RPD = SAMPLES / "rpd" / "matmul_result.rpd"
XPLANE = SAMPLES / "xplane" / "jax_rocm_mi300_conv.xplane.pb.gz"
MEGENGINE = SAMPLES / "megengine" / "convnet_lar_embed_profile.json"
NSYS = SAMPLES / "nsys" / "mock_rtx3080_nsys2026.1.sqlite"


def peak_of(changes: list[tuple[int, int]], before: int = 0) -> int:
    """The highest level of ``before`` plus the byte ``changes`` (time, delta) after each
    time's changes, applied together (the first moment is the first time: a block freed
    then, allocated before the file began, is not live at any moment)."""
    by_time: dict[int, int] = defaultdict(int)
    for at, delta in changes:
        by_time[at] += delta
    level, levels = before, []
    for at in sorted(by_time):
        level += by_time[at]
        levels.append(level)
    return max(levels, default=before)


def paired_peak(events: list[tuple[int, int, bool, int]]) -> int:
    """The peak of (time, address, allocates, size) events paired by address in time order:
    a free of an address never seen allocated was live from the start; an allocation of a
    live address ends the block there (its free went unrecorded)."""
    live: dict[int, int] = {}
    changes, before = [], 0
    for at, address, allocates, size in sorted(events, key=lambda e: e[0]):
        if allocates:
            if address in live:
                changes.append((at, -live[address]))
            live[address] = size
            changes.append((at, size))
        elif address in live:
            changes.append((at, -live.pop(address)))
        else:
            before += size
            changes.append((at, -size))
    return peak_of(changes, before)


def allocated_by_device(path: Path) -> dict[str, int]:
    return {d["device"]: d["allocated_bytes"]
            for d in memory_report(traceconv.load(path))["devices"]}


def test_memory_timeline_raw_export():
    """``export_memory_timeline`` raw rows (time, action, signed bytes, category): the level
    is their running sum (rows at time -1 existed before the profile)."""
    with gzip.open(RAW_TIMELINE) as f:
        rows = json.load(f)
    assert allocated_by_device(RAW_TIMELINE) == {"": peak_of(
        [(at, size) for at, _, size, _ in rows])}


def test_memory_timeline_totals_export(data):
    """``export_memory_timeline`` totals ([times], [bytes per category at each time]): the
    level at a time is the sum of its last row."""
    path = data / "torch_memory" / "memory_timeline.json.gz"
    with gzip.open(path) as f:
        times, sizes = json.load(f)
    at_time = {t: sum(row) for t, row in zip(times, sizes, strict=True)}
    assert allocated_by_device(path) == {"": max(at_time.values())}


def test_rocm_profiler_database():
    """rpd: hipMalloc calls (ptr, size in the args text) allocate at their end, hipFree
    calls free their ptr at their start."""
    with sqlite3.connect(f"file:{RPD}?mode=ro", uri=True) as db:
        calls = db.execute(
            "SELECT n.string, a.string, api.start, api.end FROM rocpd_api api "
            "JOIN rocpd_string n ON n.id = api.apiName_id "
            "JOIN rocpd_string a ON a.id = api.args_id "
            "WHERE n.string LIKE 'hipMalloc%' OR n.string LIKE 'hipFree%'").fetchall()
    events = []
    for name, args, start, end in calls:
        pointer = int(re.search(r"ptr=(0x[0-9a-f]+)", args)[1], 16)
        if name.startswith("hipMalloc"):
            events.append((end, pointer, True, int(re.search(r"size=(0x[0-9a-f]+)", args)[1], 16)))
        else:
            events.append((start, pointer, False, 0))
    assert len(events) == 5
    assert allocated_by_device(RPD) == {"hip": paired_peak(events)}


def megengine_chunks(document: dict) -> list[list]:
    """``[start s, end s, size]`` of each non-empty memory chunk of a static profile, as
    MegEngine's plan says: a weight (``PERSISTENT_DEVICE_VALUE``) lives throughout; another
    chunk from the device start of the first opr (in ``comp_seq``) writing a var planned
    into it to the device end of the last opr reading one (else writing one); an output
    chunk that overlaps the chunk of one of its opr's inputs starts when that input's ends
    (written over it in place)."""
    graph, device = document["graph_exec"], document["profiler"]["device"]
    order = {opr: i for i, opr in enumerate(graph["comp_seq"])}
    producer, readers = {}, defaultdict(list)
    for opr, node in graph["operator"].items():
        if opr in order:
            producer.update(dict.fromkeys(node["output"], opr))
            for var in node["input"]:
                readers[var].append(opr)
    members = defaultdict(list)
    for var, node in graph["var"].items():
        if node.get("mem_plan"):
            members[node["mem_plan"]["mem_chunk_id"]].append(var)
    chunks: dict[str, list] = {}
    for key, chunk in graph["mem_chunk"].items():
        owner = graph["var"][chunk["owner_var"]]
        if chunk["size"] <= 0:
            continue
        place = [None, None, chunk["size"], chunk["dev_ptr"]]
        if "PERSISTENT_DEVICE_VALUE" not in owner["flag"]:
            held = members.get(key) or [chunk["owner_var"]]
            writers = [producer[v] for v in held if v in producer]
            last = max([r for v in held for r in readers[v]] or writers, key=order.__getitem__)
            place[:2] = (device[min(writers, key=order.__getitem__)][owner["comp_node"]]["start"],
                         device[last][owner["comp_node"]]["end"])
        chunks[key] = place
    for key, chunk in chunks.items():
        opr = producer.get(graph["mem_chunk"][key]["owner_var"])
        if opr is None or chunk[0] is None:
            continue
        for var in graph["operator"][opr]["input"]:
            plan = graph["var"].get(var, {}).get("mem_plan")
            source = chunks.get(plan["mem_chunk_id"]) if plan else None
            if (source is not None and source is not chunk and source[1] is not None
                    and source[3] < chunk[3] + chunk[2] and chunk[3] < source[3] + source[2]
                    and chunk[0] < source[1] <= chunk[1]):
                chunk[0] = source[1]
                break
    return [chunk[:3] for chunk in chunks.values()]


def test_megengine_memory_chunks():
    with open(MEGENGINE) as f:
        chunks = megengine_chunks(json.load(f))
    start = min(t for c in chunks for t in c[:2] if t is not None)
    (device,) = allocated_by_device(MEGENGINE).items()
    assert device[1] == live_at(chunks, first_peak(chunks, []), start)


def wire_fields(data: bytes) -> dict[int, list]:
    """A protobuf message's fields: number -> values (ints, or bytes for length-delimited;
    fixed 64-bit values as bytes)."""
    fields: dict[int, list] = defaultdict(list)
    pos = 0

    def varint() -> int:
        nonlocal pos
        value = shift = 0
        while True:
            byte = data[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value

    while pos < len(data):
        key = varint()
        number, kind = key >> 3, key & 7
        if kind == 0:
            fields[number].append(varint())
        elif kind == 2:
            length = varint()
            fields[number].append(data[pos:pos + length])
            pos += length
        else:
            width = 8 if kind == 1 else 4
            fields[number].append(data[pos:pos + width])
            pos += width
    return fields


def names_of(plane: dict[int, list], field: int) -> dict[int, str]:
    """An XPlane metadata map (event_metadata 4, stat_metadata 5): id -> name."""
    names = {}
    for entry in plane[field]:
        value = wire_fields(wire_fields(entry)[2][0])
        names[value[1][0]] = value.get(2, [b""])[0].decode()
    return names


def xplane_memory_events(path: Path) -> list[tuple[str, int, int, bool, int]]:
    """(allocator, time ps, addr, allocates, allocation_bytes) of every MemoryAllocation and
    MemoryDeallocation event (XSpace.planes 1; XPlane.lines 3; XLine.timestamp_ns 3,
    events 4; XEvent.metadata_id 1, offset_ps 2, stats 4; XStat.metadata_id 1, uint64 3,
    int64 4, str 5, ref 7)."""
    with gzip.open(path) as f:
        space = wire_fields(f.read())
    found = []
    for raw_plane in space[1]:
        plane = wire_fields(raw_plane)
        events, stats = names_of(plane, 4), names_of(plane, 5)
        for raw_line in plane[3]:
            line = wire_fields(raw_line)
            for raw_event in line[4]:
                event = wire_fields(raw_event)
                name = events.get(event[1][0])
                if name not in ("MemoryAllocation", "MemoryDeallocation"):
                    continue
                values = {}
                for raw_stat in event[4]:
                    stat = wire_fields(raw_stat)
                    values[stats[stat[1][0]]] = (
                        stats[stat[7][0]] if 7 in stat else stat[5][0].decode() if 5 in stat
                        else stat[3][0] if 3 in stat else stat[4][0] if 4 in stat else None)
                at = line[3][0] * 1000 + event.get(2, [0])[0]
                found.append((values["allocator_name"], at, values["addr"],
                              name == "MemoryAllocation", values["allocation_bytes"]))
    return found


def test_xplane_memory_profile():
    """XPlane (TensorFlow's allocators under JAX on ROCm): per allocator, the allocation
    and deallocation host events paired by address."""
    events = xplane_memory_events(XPLANE)
    allocators = {e[0] for e in events}
    assert len(allocators) >= 2
    expected = {name: paired_peak([e[1:] for e in events if e[0] == name])
                for name in allocators}
    assert allocated_by_device(XPLANE) == expected


MEMORY_ROWS = st.lists(st.tuples(
    st.integers(0, 50), st.integers(0, 1), st.sampled_from([0x7000, 0x9000, 0xB000]),
    st.integers(1, 1 << 20), st.integers(0, 1)), min_size=1, max_size=30)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, derandomize=True)
@given(MEMORY_ROWS)
def test_nsys_cuda_memory_usage(tmp_path_factory, rows):
    """Nsight Systems: (start, deviceId, address, bytes, memoryOperationType 0 allocates /
    1 frees) rows, paired per device and address in time order (a free of an address never
    allocated in the capture was live from its start; a second alloc of a live address
    ends the first block)."""
    path = tmp_path_factory.mktemp("nsys") / "memory.sqlite"
    shutil.copyfile(NSYS, path)
    with closing(sqlite3.connect(path)) as db:
        db.execute("CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INT, globalPid INT, "
                   "deviceId INT, contextId INT, address INT, pc INT, bytes INT, memKind INT, "
                   "memoryOperationType INT, name INT, correlationId INT)")
        db.executemany("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, deviceId, address, "
                       "bytes, memoryOperationType) VALUES (?, ?, ?, ?, ?)", rows)
        db.commit()
    expected = {f"cuda:{device}": paired_peak([(at, address, op == 0, size)
                                               for at, d, address, size, op in rows
                                               if d == device])
                for device in {row[1] for row in rows}}
    assert allocated_by_device(path) == expected


def run_traceconv(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_format_without_sites_says_so():
    """rpd records sizes and pointers, not who allocated: the answer says so instead of a
    table of one ``(unnamed)`` row."""
    (device,) = memory_report(traceconv.load(RPD))["devices"]
    assert device["sites_recorded"] is False and device["sites"][0]["site"] == "(unnamed)"
    out = run_traceconv("memory", str(RPD))
    assert "does not record where blocks were allocated (5 live blocks)" in out
    assert "(unnamed)" not in out and "sites live at that moment" not in out


def test_a_change_without_sites_says_so(data):
    after = data / "xplane" / "jax_rocm_te_fused_attn.xplane.pb.gz"
    before_bytes, after_bytes = (
        paired_peak([e[1:] for e in xplane_memory_events(path) if e[0] == "GPU_0_bfc"])
        for path in (XPLANE, after))
    out = run_traceconv("memory", str(XPLANE), str(after))
    assert f"GPU_0_bfc: allocated {before_bytes:,} -> {after_bytes:,} bytes" in out.replace(
        "\n", " ")
    assert "sites: neither format records where blocks were allocated" in out
    assert "(unnamed)" not in out


def test_a_format_with_sites_shows_them():
    path = SAMPLES / "torch" / "cnn_step5.pt.trace.json"
    assert all(d["sites_recorded"] for d in memory_report(traceconv.load(path))["devices"])
    out = run_traceconv("memory", str(path))
    assert "sites live at that moment" in out and "aten::empty" in out


def counter_tracks(path: Path) -> dict[str, list[tuple[int, float]]]:
    """The counter samples of a .pftrace by track name, read off the wire (Trace.packet 1;
    TracePacket.timestamp 8, track_event 11, track_descriptor 60; TrackDescriptor.uuid 1,
    name 2, counter 8; TrackEvent.type 9 = COUNTER 4, track_uuid 11, counter_value 30,
    double_counter_value 44)."""
    names: dict[int, str] = {}
    samples: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for raw in wire_fields(path.read_bytes())[1]:
        packet = wire_fields(raw)
        if 60 in packet:
            track = wire_fields(packet[60][0])
            if 8 in track:
                names[track[1][0]] = track[2][0].decode()
        if 11 in packet:
            event = wire_fields(packet[11][0])
            if event.get(9) == [4]:
                value = event[30][0] if 30 in event else struct.unpack("<d", event[44][0])[0]
                samples[event[11][0]].append((packet[8][0], value))
    return {names[uuid]: found for uuid, found in samples.items()}


@pytest.mark.slow
def test_pftrace_counts_allocated_and_reserved(tmp_path):
    """Converting a snapshot writes an ``allocated`` and a ``reserved`` bytes counter track
    per device: the highest allocated is the replayed peak, reserved then the replay's."""
    out = tmp_path / "snapshot.pftrace"
    run_traceconv(str(BUNDLED[0]), "--to", "perfetto", "-o", str(out))
    tracks = counter_tracks(out)
    blocks, segments = replay(plain_document(BUNDLED[0]), 0)
    start = min(t for b in blocks + segments for t in b[:2] if t is not None)
    at = first_peak(blocks, segments)
    allocated, reserved = tracks["cuda:0 allocated bytes"], tracks["cuda:0 reserved bytes"]
    assert max(v for _, v in allocated) == live_at(blocks, at, start)
    assert min(t for t, v in allocated if v == max(v for _, v in allocated)) == at
    assert [v for t, v in reserved if t <= at][-1] == live_at(segments, at, start)
