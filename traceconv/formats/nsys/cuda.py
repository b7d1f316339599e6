"""The CUDA tables of an nsys export: API calls on host threads, GPU work on stream tracks.

=====================================  ==========================================
table                                  becomes
=====================================  ==========================================
CUPTI_ACTIVITY_KIND_RUNTIME            ``cuda_runtime`` / ``cuda_driver`` slices
CUPTI_ACTIVITY_KIND_KERNEL             ``kernel`` slices (grid, block, registers,
                                       shared memory as args)
CUPTI_ACTIVITY_KIND_MEMCPY             ``gpu_memcpy`` slices (kind, bytes, bandwidth)
CUPTI_ACTIVITY_KIND_MEMSET             ``gpu_memset`` slices
CUPTI_ACTIVITY_KIND_SYNCHRONIZATION    ``cuda_sync`` slices on the stream (or a
                                       "no stream" track for context/event syncs)
CUPTI_ACTIVITY_KIND_OVERHEAD           ``overhead`` slices on the thread
=====================================  ==========================================

Every device row keeps its ``correlation`` id: :mod:`.flows` links it to its API call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._bulk import args_by_batch, intern_ids, intern_texts, rows_of_args
from .context import Context
from .ids import (
    LAUNCH_TYPES,
    MEMCPY_KINDS,
    MEMORY_KINDS,
    OVERHEAD_TYPES,
    SYNC_TYPES,
    api_category,
    api_name,
    process_of,
    short_copy_kind,
)

RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
KERNEL = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
SYNC = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
OVERHEAD = "CUPTI_ACTIVITY_KIND_OVERHEAD"
DEVICE_WORK = (KERNEL, MEMCPY, MEMSET)   # launched by an API call: linked by flows

_TIMES = {"start": ("i8", 0), "end": ("i8", 0)}
_PLACE = {"deviceId": ("i8", 0), "globalPid": ("i8", 0), "contextId": ("i8", 0),
          "streamId": ("i8", 0), "correlationId": ("i8", -1)}


def read_runtime(ctx: Context) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """CUDA runtime and driver API calls; returns their rows and (process, correlation)
    keys."""
    if not ctx.db.has(RUNTIME, "start", "end", "globalTid"):
        return _none()
    rows = ctx.db.numeric_columns(RUNTIME, {**_TIMES, "globalTid": ("i8", 0),
                                            "correlationId": ("i8", -1), "nameId": ("i8", -1),
                                            "returnValue": ("i8", 0)})
    names = {i: api_name(ctx.text(i)) for i in np.unique(rows["nameId"]).tolist()}
    name_ids = intern_ids(ctx.trace, rows["nameId"], names.__getitem__)
    tracks = ctx.places.threads(rows["globalTid"])

    def args_of(picked: np.ndarray) -> Callable[[slice], list[dict[str, Any]]]:
        def args(part: slice) -> list[dict[str, Any]]:
            chosen = picked[part]
            return [{"correlation": c} if r == 0 else {"correlation": c, "return value": r}
                    for c, r in zip(rows["correlationId"][chosen].tolist(),
                                    rows["returnValue"][chosen].tolist(), strict=True)]
        return args

    # driver and runtime calls share the table: two categories, one pass each
    driver = np.isin(rows["nameId"], [i for i, n in names.items()
                                      if api_category(n) == "cuda_driver"])
    out = np.zeros(len(driver), np.int64)
    for category, mask in (("cuda_runtime", ~driver), ("cuda_driver", driver)):
        picked = np.flatnonzero(mask)
        if len(picked):
            out[picked] = ctx.add_slices(
                tracks[picked], rows["start"][picked], rows["end"][picked], name_ids[picked],
                category, args_of(picked), RUNTIME)
    return out, {"globalPid": process_of(rows["globalTid"]),
                 "correlationId": rows["correlationId"]}


def read_kernels(ctx: Context) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Kernels on their stream tracks; returns their rows and (process, correlation) keys."""
    if not ctx.db.has(KERNEL, "start", "end"):
        return _none()
    dims = {f"{k}{a}": ("i8", 0) for k in ("grid", "block") for a in "XYZ"}
    rows = ctx.db.numeric_columns(KERNEL, {
        **_TIMES, **_PLACE, "demangledName": ("i8", -1), "shortName": ("i8", -1), **dims,
        "registersPerThread": ("i8", 0), "staticSharedMemory": ("i8", 0),
        "dynamicSharedMemory": ("i8", 0), "localMemoryPerThread": ("i8", 0),
        "launchType": ("i8", 0), "graphNodeId": ("i8", -1)})
    name_column = np.where(rows["demangledName"] >= 0, rows["demangledName"], rows["shortName"])
    name_ids = intern_ids(ctx.trace, name_column, ctx.text)
    tracks = _streams(ctx, rows)
    launch = ctx.enum("ENUM_CUDA_KERNEL_LAUNCH_TYPE", LAUNCH_TYPES)

    def args(part: slice) -> list[dict[str, Any]]:
        grid, block = (np.stack([rows[f"{k}{a}"][part] for a in "XYZ"], axis=1)
                       for k in ("grid", "block"))
        made = rows_of_args(
            ("correlation", "device", "context", "stream", "grid", "block",
             "registers per thread", "static shared memory", "dynamic shared memory",
             "local memory per thread", "launch type"),
            *(rows[c][part] for c in ("correlationId", "deviceId", "contextId", "streamId")),
            grid.tolist(), block.tolist(),
            *(rows[c][part] for c in ("registersPerThread", "staticSharedMemory",
                                      "dynamicSharedMemory", "localMemoryPerThread")),
            [launch.get(k, str(k)) for k in rows["launchType"][part].tolist()])
        graph_node = rows["graphNodeId"][part]
        for i in np.flatnonzero(graph_node >= 0).tolist():
            made[i]["graph node"] = int(graph_node[i])
        return made

    slices = ctx.add_slices(tracks, rows["start"], rows["end"], name_ids, "kernel", args, KERNEL)
    return slices, _keys(rows)


