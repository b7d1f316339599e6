"""The timeline ``summary``: torch.profiler's ``key_averages().table()`` numbers, rendered.

JSON: ``{"ops": [{"name", "kind", "calls", "self_host_ns", "host_total_ns",
"self_device_ns", "device_total_ns", "flops", "self_memory_bytes"}...],
"self_host_ns_total", "self_device_ns_total"}`` (absent values ``null``; ``input_shapes``
in each op when grouped by them).
"""

from __future__ import annotations

import io
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from ...analysis.op_summary import OpRow
from ...terminal import printable

NAME_WIDTH = 55   # torch's default name column width


def format_ns(ns: int | None) -> str:
    """A time the way torch's table prints it (µs up to 1 ms, then ms, then s).

    >>> format_ns(1_234), format_ns(15_085_200), format_ns(2_500_000_000), format_ns(None)
    ('1.234us', '15.085ms', '2.500s', '')
    """
    if ns is None:
        return ""
    us = ns / 1000
    if abs(us) >= 1e6:
        return f"{us / 1e6:.3f}s"
    if abs(us) >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def format_bytes(n: int | None) -> str:
    """Bytes as ``torch.profiler``'s table prints them: binary sizes named ``KB``/``MB``/
    ``GB``, two decimals, signed (a free is negative). This table copies torch's, so it keeps
    torch's format; everything else writes :func:`traceconv.units.format_bytes`.

    >>> format_bytes(153_890_816), format_bytes(-1536), format_bytes(0), format_bytes(None)
    ('146.76 MB', '-1.50 KB', '0 B', '')
    """
    if n is None:
        return ""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


def _total(rows: list[OpRow], column: str) -> int | None:
    values = [v for r in rows if (v := getattr(r, column)) is not None]
    return sum(values) if values else None


def self_device_total(rows: list[OpRow]) -> int | None:
    """Device work counted once: over device rows (an op's self device time is the same
    kernels again), as torch's "Self CUDA time total"."""
    return _total([r for r in rows if r.self_host_ns is None], "self_device_ns")


def ops_dict(all_rows: list[OpRow], shown: list[OpRow]) -> dict[str, Any]:
    """The JSON object: ``shown`` rows, totals over ``all_rows``."""
    return {"ops": [r.as_dict() for r in shown],
            "self_host_ns_total": _total(all_rows, "self_host_ns"),
            "self_device_ns_total": self_device_total(all_rows)}


def _cut(name: str) -> str:
    return name if len(name) <= NAME_WIDTH else name[:NAME_WIDTH - 3] + "..."


def render_ops(all_rows: list[OpRow], shown: list[OpRow], width: int | None = None) -> str:
    """The text table of ``shown`` rows and the self-time totals of ``all_rows``."""
    has_device = any(r.self_device_ns is not None for r in all_rows)
    has_flops = any(r.flops is not None for r in shown)
    has_memory = any(r.self_memory_bytes is not None for r in shown)
    has_shapes = any(r.input_shapes is not None for r in shown)
    columns = ["Name", "Kind", "Self host", "Host total"]
    columns += ["Self device", "Device total"] if has_device else []
    columns += ["Calls"] + (["FLOPs"] if has_flops else []) + (
        ["Self mem"] if has_memory else []) + (["Input shapes"] if has_shapes else [])
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for column in columns:
        table.add_column(column, justify="left" if column in ("Name", "Kind", "Input shapes")
                         else "right", no_wrap=column != "Input shapes")
    for r in shown:
        cells = [_cut(printable(r.name)), printable(r.kind), format_ns(r.self_host_ns), format_ns(r.host_total_ns)]
        if has_device:
            cells += [format_ns(r.self_device_ns), format_ns(r.device_total_ns)]
        cells.append(str(r.calls))
        if has_flops:
            cells.append("" if r.flops is None else f"{r.flops:,}")
        if has_memory:
            cells.append(format_bytes(r.self_memory_bytes))
        if has_shapes:
            cells.append(printable(r.input_shapes or ""))
        table.add_row(*cells)
    buffer = io.StringIO()
    # markup off: op names are data ("[/x]" is a name, not a closing tag)
    console = Console(file=buffer, width=width or 160, force_terminal=False, color_system=None,
                      markup=False, emoji=False, highlight=False)
    console.print(table)
    console.print(f"Self host time total: {format_ns(_total(all_rows, 'self_host_ns'))}")
    if has_device:
        console.print(f"Self device time total: {format_ns(self_device_total(all_rows))}")
    return buffer.getvalue()
