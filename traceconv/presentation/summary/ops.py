"""The timeline ``summary``: torch.profiler's ``key_averages().table()`` numbers, rendered.

JSON: ``{"ops": [{"name", "kind", "calls", "self_host_ns", "host_total_ns",
"self_device_ns", "device_total_ns", "flops", "self_memory_bytes"}...],
"self_host_ns_total", "self_device_ns_total"}`` (absent values ``null``; ``input_shapes``
in each op when grouped by them; ``not_timed``, in an op and beside the totals, when some
calls never ended in the input: counted as calls, in no time). Rows of kind ``wait``
(threads blocked in ``futex``, ``poll``...) are in no total: their time is beside the totals
as ``not_work_time``, ``{"waiting": {"rows", "seconds"}}`` as a statistics table's.
"""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from ...analysis.op_summary import OpRow, waiting_ns, work_rows
from ...model.entities import NOT_WORK_TIMES
from ..tables import Column, fitted_table


def format_ns(ns: int | None, decimals: int = 3) -> str:
    """A time the way torch's table prints it (µs up to 1 ms, then ms, then s).

    >>> format_ns(1_234), format_ns(15_085_200), format_ns(2_500_000_000), format_ns(None)
    ('1.234us', '15.085ms', '2.500s', '')
    >>> format_ns(15_085_200, decimals=1)   # a narrow terminal
    '15.1ms'
    """
    if ns is None:
        return ""
    us = ns / 1000
    if abs(us) >= 1e6:
        return f"{us / 1e6:.{decimals}f}s"
    if abs(us) >= 1e3:
        return f"{us / 1e3:.{decimals}f}ms"
    return f"{us:.{decimals}f}us"


def format_bytes(n: int | None, decimals: int = 2) -> str:
    """Bytes as ``torch.profiler``'s table prints them: binary sizes named ``KB``/``MB``/
    ``GB``, signed (a free is negative). This table copies torch's, so it keeps torch's
    format; everything else writes :func:`traceconv.units.format_bytes`.

    >>> format_bytes(153_890_816), format_bytes(-1536), format_bytes(0), format_bytes(None)
    ('146.76 MB', '-1.50 KB', '0 B', '')
    """
    if n is None:
        return ""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(n) >= size:
            return f"{n / size:.{decimals}f} {unit}"
    return f"{n} B"


def _total(rows: list[OpRow], column: str) -> int | None:
    values = [v for r in rows if (v := getattr(r, column)) is not None]
    return sum(values) if values else None


def self_device_total(rows: list[OpRow]) -> int | None:
    """Device work counted once: over device rows (an op's self device time is the same
    kernels again), as torch's "Self CUDA time total"."""
    return _total([r for r in rows if r.self_host_ns is None], "self_device_ns")


def ops_dict(all_rows: list[OpRow], shown: list[OpRow]) -> dict[str, Any]:
    """The JSON object: ``shown`` rows, totals over ``all_rows`` (waits apart)."""
    out: dict[str, Any] = {"ops": [r.as_dict() for r in shown],
                           "self_host_ns_total": _total(work_rows(all_rows), "self_host_ns"),
                           "self_device_ns_total": self_device_total(all_rows)}
    waits, waited = waiting_ns(all_rows)
    if waits:
        out["not_work_time"] = {"waiting": {"rows": waits, "seconds": waited / 1e9}}
    untimed = sum(r.not_timed for r in all_rows)
    return out | {"not_timed": untimed} if untimed else out


def not_timed_line(rows: list[OpRow]) -> str | None:
    """The note under the totals when some calls never ended in the input, else None.

    >>> not_timed_line([OpRow("Run Message Loop", "op", 1, 0, 0, not_timed=1)])
    '1 slice never ended in the input: counted as a call, not timed'
    """
    untimed = sum(r.not_timed for r in rows)
    if not untimed:
        return None
    many = untimed != 1
    return (f"{untimed:,} slice{'s' * many} never ended in the input: counted as "
            f"{'calls' if many else 'a call'}, not timed")


def waiting_line(rows: list[OpRow]) -> str | None:
    """The note under the host total when threads were blocked in calls (rows of kind
    ``wait``, in no total), else None.

    >>> waiting_line([OpRow("poll", "wait", 15, 368_932_982), OpRow("ioctl", "runtime", 1, 5)])
    'not counted, waiting: 368.933ms in 1 row: threads blocked in calls, summed over the threads (it may exceed the run)'
    """
    waits, waited = waiting_ns(rows)
    if not waits:
        return None
    return (f"not counted, waiting: {format_ns(waited)} in {waits:,} "
            f"row{'s' * (waits != 1)}: {NOT_WORK_TIMES['waiting']}")


# in a narrow terminal the columns with the highest number are hidden first; the name and
# the self times stay
COLUMN_DROP = {"Name": 0, "Kind": 1, "Self host": 0, "Host total": 4, "Self device": 0,
               "Device total": 3, "Calls": 2, "FLOPs": 5, "Self mem": 5, "Input shapes": 7}


NO_DEVICE_TIME = "no device time: sorted by self host time"   # (said under the totals)


def render_ops(all_rows: list[OpRow], shown: list[OpRow], width: int | None = None,
               sorted_by_host: bool = False) -> str:
    """The text table of ``shown`` rows and the self-time totals of ``all_rows``;
    ``sorted_by_host``: the default order fell back to host time (no device time)."""
    has_device = any(r.self_device_ns is not None for r in all_rows)
    has_flops = any(r.flops is not None for r in shown)
    has_memory = any(r.self_memory_bytes is not None for r in shown)
    has_shapes = any(r.input_shapes is not None for r in shown)
    columns = ["Name", "Kind", "Self host", "Host total"]
    columns += ["Self device", "Device total"] if has_device else []
    columns += ["Calls"] + (["FLOPs"] if has_flops else []) + (
        ["Self mem"] if has_memory else []) + (["Input shapes"] if has_shapes else [])

    def cells_of(r: OpRow) -> list[str]:
        cells = [r.name, r.kind, format_ns(r.self_host_ns), format_ns(r.host_total_ns)]
        if has_device:
            cells += [format_ns(r.self_device_ns), format_ns(r.device_total_ns)]
        cells.append(str(r.calls))
        if has_flops:
            cells.append("" if r.flops is None else f"{r.flops:,}")
        if has_memory:
            cells.append(format_bytes(r.self_memory_bytes))
        if has_shapes:
            cells.append(r.input_shapes or "")
        return cells

    buffer = io.StringIO()
    # markup off: op names are data ("[/x]" is a name, not a closing tag)
    console = Console(file=buffer, width=width or 160, force_terminal=False, color_system=None,
                      markup=False, emoji=False, highlight=False)
    table = fitted_table([Column(c, number=c not in ("Name", "Kind", "Input shapes"),
                                 drop=COLUMN_DROP[c], symbols=c == "Name") for c in columns],
                         [cells_of(r) for r in shown], console.width)
    console.print(table)
    console.print(f"Self host time total: "
                  f"{format_ns(_total(work_rows(all_rows), 'self_host_ns')) or 'N/A'}")
    if (note := waiting_line(all_rows)) is not None:
        console.print(note)
    if has_device:
        console.print(f"Self device time total: {format_ns(self_device_total(all_rows))}")
    if sorted_by_host:
        console.print(NO_DEVICE_TIME)
    if (note := not_timed_line(all_rows)) is not None:
        console.print(note)
    return buffer.getvalue()

