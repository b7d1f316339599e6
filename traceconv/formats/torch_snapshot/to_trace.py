"""From a snapshot document (plain dicts and lists) to the model.

``device_traces[d]`` is the allocator's history for device ``d``, oldest first; its actions:

* ``segment_alloc`` / ``segment_free`` (``segment_map`` / ``segment_unmap`` for expandable
  segments, which map and unmap pieces of one address range): memory reserved from /
  returned to the driver -> :attr:`Trace.reservations`, as ranges that never overlap (see
  :mod:`.segments`);
* ``alloc``, then ``free_requested`` (the tensor died) and ``free_completed`` (the block is
  reusable, after the streams that used it are done) -> one :class:`MemoryBlock`, freed at
  ``free_completed``, with ``free_requested_ns`` in its args;
* ``oom`` -> an instant; ``snapshot`` markers carry nothing to draw.

``segments`` is the state at dump time: the parts of segments and the allocated blocks that
the history never saw (it keeps only the last ``max_entries``) become reservations / blocks
alive since before the recording.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...model import MemoryBlock, Metadata, ProcessKind, Trace, TrackKind
from ...model.builder import TraceBuilder
from ...model.clock import LOGICAL_ENTRY_CLOCK
from ...model.memory import add_live_bytes_series, live_bytes
from ...numbers import to_int64
from .expansion import Budget, short_text, text_size
from .frames import StackTable, text_of
from .segments import CLOSE, OPEN, DumpSegment, SegmentEvent, SegmentReplay

US = 1_000   # ns per µs
IGNORED = ("snapshot",)
ALLOCATED_STATES = ("active_allocated", "active_pending_free")


class SnapshotBuilder:
    """Fills one :class:`Trace` from a snapshot document (see the module docstring)."""

    def __init__(self, document: dict[str, Any], budget: Budget | None = None) -> None:
        self.document = document
        self.budget = budget   # text the shared objects may expand to (memo amplification)
        self.trace = TraceBuilder(Metadata(source_format="torch-snapshot", framework="PyTorch",
                                    clock="unix epoch"))
        self.stacks = StackTable(budget)
        self.skipped: Counter[str] = Counter()
        self.malformed_at: str | None = None   # the first malformed item, for the example
        self._allocator_tracks: dict[str, int] = {}
        self.logical = False   # times are entry indexes (no time_us anywhere)

    def build(self) -> Trace:
        device_traces = self._list("device_traces", self.document)
        # torch < ~2.1 records no time_us at all: the entries' order is all there is
        self.logical = bool(device_traces) and not any(
            isinstance(e, dict) and e.get("time_us") is not None
            for entries in device_traces if isinstance(entries, list) for e in entries)
        if self.logical and any(isinstance(entries, list) and entries
                                for entries in device_traces):
            self.trace.metadata.clock = LOGICAL_ENTRY_CLOCK
        for device_index, entries in enumerate(device_traces):
            self._replay(f"cuda:{device_index}", entries)
        self._annotations(self._list("external_annotations", self.document))
        self._counters()
        settings = self.document.get("allocator_settings")
        if isinstance(settings, dict):
            if self.budget is not None:   # (writers print the settings in full)
                text_size(settings, self.budget, "$.allocator_settings")
            if not _json_like(settings):   # tuples, bytes, non-text keys, deep: as text
                self._malformed("$.allocator_settings")
                settings = {"text": short_text(settings, 4096)}
            self.trace.metadata.attributes["allocator_settings"] = settings
        self._report()
        return self.trace

    # -- the history ----------------------------------------------------------------------

    def _malformed(self, where: str) -> None:
        self.skipped["malformed"] += 1
        self.malformed_at = self.malformed_at or where

    def _list(self, key: str, parent: Any, where: str = "$") -> list[Any]:
        """``parent[key]`` as a list (missing or null: empty; any other value: malformed)."""
        value = parent.get(key) if isinstance(parent, dict) else None
        if value is None or isinstance(value, list):
            return value or []
        self._malformed(f"{where}.{key}")
        return []

    def _replay(self, device: str, entries: Any) -> None:
        open_blocks: dict[int, MemoryBlock] = {}
        segment_events: list[SegmentEvent] = []
        last_ns: int | None = None
        where = f"$.device_traces[{device.split(':')[1]}]"
        if not isinstance(entries, list):
            if entries is not None:
                self._malformed(where)
            entries = []
        for index, entry in enumerate(entries):
            try:
                if not isinstance(entry, dict):
                    raise _Malformed
                action = entry.get("action")
                addr, size = _number(entry.get("addr", 0)), _size(entry.get("size", 0))
                stream = _int(entry.get("stream", 0))
                if entry.get("device_free") is not None:
                    _int(entry["device_free"])
                ns = index if self.logical else _time_ns(entry)
            except _Malformed:
                self._malformed(f"{where}[{index}]")
                continue
            if ns is None:
                ns = last_ns
                self.skipped["no_time"] += 1
            else:   # (in range once: a block's free is set on the trace's row later)
                ns = self.trace.time(ns)
            last_ns = ns
            if action == "alloc":
                if addr in open_blocks:   # the history lost a free: close the old block here
                    self.skipped["realloc"] += 1
                    open_blocks[addr].free_ns = ns
                stack, site = self.stacks(entry.get("frames"))
                block = MemoryBlock(addr, size, ns, None, device=device, name=site,
                                    category="allocation",
                                    args={"stream": stream, "site": site, "stack": stack})
                open_blocks[addr] = self._added(block)
            elif action == "free_requested":
                found = open_blocks.get(addr)
                if found is None:
                    self.skipped["free_before_history"] += 1
                    found = self._before_history(device, entry, addr, size, stream,
                                                 open_blocks)
                found.args["free_requested_ns"] = ns
            elif action == "free_completed":
                found = open_blocks.pop(addr, None)
                if found is None:
                    self.skipped["free_before_history"] += 1
                    found = self._before_history(device, entry, addr, size, stream, {})
                found.free_ns = ns
            elif action in OPEN or action in CLOSE:
                segment_events.append(SegmentEvent(ns, action, addr, size, stream))
            elif action == "oom":
                self._oom(device, entry, ns, size, stream)
            elif action in IGNORED:
                continue
            else:
                self.skipped[f"action:{text_of(action)}"] += 1
        requested_only = sum("free_requested_ns" in b.args for b in open_blocks.values())
        self.skipped["free_never_completed"] += requested_only
        self._state_at_dump(device, open_blocks, segment_events)

    def _before_history(self, device: str, entry: dict[str, Any], addr: int, size: int,
                        stream: int, open_blocks: dict[int, MemoryBlock]) -> MemoryBlock:
        """A block whose alloc fell out of the history: alive since before it started."""
        stack, site = self.stacks(entry.get("frames"))
        block = MemoryBlock(addr, size, None, None, device=device, name=site,
                            category="allocation",
                            args={"stream": stream, "site": site, "stack": stack})
        found = open_blocks[addr] = self._added(block)
        return found

    def _added(self, block: MemoryBlock) -> MemoryBlock:
        """``block`` added, as the trace holds it (freed there later); one the builder left
        out stays this record, whose later changes reach no trace."""
        row = self.trace.add_memory_block(block)
        return block if row is None else self.trace.memory[row]

    def _oom(self, device: str, entry: dict[str, Any], ns: int | None, size: int,
             stream: int) -> None:
        track = self._allocator_track(device)
        self.trace.add_instant(track, ns or 0, "out of memory", "oom", {
            "requested bytes": size if "size" in entry else None,   # (unknown: not 0)
            "device free bytes": entry.get("device_free"), "stream": stream,
            "device": device})

    def _state_at_dump(self, device: str, open_blocks: dict[int, MemoryBlock],
                       segment_events: list[SegmentEvent]) -> None:
        """Allocated blocks alive at dump time that the history never saw; the reservations,
        from the segment events and the dump-time segments."""
        device_index = int(device.split(":")[1])
        dump: list[DumpSegment] = []
        for index, seg in enumerate(self._list("segments", self.document)):
            try:
                if not isinstance(seg, dict):
                    raise _Malformed
                if _int(seg.get("device", 0)) != device_index:
                    continue
                address = _number(seg.get("address", 0))
                total = _size(seg.get("total_size", 0))
                stream = _int(seg.get("stream", 0))
            except _Malformed:
                if device_index == 0:   # (counted once, not once per device)
                    self._malformed(f"$.segments[{index}]")
                continue
            rounded = seg.get("allocated_size")   # (torch's own sum of its block sizes)
            dump.append(DumpSegment(address, total, seg.get("is_expandable") is True, stream, {
                "stream": stream, "allocated_size": rounded if type(rounded) is int
                and 0 <= rounded < 1 << 63 else None,
                "segment_type": text_of(seg.get("segment_type", "")),
                "pool": _pool_id(seg.get("segment_pool_id", ""))}))
            # torch < 2.1 wrote no block addresses: the blocks tile their segment in order
            next_address = address
            for number, b in enumerate(self._list("blocks", seg, f"$.segments[{index}]")):
                try:
                    if not isinstance(b, dict):
                        raise _Malformed
                    block_size = _size(b.get("size", 0))
                    addr = _number(b.get("address", next_address))
                    next_address = addr + block_size
                    # requested_size: what the history's alloc entries record as size
                    size = _size(b.get("requested_size", block_size))
                except _Malformed:
                    self._malformed(f"$.segments[{index}].blocks[{number}]")
                    continue
                if b.get("state") in ALLOCATED_STATES and addr not in open_blocks:
                    self.skipped["alloc_before_history"] += 1
                    stack, site = self.stacks(b.get("frames") or _legacy_frames(b))
                    block = MemoryBlock(addr, size, None, None, device=device,
                                        name=site, category="allocation",
                                        args={"stream": stream, "site": site,
                                              "stack": stack, "block_size": block_size})
                    self.trace.add_memory_block(block)
        replay = SegmentReplay(self.trace, device)
        replay.run(segment_events, dump)
        self.skipped["segment_before_history"] += replay.before_history
        self.skipped["segment_free_before_history"] += replay.freed_before_history
        self.skipped["realloc"] += replay.lost_closes
        self.skipped["pool_from_size"] += replay.pools_from_size

    # -- what goes on the timeline --------------------------------------------------------

    def _allocator_track(self, device: str) -> int:
        track = self._allocator_tracks.get(device)
        if track is None:
            process = self.trace.add_process(  # (Perfetto shows the labels beside the name)
                f"{device} caching allocator", kind=ProcessKind.SYNTHETIC,
                labels=["order only: 1 ns = 1 trace entry"] if self.logical else None)
            track = self.trace.add_track("allocator events", process=process,
                                         kind=TrackKind.SYNTHETIC)
            self._allocator_tracks[device] = track
        return track

    def _annotations(self, annotations: list[Any]) -> None:
        """``record_function`` ranges the allocator saw (START/END pairs) as slices."""
        open_at: dict[tuple[Any, str], list[int]] = {}
        for index, item in enumerate(annotations):
            try:
                if not isinstance(item, dict):
                    raise _Malformed
                key = (_int(item.get("device", 0)), text_of(item.get("name", "")))
                ns = _time_ns(item)
            except _Malformed:
                self._malformed(f"$.external_annotations[{index}]")
                continue
            if ns is None:
                self.skipped["annotation_without_time"] += 1
            elif item.get("stage") == "START":
                open_at.setdefault(key, []).append(ns)
            elif open_at.get(key) and open_at[key][-1] <= ns:
                start = open_at[key].pop()
                track = self._annotation_track(f"cuda:{key[0]}")
                self.trace.add_interval(track, start, ns, key[1], "user_annotation")
            else:
                self.skipped["annotation_unpaired"] += 1
        self.skipped["annotation_unpaired"] += sum(len(v) for v in open_at.values())

    def _annotation_track(self, device: str) -> int:
        name = "annotations"
        process = self.trace.tracks[self._allocator_track(device)].process
        for track in self.trace.tracks_of(process):
            if track.name == name:
                return track.id
        return self.trace.add_track(name, process=process, kind=TrackKind.SYNTHETIC,
                                    sort_index=-1)

    def _counters(self) -> None:
        """``allocated`` (live blocks) and ``reserved`` (live segments) bytes per device."""
        devices = dict.fromkeys(b.device for b in self.trace.memory + self.trace.reservations)
        times = [t for b in self.trace.memory + self.trace.reservations
                 for t in (b.alloc_ns, b.free_ns) if t is not None]
        start = min(times, default=0)
        for device in devices:
            process = self.trace.tracks[self._allocator_track(device)].process
            for label, blocks in (("allocated", self.trace.memory),
                                  ("reserved", self.trace.reservations)):
                mine = [b for b in blocks if b.device == device]
                curve = live_bytes(mine, start=start)
                track = self.trace.add_track(
                    f"{device} {label} bytes", process=process, kind=TrackKind.COUNTER,
                    unit="bytes", description=f"bytes {label} by the CUDA caching allocator")
                add_live_bytes_series(self.trace, track, curve)

    def _report(self) -> None:
        diags, n = self.trace.diagnostics, self.skipped
        n["malformed_frames"] += self.stacks.malformed
        notes = ("alloc_before_history", "free_before_history", "segment_before_history",
                 "segment_free_before_history", "pool_from_size", "realloc",
                 "free_never_completed", "no_time",
                 "annotation_without_time", "annotation_unpaired", "malformed_frames", "malformed")
        for key in notes:   # kinds and texts: traceconv/model/diagnostic_codes.py
            if n[key]:
                diags.add(f"torch_snapshot.{key}", count=n[key],
                          example=self.malformed_at if key == "malformed" else None)
        for key, count in n.items():
            if key.startswith("action:"):
                diags.add("torch_snapshot.unknown_action", count=count,
                          example=key.removeprefix("action:"))


def _legacy_frames(block: dict[str, Any]) -> Any:
    """The stack of a torch < 2.1 block: its latest ``history`` entry's frames (None if
    there is none).

    >>> _legacy_frames({"history": [{"frames": [1]}, {"frames": [2]}]})
    [2]
    """
    history = block.get("history")
    last = history[-1] if isinstance(history, list) and history else None
    return last.get("frames") if isinstance(last, dict) else None


class _Malformed(Exception):
    """An item of the snapshot with the wrong shape (the caller counts and skips it)."""


def _number(value: Any) -> int:
    """An address, size or time: an int (or a whole float) of any size, which the trace
    builder judges as it judges every reader's (past int64: the block left out, the time
    moved, each counted); what is no number is :class:`_Malformed`.

    >>> _number(4096), _number(2.0), _number(2**70) == 2**70
    (4096, 2, True)
    >>> _number("12")
    Traceback (most recent call last):
    traceconv.formats.torch_snapshot.to_trace._Malformed
    """
    if type(value) is bool or not isinstance(value, (int, float)):
        raise _Malformed
    try:
        return int(value)
    except (OverflowError, ValueError):   # inf, nan
        raise _Malformed from None


def _int(value: Any) -> int:
    """A stream or device number: :func:`_number` within int64, else :class:`_Malformed`
    (an id, no quantity the builder judges).

    >>> _int(7), _int(1.0)
    (7, 1)
    """
    try:
        return to_int64(_number(value))
    except ValueError:   # NumberError: beyond int64
        raise _Malformed from None


def _json_like(value: Any, max_depth: int = 64) -> bool:
    """Whether ``value`` is what JSON can hold (text keys; no tuples, bytes or sets), nested
    at most ``max_depth`` levels (writers recurse into it). Iterative: nesting costs no stack.

    >>> _json_like({"a": [1, 2.5, None, {"b": True}]}), _json_like({(1,): None})
    (True, False)
    >>> deep = []
    >>> for _ in range(100):
    ...     deep = [deep]
    >>> _json_like(deep)
    False
    >>> shared = [1]; _json_like([shared, shared])
    False
    """
    pending = [(value, 0)]
    seen: set[int] = set()   # containers met: one met twice is shared (a memo DAG), which a
    while pending:           # writer would expand, maybe 2**40 times: not JSON-like
        item, depth = pending.pop()
        if depth > max_depth:
            return False
        if isinstance(item, dict | list):
            if id(item) in seen:
                return False
            seen.add(id(item))
        if isinstance(item, dict):
            if not all(type(k) is str for k in item):
                return False
            pending.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            pending.extend((v, depth + 1) for v in item)
        elif not isinstance(item, (str, int, float, bool, type(None))):
            return False
    return True


def _size(value: Any) -> int:
    size = _number(value)
    if size < 0:
        raise _Malformed
    return size


def _time_ns(entry: dict[str, Any]) -> int | None:
    value = entry.get("time_us")
    if value is None:
        return None
    return _number(value) * US


def _pool_id(value: Any) -> Any:
    """A segment's memory pool id as JSON holds it: torch's pair of ints (``(0, 0)``, the
    default pool) as a list, anything else as text (never a Python repr in an output).

    >>> _pool_id((1, 2)), _pool_id("x"), _pool_id((1, "a"))
    ([1, 2], 'x', "(1, 'a')")
    """
    if isinstance(value, tuple | list) and len(value) <= 8 and all(
            type(v) is int and -(1 << 63) <= v < 1 << 63 for v in value):
        return list(value)
    return text_of(value)