def read_memcpy(ctx: Context) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Copies on their stream tracks, named by kind (``Memcpy HtoD (Pinned -> Device)``)."""
    if not ctx.db.has(MEMCPY, "start", "end"):
        return _none()
    rows = ctx.db.numeric_columns(MEMCPY, {**_TIMES, **_PLACE, "bytes": ("i8", 0),
                                           "copyKind": ("i8", 0), "srcKind": ("i8", -1),
                                           "dstKind": ("i8", -1)})
    kinds = {k: short_copy_kind(v) for k, v in ctx.enum("ENUM_CUDA_MEMCPY_OPER",
                                                         MEMCPY_KINDS).items()}
    memory = ctx.enum("ENUM_CUDA_MEM_KIND", MEMORY_KINDS)
    kind = [kinds.get(k, str(k)) for k in rows["copyKind"].tolist()]
    src = [memory.get(k, "?") for k in rows["srcKind"].tolist()]
    dst = [memory.get(k, "?") for k in rows["dstKind"].tolist()]
    names = [f"Memcpy {k} ({s} -> {d})" for k, s, d in zip(kind, src, dst, strict=True)]
    args = args_by_batch(("correlation", "device", "context", "stream", "bytes", "kind",
                          "src kind", "dst kind", "memory bandwidth (GB/s)"),
                         rows["correlationId"], rows["deviceId"], rows["contextId"],
                         rows["streamId"], rows["bytes"], kind, src, dst,
                         _bandwidth(rows["bytes"], rows["end"] - rows["start"]))
    slices = ctx.add_slices(_streams(ctx, rows), rows["start"], rows["end"],
                            intern_texts(ctx.trace, names), "gpu_memcpy", args, MEMCPY)
    return slices, _keys(rows)


def read_memset(ctx: Context) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Memsets on their stream tracks."""
    if not ctx.db.has(MEMSET, "start", "end"):
        return _none()
    rows = ctx.db.numeric_columns(MEMSET, {**_TIMES, **_PLACE, "bytes": ("i8", 0),
                                           "value": ("i8", 0), "memKind": ("i8", -1)})
    memory = ctx.enum("ENUM_CUDA_MEM_KIND", MEMORY_KINDS)
    kind = [memory.get(k, "?") for k in rows["memKind"].tolist()]
    args = args_by_batch(("correlation", "device", "context", "stream", "bytes", "value",
                          "memory kind", "memory bandwidth (GB/s)"),
                         rows["correlationId"], rows["deviceId"], rows["contextId"],
                         rows["streamId"], rows["bytes"], rows["value"], kind,
                         _bandwidth(rows["bytes"], rows["end"] - rows["start"]))
    slices = ctx.add_slices(_streams(ctx, rows), rows["start"], rows["end"],
                            intern_texts(ctx.trace, [f"Memset ({k})" for k in kind]),
                            "gpu_memset", args, MEMSET)
    return slices, _keys(rows)


