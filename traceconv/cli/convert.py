"""``traceconv [convert] IN... --to FORMAT [-o OUT]``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..io import DEFAULT_MAX_BYTES
from ..output_names import output_name
from .app import app, handled_errors
from .digest import echo_digest
from .loading import echo_alignment, load_all
from .options import ALIGN_OPTION, ByteSize, max_bytes_option, trim_options

if TYPE_CHECKING:
    from ..analysis.align import Mode

# the names other command modules (and their tests) import from here
__all__ = ["ALIGN_OPTION", "ByteSize", "convert", "default_output", "echo_alignment",
           "load_all", "max_bytes_option", "trim_options"]


def default_output(inputs: tuple[str, ...], to: str) -> str:
    """``trace.json.gz --to perfetto`` writes ``trace.pftrace`` beside the input; never the
    input itself (:func:`traceconv.output_names.output_name`)."""
    return output_name(inputs, to)


@app.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("--to", "to", metavar="FORMAT",
              help="Output format: perfetto, chrome, ... (`traceconv formats`). "
                   "Default: from the -o extension.")
@click.option("-o", "--output", metavar="PATH",
              help="Output file; `-` is standard output; a .gz name compresses. "
                   "Default: the first input's name with the format's extension.")
@click.option("--format", "format", metavar="NAME",
              help="Input format, when detection by name and content is not wanted.")
@click.option("--flows", type=click.Choice(["dataflow"]), multiple=True,
              help="Add flows: dataflow = producer op -> consumer op (from the op graph).")
@click.option("--device-counters", is_flag=True,
              help="Add counter tracks: launch queue per stream, memcpy bandwidth (GB/s) per "
                   "device and copy direction.")
@ALIGN_OPTION
@trim_options
@max_bytes_option
def convert(inputs: tuple[str, ...], to: str | None, output: str | None,
            format: str | None, flows: tuple[str, ...] = (), align: Mode = "auto",
            window: tuple[int | None, int | None] | None = None, only: str | None = None,
            exclude: str | None = None, tracks: str | None = None,
            max_bytes: int = DEFAULT_MAX_BYTES, device_counters: bool = False) -> None:
    """Convert traces to another format; several inputs (one per rank) are merged.

    \b
      traceconv convert cnn.pt.trace.json --to perfetto       -> cnn.pftrace
      traceconv rank-0.json rank-1.json -o ranks.pftrace      (one process group per rank)
      traceconv rank-*.json --align collectives -o ranks.pftrace   (clocks of other hosts)
      traceconv big.json --window 2s:2.5s --tracks GPU -o slice.pftrace   (a piece of it)
      traceconv big.json --only 'nccl|all_reduce' --exclude '^cuda' -o comms.pftrace
      traceconv profile.json --to chrome -o - | gzip > out.json.gz
      cat trace.json | traceconv - --to perfetto -o trace.pftrace   (standard input)

    The default output never replaces an input: `x.json --to chrome` writes x.chrome.json;
    an -o that names an input is refused. Perfetto (binary) is not written to a terminal.
    """
    from .. import registry
    from ..api import check_inputs, save
    from ..errors import FormatError
    from ..output_names import refuse_binary_to_terminal
    from ..outputs import refuse_replacing_inputs

    with handled_errors():
        check_inputs(inputs)   # a missing input is the first thing to hear about
        if not to and not output:
            raise FormatError("say what to write: --to FORMAT or -o OUTPUT")
        target = output or default_output(inputs, to)  # type: ignore[arg-type]
        # before any reading: never over an input, never binary bytes onto a terminal
        refuse_replacing_inputs([target], inputs)
        refuse_binary_to_terminal(registry.for_output(target, to), target)
        trace = loaded = load_all(inputs, format, align, max_bytes=max_bytes)
        if any(x is not None for x in (window, only, exclude, tracks)):
            from ..analysis.trim import TrimOptions, trim_with

            trimming = TrimOptions(window, only, exclude, tracks)
            if trimming.active:
                trace = trim_with(trace, trimming)
        if "dataflow" in flows:
            from ..analysis.dataflow import with_dataflow_flows

            trace = with_dataflow_flows(trace)
        if device_counters:
            from ..analysis.device_counters import with_device_counters

            trace = with_device_counters(trace)
        save(trace, target, format=to)
        # (after the write: a refusal to write is then the run's only line on stderr)
        echo_digest(loaded, inputs)
        echo_alignment(loaded)
        if target != "-":
            click.echo(f"wrote {target}", err=True)
