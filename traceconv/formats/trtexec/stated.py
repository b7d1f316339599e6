"""What trt-engine-explorer's metadata files state about a run and its devices, as the
model's typed fields (:class:`~traceconv.model.StatedRun`, :class:`~traceconv.model.DeviceInfo`).

trtexec prints each latency as ``min, max, mean, median, percentile(...)...`` in ms and the
totals in s; trex keeps the numbers in that order (``"Latency": [min, max, mean, median,
p90, p95, p99]``, older trtexec only p99).
"""

from __future__ import annotations

import re
from typing import Any

from ...model import DeviceInfo, StatedRun
from ...numbers import int64

_MEMORY = re.compile(r"^\s*(\d+)\s*(KiB|MiB|GiB)\s*$")
_MEMORY_UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}


def _ns(value: Any, ns_per_unit: float) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        return None
    return int64(round(value * ns_per_unit)) if abs(value) < 1e12 else None


def stated_run(summary: Any) -> StatedRun:
    """The figures of a ``performance_summary`` section (anything unexpected: not known).

    >>> run = stated_run({"Throughput": 3580.05, "Latency": [0.27, 0.29, 0.277, 0.276],
    ...                   "Total Host Walltime": 3.00052, "Total GPU Compute Time": 2.97533})
    >>> run.walltime_ns, run.device_ns, run.latency_median_ns, run.throughput_per_s
    (3000520000, 2975330000, 276000, 3580.05)
    """
    if not isinstance(summary, dict):
        return StatedRun()
    latency = summary.get("Latency")
    latency = latency[:4] if isinstance(latency, list) else []
    latency += [None] * (4 - len(latency))
    throughput = summary.get("Throughput")
    minimum, maximum, mean, median = (_ns(v, 1e6) for v in latency)
    return StatedRun(
        walltime_ns=_ns(summary.get("Total Host Walltime"), 1e9),
        device_ns=_ns(summary.get("Total GPU Compute Time"), 1e9),
        throughput_per_s=float(throughput) if isinstance(throughput, int | float)
        and _ns(throughput, 1) is not None else None,
        latency_min_ns=minimum, latency_max_ns=maximum, latency_mean_ns=mean,
        latency_median_ns=median)


def selected_device(information: Any) -> list[DeviceInfo]:
    """The device of a ``device_information`` section (trtexec's ``=== Device Information
    ===``): its selected device, capability ``8.6`` and ``Device Global Memory`` in MiB.

    >>> selected_device({"Selected Device": "NVIDIA GeForce RTX 3090", "Compute Capability": 8.6,
    ...                  "Device Global Memory": "24268 MiB"})
    [DeviceInfo(id=None, name='NVIDIA GeForce RTX 3090', memory_bytes=25446842368, compute_major=8, compute_minor=6)]
    """
    if not isinstance(information, dict) or not isinstance(
            name := information.get("Selected Device"), str):
        return []
    ident = information.get("Selected Device ID")
    capability = str(information.get("Compute Capability", ""))
    major, _, minor = capability.partition(".")
    memory = _MEMORY.match(str(information.get("Device Global Memory", "")))
    return [DeviceInfo(
        int(ident) if isinstance(ident, str) and ident.isdecimal() else None, name,
        int(memory[1]) * _MEMORY_UNITS[memory[2]] if memory else None,
        int(major) if major.isdecimal() else None, int(minor) if minor.isdecimal() else None)]


def queried_devices(devices: list[dict[str, Any]]) -> list[DeviceInfo]:
    """The devices of trex's device query (``<engine>.metadata.json``), in its order.

    >>> queried_devices([{"Name": "NVIDIA A100 80GB PCIe", "ComputeCapability": [8, 0],
    ...                   "TotalMemory": 84929216512}])
    [DeviceInfo(id=0, name='NVIDIA A100 80GB PCIe', memory_bytes=84929216512, compute_major=8, compute_minor=0)]
    """
    out = []
    for index, device in enumerate(devices):
        capability = [*(device.get("ComputeCapability") or []), None, None]
        out.append(DeviceInfo(index, device.get("Name"), device.get("TotalMemory"),
                              *(n if isinstance(n, int) else None for n in capability[:2])))
    return out
