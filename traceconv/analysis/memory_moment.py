"""The out-of-memory answer: what held a device's memory at the moment that matters.

The moment is the allocator's out-of-memory event when the trace has one, else the first
moment of the peak of allocated bytes. At it, per device:

* *allocated*: the sizes of the blocks live then (a block is live from its allocation to
  its free; a snapshot's block to ``free_completed``, so blocks pending free count);
* *reserved*: the sizes of the segments (reservations) live then; *fragmentation* is
  reserved minus allocated;
* where the allocator's own totals are stated (Kineto's ``Total Allocated`` and ``Total
  Reserved``, counters of the model), *allocated by the allocator* at the moment (blocks
  allocated before the trace began included) and, without segments, *reserved* from it;
* the largest free gap inside the live segments of each pool, against the failed request;
* the allocation sites of the live blocks, summing exactly to the allocated bytes.

What the trace cannot tell is stated, counted, instead of guessed: blocks allocated before
the recorded history, frees of blocks the history never saw allocated (the ring buffer
wrapped: an earlier peak may be lost), blocks without a stack, an OOM event without a size.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from ..model import MemoryBlock, Trace
from ..model.block_table import BlockTable
from ..model.clock import is_logical
from ..model.memory import ALLOCATOR_TOTALS, LiveBytes, allocator_total, live_bytes
from ..numbers import int64_edge, int64_total
from .allocation_sites import UNNAMED, block_sites, site_of

SCHEMA = 1
# what ``since_start`` counts from (the device's own history, not the trace's first event)
SINCE_START = "after the device's first memory event"
# (in words that fit every input that has memory: a snapshot, a compiled program's plan)
MOMENTS = {"oom": "the out-of-memory event", "peak": "the first peak of allocated bytes",
           "dump": "the state the input records (no allocation times)"}   # by moment["kind"]
NO_STACK = "<no stack recorded>"   # (what the snapshot reader names a stackless block)
ROUNDING = 512   # the CUDA caching allocator hands out multiples of 512 bytes
BEYOND_INT64 = "byte_totals_beyond_int64"   # (sizes that sum past int64: at its edge)
# what each count of ``unknown`` says, where its key alone would not
UNKNOWN_TEXT = {
    "frees_of_blocks_allocated_before_history": "frees of blocks with no allocation time",
    "live_blocks_allocated_before_history": "live blocks with no allocation time",
    BEYOND_INT64: "byte totals past int64, given at 9,223,372,036,854,775,807",
}


def unknown_text(key: str) -> str:
    """How a count of ``unknown`` is named to a reader.

    >>> unknown_text("live_blocks_without_stack")
    'live blocks without stack'
    """
    return UNKNOWN_TEXT.get(key, key.replace("_", " "))


def memory_report(trace: Trace, depth: int = 1) -> dict[str, Any]:
    """The ``traceconv memory --json`` object of ``trace``: one entry per device.

    ``depth`` > 1 names each site by its first ``depth`` user frames (caller chain).

    >>> trace = Trace()
    >>> for address, size, start, end in ((0, 100, 0, 10), (512, 50, 5, None)):
    ...     _ = trace.add_memory_block(MemoryBlock(address, size, start, end,
    ...         device="cuda:0", name="net.py:3 f"))
    >>> _ = trace.add_reservation(MemoryBlock(0, 2048, 0, None, device="cuda:0"))
    >>> device = memory_report(trace)["devices"][0]
    >>> device["moment"]["time"], device["allocated_bytes"], device["fragmentation_bytes"]
    (5, 150, 1898)
    >>> device["sites"]
    [{'site': 'net.py:3 f', 'bytes': 150, 'blocks': 2, 'share': 1.0}]
    """
    places = set(trace.memory.distinct("device")) | set(trace.reservations.distinct("device"))
    ooms = _oom_events(trace, next(iter(places)) if len(places) == 1 else "")
    devices = sorted(places | set(ooms))
    sites = block_sites(trace.memory)
    return {"schema": SCHEMA, "time_unit": "entry" if is_logical(trace.metadata.clock)
            else "ns", "devices": [_device_report(trace, device, ooms.get(device, []), depth,
                                                  sites) for device in devices]}


def _on_device(table: BlockTable, device: str) -> np.ndarray:
    """The numbers of the blocks of ``table`` on ``device``."""
    return table.rows_where("device", lambda name: name == device)


def _history_start(trace: Trace, blocks: np.ndarray, segments: np.ndarray) -> int | None:
    """The earliest known time of these blocks and segments (None: no time is known)."""
    times = [table.numbers(name)[rows][table.known(name)[rows]]
             for table, rows in ((trace.memory, blocks), (trace.reservations, segments))
             for name in ("alloc_ns", "free_ns")]
    known = np.concatenate(times)
    return int(known.min()) if len(known) else None


def _oom_events(trace: Trace, only_device: str) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """The out-of-memory instants by device, in time order (one that names no device:
    ``only_device``, the trace's one device if it has one)."""
    events: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for instant in trace.iter_instants():
        if instant.category == "oom" and instant.args:
            device = str(instant.args.get("device") or only_device)
            events[device].append((instant.ts, instant.args))
    for found in events.values():
        found.sort(key=lambda event: event[0])
    return events


def _device_report(trace: Trace, device: str, ooms: list[tuple[int, dict[str, Any]]],
                   depth: int, sites: tuple[list[str], np.ndarray]) -> dict[str, Any]:
    memory, rows = trace.memory, _on_device(trace.memory, device)
    segment_rows = _on_device(trace.reservations, device)
    segments = trace.reservations.rows(segment_rows)
    first = _history_start(trace, rows, segment_rows)
    start, timed = (0, False) if first is None else (first, True)
    if ooms:
        at, args = ooms[0]
        moment: dict[str, Any] = {
            "kind": "oom", "time": at, "requested_bytes": _whole(args.get("requested bytes")),
            "device_free_bytes": _whole(args.get("device free bytes")),
            "oom_events": len(ooms)}
    else:
        at = live_bytes(memory, start=start, rows=rows).peak[0] if len(rows) else start
        moment = {"kind": "peak" if timed else "dump", "time": at if timed else None}
    moment["since_start"] = at - start if timed or ooms else None
    alloc_known, free_known = memory.known("alloc_ns")[rows], memory.known("free_ns")[rows]
    begins = np.where(alloc_known, memory.numbers("alloc_ns")[rows], start)
    live = memory.rows(rows[(begins <= at) & (~free_known | (memory.numbers("free_ns")[rows] > at))])
    live_segments = [s for s in segments if _live_at(s, at, start)]
    unknown = _unknowns(int(np.count_nonzero(~alloc_known & free_known)), live, moment)
    allocated = _total((b.size for b in live), unknown)
    reserved = _total((s.size for s in live_segments), unknown) if segments else None
    # the allocator's own totals, where its events state them (Kineto): they count blocks
    # allocated before the trace began, which no event of it shows
    stated = {kind: allocator_total(trace, device, kind, at) for kind in ALLOCATOR_TOTALS}
    by_allocator, reserved_by_allocator = stated.values()
    held = allocated
    if reserved is None and reserved_by_allocator:   # (a CPU allocator states 0: no cache)
        reserved, held = reserved_by_allocator, max(allocated, by_allocator or 0)
    fragmentation = None
    if reserved is not None:
        if reserved >= held:
            fragmentation = reserved - held
        else:   # the segments disagree with the blocks: no number is right
            unknown["reserved_below_allocated"] = 1
    pools = _free_gaps(live, live_segments, unknown)
    request = moment.get("requested_bytes")
    if request is not None and pools:
        moment["largest_free_fits_request"] = (
            max(p["largest_free_bytes"] for p in pools) >= _rounded(request))
    names, of_block = sites
    return {"device": device, "allocated_bytes": allocated,
            "allocated_by_allocator_bytes": by_allocator,
            "allocated_rounded_bytes": _rounded_at_dump(live_segments, moment),
            "reserved_bytes": reserved,
            "fragmentation_bytes": fragmentation, "moment": moment, "pools": pools,
            "sites": _sites(live, allocated, depth, unknown), "unknown": unknown,
            # (some formats record only sizes and addresses: every site is "(unnamed)")
            "sites_recorded": any(names[k] != UNNAMED
                                  for k in np.unique(of_block[rows]).tolist())}


def allocator_stated(device: dict[str, Any]) -> tuple[int, int] | None:
    """Of one device of :func:`memory_report`: the allocator's own allocated total and the
    bytes it held from before the trace (0 or less: none), when it differs from the
    blocks' sum; else None (nothing to add).

    >>> allocator_stated({"allocated_bytes": 100, "allocated_by_allocator_bytes": 150})
    (150, 50)
    """
    stated = device.get("allocated_by_allocator_bytes")
    if stated is None or stated == device["allocated_bytes"]:
        return None
    return stated, stated - device["allocated_bytes"]


def _total(sizes: Any, unknown: dict[str, int]) -> int:
    """The sum of ``sizes`` at the int64 edge (numbers.int64_total), counted in
    ``unknown`` under :data:`BEYOND_INT64` when it passed it."""
    total, beyond = int64_total(sizes)
    if beyond:
        unknown[BEYOND_INT64] = unknown.get(BEYOND_INT64, 0) + 1
    return total


def _rounded_at_dump(segments: list[MemoryBlock], moment: dict[str, Any]) -> int | None:
    """torch's own allocated bytes (its blocks' rounded sizes), which a snapshot states for
    its dump-time state only: None at any other moment or when a segment does not say."""
    sizes = [(s.args or {}).get("allocated_size") for s in segments]
    if moment["kind"] != "dump" or not sizes or not all(type(n) is int for n in sizes):
        return None
    return int64_edge(sum(n for n in sizes if n is not None))


def _live_at(block: MemoryBlock, at: int, start: int) -> bool:
    """Whether ``block`` is live at ``at`` (no alloc time: since ``start``; no free time:
    to the end; freed at ``at``: not live, as frees at an instant apply first)."""
    begin = start if block.alloc_ns is None else block.alloc_ns
    return begin <= at and (block.free_ns is None or block.free_ns > at)


def _whole(value: Any) -> int | None:
    return value if type(value) is int else None


def _rounded(size: int) -> int:
    """``size`` as the allocator rounds it (a multiple of 512, at least 512).

    >>> _rounded(1), _rounded(512), _rounded(513)
    (512, 512, 1024)
    """
    return max(ROUNDING, -(-size // ROUNDING) * ROUNDING)


def _unknowns(freed_before_history: int, live: list[MemoryBlock],
              moment: dict[str, Any]) -> dict[str, int]:
    """What the trace could not tell, counted (only the counts that are not zero)."""
    counts = {
        # freed in the history, allocated before it: the history lost its start, and with it
        # maybe a higher peak
        "frees_of_blocks_allocated_before_history": freed_before_history,
        "live_blocks_allocated_before_history": sum(b.alloc_ns is None for b in live),
        "live_blocks_without_stack": sum(site_of(b) == NO_STACK for b in live),
        "oom_requested_bytes_unknown": int(moment["kind"] == "oom"
                                           and moment["requested_bytes"] is None),
    }
    return {key: count for key, count in counts.items() if count}


def _free_gaps(live: list[MemoryBlock], segments: list[MemoryBlock],
               unknown: dict[str, int]) -> list[dict[str, Any]]:
    """Per pool (segment type and stream): live segments, their bytes and the largest free
    gap between the live blocks inside one of them (block sizes rounded as the allocator
    does; it may hand out more, so the gap is an upper bound)."""
    ordered = sorted(segments, key=lambda s: s.address)
    starts = [s.address for s in ordered]
    inside: dict[int, list[MemoryBlock]] = defaultdict(list)
    outside = 0
    for block in live:
        k = bisect.bisect_right(starts, block.address) - 1
        if k >= 0 and block.address < ordered[k].address + ordered[k].size:
            inside[k].append(block)
        else:
            outside += 1
    if outside and segments:
        unknown["live_blocks_outside_live_segments"] = outside
    pools: dict[tuple[str, str], dict[str, Any]] = {}
    for k, segment in enumerate(ordered):
        args = segment.args or {}
        key = (str(args.get("segment_type") or "unknown"), str(args.get("stream", "unknown")))
        pool = pools.setdefault(key, {"pool": key[0], "stream": key[1], "segments": 0,
                                      "reserved_bytes": 0, "largest_free_bytes": 0})
        pool["segments"] += 1
        pool["reserved_bytes"] += segment.size
        pool["largest_free_bytes"] = max(pool["largest_free_bytes"],
                                         _largest_gap(segment, inside.get(k, [])))
    for pool in pools.values():
        pool["reserved_bytes"] = _total([pool["reserved_bytes"]], unknown)
        pool["largest_free_bytes"] = _total([pool["largest_free_bytes"]], unknown)
    return [pools[key] for key in sorted(pools)]


def _largest_gap(segment: MemoryBlock, blocks: list[MemoryBlock]) -> int:
    """The largest free run of ``segment`` between ``blocks`` (which lie inside it)."""
    largest, cursor = 0, segment.address
    for block in sorted(blocks, key=lambda b: b.address):
        largest = max(largest, block.address - cursor)
        taken = (block.args or {}).get("block_size") or _rounded(block.size)
        cursor = max(cursor, block.address + taken)
    return max(largest, segment.address + segment.size - cursor)


def _sites(live: list[MemoryBlock], allocated: int, depth: int,
           unknown: dict[str, int]) -> list[dict[str, Any]]:
    """The live blocks by site, biggest first: bytes (at the int64 edge, counted in
    ``unknown``), blocks and share of ``allocated``."""
    size: Counter[str] = Counter()
    count: Counter[str] = Counter()
    for block in live:
        site = _site_path(block, depth)
        size[site] += block.size
        count[site] += 1
    for site in size:
        size[site] = _total([size[site]], unknown)
    rows = sorted(size, key=lambda s: (-size[s], s))
    return [{"site": s, "bytes": size[s], "blocks": count[s],
             "share": round(size[s] / allocated, 4) if allocated else 0.0} for s in rows]


def _site_path(block: MemoryBlock, depth: int) -> str:
    """The block's site and, up to ``depth`` frames in all, the Python frames calling it.

    >>> stack = "c10::alloc()\\n/m/net.py:3 f\\n_PyEval\\n/m/net.py:9 g\\n/m/run.py:1 main"
    >>> _site_path(MemoryBlock(0, 8, args={"site": "net.py:3 f", "stack": stack}), 2)
    'net.py:3 f < net.py:9 g'
    """
    site = site_of(block)
    stack = (block.args or {}).get("stack")
    if depth <= 1 or not stack:
        return site
    frames = [_base_name(line) for line in str(stack).split("\n") if ".py:" in line]
    if site not in frames:
        return site
    first = frames.index(site)
    return " < ".join(frames[first:first + depth])


def _base_name(line: str) -> str:
    """``/m/net.py:3 f`` as ``net.py:3 f`` (how sites are written)."""
    return line.replace("\\", "/").rsplit("/", 1)[-1] if "/" in line.split(" ", 1)[0] \
        else line


def device_curves(trace: Trace, device: str) -> tuple[LiveBytes, LiveBytes]:
    """Allocated and reserved bytes of ``device`` over time (both from the same start).

    >>> trace = Trace()
    >>> _ = trace.add_memory_block(MemoryBlock(0, 100, 0, 10, device="cuda:0"))
    >>> allocated, reserved = device_curves(trace, "cuda:0")
    >>> allocated.bytes.tolist(), len(reserved.times)
    ([100, 0], 0)
    """
    rows, segments = _on_device(trace.memory, device), _on_device(trace.reservations, device)
    start = _history_start(trace, rows, segments) or 0
    return (live_bytes(trace.memory, start=start, rows=rows),
            live_bytes(trace.reservations, start=start, rows=segments))
