"""From a snapshot document (plain dicts and lists) to the model.

``device_traces[d]`` is the allocator's history for device ``d``, oldest first; its actions:

* ``segment_alloc`` / ``segment_free`` (``segment_map`` / ``segment_unmap`` for expandable
  segments): memory reserved from / returned to the driver -> :attr:`Trace.reservations`;
* ``alloc``, then ``free_requested`` (the tensor died) and ``free_completed`` (the block is
  reusable, after the streams that used it are done) -> one :class:`MemoryBlock`, freed at
  ``free_completed``, with ``free_requested_ns`` in its args;
* ``oom`` -> an instant; ``snapshot`` markers carry nothing to draw.

``segments`` is the state at dump time: segments and allocated blocks that the history
never saw (it keeps only the last ``max_entries``) become reservations / blocks alive since
before the recording.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...analysis.memory import live_bytes
from ...model import MemoryBlock, Metadata, ProcessKind, Trace, TrackKind
from .frames import StackTable

US = 1_000   # ns per µs
SEGMENT_OPEN = ("segment_alloc", "segment_map")
SEGMENT_CLOSE = ("segment_free", "segment_unmap")
IGNORED = ("snapshot",)
ALLOCATED_STATES = ("active_allocated", "active_pending_free")


class SnapshotBuilder:
    """Fills one :class:`Trace` from a snapshot document (see the module docstring)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.document = document
        self.trace = Trace(Metadata(source_format="torch-snapshot", framework="PyTorch",
                                    clock="unix epoch"))
        self.stacks = StackTable()
        self.skipped: Counter[str] = Counter()
        self._allocator_tracks: dict[str, int] = {}

    def build(self) -> Trace:
        traces = self.document.get("device_traces") or []
        for device_index, entries in enumerate(traces):
            self._replay(f"cuda:{device_index}", entries or [])
        self._annotations(self.document.get("external_annotations") or [])
        self._counters()
        self._report()
        settings = self.document.get("allocator_settings")
        if isinstance(settings, dict):
            self.trace.metadata.attributes["allocator_settings"] = settings
        return self.trace

    # -- the history ----------------------------------------------------------------------

    def _replay(self, device: str, entries: list[dict[str, Any]]) -> None:
        open_blocks: dict[int, MemoryBlock] = {}
        open_segments: dict[int, MemoryBlock] = {}
        last_ns: int | None = None
        for entry in entries:
            action = entry.get("action")
            addr, size = int(entry.get("addr", 0)), int(entry.get("size", 0))
            ns = _time_ns(entry)
            if ns is None:
                ns = last_ns
                self.skipped["no_time"] += 1
            last_ns = ns
            if action == "alloc":
                if addr in open_blocks:   # the history lost a free: close the old block here
                    self.skipped["realloc"] += 1
                    open_blocks[addr].free_ns = ns
                stack, site = self.stacks(entry.get("frames"))
                block = MemoryBlock(addr, size, ns, None, device=device, name=site,
                                    category="allocation",
                                    args={"stream": entry.get("stream", 0), "site": site,
                                          "stack": stack})
                open_blocks[addr] = self.trace.memory[self.trace.add_memory_block(block)]
            elif action == "free_requested":
                found = open_blocks.get(addr)
                if found is None:
                    self.skipped["free_before_history"] += 1
                    found = self._before_history(device, entry, addr, size, open_blocks)
                found.args["free_requested_ns"] = ns
            elif action == "free_completed":
                found = open_blocks.pop(addr, None)
                if found is None:
                    self.skipped["free_before_history"] += 1
                    found = self._before_history(device, entry, addr, size, {})
                found.free_ns = ns
            elif action in SEGMENT_OPEN:
                segment = MemoryBlock(addr, size, ns, None, device=device,
                                      name=f"segment {addr:#x}", category="segment",
                                      args={"stream": entry.get("stream", 0)})
                self.trace.add_reservation(segment)
                open_segments[addr] = segment
            elif action in SEGMENT_CLOSE:
                closed: MemoryBlock | None = open_segments.pop(addr, None)
                if closed is None:
                    self.skipped["segment_free_before_history"] += 1
                    closed = MemoryBlock(addr, size, None, None, device=device,
                                         name=f"segment {addr:#x}", category="segment")
                    self.trace.add_reservation(closed)
                closed.free_ns = ns
            elif action == "oom":
                self._oom(device, entry, ns)
            elif action in IGNORED:
                continue
            else:
                self.skipped[f"action:{action}"] += 1
        requested_only = sum("free_requested_ns" in b.args for b in open_blocks.values())
        self.skipped["free_never_completed"] += requested_only
        self._state_at_dump(device, open_blocks, open_segments)

    def _before_history(self, device: str, entry: dict[str, Any], addr: int, size: int,
                        open_blocks: dict[int, MemoryBlock]) -> MemoryBlock:
        """A block whose alloc fell out of the history: alive since before it started."""
        stack, site = self.stacks(entry.get("frames"))
        block = MemoryBlock(addr, size, None, None, device=device, name=site,
                            category="allocation",
                            args={"stream": entry.get("stream", 0), "site": site,
                                  "stack": stack})
        self.trace.add_memory_block(block)
        open_blocks[addr] = block
        return block

    def _oom(self, device: str, entry: dict[str, Any], ns: int | None) -> None:
        track = self._allocator_track(device)
        self.trace.add_instant(track, ns or 0, "out of memory", "oom", {
            "requested bytes": int(entry.get("size", 0)),
            "device free bytes": entry.get("device_free"),
            "stream": entry.get("stream", 0)})

    def _state_at_dump(self, device: str, open_blocks: dict[int, MemoryBlock],
                       open_segments: dict[int, MemoryBlock]) -> None:
        """Segments and allocated blocks alive at dump time that the history never saw."""
        device_index = int(device.split(":")[1])
        for seg in self.document.get("segments") or []:
            if int(seg.get("device", 0)) != device_index:
                continue
            address = int(seg.get("address", 0))
            segment = open_segments.get(address)
            if segment is None:
                self.skipped["segment_before_history"] += 1
                segment = MemoryBlock(address, int(seg.get("total_size", 0)), None, None,
                                      device=device, name=f"segment {address:#x}",
                                      category="segment")
                self.trace.add_reservation(segment)
            segment.args.update({"stream": seg.get("stream", 0),
                                 "segment_type": seg.get("segment_type", ""),
                                 "pool": str(seg.get("segment_pool_id", ""))})
            for b in seg.get("blocks") or []:
                addr = int(b.get("address", 0))
                if b.get("state") in ALLOCATED_STATES and addr not in open_blocks:
                    self.skipped["alloc_before_history"] += 1
                    stack, site = self.stacks(b.get("frames"))
                    # requested_size: what the history's alloc entries record as size
                    size = int(b.get("requested_size", b.get("size", 0)))
                    block = MemoryBlock(addr, size, None, None, device=device,
                                        name=site, category="allocation",
                                        args={"stream": seg.get("stream", 0), "site": site,
                                              "stack": stack,
                                              "block_size": int(b.get("size", 0))})
                    self.trace.add_memory_block(block)

    # -- what goes on the timeline --------------------------------------------------------

    def _allocator_track(self, device: str) -> int:
        track = self._allocator_tracks.get(device)
        if track is None:
            process = self.trace.add_process(f"{device} caching allocator",
                                             kind=ProcessKind.SYNTHETIC)
            track = self.trace.add_track("allocator events", process=process,
                                         kind=TrackKind.SYNTHETIC)
            self._allocator_tracks[device] = track
        return track

    def _annotations(self, annotations: list[dict[str, Any]]) -> None:
        """``record_function`` ranges the allocator saw (START/END pairs) as slices."""
        open_at: dict[tuple[Any, str], list[int]] = {}
        for item in annotations:
            key = (item.get("device", 0), str(item.get("name", "")))
            ns = _time_ns(item)
            if ns is None:
                self.skipped["annotation_without_time"] += 1
            elif item.get("stage") == "START":
                open_at.setdefault(key, []).append(ns)
            elif open_at.get(key):
                start = open_at[key].pop()
                track = self._annotation_track(f"cuda:{key[0]}")
                self.trace.add_slice(track, start, ns - start, key[1], "user_annotation")
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
                self.trace.add_counter_series(track, curve.times, curve.bytes)

    def _report(self) -> None:
        diags, n = self.trace.diagnostics, self.skipped
        notes = {
            "alloc_before_history": ("allocated blocks alive at dump time whose alloc is "
                                     "older than the recorded history (alloc time unknown)",
                                     "guessed"),
            "free_before_history": ("frees of blocks allocated before the recorded history "
                                    "(alloc time unknown)", "guessed"),
            "segment_before_history": ("segments reserved before the recorded history "
                                       "(reserve time unknown)", "guessed"),
            "segment_free_before_history": ("segment frees whose reserve is older than the "
                                            "recorded history", "guessed"),
            "realloc": ("allocs at an address still in use (a free was lost): the older "
                        "block is closed there", "repaired"),
            "free_never_completed": ("blocks whose free was requested but not completed "
                                     "at dump time (drawn alive to the end)", "note"),
            "no_time": ("entries without time_us: placed at the previous entry's time",
                        "guessed"),
            "annotation_without_time": ("external annotations without time_us", "dropped"),
            "annotation_unpaired": ("external annotation START/END without its partner",
                                    "dropped"),
        }
        for key, (message, kind) in notes.items():
            if n[key]:
                diags.add(f"torch_snapshot.{key}", message, kind=kind,  # type: ignore[arg-type]
                          count=n[key])
        for key, count in n.items():
            if key.startswith("action:"):
                diags.add("torch_snapshot.unknown_action", "trace entries with an action "
                          "traceconv does not know", kind="dropped", count=count,
                          example=key.removeprefix("action:"))


def _time_ns(entry: dict[str, Any]) -> int | None:
    value = entry.get("time_us")
    return None if value is None else int(value) * US
