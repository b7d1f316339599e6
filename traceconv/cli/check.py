"""``traceconv check TRACE [--json]``: what a viewer would drop or misdraw in a trace file
(or, for any other input, what its reader found cut short or left out)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from ..io import DEFAULT_MAX_BYTES
from ..presentation.diagnostics_list import diagnostics_view
from ..presentation.json_text import json_text
from ..presentation.tables import console_for, heading_name
from ..terminal import plain
from .app import app, handled_errors
from .options import max_bytes_option, wide_option

if TYPE_CHECKING:
    from ..model.check_report import CheckReport


@app.command()
@click.argument("trace", metavar="TRACE")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--format", "format", metavar="NAME",
              help="The input's format (any readable one), when detection by name and "
                   "content is not wanted.")
@click.option("--model", "model", is_flag=True,
              help="Read TRACE (any readable format) and check the model the reader made "
                   "against the model's invariants (traceconv.validate) instead.")
@max_bytes_option
@wide_option
def check(trace: str, as_json: bool, format: str | None, model: bool,
          max_bytes: int = DEFAULT_MAX_BYTES, wide: bool = False) -> None:
    """Validate a Perfetto .pftrace or a Chrome JSON trace (.gz too), or any input.

    Reports counts, errors (data the viewer would drop or corrupt) and warnings (data it
    would show differently). Exit status 1 when there are errors. Any other input is read:
    an input cut short is an error, what its reader left out a warning. With --model,
    reads any input and reports the model invariants its reader broke (exit status 1 when
    any).

    \b
      traceconv check out.pftrace
      traceconv check trace.json.gz --json
      traceconv check perf_report.txt                   (a MIGraphX report cut short fails)
      traceconv check --model profile.json
    """

    from ..api import check as check_trace

    if model:
        _check_model(trace, as_json, format, max_bytes)
        return
    with handled_errors():
        report = check_trace(trace, format, max_bytes=max_bytes)
    if as_json:
        click.echo(json_text(report.as_dict()).decode())
    else:
        _print(trace, report, wide)
    sys.exit(0 if report.ok else 1)


def _check_model(path: str, as_json: bool, format: str | None, max_bytes: int) -> None:

    from ..api import load
    from ..model.validate import validate

    with handled_errors():
        trace = load(path, format=format, max_bytes=max_bytes)
        problems = validate(trace)
    if as_json:
        click.echo(json_text({"file": path, "format": trace.metadata.source_format,
                                 "ok": not problems,
                                 "problems": [p.as_dict() for p in problems]}).decode())
    else:
        verdict = "model OK" if not problems else f"{len(problems)} broken invariants"
        click.echo(f"{plain(path)}: {trace.metadata.source_format}, {verdict}")
        for problem in problems:
            click.echo(f"  {plain(str(problem))}")
    sys.exit(1 if problems else 0)


def _print(name: str, report: CheckReport, wide: bool = False) -> None:
    from rich.table import Table

    console = console_for(wide)
    errors = sum(row["count"] for row in report.errors)
    verdict = "[green]OK[/green]" if report.ok else f"[red]{errors:,} errors[/red]"
    what = f": {report.format}, {'OK' if report.ok else f'{errors:,} errors'}"
    console.print(f"[bold]{plain(heading_name(name, what, console.width))}[/bold]: "
                  f"{report.format}, {verdict}")
    counts = Table(show_header=False, box=None, pad_edge=False)
    for key, value in report.counts.items():
        counts.add_row(key, f"{value:,}")
    console.print(counts)
    for title, rows, style in (("errors", report.errors, "red"),
                               ("warnings", report.warnings, "yellow")):
        if not rows:
            continue
        console.print(diagnostics_view(rows, title, console.width, style))
