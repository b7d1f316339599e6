"""``traceconv memflow INPUT... -o OUT.svg``: the memory-flow picture of any trace."""

from __future__ import annotations

import os
import time

import click

from ..output_names import output_name
from .app import app, handled_errors
from .loading import load_all
from .options import COLOR_BY, OUTPUT_PATH, PICTURE_HEIGHT, PICTURE_WIDTH


@app.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("-o", "--output", type=OUTPUT_PATH, metavar="PATH",
              help="SVG to write (`-` for standard output, .svg.gz compresses). "
                   "Default: the first input's name with .svg.")
@click.option("--format", "format", metavar="NAME", help="Input format (skip detection).")
@click.option("--device", metavar="NAME",
              help="Only blocks on this device (e.g. cuda:0; any case: CUDA:0 too).")
@click.option("--pool", metavar="NAME", help="Only blocks in this pool.")
@click.option("--start", metavar="TIME",
              help="Window start after the first event: 1500 (ns), 12us, 3.5ms, 2s.")
@click.option("--end", metavar="TIME", help="Window end after the first event.")
@click.option("--min-size", default="1", show_default=True, metavar="SIZE",
              help="Hide smaller blocks: 512, 4KiB, 1MiB (binary), 1MB (decimal).")
@click.option("--color-by", type=click.Choice(COLOR_BY), default="lifetime", show_default=True,
              help="What the colours mean.")
@click.option("--width", type=click.IntRange(*PICTURE_WIDTH), default=1600, show_default=True,
              help="Picture width in pixels.")
@click.option("--height", type=click.IntRange(*PICTURE_HEIGHT), default=900, show_default=True,
              help="Picture height in pixels.")
@click.option("--max-rects", type=click.IntRange(100), default=20_000, show_default=True,
              help="Above this many rectangles, blocks under a pixel are merged into cells.")
def memflow(inputs: tuple[str, ...], output: str | None, format: str | None,
            device: str | None, pool: str | None, start: str | None, end: str | None,
            min_size: str, color_by: str, width: int, height: int, max_rects: int) -> None:
    """Draw the memory blocks of INPUT... as an SVG: time x address, a rectangle per block.

    \b
      traceconv memflow profile.json -o memflow.svg
      traceconv memflow cnn.pt.trace.json --device cuda:0 --color-by category
      traceconv memflow memory_timeline.raw.json.gz --start 80ms --end 120ms
    """
    from ..formats.memflow_svg.selection import checked_options, select, time_origin
    from ..outputs import refuse_replacing_inputs
    from ..units import parse_bytes, parse_duration

    with handled_errors():
        began = time.perf_counter()
        target = output or output_name(inputs, "svg")
        refuse_replacing_inputs([target], inputs)
        trace = load_all(inputs, format)
        origin = time_origin(trace)
        options: dict[str, object] = {"device": device, "pool": pool,
                                      "min_size": parse_bytes(min_size), "color_by": color_by,
                                      "width": width, "height": height, "max_rects": max_rects}
        if start is not None:
            options["start"] = origin + parse_duration(start)
        if end is not None:
            options["end"] = origin + parse_duration(end)
        checked = checked_options(trace, **options)   # also: the device's name as written
        trace.memflow_svg(target, **options)
        if target != "-":
            shown = len(select(trace, checked))
            click.echo(f"wrote {target} ({shown:,} of {len(trace.memory):,} blocks, "
                       f"{os.path.getsize(target):,} bytes, "
                       f"{time.perf_counter() - began:.2f} s)", err=True)
