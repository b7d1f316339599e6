"""``traceconv memory SNAP [--json] [--depth N]``: what held the memory when it ran out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ..presentation.json_text import json_text
from ..presentation.tables import Column, fitted_table, heading_name
from ..terminal import plain
from .app import app, handled_errors
from .loading import load_all
from .nothing_to_show import nothing_to_show
from .options import wide_option

if TYPE_CHECKING:
    from rich.console import Console

    from ..model import Trace

SPARK_WIDTH = 60


@app.command()
@click.argument("inputs", nargs=-1, required=True, metavar="SNAP [SNAP]")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (schema 1).")
@click.option("--depth", type=click.IntRange(1), default=1, show_default=True,
              help="Name sites by this many user frames (the site and its callers).")
@click.option("--top", type=click.IntRange(0), default=10, show_default=True,
              help="Sites shown in the terminal (0: all; --json always has all).")
@click.option("--format", "format", metavar="NAME", help="Input format (skip detection).")
@click.option("--ranks", is_flag=True,
              help="The inputs are the ranks of one job: one row per rank and device, the "
                   "rank that ran out (else the most allocated) first, and the sites whose "
                   "bytes differ between ranks.")
@wide_option
def memory(inputs: tuple[str, ...], as_json: bool, depth: int, top: int,
           format: str | None, ranks: bool = False, wide: bool = False) -> None:
    """What held each device's memory at the out-of-memory event (else at the peak).

    Allocated, reserved and fragmentation bytes at that moment, the largest free block
    of each pool, and the allocation sites of the live blocks (they sum to allocated).
    Two inputs: how the peak changed, by site (or, with --ranks, any number of ranks).

    \b
      traceconv memory oom_snapshot.pickle
      traceconv memory snapshot.pickle --depth 3 --json
      traceconv memory before.pickle after.pickle
      traceconv memory --ranks rank*.pickle
    """

    from ..analysis.memory_moment import memory_report
    from ..errors import UsageError

    with handled_errors():
        if len(inputs) > 2 and not ranks:
            raise UsageError("memory takes one snapshot, or two to compare (--ranks for "
                             "the ranks of one job)")
        traces = [load_all((path,), format) for path in inputs]
        reports = [memory_report(trace, depth) for trace in traces]
        for path, report in zip(inputs, reports, strict=True):
            # (a table or a comparison would say nothing: say why, in both forms)
            if not report["devices"]:
                from ..formats.memflow_svg.selection import NO_BLOCKS

                nothing_to_show(NO_BLOCKS, path, as_json=as_json, empty=report)
    if ranks:
        from ..analysis.memory_ranks import memory_ranks

        side_by_side = memory_ranks(reports, list(inputs))
        if as_json:
            click.echo(json_text(side_by_side).decode())
        else:
            _print_ranks(side_by_side, top, wide)
        return
    if len(reports) == 2:
        from ..analysis.memory_diff import memory_diff

        change = memory_diff(*reports)
        if as_json:
            click.echo(json_text(change).decode())
        else:
            _print_change(inputs, change, top, wide)
        return
    if as_json:
        click.echo(json_text(reports[0]).decode())
        return
    from ..presentation.tables import console_for

    console = console_for(wide)
    for device in reports[0]["devices"]:
        _print_device(console, inputs[0], device, reports[0]["time_unit"], top)
        _print_timeline(console, traces[0], device["device"])


def _print_device(console: Console, name: str, device: dict[str, Any], unit: str,
                  top: int) -> None:
    from rich.table import Table

    from ..analysis.memory_moment import MOMENTS, allocator_stated, unknown_text
    from ..units import format_bytes

    moment = device["moment"]
    where = f" {device['device'] or '(no device)'}"
    console.print(f"[bold]{plain(heading_name(name, where, console.width))}[/bold]"
                  f"{plain(where)}")
    rows = Table(show_header=False, box=None, pad_edge=False)
    rows.add_row("moment", f"{MOMENTS[moment['kind']]}{_when(moment, unit)}")
    if moment["kind"] == "oom":
        rows.add_row("requested", _bytes(moment["requested_bytes"]))
        rows.add_row("device free", _bytes(moment["device_free_bytes"]))
    rows.add_row("allocated", _bytes(device["allocated_bytes"]))
    if (by_allocator := allocator_stated(device)) is not None:
        stated, before = by_allocator
        rows.add_row("  allocator's", f"{_bytes(stated)}, by its own total"
                     + (f" ({before:,} bytes held from before the trace)" if before > 0 else ""))
    if device["allocated_rounded_bytes"] is not None:
        rows.add_row("  rounded", _bytes(device["allocated_rounded_bytes"]))
    rows.add_row("reserved", _bytes(device["reserved_bytes"]))
    rows.add_row("fragmentation", _bytes(device["fragmentation_bytes"]))
    console.print(rows)
    if device["pools"]:
        columns = [Column("pool"), Column("stream", True, drop=2), Column("segments", True, drop=1),
                   Column("reserved", True), Column("largest free", True)]
        cells = [[pool["pool"], pool["stream"], f"{pool['segments']:,}",
                  format_bytes(pool["reserved_bytes"]), format_bytes(pool["largest_free_bytes"])]
                 for pool in device["pools"]]
        console.print(fitted_table(columns, cells, console.width, title="pools (largest free "
                                   "block: an upper bound)", title_justify="left"))
    if device["sites"] and not device["sites_recorded"]:
        console.print(f"sites: this format does not record where blocks were allocated "
                      f"({sum(s['blocks'] for s in device['sites']):,} live blocks)")
    else:
        _print_sites(console, device["sites"], top)
    for key, count in device["unknown"].items():
        console.print(f"unknown: {unknown_text(key)}: {count:,}")


def _print_sites(console: Console, found: list[dict[str, Any]], top: int) -> None:
    shown = found[:top] if top else found
    rows = [[site["site"], f"{site['bytes']:,}", f"{site['blocks']:,}", f"{site['share']:.1%}"]
            for site in shown]
    if len(shown) < len(found):
        rest = found[len(shown):]
        rows.append([f"({len(rest):,} more site{'s' if len(rest) > 1 else ''})",
                     f"{sum(s['bytes'] for s in rest):,}", f"{sum(s['blocks'] for s in rest):,}",
                     ""])
    columns = [Column("site"), Column("bytes", True), Column("blocks", True, drop=1),
               Column("share", True)]
    console.print(fitted_table(columns, rows, console.width, title="sites live at that moment",
                               title_justify="left"))


def _when(moment: dict[str, Any], unit: str) -> str:
    from ..analysis.memory_moment import SINCE_START
    from ..units import format_duration

    since = moment["since_start"]
    if since is None:
        return ""
    return f", entry {since:,}" if unit == "entry" else \
        f", {format_duration(since)} {SINCE_START}"


def _bytes(value: int | None) -> str:
    from ..units import format_bytes

    return "unknown" if value is None else f"{value:,} bytes ({format_bytes(value, 4)})"


def _print_timeline(console: Console, trace: Trace, device: str) -> None:
    """Allocated and reserved over time as sparklines on one scale."""
    from ..analysis.memory_moment import device_curves
    from ..presentation.sparkline import bucket_peaks, sparkline

    curves = device_curves(trace, device)
    times = [int(c.times[i]) for c in curves if len(c.times) for i in (0, -1)]
    if len(curves[0].times) < 2:
        return   # no history: nothing moves
    start, end = min(times), max(times)
    width = max(8, min(SPARK_WIDTH, console.width - 10))   # (after the 10-column label)
    peaks = [bucket_peaks(c.times, c.bytes, start, end, width) if len(c.times) else []
             for c in curves]
    top = max((max(p) for p in peaks if p), default=0)
    for label, values in zip(("allocated", "reserved"), peaks, strict=True):
        if values:
            console.print(f"{label:>9} {sparkline(values, top)}")


def _print_change(inputs: tuple[str, ...], change: dict[str, Any], top: int,
                  wide: bool = False) -> None:
    """Per device: allocated before and after, and the sites that changed."""

    from ..analysis.memory_moment import unknown_text
    from ..presentation.tables import console_for

    console = console_for(wide)
    for device in change["devices"]:
        before, after = (side["allocated_bytes"] if side else 0
                         for side in (device["before"], device["after"]))
        console.print(f"[bold]{plain(device['device'] or '(no device)')}[/bold]: allocated "
                      f"{before:,} -> {after:,} bytes ({device['change_bytes']:+,}) from "
                      f"{plain(inputs[0])} to {plain(inputs[1])}")
        for key, count in device["unknown"].items():
            console.print(f"unknown: {unknown_text(key)}: {count:,}")
        if device["sites"] and not device["sites_recorded"]:
            console.print("sites: neither format records where blocks were allocated")
            continue
        if not device["sites"]:   # (a table of headers would say the same, less clearly)
            console.print("sites that changed: none (every site holds the same bytes)")
            continue
        shown = device["sites"][:top] if top else device["sites"]
        rows = [[site["site"], site["status"], f"{site['before_bytes']:,}",
                 f"{site['after_bytes']:,}", f"{site['change_bytes']:+,}"] for site in shown]
        rest = device["sites"][len(shown):]
        if rest:
            rows.append([f"({len(rest):,} more site{'s' if len(rest) > 1 else ''})", "", "",
                         "", f"{sum(s['change_bytes'] for s in rest):+,}"])
        columns = [Column("site"), Column("status", drop=1), Column("before", True, drop=2),
                   Column("after", True, drop=2), Column("change", True)]
        console.print(fitted_table(columns, rows, console.width, title="sites that changed",
                                   title_justify="left"))


def _print_ranks(side_by_side: dict[str, Any], top: int, wide: bool = False) -> None:
    """One row per rank and device, then the sites whose bytes differ between ranks (a
    rank is shown by its file name; names are elided and columns hidden as every table)."""
    import os

    from ..presentation.tables import console_for, elided
    from ..units import format_bytes

    def size(value: int | None) -> str:
        return "unknown" if value is None else format_bytes(value, 4)

    console = console_for(wide)
    columns = [Column("rank"), Column("device"), Column("moment", drop=1),
               Column("allocated", True), Column("reserved", True),
               Column("fragmented", True, drop=2)]
    cells = [[os.path.basename(row["rank"]), row["device"] or "(no device)", row["moment"] or "",
              size(row["allocated_bytes"]), size(row["reserved_bytes"]),
              size(row["fragmentation_bytes"])] for row in side_by_side["ranks"]]
    console.print(fitted_table(columns, cells, console.width, title="ranks, the one closest "
                               "to its limit first", title_justify="left"))
    differing = side_by_side["differing_sites"]
    shown = differing[:top] if top else differing
    if not shown:
        console.print("every site holds the same bytes on every rank")
        return
    names = list(shown[0]["bytes"])
    # (a rank's file name heads a column of numbers: elided, as a header is never cut; the
    # ranks after the first two are hidden first when narrow, the last first)
    columns = [Column("site"), *(Column(elided(os.path.basename(name), 18), True,
                                        drop=max(i - 1, 0)) for i, name in enumerate(names))]
    cells = [[site["site"], *(size(b) for b in site["bytes"].values())] for site in shown]
    console.print(fitted_table(columns, cells, console.width, title="sites whose bytes differ "
                               "between ranks", title_justify="left"))
