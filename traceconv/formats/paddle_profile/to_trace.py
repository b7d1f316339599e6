"""Turn a decoded ``Profile`` message into tracks, slices, flows and memory blocks."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ...model import MemoryBlock, ProcessKind, Trace, TrackKind
from ...model.activity import fill_activity
from ...model.builder import TraceBuilder
from ...model.memory import add_live_bytes_counters
from ...vocabularies.paddle import (
    CPU_CATEGORY,
    KERNEL_CATEGORY,
    MEMCPY_CATEGORY,
    PADDLE_VOCABULARY,
    RUNTIME_CATEGORY,
)
from .._paddle import (
    INT64_MAX,
    leaf_name,
    link_launches,
)
from .._proto import Utf8Repair
from .proto import CUDA_RUNTIME_DEVICE, EVENT_GPU_KERNEL, PLACES


def build_trace(profile, trace: TraceBuilder) -> Trace:
    meta = trace.metadata
    meta.clock = "steady clock (epoch-like ns)"
    meta.attributes["paddle.profile_start_ns"] = profile.start_ns
    meta.attributes["paddle.profile_end_ns"] = profile.end_ns
    host = trace.add_process("Paddle host", kind=ProcessKind.HOST, sort_index=0)
    threads: dict[int, int] = {}
    streams: dict[tuple[int, int], int] = {}
    devices: dict[int, int] = {}
    out_of_range = 0
    text = Utf8Repair(trace.diagnostics, "paddle_profile")
    # Sorted by start so every track is in time order and parents precede children.
    for event in profile.events.in_order(_by_start_then_longest(profile.events)):
        start, end = event.start_ns, event.end_ns
        if end > INT64_MAX or start > INT64_MAX:
            out_of_range += 1
            continue
        path, detail = text(event.name), text(event.detail_info)
        args = {"path": path}
        if detail:
            args["detail_info"] = detail
        if event.type == EVENT_GPU_KERNEL:
            key = (event.device_id, event.sub_device_id)
            track = streams.get(key)
            if track is None:
                process = devices.get(event.device_id)
                if process is None:
                    process = devices[event.device_id] = trace.add_process(
                        f"GPU {event.device_id}", kind=ProcessKind.DEVICE, pid=event.device_id,
                        sort_index=1 + event.device_id)
                track = streams[key] = trace.add_track(
                    f"stream {event.sub_device_id}", process=process, kind=TrackKind.STREAM,
                    tid=event.sub_device_id, sort_index=event.sub_device_id)
            if event.has("memcopy"):
                args["bytes"] = event.memcopy.bytes
                category = MEMCPY_CATEGORY
            else:
                category = KERNEL_CATEGORY
            name = detail if category == KERNEL_CATEGORY and detail else leaf_name(path)
            trace.add_slice(track, start, end - start, name, category, args)
            continue
        track = threads.get(event.sub_device_id)
        if track is None:
            track = threads[event.sub_device_id] = trace.add_track(
                f"thread {event.sub_device_id}", process=host, kind=TrackKind.THREAD,
                tid=event.sub_device_id, sort_index=event.sub_device_id)
        if event.device_id == CUDA_RUNTIME_DEVICE:
            trace.add_slice(track, start, end - start, detail or leaf_name(path),
                            RUNTIME_CATEGORY, args)
        else:
            args["block_depth"] = event.device_id
            trace.add_slice(track, start, end - start, leaf_name(path), CPU_CATEGORY, args)
    trace.diagnostics.add("paddle_profile.time_out_of_range", count=out_of_range)
    link_launches(trace, "paddle_profile")
    _add_memory(trace, profile)
    fill_activity(trace, PADDLE_VOCABULARY)
    return trace


def _by_start_then_longest(events) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The order of ``events`` by start, the longer first at one start (the enclosing slice
    before the enclosed), else as written; from their times alone, so that the events are
    not all decoded at once (a file of tiny events would take 60 times its size).

    >>> from traceconv.formats.paddle_profile.proto import Profile
    >>> events = Profile.decode(b"\\x0a\\x04\\x10\\x05\\x18\\x06\\x0a\\x04\\x10\\x05\\x18\\x09"
    ...                         b"\\x0a\\x02\\x10\\x01").events
    >>> _by_start_then_longest(events).tolist()
    [2, 1, 0]
    """
    times = events.fields("start_ns", "end_ns")
    return np.lexsort((~times["end_ns"], times["start_ns"]))   # (~: descending, uint64)


def device_of(mem) -> str:  # type: ignore[no-untyped-def]
    """``gpu:0`` for a ``MemEvent`` (its place enum and device id)."""
    return f"{PLACES.get(mem.place, f'place{mem.place}')}:{mem.device_id}"


def _add_memory(trace: TraceBuilder, profile) -> None:
    """``mem_events`` are alloc → free intervals without addresses: each device gets
    logical offsets, one block after the other (the SVG shows sizes and lifetimes)."""
    if not profile.mem_events:
        return
    offsets: dict[str, int] = defaultdict(int)
    text = Utf8Repair(trace.diagnostics, "paddle_profile")
    times = profile.mem_events.fields("start_ns", "end_ns")
    # (numbers as the profile states them: one past int64 is the builder's to judge, a
    # block left out or a time moved, each counted)
    for mem in profile.mem_events.in_order(np.lexsort((times["end_ns"], times["start_ns"]))):
        device = device_of(mem)
        row = trace.add_memory_block(MemoryBlock(
            address=offsets[device], size=mem.bytes, alloc_ns=mem.start_ns,
            free_ns=mem.end_ns if mem.start_ns <= mem.end_ns else None,
            device=device,
            name=text(mem.alloc_in), owner_name=text(mem.alloc_in) or None,
            args={"free_in": text(mem.free_in), "thread": mem.thread_id,
                  "address": "logical offset (the profile records no addresses)"}))
        if row is not None:   # (a block left out takes no room)
            offsets[device] += mem.bytes
    trace.diagnostics.add("paddle_profile.memory_addresses_guessed", count=len(profile.mem_events))
    add_live_bytes_counters(trace)
