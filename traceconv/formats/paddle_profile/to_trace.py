"""Turn a decoded ``Profile`` message into tracks, slices, flows and memory blocks."""

from __future__ import annotations

import re
from collections import defaultdict

from ...analysis.memory import add_live_bytes_counters
from ...model import MemoryBlock, ProcessKind, Trace, TrackKind
from .proto import CUDA_RUNTIME_DEVICE, EVENT_GPU_KERNEL, PLACES

INT64_MAX = (1 << 63) - 1   # the model stores int64 ns; uninitialised CUPTI times exceed it
_VAR_SUFFIX = re.compile(r"%[^%/]*%")     # "conv2d%out_var%": AllOpDetail per-instance name


def leaf_name(path: str) -> str:
    """The name a timeline shows: the last path component without its ``%var%`` part.

    >>> leaf_name("Executor::Run/Executor::RunPartialPreparedContext/conv2d%conv2d_0.tmp_0%")
    'conv2d'
    """
    return _VAR_SUFFIX.sub("", path.rsplit("/", 1)[-1]) or path


def build_trace(profile, trace: Trace) -> Trace:
    meta = trace.metadata
    meta.clock = "steady clock (ns)"
    meta.attributes["paddle.profile_start_ns"] = profile.start_ns
    meta.attributes["paddle.profile_end_ns"] = profile.end_ns
    host = trace.add_process("Paddle host", kind=ProcessKind.HOST, sort_index=0)
    threads: dict[int, int] = {}
    streams: dict[tuple[int, int], int] = {}
    devices: dict[int, int] = {}
    runtime: dict[str, list[tuple[int, int]]] = defaultdict(list)   # annotation → (start, row)
    kernels: list[tuple[int, str, int]] = []                         # (start, annotation, row)
    reversed_times = out_of_range = 0
    # Sorted by start so every track is in time order and parents precede children.
    for event in sorted(profile.events, key=lambda e: (e.start_ns, -e.end_ns)):
        start, end = event.start_ns, event.end_ns
        if end > INT64_MAX or start > INT64_MAX:
            out_of_range += 1
            continue
        if end < start:
            reversed_times += 1
            end = start
        args = {"path": event.name}
        if event.detail_info:
            args["detail_info"] = event.detail_info
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
            if event.HasField("memcopy"):
                args["bytes"] = event.memcopy.bytes
                category = "memcpy"
            else:
                category = "kernel"
            name = event.detail_info if category == "kernel" and event.detail_info else \
                leaf_name(event.name)
            row = trace.add_slice(track, start, end - start, name, category, args)
            kernels.append((start, event.name, row))
            continue
        track = threads.get(event.sub_device_id)
        if track is None:
            track = threads[event.sub_device_id] = trace.add_track(
                f"thread {event.sub_device_id}", process=host, kind=TrackKind.THREAD,
                tid=event.sub_device_id, sort_index=event.sub_device_id)
        if event.device_id == CUDA_RUNTIME_DEVICE:
            row = trace.add_slice(track, start, end - start, event.detail_info or
                                  leaf_name(event.name), "cuda_runtime", args)
            runtime[event.name].append((start, row))
        else:
            args["block_depth"] = event.device_id
            trace.add_slice(track, start, end - start, leaf_name(event.name), "cpu_op", args)
    if reversed_times:
        trace.diagnostics.add("paddle_profile.end_before_start",
                              "events ending before they start (kept with duration 0)",
                              kind="repaired", count=reversed_times)
    trace.diagnostics.add("paddle_profile.time_out_of_range",
                          "events with timestamps beyond int64 (uninitialised) were dropped",
                          kind="dropped", count=out_of_range)
    _link_launches(trace, runtime, kernels)
    _add_memory(trace, profile)
    return trace


def _annotations(annotation: str) -> list[str]:
    """The annotation, its enclosing paths, then its bare leaf (memcpy runtime calls are
    recorded under ``GpuMemcpyAsync:CPU->GPU`` while the copy carries the op's path).

    >>> _annotations("run/conv2d/compute")
    ['run/conv2d/compute', 'run/conv2d', 'run', 'compute']
    """
    parts = annotation.split("/")
    paths = ["/".join(parts[:n]) for n in range(len(parts), 0, -1)]
    return paths + [parts[-1]] if len(parts) > 1 else paths


def _link_launches(trace: Trace, runtime: dict[str, list[tuple[int, int]]],
                   kernels: list[tuple[int, str, int]]) -> None:
    """Flow runtime call → kernel. The profile has no correlation ids, so each kernel gets
    the earliest unused runtime call of its annotation (or an enclosing one) that started
    before it."""
    used: dict[str, int] = defaultdict(int)
    unmatched = 0
    for start, annotation, row in sorted(kernels):
        for path in _annotations(annotation):
            calls, n = runtime.get(path), used[path]
            if calls and n < len(calls) and calls[n][0] <= start:
                trace.add_flow(calls[n][1], row, "launch", "launch")
                used[path] += 1
                break
        else:
            unmatched += 1
    if kernels:
        trace.diagnostics.add(
            "paddle_profile.launch_flows_guessed",
            "runtime→kernel flows matched by annotation and order (no correlation ids)",
            kind="guessed", count=len(kernels) - unmatched)
        trace.diagnostics.add("paddle_profile.kernel_without_launch",
                              "device records with no runtime call to link from", kind="note",
                              count=unmatched)


def _add_memory(trace: Trace, profile) -> None:
    """``mem_events`` are alloc → free intervals without addresses: each device gets
    logical offsets, one block after the other (the SVG shows sizes and lifetimes)."""
    if not profile.mem_events:
        return
    offsets: dict[str, int] = defaultdict(int)
    for mem in sorted(profile.mem_events, key=lambda m: (m.start_ns, m.end_ns)):
        if mem.start_ns > INT64_MAX:
            trace.diagnostics.add("paddle_profile.time_out_of_range",
                                  "events with timestamps beyond int64 (uninitialised) were "
                                  "dropped", kind="dropped")
            continue
        device = f"{PLACES.get(mem.place, f'place{mem.place}')}:{mem.device_id}"
        trace.add_memory_block(MemoryBlock(
            address=offsets[device], size=mem.bytes, alloc_ns=mem.start_ns,
            free_ns=mem.end_ns if mem.start_ns <= mem.end_ns <= INT64_MAX else None,
            device=device,
            name=mem.alloc_in, owner_op=mem.alloc_in or None,
            args={"free_in": mem.free_in, "thread": mem.thread_id,
                  "address": "logical offset (the profile records no addresses)"}))
        offsets[device] += mem.bytes
    trace.diagnostics.add("paddle_profile.memory_addresses_guessed",
                          "memory events carry no address; blocks get logical offsets",
                          kind="guessed", count=len(profile.mem_events))
    add_live_bytes_counters(trace)
