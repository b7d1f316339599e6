"""The ``summary`` output: a per-operator table (text) or its JSON form, for any trace.

The numbers come from :func:`traceconv.analysis.summary.summarize`; this module only
renders them. Text is a rich table; JSON is
``{"total_device_time", "total_host_time", "rows": [...], "host_rows": [...]}`` with times in
seconds, N/A as ``null`` and non-finite rates as the strings ``"inf"`` / ``"nan"`` (MegEngine's
own spelling).
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Collection
from dataclasses import replace
from typing import Any, BinaryIO

from rich.console import Console
from rich.table import Table

from ...analysis.op_summary import op_summary, sort_rows
from ...analysis.runs import split_runs
from ...analysis.statistics_inputs import joined_statistics
from ...analysis.summary import Place, Row, Summary, SummaryOptions, summarize, view_of
from ...errors import UsageError
from ...formats.stray_lines import ROW_LOSSES, rows_left_out
from ...model import Trace
from ...model.entities import CHILDREN_LEFT_OUT, NOT_WORK_TIMES
from ...model.partial_timeline import partial_timeline_note
from ..json_text import json_text
from ..left_out import counts_text, dropped
from ..tables import Column, fitted_table, printable_cell
from .ops import NO_DEVICE_TIME, format_ns, ops_dict, render_ops

PREFIXES = ("", "K", "M", "G", "T", "P")
WRITE_OPTIONS = SummaryOptions   # the names write()'s **options may use


def number_with_unit(value: float | None, unit: str, base: int, binary: bool = False) -> str:
    """``profile_analyze``'s scaled number: two decimals and a prefixed unit (this table
    copies MegEngine's, so it keeps MegEngine's format; elsewhere sizes are written by
    :func:`traceconv.units.format_bytes`).

    >>> number_with_unit(37748736, "FLO", 1000), number_with_unit(804864, "B", 1024, True)
    ('37.75 MFLO', '786.00 KiB')
    >>> number_with_unit(None, "FLOPS", 1000), number_with_unit(float("inf"), "FLOPS", 1000)
    ('N/A', 'inf FLOPS')
    """
    if value is None:
        return "N/A"
    if not math.isfinite(value):
        return f"{value} {unit}"
    prefix = 0
    while value >= base and prefix < len(PREFIXES) - 1:
        value /= base
        prefix += 1
    if binary and prefix:
        unit = f"i{unit}"
    return f"{value:.2f} {PREFIXES[prefix]}{unit}"


def shapes_cell(shapes: list[list[int]] | None,
                layouts: list[list[int] | None] | None = None) -> str:
    """One ``{d0,d1}`` line per tensor; non-contiguous strides as `` -[s0,s1]``.

    >>> shapes_cell([[4, 16], [16]], [[32, 1], None])
    '{4,16} -[32,1]\\n{16}'
    """
    if shapes is None:
        return ""
    layouts = layouts or [None] * len(shapes)
    return "\n".join("{" + ",".join(map(str, s)) + "}"
                     + (" -[" + ",".join(map(str, lay)) + "]" if lay else "")
                     for s, lay in zip(shapes, layouts, strict=False))


def _json_number(value: float | None) -> float | str | None:
    if value is None or math.isfinite(value):
        return None if value is None else float(value) if isinstance(value, float) else value
    return str(value)


def row_dict(row: Row, place: Place) -> dict[str, Any]:
    """The JSON object of one row."""
    out: dict[str, Any] = {
        "name": row.name, "type": row.type, "id": row.id,
        f"{place}_self_time": float(row.time), "cumulative": row.cumulative,
        "computation": _json_number(row.computation), "flops": _json_number(row.flops),
        "memory": _json_number(row.memory), "bandwidth": _json_number(row.bandwidth),
        "in_shapes": row.in_shapes, "out_shapes": row.out_shapes,
    }
    if row.count != 1 or row.id is None:
        out["count"] = row.count
    if row.calls is not None:
        out["calls"] = row.calls
    return out


def summary_dict(summary: Summary, show_host: bool = True) -> dict[str, Any]:
    """The ``summary --json`` object; its host rows when asked, or when there is no device
    time (as the text shows a host-only trace's host table); else how many there are
    (``host_rows_not_shown``, as the text says it).

    >>> from traceconv.analysis.summary import Row
    >>> host = Row(0.3, "hipMemcpy", "hip_api", None, 1, None, None)
    >>> summary_dict(Summary(1.0, 0.3, [], [host]), show_host=False)["host_rows_not_shown"]
    1
    """
    out: dict[str, Any] = {
        "total_device_time": summary.total_device_time,
        "total_host_time": summary.total_host_time,
        "rows": [row_dict(r, "device") for r in summary.device_rows],
    }
    if show_host or summary.host_only:
        out["host_rows"] = [row_dict(r, "host") for r in summary.host_rows]
    elif summary.host_rows:   # (--show-host prints them)
        out["host_rows_not_shown"] = len(summary.host_rows)
    if summary.not_work:
        out["not_work_time"] = {what: {"rows": rows, "seconds": seconds}
                                for what, (rows, seconds) in summary.not_work.items()}
    if out.get("host_rows") == [] and summary.not_work_rows:   # what the text shows instead
        out["not_work_rows"] = [{("time" if key == "host_self_time" else key): value
                                 for key, value in row_dict(r, "host").items()}
                                for r in summary.not_work_rows]
    return out


def seconds_text(seconds: float, *, as_megengine: bool, total: bool = False) -> str:
    """A time of these tables: MegEngine's own spelling for a MegEngine profile, whose
    ``profile_analyze`` they copy (seconds: 3 significant digits in a cell, ``%g`` for a
    total); elsewhere the time with its unit, as the timeline table writes it
    (:func:`.ops.format_ns`): a report in ms reads ``0.288us``, not ``2.88e-07``.

    >>> seconds_text(2.88e-07, as_megengine=True), seconds_text(2.88e-07, as_megengine=False)
    ('2.88e-07', '0.288us')
    >>> seconds_text(0.131601299, as_megengine=True, total=True)
    '0.131601 s'
    """
    if not as_megengine:
        return format_ns(round(seconds * 1e9))
    return f"{seconds:g} s" if total else f"{seconds:.3}"


def seconds_column(values: list[float], *, as_megengine: bool) -> list[str]:
    """The times of one column in one format, so that they compare at a glance: for a
    MegEngine profile :func:`seconds_text`'s three significant digits, as fixed-point with
    the decimals its smallest time needs, or all in exponent form when one of them needs it
    (``6.55e+02`` above ``56.4`` reads as the smaller); elsewhere each with its unit.

    >>> seconds_column([0.00016, 0.000123, 0.0047512], as_megengine=True)
    ['0.000160', '0.000123', '0.004751']
    >>> seconds_column([655.0, 56.4, 2.88e-07], as_megengine=True)
    ['6.55e+02', '5.64e+01', '2.88e-07']
    >>> seconds_column([4.537, 0.000342499], as_megengine=False)
    ['4.537s', '342.499us']
    """
    if not as_megengine:
        return [seconds_text(value, as_megengine=False) for value in values]
    texts = [seconds_text(value, as_megengine=True) for value in values]
    if any("e" in text for text in texts):
        return [f"{value:.2e}" for value in values]
    decimals = max((len(text.partition(".")[2]) for text in texts), default=0)
    return [f"{value:.{decimals}f}" for value in values]


def _time_cells(values: list[float], total: float | None, as_megengine: bool) -> list[str]:
    """A time column's cells: the time, and its share of ``total`` under it."""
    return [text + (f"\n{value / total * 100:.1f}%" if total else "") for text, value in
            zip(seconds_column(values, as_megengine=as_megengine), values, strict=True)]


# in a narrow terminal the columns with the highest number are hidden first
ROW_COLUMNS = ("#", 2), ("self time", 0), ("cumulative", 3), ("operator", 0), \
    ("computation", 5), ("FLOPS", 4), ("memory", 6), ("bandwidth", 7), ("in_shapes", 8), \
    ("out_shapes", 8)
CALLS_COLUMN = ("calls", 1)   # after the operator, for rows that state their calls


NOT_WORK_TITLE = "host time that is no work, in no total (no row of work to show)"


def rows_table(summary: Summary, place: Place, width: int, as_megengine: bool = True,
               *, not_work: bool = False) -> Table:
    """The table of one place's rows, fitted to ``width`` (:func:`fitted_table`); times as
    :func:`seconds_text` writes them. ``not_work``: the statistics rows whose time is no
    work instead (:attr:`Summary.not_work_rows`), their total time, no share."""
    total = None if not_work else summary.total(place)
    rows = summary.not_work_rows if not_work else summary.rows(place)
    with_calls = any(row.calls is not None for row in rows)
    layout = [*ROW_COLUMNS[:4], CALLS_COLUMN, *ROW_COLUMNS[4:]] if with_calls else ROW_COLUMNS
    columns = [Column(("time" if not_work else f"{place} {header}") if header == "self time"
                      else header,
                      number=header not in ("operator", "in_shapes", "out_shapes"), drop=drop,
                      symbols=header == "operator")
               for header, drop in layout]
    times = _time_cells([row.time for row in rows], total, as_megengine)
    cumulative = _time_cells([row.cumulative for row in rows], total, as_megengine)
    cells = []
    for i, row in enumerate(rows):
        name, kind = row.name, row.type
        if row.id is not None:
            operator = f"{name}\n{kind}\n{row.id}"
        elif row.name == row.type:  # an aggregate of several operators
            operator = f"{kind}\n{row.count} ops"
        else:  # a slice name from a plain timeline, with its category
            operator = f"{name}\n{kind}" if row.type else name
        calls = ["" if row.calls is None else f"{row.calls:,}"] if with_calls else []
        cells.append([str(i), times[i], cumulative[i], operator, *calls, number_with_unit(row.computation, "FLO", 1000),
                      number_with_unit(row.flops, "FLOPS", 1000),
                      number_with_unit(row.memory, "B", 1024, binary=True),
                      number_with_unit(row.bandwidth, "B/s", 1024, binary=True),
                      shapes_cell(row.in_shapes, row.in_layouts), shapes_cell(row.out_shapes)])
    return fitted_table(columns, cells, width, title=NOT_WORK_TITLE if not_work
                        else f"{place} self time per operator",
                        title_justify="left", show_lines=True)


def totals_table(summary: Summary, as_megengine: bool = True) -> Table:
    table = Table(show_header=False, box=None, pad_edge=False)
    for label, value in (("total device time", summary.total_device_time),
                         ("total host time", summary.total_host_time)):
        table.add_row(label, "N/A" if value is None
                      else seconds_text(value, as_megengine=as_megengine, total=True))
    for what, (rows, seconds) in summary.not_work.items():
        table.add_row(f"not counted, {what}",
                      f"{seconds_text(seconds, as_megengine=as_megengine, total=True)} in "
                      f"{rows:,} rows: {NOT_WORK_TIMES[what]}")
    return table


def shown_tables(summary: Summary, show_host: bool = False,
                 print_only: str | None = None) -> list[str]:
    """The blocks the text prints, in order (``summary``, ``device``, ``host``)."""
    if print_only:
        return [print_only]
    if summary.host_only:   # its host table is the news
        return ["summary", "host"]
    return ["summary", "device"] + (["host"] if show_host else [])


def totals_note(trace: Trace) -> str | None:
    """What the totals cover when the read left something out (what no total holds, by
    code, as the digest after a read counts it), or when the paste of a statistics table
    left rows out (elided, cut off), and the run's totals where the file states them;
    which table they use when the timeline beside it is partial
    (:mod:`traceconv.model.partial_timeline`); None when nothing is missing.

    >>> t = Trace(); t.diagnostics.add("paddle_summary.elided", count=2)
    >>> t.metadata.attributes["stated_totals_ns"] = {"host": 1_705_190_000, "device": None}
    >>> print(textwrap.fill(totals_note(t), 88))
    totals cover the listed rows only: the paste left rows out at 2 places (info --json
    lists them); the file states the run's totals: host 1.705s
    >>> t = Trace(); t.diagnostics.add("model.memory_block_unreadable", count=1)
    >>> totals_note(t)
    'totals cover what was read: 1 left out (model.memory_block_unreadable) (info --json lists them)'
    """
    notes = [partial_timeline_note(trace), read_note(trace, besides=ROW_LOSSES)]
    if left_out := rows_left_out(trace.diagnostics):
        note = (f"totals cover the listed rows only: the paste left rows out at {left_out:,} "
                "places (info --json lists them)")
        stated = trace.metadata.attributes.get("stated_totals_ns") or {}
        if known := [f"{place} {format_ns(ns)}" for place, ns in stated.items()
                     if ns is not None]:
            note += "; the file states the run's totals: " + ", ".join(known)
        if cut := sum(bool(s.extra.get(CHILDREN_LEFT_OUT)) for s in trace.stats):
            note += (f"; {cut:,} rows whose children were left out have no self time (it "
                     "would hold theirs)")
        notes.append(note)
    return "; ".join(note for note in notes if note) or None


def read_note(trace: Trace, besides: Collection[str] = ()) -> str | None:
    """What the read of ``trace`` left out, which no total holds, by code (the dropped
    codes, those whose last part is in ``besides`` aside); None when nothing was.

    >>> t = Trace(); t.diagnostics.add("chrome.malformed_event", count=2)
    >>> read_note(t)
    'totals cover what was read: 2 left out (chrome.malformed_event) (info --json lists them)'
    """
    lost = dropped(trace.diagnostics, besides)
    if not lost:
        return None
    # (a code may hold the file's text: an unknown phase's, escaped as every cell is)
    return printable_cell(f"totals cover what was read: "
                          f"{counts_text(lost, min(len(lost), 3), {})} (info --json lists them)")


def render_text(summary: Summary, *, show_host: bool = False, print_only: str | None = None,
                width: int | None = None, as_megengine: bool = True,
                note: str | None = None) -> str:
    """The terminal rendering: totals (and ``note`` on what they cover), the device table,
    and the host table if asked; times as :func:`seconds_text` writes them."""
    buffer = io.StringIO()
    # markup off: operator names are data ("[/x]" is a name, not a closing tag)
    console = Console(file=buffer, width=width or 160, force_terminal=False,
                      color_system=None, markup=False, emoji=False, highlight=False)
    def rows_or_none(place: Place) -> Table | str:
        if summary.rows(place):
            return rows_table(summary, place, console.width, as_megengine)
        if place == "host" and summary.not_work_rows:   # (an nvtx_sum alone: its ranges)
            return rows_table(summary, place, console.width, as_megengine, not_work=True)
        if summary.not_work:
            return f"{place} self time per operator: none (the input's times are no work)"
        return f"{place} self time per operator: none (no operator of the input has a time)"

    blocks = {"summary": lambda: totals_table(summary, as_megengine),
              "device": lambda: rows_or_none("device"),
              "host": lambda: rows_or_none("host")}
    wanted = shown_tables(summary, show_host, print_only)
    for name in wanted:
        console.print(blocks[name]())
        if name == "summary" and note:
            console.print(textwrap.fill(note, console.width))
        if name == "summary" and wanted[1:] == ["host"] and summary.host_rows:
            console.print(NO_DEVICE_TIME)
    if summary.host_rows and "host" not in wanted and not (print_only or as_megengine):
        # (profile_analyze hides its host table too, and says nothing: MegEngine's stays so)
        console.print(textwrap.fill(
            f"host self time per operator: {len(summary.host_rows):,} rows not shown "
            "(--show-host prints them)", console.width))
    return buffer.getvalue()



def summary_data(trace: Trace, options: SummaryOptions | None = None, *,
                 top: int | None = None, sort_by: str | None = None,
                 group_by_input_shape: bool = False, show_host: bool = True,
                 print_only: str | None = None) -> dict[str, Any]:
    """The ``summary --json`` object of ``trace``: the timeline's ``ops`` (torch's
    key_averages, :mod:`.ops`); for an op graph also MegEngine's profile_analyze ``rows``;
    for a stats-only trace its ``rows``. ``top`` None: all ops, 3 profile_analyze rows of
    a MegEngine profile (its tool's default), every row of any other op graph.

    >>> t = Trace(); main = t.add_track("main", process=t.add_process("python"))
    >>> _ = t.add_slice(main, 0, 3_000, "aten::add", "cpu_op")
    >>> summary_data(t)["ops"][0]["self_host_ns"]
    3000
    """
    view = _view_for(trace, sort_by)
    if view != "timeline" and (several := _runs_apart(trace)):   # as render() splits them
        return {"runs": [{"run": number, "label": label, **summary_data(
            run, options, top=top, show_host=show_host, print_only=print_only)}
            for number, label, run in several]}
    rows = op_summary(trace, group_by_input_shape=group_by_input_shape) \
        if view != "stats" else []
    if view == "timeline":
        data = ops_dict(rows, sort_rows(rows, sort_by, top or 0))
        if note := read_note(trace):
            data["totals_note"] = note
        if statistics := joined_statistics(trace):
            data["statistics"] = summary_data(statistics, options, top=top, show_host=True)
        return _with_allocation_sites(trace, data)
    result = summarize(trace, replace(options or SummaryOptions(), top=_top(trace, top)))
    data = summary_dict(result, show_host=show_host or print_only == "host")
    if note := totals_note(trace):
        data["totals_note"] = note
        data["stated_totals_ns"] = trace.metadata.attributes.get("stated_totals_ns")
    if rows:
        data["ops"] = [r.as_dict() for r in sort_rows(rows, sort_by)]
    return _with_allocation_sites(trace, data)


def _runs_apart(trace: Trace) -> list[tuple[int, str, Trace]]:
    """Each run of a statistics trace that holds several (two reports in one file, a
    before/after pair) as a trace of its own, numbered as ``FILE@N`` names them: its rows
    and totals are that run's, never a sum over runs (empty: one run)."""
    return [(number, label, run) for number, (label, run) in enumerate(split_runs(trace), 1)]


def _view_for(trace: Trace, sort_by: str | None) -> str:
    """:func:`view_of` ``trace``; ``sort_by`` (torch's key_averages columns) orders a
    timeline's table only, so on another view it is refused instead of ignored."""
    view = view_of(trace)
    if sort_by is not None and view != "timeline":
        what = "a statistics table" if view == "stats" else "an op graph"
        raise UsageError(f"--sort-by {sort_by}: sorts a timeline's per-op table, and this is "
                         f"{what}: order it with --order-by (time, calls, count, memory, ...)")
    return view


def _with_allocation_sites(trace: Trace, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` plus ``allocation_sites`` (top 10 by peak live bytes) for memory traces."""
    if trace.memory:
        from ...analysis.allocation_sites import top_allocation_sites

        data["allocation_sites"] = [s.as_dict() for s in top_allocation_sites(trace.memory)]
    return data


def _top(trace: Trace, top: int | None) -> int:
    """Rows of the profile_analyze tables: ``top``, else profile_analyze's own default (3)
    for a MegEngine profile, else all (0): a MIGraphX log lists every instruction."""
    if top is not None:
        return top
    return 3 if trace.metadata.framework == "MegEngine" else 0


TEXT_ROWS = 20   # rows of a text table when -t is not given (--json has every row)
# (PyTorch 2.13 on the CPU writes with_flops in the header and no per-op "flops" arg: its
# key_averages() computes them from the shapes, which traceconv does not redo)
NO_FLOPS = ("no FLOPs: the profile was recorded with_flops, but its ops carry none "
            "(PyTorch's key_averages() computes them itself)")


def render(trace: Trace, options: SummaryOptions | None = None, *, top: int | None = None,
           sort_by: str | None = None, group_by_input_shape: bool = False,
           show_host: bool = False, print_only: str | None = None,
           width: int | None = None) -> str:
    """The ``summary`` text of ``trace``: torch's key_averages table for a timeline (20 rows
    unless ``top``), MegEngine's profile_analyze tables for an op graph (3 rows of a
    MegEngine profile, 20 of another op graph such as a MIGraphX log, then how many more,
    unless ``top``), the statistics of a stats-only trace; drawn within ``width`` columns
    (long names cut, long cells wrapped; default 160)."""
    if _view_for(trace, sort_by) == "timeline":
        rows = op_summary(trace, group_by_input_shape=group_by_input_shape)
        text = render_ops(rows, sort_rows(rows, sort_by, 20 if top is None else top), width,
                          sorted_by_host=sort_by is None
                          and not any(r.self_device_ns for r in rows))
        if trace.metadata.attributes.get("with_flops") and not any(r.flops for r in rows):
            text += textwrap.fill(NO_FLOPS, width or 160) + "\n"
        if note := read_note(trace):
            text += textwrap.fill(note, width or 160) + "\n"
        if statistics := joined_statistics(trace):   # (tables given with the timeline)
            text += textwrap.fill(f"statistics given with the timeline "
                                  f"({statistics.metadata.source_file}):", width or 160) + "\n"
            text += render(statistics, options, top=top, show_host=True, width=width)
        return text
    if several := _runs_apart(trace):
        return "\n".join(
            f"run {number} of {len(several)} (FILE@{number} to diff):\n"
            + render(run, options, top=top, show_host=show_host, print_only=print_only,
                     width=width) for number, label, run in several)
    result = summarize(trace, replace(options or SummaryOptions(), top=_top(trace, top)))
    left: dict[Place, int] = {}
    if top is None and trace.metadata.framework != "MegEngine":
        # a screenful: a MIGraphX log has a row per instruction (58,000 rows took 21 s);
        # what is left out of the tables printed is said, and where to see it
        places: list[Place] = [p for p in ("device", "host")
                               if p in shown_tables(result, show_host, print_only)]
        left = {p: len(result.shown_rows(p)) - TEXT_ROWS for p in places
                if len(result.shown_rows(p)) > TEXT_ROWS}
        result = replace(result, device_rows=result.device_rows[:TEXT_ROWS],
                         host_rows=result.host_rows[:TEXT_ROWS],
                         not_work_rows=result.not_work_rows[:TEXT_ROWS])
    text = render_text(result, show_host=show_host, print_only=print_only, width=width,
                       as_megengine=trace.metadata.framework == "MegEngine",
                       note=totals_note(trace))
    if left:
        hidden = ", ".join(f"{n:,} more {place} rows" for place, n in left.items())
        json = "--json --show-host" if "host" in left and not result.host_only else "--json"
        text += textwrap.fill(f"... {hidden} (-t 0 prints them all; {json} holds them all)",
                              width or 160) + "\n"
    return text


def write(trace: Trace, out: BinaryIO, *, json: bool = False, show_host: bool | None = None,
          print_only: str | None = None, top: int | None = None, sort_by: str | None = None,
          group_by_input_shape: bool = False, **options: Any) -> None:
    """Write the summary of ``trace`` (text table, or JSON with ``json=True``; JSON holds the
    host rows unless ``show_host=False``)."""
    if json:
        data = summary_data(trace, SummaryOptions(**options), top=top, sort_by=sort_by,
                            group_by_input_shape=group_by_input_shape,
                            show_host=show_host is not False, print_only=print_only)
        out.write(json_text(data) + b"\n")
    else:
        out.write(render(trace, SummaryOptions(**options), top=top, sort_by=sort_by,
                         group_by_input_shape=group_by_input_shape, show_host=bool(show_host),
                         print_only=print_only).encode())