def read_sync(ctx: Context) -> np.ndarray:
    """Synchronisations (``Stream sync``, ``Event sync``, ...) on the device."""
    if not ctx.db.has(SYNC, "start", "end"):
        return np.zeros(0, np.int64)
    rows = ctx.db.numeric_columns(SYNC, {**_TIMES, **_PLACE, "syncType": ("i8", 0),
                                         "eventId": ("i8", -1)})
    known = ctx.places.context_device
    device = rows["deviceId"].copy()
    contexts = list(zip(rows["globalPid"].tolist(), rows["contextId"].tolist(), strict=True))
    for i, key in enumerate(contexts):
        device[i] = known.get(key, device[i])
    moved = int((device != rows["deviceId"]).sum())
    ctx.trace.diagnostics.add("nsys.sync_device_from_context", count=moved)
    rows["deviceId"] = device
    types = ctx.enum("ENUM_CUPTI_SYNC_TYPE", SYNC_TYPES)
    names = [types.get(k, f"sync type {k}") for k in rows["syncType"].tolist()]
    args = args_by_batch(("correlation", "device", "context", "stream"),
                         rows["correlationId"], rows["deviceId"], rows["contextId"],
                         rows["streamId"])
    return ctx.add_slices(_streams(ctx, rows), rows["start"], rows["end"],
                          intern_texts(ctx.trace, names), "cuda_sync", args, SYNC)


def read_overhead(ctx: Context) -> np.ndarray:
    """CUPTI's own overhead on the thread that paid it."""
    if not ctx.db.has(OVERHEAD, "start", "end", "globalTid"):
        return np.zeros(0, np.int64)
    rows = ctx.db.numeric_columns(OVERHEAD, {**_TIMES, "globalTid": ("i8", 0),
                                             "overheadType": ("i8", 0)})
    types = ctx.enum("ENUM_CUPTI_OVERHEAD_TYPE", OVERHEAD_TYPES)
    names = [types.get(k, f"overhead type {k}") for k in rows["overheadType"].tolist()]
    return ctx.add_slices(ctx.places.threads(rows["globalTid"]), rows["start"], rows["end"],
                          intern_texts(ctx.trace, names), "overhead",
                          [None] * len(names), OVERHEAD)


def _streams(ctx: Context, rows: dict[str, np.ndarray]) -> np.ndarray:
    return ctx.places.streams(rows["deviceId"], rows["globalPid"], rows["contextId"],
                              rows["streamId"])


def _keys(rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"globalPid": rows["globalPid"], "correlationId": rows["correlationId"]}


def _none() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    empty = np.zeros(0, np.int64)
    return empty, {"globalPid": empty, "correlationId": empty}


def _bandwidth(nbytes: np.ndarray, dur: np.ndarray) -> list[float | None]:
    """GB/s (bytes per ns) with 3 decimals; None for a zero-length copy.

    >>> _bandwidth(np.array([1000, 5]), np.array([100, 0]))
    [10.0, None]
    """
    safe = np.where(dur > 0, dur, 1)
    rates = np.round(nbytes / safe, 3).tolist()
    return [r if d > 0 else None for r, d in zip(rates, dur.tolist(), strict=True)]
