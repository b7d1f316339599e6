"""Device descriptions as profilers write them → :class:`~traceconv.model.DeviceInfo`.

Kineto's and Paddle's Chrome exports both write ``deviceProperties``: a list of objects
with ``id``, ``name``, ``totalGlobalMem``, ``computeMajor``, ``computeMinor``; Paddle's
protobuf has the same fields in snake case (``total_global_memory``, ``compute_major``).
"""

from __future__ import annotations

from typing import Any

from ..model import DeviceInfo

_KEYS = {"memory_bytes": ("totalGlobalMem", "total_global_memory"),
         "compute_major": ("computeMajor", "compute_major"),
         "compute_minor": ("computeMinor", "compute_minor")}


def _int(value: Any) -> int | None:
    """An integer field (Paddle's protobuf reader keeps numbers as text)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdecimal():
        return int(value)
    return None


def device_infos(entries: Any) -> list[DeviceInfo]:
    """The devices of a ``deviceProperties`` list (entries that are not objects skipped).

    >>> device_infos([{"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85, "computeMajor": 9,
    ...                "computeMinor": 0}, "junk"])
    [DeviceInfo(id=0, name='NVIDIA H100', memory_bytes=85, compute_major=9, compute_minor=0)]
    """
    if not isinstance(entries, list):
        return []
    out = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        ident, name = entry.get("id"), entry.get("name")
        numbers = {field: next((n for key in keys if (n := _int(entry.get(key))) is not None),
                               None) for field, keys in _KEYS.items()}
        out.append(DeviceInfo(ident if isinstance(ident, int | str) else None,
                              name if isinstance(name, str) else None, **numbers))
    return out
