"""The ranks of one job side by side: each rank's memory at its moment that matters, the
rank closest to running out first, and the sites whose bytes differ between ranks.

Each rank's answer is :func:`~traceconv.analysis.memory_moment.memory_report`. A rank
that ran out of memory comes first; then the ranks by allocated bytes at their moment,
largest first (without the device's capacity in a snapshot, the most allocated is the
nearest to its limit).
"""

from __future__ import annotations

from typing import Any

from .memory_moment import SCHEMA


def memory_ranks(reports: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """The ``traceconv memory --ranks --json`` object of one report per rank.

    >>> def report(kind, *sites):
    ...     rows = [{"site": s, "bytes": b, "blocks": 1, "share": 0.0} for s, b in sites]
    ...     return {"devices": [{"device": "cuda:0", "sites": rows, "reserved_bytes": 64,
    ...             "allocated_bytes": sum(b for _, b in sites),
    ...             "fragmentation_bytes": 64 - sum(b for _, b in sites),
    ...             "moment": {"kind": kind}}]}
    >>> out = memory_ranks([report("peak", ("a", 10)), report("oom", ("a", 10), ("b", 5))],
    ...                    ["r0", "r1"])
    >>> [(r["rank"], r["oom"], r["allocated_bytes"]) for r in out["ranks"]]
    [('r1', True, 15), ('r0', False, 10)]
    >>> out["differing_sites"]
    [{'site': 'b', 'bytes': {'r0': 0, 'r1': 5}}]
    """
    rows = [_row(name, device) for name, report in zip(names, reports, strict=True)
            for device in report["devices"]]
    rows.sort(key=lambda r: (not r["oom"], -r["allocated_bytes"], r["rank"], r["device"]))
    return {"schema": SCHEMA, "ranks": rows,
            "differing_sites": _differing_sites(reports, names)}


def _row(name: str, device: dict[str, Any]) -> dict[str, Any]:
    return {"rank": name, "device": device["device"], "oom": device["moment"].get("kind") == "oom",
            "moment": device["moment"].get("kind"), "allocated_bytes": device["allocated_bytes"],
            "reserved_bytes": device.get("reserved_bytes"),
            "fragmentation_bytes": device.get("fragmentation_bytes")}


def _differing_sites(reports: list[dict[str, Any]], names: list[str]) -> list[dict[str, Any]]:
    """Sites whose live bytes at the moment are not the same on every rank (all devices of
    a rank together), the widest spread first."""
    per_rank = []
    for report in reports:
        held: dict[str, int] = {}
        for device in report["devices"]:
            for site in device["sites"]:
                held[site["site"]] = held.get(site["site"], 0) + site["bytes"]
        per_rank.append(held)
    out: list[tuple[int, dict[str, Any]]] = []
    for site in sorted(set().union(*per_rank)):
        held_by = {name: held.get(site, 0) for name, held in zip(names, per_rank, strict=True)}
        spread = max(held_by.values()) - min(held_by.values())
        if spread:
            out.append((spread, {"site": site, "bytes": held_by}))
    out.sort(key=lambda pair: -pair[0])   # (stable: sites of one spread stay in name order)
    return [row for _, row in out]
