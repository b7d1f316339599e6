"""``traceconv report TRACE -o report.html``: one self-contained HTML page."""

from __future__ import annotations

import click

from .app import app, handled_errors
from .loading import load_all
from .options import OUTPUT_PATH


@app.command("report")
@click.argument("inputs", nargs=-1, required=True, metavar="TRACE")
@click.option("-o", "--output", type=OUTPUT_PATH, metavar="PATH", required=True,
              help="The HTML file to write (`-` for standard output).")
@click.option("--title", metavar="TEXT", help="Page title (default: the input's name).")
@click.option("--format", "format", metavar="NAME", help="Input format (skip detection).")
def report_command(inputs: tuple[str, ...], output: str, title: str | None,
                   format: str | None) -> None:
    """Write one self-contained HTML page: run metadata, step-time breakdown (several
    ranks: a row per rank, each over its own steps, and the slowest), top ops and kernels,
    advice, memory (per device: allocated and reserved over time, the OOM or peak
    moment and the sites live then; the memory-flow picture), the critical path.

    Plots are inline SVG; the page runs no script and loads nothing from the network.

    \b
      traceconv report trace.pt.trace.json.gz -o report.html
      traceconv report profile.json -o - > report.html
      traceconv report rank0.json rank1.json -o job.html      (a row per rank)
    """
    from ..output_files import atomic_output
    from ..outputs import refuse_replacing_inputs
    from ..report import render_report

    with handled_errors():
        refuse_replacing_inputs([output], inputs)
        trace = load_all(inputs, format)
        html = render_report(trace, title)
        with atomic_output(output, inputs=inputs) as out:
            out.write(html.encode("utf-8"))
    if output != "-":
        click.echo(f"wrote {output}", err=True)
