"""Small inline SVG plots for the HTML report: a stacked bar, bars per rank, a step curve, a
path strip.

Hand-written SVG (no plotting library, no script): every shape carries a ``<title>`` so the
browser shows the exact number on hover.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..markup import escape
from ..units import format_bytes, format_duration

KIND_COLORS = {"compute": "#4e79a7", "kernel": "#4e79a7", "memcpy": "#f28e2b",
               "communication": "#59a14f", "host": "#e15759", "cpu": "#e15759",
               "idle": "#bab0ac", "other": "#b07aa1", "other work": "#b07aa1", "wait": "#edc948",
               "untraced": "#ff9da7",
               "host (untraced)": "#ff9da7"}
SERIES_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1")


def stacked_bar(parts: Sequence[tuple[str, int]], width: int = 720, height: int = 28) -> str:
    """One horizontal bar split into ``(label, ns)`` parts, with an HTML legend under it.

    >>> html = stacked_bar([("compute", 30), ("idle", 70)])
    >>> html.count("<rect"), "70.0%" in html
    (2, True)
    """
    total = sum(ns for _, ns in parts) or 1
    x = 0.0
    shapes = []
    legend = []
    for i, (label, ns) in enumerate(parts):
        w = width * ns / total
        color = KIND_COLORS.get(label, SERIES_COLORS[i % len(SERIES_COLORS)])
        tip = f"{label}: {format_duration(ns)} ({100 * ns / total:.1f}%)"
        shapes.append(f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="{height}" '
                      f'fill="{color}"><title>{escape(tip)}</title></rect>')
        legend.append(f'<span><i style="background:{color}"></i>{escape(tip)}</span>')
        x += w
    return (f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" '
            f'xmlns="http://www.w3.org/2000/svg">{"".join(shapes)}</svg>'
            f'<div class="legend">{"".join(legend)}</div>')


def rank_bars(ranks: Sequence[tuple[str, Sequence[tuple[str, float]]]], width: int = 720,
              bar: int = 18, label_width: int = 110) -> str:
    """One horizontal bar per ``(rank, parts)`` (``parts``: (label, ns)), all on one scale:
    the longest rank's bar is the full width, so a slow rank's bar sticks out; one legend.

    >>> html = rank_bars([("rank 0", [("compute", 30), ("idle", 10)]), ("rank 1", [("compute", 20)])])
    >>> html.count("<rect"), html.count("<text"), html.count("<span>")
    (3, 2, 2)
    """
    longest = max((sum(ns for _, ns in parts) for _, parts in ranks), default=0) or 1
    plot = width - label_width
    height = (bar + 6) * len(ranks)
    shapes = []
    colors: dict[str, str] = {}
    for row, (rank, parts) in enumerate(ranks):
        y = row * (bar + 6)
        shapes.append(f'<text x="{label_width - 6}" y="{y + bar * 0.75:.1f}" '
                      f'text-anchor="end">{escape(rank)}</text>')
        x = float(label_width)
        for i, (label, ns) in enumerate(parts):
            color = colors.setdefault(label, KIND_COLORS.get(
                label, SERIES_COLORS[i % len(SERIES_COLORS)]))
            w = plot * ns / longest
            if w > 0:
                shapes.append(f'<rect x="{x:.2f}" y="{y}" width="{w:.2f}" height="{bar}" '
                              f'fill="{color}"><title>{escape(rank)}: {escape(label)} '
                              f'{format_duration(ns)}</title></rect>')
            x += w
    legend = "".join(f'<span><i style="background:{c}"></i>{escape(label)}</span>'
                     for label, c in colors.items())
    return (f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" '
            f'xmlns="http://www.w3.org/2000/svg">{"".join(shapes)}</svg>'
            f'<div class="legend">{legend}</div>')


def step_curves(series: Sequence[tuple[str, Sequence[int], Sequence[float]]], origin: int,
                width: int = 720, height: int = 220, mark: tuple[int, str] | None = None,
                x_label: Callable[[float], str] = format_duration) -> str:
    """Step functions (``name, times ns, values bytes``) on shared axes: x = time since
    ``origin`` (written by ``x_label``, a duration by default), y = bytes, the peak of each marked;
    ``mark`` = (time, label) draws a dashed vertical line there (a moment that matters).

    >>> svg = step_curves([("cuda:0", [0, 10, 20], [0.0, 2048.0, 0.0])], 0, mark=(10, "OOM"))
    >>> "peak 2 KiB" in svg, svg.count("<path"), "stroke-dasharray" in svg
    (True, 1, True)
    """
    left, bottom, top, right = 70, 30, 10, 10
    t_max = max((t[-1] for _, t, _ in series if len(t)), default=origin + 1) - origin or 1
    v_max = max((max(v) for _, _, v in series if len(v)), default=1.0) or 1.0
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(t: int) -> float:
        return left + plot_w * (t - origin) / t_max

    def py(v: float) -> float:
        return top + plot_h * (1 - v / v_max)

    parts = [f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" '
             'class="axis"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" class="axis"/>']
    for frac in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{left - 4}" y="{py(v_max * frac) + 4:.1f}" text-anchor="end">'
                     f'{format_bytes(v_max * frac)}</text>')
        anchor = {0.0: "start", 0.5: "middle", 1.0: "end"}[frac]
        parts.append(f'<text x="{px(origin + round(t_max * frac)):.1f}" y="{height - 8}" '
                     f'text-anchor="{anchor}">{x_label(t_max * frac)}</text>')
    if mark is not None:
        x = px(mark[0])
        parts.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" '
                     'stroke="#d62728" stroke-width="1.5" stroke-dasharray="5,3">'
                     f'<title>{escape(mark[1])}</title></line>'
                     f'<text x="{x + 4:.1f}" y="{top + plot_h - 6}" fill="#d62728">'
                     f'{escape(mark[1])}</text>')
    for i, (name, times, values) in enumerate(series):
        if not len(times):
            continue
        color = SERIES_COLORS[i % len(SERIES_COLORS)]
        # a step curve: horizontal to the next time, then vertical to its value
        d = [f"M{px(times[0]):.1f},{py(values[0]):.1f}"]
        for t, v in zip(times[1:], values[1:], strict=True):
            d.append(f"H{px(t):.1f}V{py(v):.1f}")
        d.append(f"H{left + plot_w}")
        peak = max(range(len(values)), key=values.__getitem__)
        parts.append(f'<path d="{"".join(d)}" fill="none" stroke="{color}" stroke-width="1.5">'
                     f'<title>{escape(name)}</title></path>')
        parts.append(f'<circle cx="{px(times[peak]):.1f}" cy="{py(values[peak]):.1f}" r="3" '
                     f'fill="{color}"><title>{escape(name)} peak {format_bytes(values[peak])} at '
                     f'{x_label(times[peak] - origin)}</title></circle>')
        parts.append(f'<text x="{left + 8}" y="{top + 14 + 14 * i}" fill="{color}">'
                     f'{escape(name)}: peak {format_bytes(values[peak])}</text>')
    return (f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" '
            f'xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>')


def path_strip(entries: Sequence[tuple[str, str, int, int]], origin: int, span: int,
               width: int = 720, height: int = 24) -> str:
    """The critical path along time: one rectangle per ``(name, kind, start, dur)``.

    >>> path_strip([("gemm", "kernel", 0, 10)], 0, 20).count("<rect")
    2
    """
    span = span or 1
    shapes = [f'<rect x="0" y="0" width="{width}" height="{height}" fill="#f4f4f4"/>']
    for name, kind, start, dur in _collapse(entries, span / width):
        x = width * (start - origin) / span
        w = max(width * dur / span, 0.3)
        shapes.append(f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="{height}" '
                      f'fill="{KIND_COLORS.get(kind, "#999")}"><title>{escape(name)} ({kind}, '
                      f'{format_duration(dur)})</title></rect>')
    return (f'<svg class="plot" viewBox="0 0 {width} {height}" role="img" '
            f'xmlns="http://www.w3.org/2000/svg">{"".join(shapes)}</svg>')


def _collapse(entries: Sequence[tuple[str, str, int, int]], ns_per_px: float
              ) -> list[tuple[str, str, int, int]]:
    """Runs of back-to-back entries of one kind narrower than a pixel drawn as one shape
    (a long path has more links than the strip has pixels).

    >>> _collapse([("a", "cpu", 0, 1), ("b", "cpu", 1, 1), ("k", "kernel", 2, 50)], 10)
    [('2 links', 'cpu', 0, 2), ('k', 'kernel', 2, 50)]
    """
    out: list[tuple[str, str, int, int]] = []
    count = 1
    for name, kind, start, dur in entries:
        if out:
            last_name, last_kind, last_start, last_dur = out[-1]
            small = dur < ns_per_px and last_dur < ns_per_px * 2
            if kind == last_kind and small and start - (last_start + last_dur) < ns_per_px:
                count += 1
                out[-1] = (f"{count} links", kind, last_start, start + dur - last_start)
                continue
        count = 1
        out.append((name, kind, start, dur))
    return out
