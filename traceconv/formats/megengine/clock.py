"""Seconds → ns, and the per-comp-node shift that puts device times after their dispatch.

MegEngine times device work from an event recorded at the first execution after compile
(per comp node) and host work from the profiler's construction: the two clocks share no
origin, and after N runs the device clock is N-1 iterations ahead. To show launches as
causal, each comp node's times are shifted by the smallest offset that starts no opr on the
device before the host started dispatching it (a launch latency of 0 for the tightest
opr). Relative times within a clock stay exact; the raw seconds stay in op-node attributes.
"""

from __future__ import annotations

import math

from ...numbers import scaled_int
from .schema import StaticProfileRecords

PROGRAM_STEP_NS = 1_000
"""One opr-sequence step on the synthetic clock of documents without timing (1 µs)."""


def seconds_to_ns(seconds: float) -> int:
    """Source seconds → integer nanoseconds (rounded, so µs timers stay exact).

    >>> seconds_to_ns(0.0854199999999999)
    85420000
    """
    return scaled_int(seconds, 1e9)


def device_offsets(doc: StaticProfileRecords) -> dict[str, int]:
    """ns to add to each comp node's times (comp nodes without host-timed oprs: none).

    >>> import msgspec
    >>> doc = msgspec.convert({
    ...     "graph_exec": {"comp_seq": ["1"], "operator": {}},
    ...     "profiler": {"device": {"1": {"gpu0": {"start": 0.5, "kern": 0.5, "end": 0.7}}},
    ...                  "host": {"1": {"main": {"start": 0.75, "kern": -1, "end": 0.8}}}}},
    ...     StaticProfileRecords)
    >>> device_offsets(doc)
    {'gpu0': 250000000}
    """
    offsets: dict[str, int] = {}
    for opr_id, places in doc.profiler.device.items():
        hosts = [t.start for t in doc.profiler.host.get(opr_id, {}).values()
                 if math.isfinite(t.start)]
        if not hosts:
            continue
        dispatched = seconds_to_ns(min(hosts))
        for comp_node, t in places.items():
            if math.isfinite(t.start):
                gap = dispatched - seconds_to_ns(t.start)
                offsets[comp_node] = max(offsets.get(comp_node, gap), gap)
    return offsets
