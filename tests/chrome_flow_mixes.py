"""Seeded random mixes of Chrome JSON flow events and slices, to hold ``check``'s flow
counts against the real trace_processor's.

A mix puts on two threads of one process: ``X`` slices and thread instants (times that are
multiples of 4, overlaps, ties and slices of no length), ``B``/``E`` pairs and strays (each
at a time of its own, 4k + 1: where a B or an E shares its time, the importer's order is not
fixed by the file), v1 flow events ``s``/``t``/``f`` (``bp: "e"`` or not; ids that are
numbers, hex text, text that is not hex, fractions; categories and names left out, empty or
given) at times 4k + 2 or on an X's start, and v2 flows (``bind_id`` with ``flow_in`` /
``flow_out``, both or neither) on ``X`` and ``B`` events and on async ``b``/``n``/``e``
events (times 4k + 3; ids, id2s or none; a pid or none), whose ids meet the v1 flows'.
The counts to compare are read from the trace_processor's ``flow`` table and ``stats``.

>>> events = flow_mix(7)
>>> events == flow_mix(7), {e["ph"] for e in events} <= set("BEXbefinst")
(True, True)
"""

from __future__ import annotations

import random
from typing import Any

V1_IDS: list[Any] = [1, 1, 2, "1", "0x2", "q", 1.5]   # "q" and 1.5: no id to the importer
CATEGORIES: list[Any] = ["c", "c", None, ""]
NAMES: list[Any] = ["n", "n", None]
V2_IDS: list[Any] = [0, 1, 2, "2"]
ASYNC_IDS: list[dict[str, Any]] = [{"id": 5}, {"id": "0x5"}, {"id2": {"local": "5"}},
                                   {"id2": {"global": "5"}}, {"id": 1.5}, {}]
DIRECTIONS = [{"flow_out": True}, {"flow_in": True}, {"flow_in": True, "flow_out": True}, {}]
# trace_processor's stats for the flow events it drops, by the reason ``check`` gives
DROP_STATS = {
    "flow_not_bound": ("flow_no_enclosing_slice",),
    "flow_unpaired": ("flow_step_without_start", "flow_end_without_start"),
    "flow_duplicate_start": ("flow_duplicate_id",),
    "flow_invalid_id": ("flow_invalid_id",),
    "flow_without_direction": ("flow_without_direction",),
}


def flow_mix(seed: int) -> list[dict[str, Any]]:
    """The events of mix ``seed`` (in a shuffled file order)."""
    rng = random.Random(seed)
    events: list[dict[str, Any]] = []
    taken: set[int] = set()
    x_starts = []
    for _ in range(rng.randint(2, 12)):
        ph, tid = rng.choice("XXXBEi"), rng.randint(1, 2)
        if ph in "BE":
            ts = 4 * rng.randint(0, 15) + 1
            while ts in taken:
                ts += 4
            taken.add(ts)
        else:
            ts = 4 * rng.randint(0, 15)
        event: dict[str, Any] = {"ph": ph, "ts": ts, "pid": 1, "tid": tid, "name": f"s{len(events)}"}
        if ph == "X":
            event["dur"] = rng.choice([0, 2, 4, 6, 8, 12, 20, 40])
            x_starts.append(ts)
        if ph in "XB" and rng.random() < 0.3:
            event.update(bind_id=rng.choice(V2_IDS), **rng.choice(DIRECTIONS))
        events.append(event)
    for _ in range(rng.randint(1, 10)):
        ph = rng.choice("sstff")
        ts = rng.choice(x_starts) if x_starts and rng.random() < 0.2 else 4 * rng.randint(0, 15) + 2
        event = {"ph": ph, "ts": ts, "pid": 1, "tid": rng.randint(1, 2), "id": rng.choice(V1_IDS)}
        category, name = rng.choice(CATEGORIES), rng.choice(NAMES)
        event.update({} if category is None else {"cat": category},
                     **({} if name is None else {"name": name}))
        if ph == "f" and rng.random() < 0.5:
            event["bp"] = "e"
        events.append(event)
    for _ in range(rng.choice([0, 0, 1, 3])):   # async slices (a track of their own)
        event = {"ph": rng.choice("bbne"), "ts": 4 * rng.randint(0, 15) + 3, "cat": "a",
                 "name": "async", "tid": 1, "bind_id": rng.choice(V2_IDS),
                 **rng.choice(ASYNC_IDS), **rng.choice(DIRECTIONS)}
        event.update({"pid": 1} if rng.random() < 0.8 else {})
        events.append(event)
    rng.shuffle(events)
    return events


def trace_processor_flows(tp: Any) -> dict[str, int]:
    """The loaded trace's arrows (rows of ``flow``) and its flow events dropped, by the
    reason ``check`` gives (sums of trace_processor's stats)."""
    stats = {r.name: r.value for r in tp.query("select name, sum(value) value from stats "
                                               "where name like 'flow%' group by name")}
    counts = {"flows": tp.query("select count(*) n from flow")[0].n}
    for code, names in DROP_STATS.items():
        counts[code] = sum(stats.get(name) or 0 for name in names)
    return counts


def check_flows(report: Any) -> dict[str, int]:
    """The same counts as ``check`` reports them."""
    warnings = {w["code"]: w["count"] for w in report.warnings}
    return {"flows": report.counts["flows"], **{code: warnings.get(code, 0) for code in DROP_STATS}}
