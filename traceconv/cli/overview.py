"""``traceconv overview INPUT -o OUT.pftrace``."""

from __future__ import annotations

import os

import click

from .app import app, handled_errors
from .options import OUTPUT_PATH

EPILOG = """\b
Examples:
  traceconv overview big.pt.trace.json -o big-overview.pftrace
  traceconv overview big.json -o ov.pftrace --top 20 --buckets 500
"""


@app.command(epilog=EPILOG)
@click.argument("input", metavar="INPUT")
@click.option("-o", "--output", type=OUTPUT_PATH, required=True, metavar="OUT",
              help="The overview trace (.pftrace: Perfetto; .json: Chrome JSON).")
@click.option("--top", type=click.IntRange(min=0), default=100, show_default=True,
              metavar="N", help="Longest slices shown per thread or stream.")
@click.option("--buckets", type=click.IntRange(min=1, max=1_000_000), default=2000,
              show_default=True, metavar="N",
              help="Time buckets of the utilisation and hidden-slice counters (the span "
                   "cut into N).")
def overview(input: str, output: str, top: int, buckets: int) -> None:
    """A small trace showing the whole run of a Chrome/Kineto JSON trace of any size.

    Per thread and stream: a utilisation counter (percent of each time bucket covered by
    its slices), its N longest slices and its collectives, and a counter of the slices
    it hides per bucket; for the whole run: the steps and the memory high-water mark per
    device. Two streaming passes, memory bounded by the number of threads, not events.
    `traceconv split` writes the same overview beside its pieces, with a "pieces" track
    naming the piece that holds each part of the run.
    """
    from ..splitting import make_overview

    with handled_errors():
        trace = make_overview(input, output, top=top, buckets=buckets)
    hidden = trace.diagnostics.count("overview.hidden_slices")
    click.echo(f"wrote {os.path.normpath(output)}: {len(trace.slices):,} slices shown, "
               f"{hidden:,} hidden (counted per track), {buckets:,} buckets")
