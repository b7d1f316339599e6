"""``traceconv info IN [--json]``: detected format, counts and diagnostics."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..io import DEFAULT_MAX_BYTES
from ..presentation.diagnostics_list import diagnostics_view
from ..presentation.json_text import json_text
from ..presentation.tables import Column, console_for, fitted_table, inputs_heading
from ..terminal import plain
from .allocation_sites import sites_data, sites_table
from .app import app, handled_errors
from .digest import echo_digest
from .loading import load_all
from .options import ALIGN_OPTION, max_bytes_option, wide_option

if TYPE_CHECKING:
    from rich.table import Table

    from ..analysis.align import Mode
    from ..model import Trace


def info_dict(trace: Trace) -> dict:
    """The object ``info --json`` prints: integer counts, format, and diagnostics."""
    meta = trace.metadata
    return {
        "format": meta.source_format,
        **trace.counts(),
        "source": {"file": meta.source_file, "framework": meta.framework,
                   "version": meta.source_version, "rank": meta.rank, "clock": meta.clock,
                   "clock_base_ns": meta.clock_base_ns},
        "processes": len(trace.processes),
        "diagnostics": trace.diagnostics.as_list(),
        **({"alignment": meta.attributes["alignment"]} if "alignment" in meta.attributes
           else {}),
        # Only for traces with memory blocks: the top 10 sites by peak live bytes.
        **({"allocation_sites": sites_data(trace)} if trace.memory else {}),
    }


@app.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--format", "format", metavar="NAME", help="Input format (skip detection).")
@ALIGN_OPTION
@max_bytes_option
@wide_option
def info(inputs: tuple[str, ...], as_json: bool, format: str | None,
         align: Mode = "auto", max_bytes: int = DEFAULT_MAX_BYTES, wide: bool = False) -> None:
    """Show the detected format, what the trace holds, and what was repaired or dropped.

    Several inputs (one per rank) are merged first; then the clock alignment and the
    residual skew of every rank are shown too.

    \b
      traceconv info trace.pt.trace.json.gz
      traceconv info trace.json --json                  (for scripts)
      traceconv info rank0.json rank1.json --align collectives
    """
    from rich.table import Table

    with handled_errors():
        trace = load_all(inputs, format, align, max_bytes=max_bytes)
        data = info_dict(trace)
    if as_json:   # the object holds the diagnostics themselves
        click.echo(json_text(data).decode())
        return
    echo_digest(trace, inputs)
    console = console_for(wide)
    framework = data["source"]["framework"]
    what = f": {data['format']}" + (f" ({framework})" if framework else "")
    names = inputs_heading(inputs, what, console.width)
    console.print(f"[bold]{plain(names)}[/bold]{plain(what)}")
    counts = Table(show_header=False, box=None, pad_edge=False)
    for key in ("processes", "tracks", "slices", "instants", "counter_samples", "flows", "ops",
                "tensors", "memory_blocks", "stat_rows"):
        counts.add_row(key, f"{data[key]:,}")
    from ..model.clock import span_text

    counts.add_row("span", span_text(data["span_ns"], trace.metadata.clock))
    console.print(counts)
    if "alignment" in data:
        console.print(alignment_table(data["alignment"], console.width))
    if data.get("allocation_sites"):
        console.print(sites_table(data["allocation_sites"], console.width))
    if data["diagnostics"]:
        console.print(diagnostics_view(data["diagnostics"], "diagnostics", console.width))


def alignment_table(alignment: dict, width: int) -> Table:
    """Per rank: the clock shift applied and the skew left on the shared collectives."""
    from ..units import column_figures

    ranks = alignment["ranks"]
    shift_unit, shifts = column_figures(
        [r["offset_ns"] if alignment["applied"] else 0 for r in ranks], signed=True)
    median_unit, medians = column_figures([r["residual_median_ns"] for r in ranks])
    max_unit, maxima = column_figures([r["residual_max_ns"] for r in ranks])
    cells = [[r["label"], shift, f"{r['matched']:,}", median, largest]
             for r, shift, median, largest in zip(ranks, shifts, medians, maxima, strict=True)]
    columns = [Column("input"), Column(f"shift {shift_unit}", True),
               Column("collectives", True, drop=1),
               Column(f"residual median {median_unit}", True, drop=2),
               Column(f"residual max {max_unit}", True)]
    return fitted_table(columns, cells, width, title=f"clock alignment: {alignment['reason']}",
                        title_justify="left")
