"""JAX / XLA profiles: ``jax.profiler.trace(create_perfetto_trace=True)`` writes
``perfetto_trace.json.gz``, Chrome JSON converted by XLA from its XSpace.

Processes are named after XLA devices (``/device:GPU:0``, ``/device:TPU:0``, ``/host:CPU``)
and events carry no category; device threads are streams (``Stream #14(Compute)``). The
events of a ``/device:`` process run on that device: they get the category ``xla_device``,
so they land on device tracks (and count as device work in ``summary``).
"""

from __future__ import annotations

from typing import Any

from .base import Flavour, ReadContext, hashable, process_name

DEVICE_PREFIX = "/device:"
HOST_PREFIX = "/host:"
DEVICE_CATEGORY = "xla_device"


class Jax(Flavour):
    """XLA's Chrome export: devices by process name, no categories."""

    name = "jax"
    framework = "JAX"
    device_categories = frozenset({DEVICE_CATEGORY})

    def __init__(self) -> None:
        self.device_pids: set[Any] = set()
        self.moved = 0

    @classmethod
    def detect(cls, envelope: dict, events: list) -> bool:
        names = [n for e in events[:200] if (n := process_name(e)) is not None]
        return bool(names) and all(n.startswith((DEVICE_PREFIX, HOST_PREFIX)) for n in names)

    def prepare(self, events: list, context: ReadContext) -> None:
        for e in events:
            name = process_name(e)   # (None for an event that is not an object)
            pid = e.get("pid") if name is not None else None
            if name is not None and name.startswith(DEVICE_PREFIX) and hashable(pid):
                self.device_pids.add(pid)
        if not self.device_pids:
            return
        for e in events:
            if (isinstance(e, dict) and e.get("ph") != "M" and "cat" not in e
                    and hashable(e.get("pid")) and e.get("pid") in self.device_pids):
                e["cat"] = DEVICE_CATEGORY

    def name_process(self, pid: Any, device: bool, meta: dict[str, Any]) -> str:
        name = meta.get("name")
        return str(name) if name else super().name_process(pid, device, meta)

