"""The concepts rules read, computed once per trace, and how to tell whether a trace has them.

A rule names the concepts it needs (:data:`CONCEPTS` keys); the engine asks
:meth:`Context.has` before running it and reports ``not applicable: missing <concept>``
instead of letting the rule guess from absent data.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property
from typing import Any

import numpy as np

from ...model import OpStat, Trace
from ...model.block_table import BlockTable
from ...model.memory import LiveBytes, allocator_series
from ..activity import Activity, Timeline
from ..copy_time import (
    BlockedHostTime,
    DeviceCopyTime,
    blocked_host_time,
    device_copy_time,
    has_copy_calls,
    has_step_time,
)
from ..idle import DeviceIdle, device_idle
from ..memory_moment import device_curves
from ..stated_launches import StatedLaunches, stated_launches

_PAGEABLE = re.compile(r"pageable", re.IGNORECASE)
_MEMORY_KIND = re.compile(r"pageable|pinned|managed", re.IGNORECASE)
_HOST_DEVICE = re.compile(r"^cpu", re.IGNORECASE)


def device_block_rows(table: BlockTable) -> np.ndarray:
    """The numbers of the blocks of ``table`` not on a host device (whose memory has no
    caching allocator).

    >>> from traceconv.model import MemoryBlock
    >>> device_block_rows(BlockTable([MemoryBlock(0, 8, device="CPU"),
    ...                               MemoryBlock(0, 8, device="cuda:0")])).tolist()
    [1]
    """
    return table.rows_where("device", lambda device: not _HOST_DEVICE.match(device or ""))


def _totals_of_reservations(trace: Trace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(times, reserved, allocated) from reservations and memory blocks, device by device
    (host devices left out, as for Kineto's totals).

    >>> from traceconv.model import MemoryBlock
    >>> t = Trace()
    >>> t.reservations.append(MemoryBlock(0, 100, 0, None, device="cuda:0"))
    >>> _ = t.add_memory_block(MemoryBlock(0, 30, 5, 9, device="cuda:0"))
    >>> [a.tolist() for a in _totals_of_reservations(t)]
    [[0, 5, 9], [100, 100, 100], [0, 30, 0]]
    """
    samples: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    devices = dict.fromkeys(r.device for r in trace.reservations
                            if not _HOST_DEVICE.match(r.device or ""))
    for device in devices:
        used, held = device_curves(trace, device)
        times = np.union1d(held.times, used.times)
        samples.append((times, _level_at(held, times), _level_at(used, times)))
    if not samples:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    times, reserved, allocated = (np.concatenate(parts) for parts in zip(*samples, strict=True))
    return times, reserved, allocated


def _level_at(curve: LiveBytes, times: np.ndarray) -> np.ndarray:
    """The step function ``curve`` at ``times`` (0 before its first change)."""
    if not len(curve.times):
        return np.zeros(len(times), np.int64)
    index = np.searchsorted(curve.times, times, side="right") - 1
    return np.where(index >= 0, curve.bytes[np.maximum(index, 0)], 0)


