"""The report's memory pane: per device, allocated and reserved bytes over time with the
moment that matters marked (the out-of-memory event, else the first peak of allocated
bytes), the numbers at that moment and the allocation sites live then.

The numbers are :func:`traceconv.analysis.memory_moment.memory_report`'s, the ones
``traceconv memory`` prints; the pane only draws them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..analysis.memory_moment import (
    MOMENTS,
    SINCE_START,
    allocator_stated,
    device_curves,
    memory_report,
    unknown_text,
)
from ..markup import escape
from ..model import Trace
from ..model.memory import LiveBytes
from ..units import format_bytes, format_duration
from .page import table
from .svg import step_curves

MAX_DEVICES = 6
TOP_SITES = 10
PLOT_POINTS = 720   # one per horizontal unit of the plot: more would only weigh the page


def memory_pane(trace: Trace) -> str:
    """The pane's HTML for every device of ``trace``: at most :data:`MAX_DEVICES`, those
that ran out of memory first, then the most allocated.

    >>> import traceconv
    >>> html = memory_pane(traceconv.load("samples/torch/resnet18_train_snapshot.pickle.gz"))
    >>> "the first peak of allocated bytes" in html, "resnet.py:269 _forward_impl" in html
    (True, True)
    """
    report = memory_report(trace)
    devices = sorted(report["devices"], key=lambda d: (d["moment"]["kind"] != "oom",
                                                        -d["allocated_bytes"]))
    shown = devices[:MAX_DEVICES]
    more = (f'<p class="muted">{len(devices) - len(shown)} more devices: '
            "<code>traceconv memory</code> lists all.</p>" if len(devices) > len(shown) else "")
    return "".join(_device(trace, d, report["time_unit"]) for d in shown) + more


def _device(trace: Trace, device: dict[str, Any], unit: str) -> str:
    moment = device["moment"]
    label = "OOM" if moment["kind"] == "oom" else moment["kind"]
    when = moment["since_start"]
    at = "" if when is None else f", {_x_label(unit)(when)} {SINCE_START}"
    head = (f'<h3>{escape(device["device"] or "(no device)")}</h3>'
            f"<p>The moment that matters: {escape(MOMENTS[moment['kind']])}{escape(at)}.</p>")
    return head + _plot(trace, device, unit, label) + _numbers(device) + _sites(device)


def _x_label(unit: str) -> Any:
    """How times on the x axis read: durations, or entries of a history without times."""
    return format_duration if unit == "ns" else (lambda n: f"entry {n:,.0f}")


def _plot(trace: Trace, device: dict[str, Any], unit: str, label: str) -> str:
    """Allocated and reserved over time, the moment marked (no plot without a history)."""
    allocated, reserved = device_curves(trace, device["device"])
    if len(allocated.times) < 2:
        return '<p class="muted">No allocation history: nothing to plot over time.</p>'
    curves = [(name, curve) for name, curve in (("allocated", allocated),
                                                ("reserved", reserved)) if len(curve.times)]
    start = min(int(c.times[0]) for _, c in curves)
    end = max(int(c.times[-1]) for _, c in curves)
    series = [(name, *_envelope(curve, start, end)) for name, curve in curves]
    moment = device["moment"]["time"]
    mark = None if moment is None else (moment, label)
    return step_curves(series, start, mark=mark, x_label=_x_label(unit))


def _envelope(curve: LiveBytes, start: int, end: int) -> tuple[list[int], list[float]]:
    """The curve's points, or beyond :data:`PLOT_POINTS` the highest level of each of as
    many time buckets, placed where that level begins in the bucket (so the peak stays on
    the plot, at its own time: the one the pane's text names), and the curve's last level
    at ``end``.

    >>> curve = LiveBytes(np.arange(2000), np.arange(2000) % 7)
    >>> times, levels = _envelope(curve, 0, 1999)
    >>> len(times), max(levels), times[levels.index(6.0)], times[-1]
    (721, 6.0, 6, 1999)
    """
    if len(curve.times) <= PLOT_POINTS:
        return curve.times.tolist(), curve.bytes.astype(float).tolist()
    edges = np.linspace(start, end, PLOT_POINTS + 1)
    times, levels = curve.times, curve.bytes
    at = np.searchsorted(times, edges, side="right")
    out_t, out_v = [], []
    for k in range(PLOT_POINTS):
        first = max(int(at[k]) - 1, 0)
        peak = first + int(np.argmax(levels[first:max(int(at[k + 1]), first + 1)]))
        out_t.append(max(int(times[peak]), int(edges[k])))
        out_v.append(float(levels[peak]))
    out_t.append(end)
    out_v.append(float(levels[-1]))
    return out_t, out_v


def _numbers(device: dict[str, Any]) -> str:
    moment = device["moment"]
    rows: list[tuple[str, str]] = []
    if moment["kind"] == "oom":
        rows += [("requested", _bytes(moment["requested_bytes"])),
                 ("device free", _bytes(moment["device_free_bytes"]))]
        if "largest_free_fits_request" in moment:
            rows.append(("largest free block fits the request",
                         "yes" if moment["largest_free_fits_request"] else "no"))
    rows.append(("allocated", _bytes(device["allocated_bytes"])))
    if (by_allocator := allocator_stated(device)) is not None:
        stated, before = by_allocator
        rows.append(("allocated, by the allocator's own total", _bytes(stated) + (
            f" ({before:,} B held from before the trace)" if before > 0 else "")))
    if device["allocated_rounded_bytes"] is not None:
        rows.append(("allocated, rounded by the allocator",
                     _bytes(device["allocated_rounded_bytes"])))
    rows += [("reserved", _bytes(device["reserved_bytes"])),
             ("fragmentation (reserved − allocated)", _bytes(device["fragmentation_bytes"]))]
    rows += [(f"unknown: {unknown_text(key)}", f"{count:,}")
             for key, count in device["unknown"].items()]
    return table(["at that moment", ""], rows, [False, True])


def _bytes(value: int | None) -> str:
    return "unknown" if value is None else f"{value:,} B ({format_bytes(value, 4)})"


def _sites(device: dict[str, Any]) -> str:
    """The top sites live at the moment (they sum to allocated), or why there are none."""
    found = device["sites"]
    if not found:
        return '<p class="muted">No block is live at that moment.</p>'
    if not device["sites_recorded"]:
        return ('<p class="muted">This format does not record where blocks were allocated '
                f"({sum(s['blocks'] for s in found):,} live blocks): no sites.</p>")
    rows = [(s["site"], f"{s['bytes']:,}", f"{s['blocks']:,}", f"{s['share']:.1%}")
            for s in found[:TOP_SITES]]
    rest = found[TOP_SITES:]
    if rest:
        rows.append((f"({len(rest):,} more sites)", f"{sum(s['bytes'] for s in rest):,}",
                     f"{sum(s['blocks'] for s in rest):,}",
                     f"{sum(s['share'] for s in rest):.1%}"))
    return ("<h4>Sites live at that moment</h4>"
            + table(["site", "bytes", "blocks", "share"], rows, [False, True, True, True]))
