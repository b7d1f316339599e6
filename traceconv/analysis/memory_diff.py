"""How the memory at the moment that matters changed between two runs, by site.

Each run's answer is :func:`~traceconv.analysis.memory_moment.memory_report`; devices are
matched by name. A site is *new* (only after), *gone* (only before), *grown* or *shrunk*;
the site changes sum exactly to the change of allocated bytes, because each run's sites
sum exactly to its allocated bytes.
"""

from __future__ import annotations

from typing import Any

from ..numbers import int64_total
from .memory_moment import BEYOND_INT64, SCHEMA


def memory_diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """The ``traceconv memory A B --json`` object of two :func:`memory_report` answers.

    >>> def report(*sites):
    ...     rows = [{"site": s, "bytes": b, "blocks": 1, "share": 0.0} for s, b in sites]
    ...     return {"devices": [{"device": "cuda:0", "sites": rows, "reserved_bytes": None,
    ...             "allocated_bytes": sum(b for _, b in sites), "moment": {}}]}
    >>> device = memory_diff(report(("a", 10), ("b", 5)), report(("a", 4), ("c", 9)))[
    ...     "devices"][0]
    >>> device["change_bytes"], [(s["site"], s["status"], s["change_bytes"])
    ...                          for s in device["sites"]]
    (-2, [('c', 'new', 9), ('a', 'shrunk', -6), ('b', 'gone', -5)])
    """
    old = {d["device"]: d for d in before["devices"]}
    new = {d["device"]: d for d in after["devices"]}
    return {"schema": SCHEMA, "devices": [_device_diff(old.get(name), new.get(name), name)
                                          for name in sorted(old.keys() | new.keys())]}


def _device_diff(old: dict[str, Any] | None, new: dict[str, Any] | None,
                 name: str) -> dict[str, Any]:
    was = {s["site"]: s["bytes"] for s in (old or {}).get("sites", [])}
    now = {s["site"]: s["bytes"] for s in (new or {}).get("sites", [])}
    # totals past int64, at its edge: each side's, and changes past it (near 2**63 both sides)
    beyond = sum((side or {}).get("unknown", {}).get(BEYOND_INT64, 0) for side in (old, new))

    def change(plus: list[int], minus: list[int]) -> int:
        nonlocal beyond
        total, moved = int64_total([*plus, *(-n for n in minus)])
        beyond += moved
        return total

    sites = []
    for site in was.keys() | now.keys():
        a, b = was.get(site, 0), now.get(site, 0)
        if a == b:
            continue
        status = ("new" if site not in was else "gone" if site not in now
                  else "grown" if b > a else "shrunk")
        sites.append({"site": site, "status": status, "before_bytes": a, "after_bytes": b,
                      "change_bytes": change([b], [a])})
    sites.sort(key=lambda s: (-abs(s["change_bytes"]), s["site"]))
    recorded = any(side.get("sites_recorded", True) for side in (old, new) if side)
    total = change(list(now.values()), list(was.values()))
    return {"device": name, "before": _side(old), "after": _side(new),
            "change_bytes": total, "sites": sites, "sites_recorded": recorded,
            "unknown": {BEYOND_INT64: beyond} if beyond else {}}


def _side(device: dict[str, Any] | None) -> dict[str, Any] | None:
    """One run's totals and moment (None: the device is not in that run)."""
    if device is None:
        return None
    return {key: device[key] for key in ("allocated_bytes", "reserved_bytes", "moment")}