class Context:
    """One trace seen through the concepts of :data:`CONCEPTS`, plus the user's options.

    >>> ctx = Context(Trace()); ctx.has("device work"), ctx.has("memory blocks")
    (False, False)
    """

    def __init__(self, trace: Trace, options: dict[str, Any] | None = None) -> None:
        self.trace = trace
        self.options = dict(options or {})

    @cached_property
    def timeline(self) -> Timeline:
        return Timeline(self.trace)

    @cached_property
    def idle(self) -> list[DeviceIdle]:
        return device_idle(self.timeline)

    @cached_property
    def device_copies(self) -> list[DeviceCopyTime]:
        """Copy time on each device (a timeline's copies, else a statistics table's)."""
        return device_copy_time(self.trace, self.timeline)

    @cached_property
    def blocked_copies(self) -> BlockedHostTime | None:
        """Host time blocked in copy calls that waited for their copy."""
        return blocked_host_time(self.trace, self.timeline)

    @cached_property
    def stated_launches(self) -> list[StatedLaunches]:
        """Kernels and launch calls per run, as a statistics table states them (none where
        the trace has a timeline's kernels: those are judged on the timeline)."""
        if self.timeline.has(Activity.KERNEL):
            return []
        return stated_launches(self.trace.stats)

    def has(self, concept: str) -> bool:
        return CONCEPTS[concept](self)

    def stats(self, *sections: str) -> list[OpStat]:
        """Statistics rows of the named sections (Paddle reports and summaries)."""
        return [s for s in self.trace.stats if s.section in sections]

    @cached_property
    def copy_memory_kinds(self) -> dict[str, np.ndarray]:
        """Copy rows whose name states the host memory kind, split pageable / other."""
        rows = self.timeline.rows(Activity.MEMCPY)
        names = self.timeline.names(rows)
        stated = np.array([bool(_MEMORY_KIND.search(n)) for n in names], dtype=bool)
        pageable = np.array([bool(_PAGEABLE.search(n)) for n in names], dtype=bool)
        return {"stated": rows[stated] if len(rows) else rows,
                "pageable": rows[pageable] if len(rows) else rows}

    @cached_property
    def allocator_totals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(times, reserved bytes, allocated bytes) of the device caching allocator.

        The allocator's running totals (the counter tracks a reader made of them: Kineto's
        ``[memory]`` events state ``Total Reserved`` / ``Total Allocated``; a host allocator
        reserves nothing); without them, a trace that has the allocator's segments
        (:attr:`Trace.reservations`, e.g. an allocator snapshot) gives the live bytes of
        its reservations and of its memory blocks, per device, at every change of either.
        """
        found = allocator_series(self.trace)
        if not len(found[0]) and self.trace.reservations:
            return _totals_of_reservations(self.trace)
        return found

    @cached_property
    def device_capacity(self) -> int | None:
        """Bytes of memory on the (first) device: the ``device_memory`` option, else what the
        source recorded about its devices."""
        if self.options.get("device_memory"):
            return int(self.options["device_memory"])
        sizes = [d.memory_bytes for d in self.trace.metadata.devices
                 if d.memory_bytes is not None and d.memory_bytes > 0]
        return min(sizes) if sizes else None


def _overhead_stats(ctx: Context) -> bool:
    return any(s.name.lower() == "framework overhead" for s in ctx.stats("overhead"))


_LAID_OUT = ("synthetic", "none", "logical")


def _timestamps(ctx: Context) -> bool:
    """Whether the trace's events sit at the times they happened (its clock is a clock)."""
    clock = (ctx.trace.metadata.clock or "").lower()
    return not clock.startswith(_LAID_OUT) and "laid back to back" not in clock


CONCEPTS: dict[str, Callable[[Context], bool]] = {
    "device work": lambda c: bool(len(c.timeline.device_work())),
    "kernels": lambda c: c.timeline.has(Activity.KERNEL),
    "launch links": lambda c: bool((c.timeline.launch_of >= 0).any()),
    # (statistics: a run's kernel rows and kernel-launch call rows, no timeline)
    "launch statistics": lambda c: bool(c.stated_launches),
    "host ops": lambda c: c.timeline.has(Activity.HOST_OP),
    # host ops at the times they ran (not laid back to back by a reader: MIGraphX, MegEngine
    # graphs, logical clocks), so that gaps between them and overlap with the device mean
    # something
    "timed host ops": lambda c: c.timeline.has(Activity.HOST_OP) and _timestamps(c),
    "step markers": lambda c: c.timeline.has_step_markers,
    # (a timeline's copy slices, else the copy rows of a statistics table with device time)
    "device copies": lambda c: bool(c.device_copies),
    "device busy time": lambda c: any(d.busy_ns for d in c.device_copies),
    "copy calls": lambda c: has_copy_calls(c.trace, c.timeline),
    "step time": lambda c: has_step_time(c.trace, c.timeline),
    "copy memory kinds": lambda c: bool(len(c.copy_memory_kinds["stated"])),
    "framework overhead statistics": _overhead_stats,
    "communication": lambda c: c.timeline.has(Activity.COMMUNICATION),
    "data loading": lambda c: c.timeline.has(Activity.DATALOADER),
    "memory blocks": lambda c: bool(c.trace.memory),
    "allocator totals": lambda c: bool(len(c.allocator_totals[0])),
    "device capacity": lambda c: c.device_capacity is not None,
}
