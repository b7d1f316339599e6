"""``traceconv [convert] IN... --to FORMAT [-o OUT]``."""

from __future__ import annotations

import os
import re
from collections.abc import Callable

import click

from .. import registry
from ..analysis.align import MODES, Mode
from ..analysis.dataflow import with_dataflow_flows
from ..analysis.trim import TrimOptions, parse_window, trim_with
from ..api import check_inputs, combine, load, merge_warnings, save
from ..errors import FormatError
from ..io import DEFAULT_MAX_BYTES, format_size, parse_size
from ..model import Trace
from .app import app, handled_errors
from .digest import echo_digest
from .progress import reading


class ByteSize(click.ParamType):
    """``--max-bytes 4G``: a byte count with an optional K/M/G/T unit (binary)."""

    name = "SIZE"

    def convert(self, value, param, ctx) -> int:  # type: ignore[no-untyped-def]
        if isinstance(value, int):
            return value
        try:
            return parse_size(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


max_bytes_option = click.option(
    "--max-bytes", type=ByteSize(), default=DEFAULT_MAX_BYTES, metavar="SIZE",
    help=f"Refuse an input holding more than SIZE bytes once decompressed (e.g. 500M, 32G; "
         f"default {format_size(DEFAULT_MAX_BYTES)}): a small .gz can expand without bound.")


def load_all(inputs: tuple[str, ...], format: str | None, align: Mode = "auto", *,
             max_bytes: int = DEFAULT_MAX_BYTES) -> Trace:
    """Load every input (with a progress bar on a terminal) and combine them into one trace:
    ranks are merged, clocks aligned on shared collectives as ``align`` says; an execution
    trace is linked to its Kineto trace (:func:`~traceconv.api.combine`)."""
    for warning in check_inputs(inputs):
        click.echo(f"traceconv: warning: {warning}", err=True)
    with reading(list(inputs)) as per_file:
        traces = [load(path, format=format, progress=per_file(i), max_bytes=max_bytes)
                  for i, path in enumerate(inputs)]
    for warning in merge_warnings(traces):
        click.echo(f"traceconv: warning: {warning}", err=True)
    return traces[0] if len(traces) == 1 else combine(traces, align=align)


def echo_alignment(trace: Trace) -> None:
    """Say on stderr what ``--align`` did to a merged trace (and how far ranks still differ)."""
    alignment = trace.metadata.attributes.get("alignment")
    if not alignment:
        return
    worst = max((r["residual_max_ns"] for r in alignment["ranks"]), default=0)
    residual = f"; residual skew up to {worst / 1e3:,.1f} µs" if alignment["collectives"] else ""
    click.echo(f"traceconv: clocks: {alignment['reason']}{residual}", err=True)


ALIGN_OPTION = click.option(
    "--align", type=click.Choice(MODES), default="auto", show_default=True,
    help="Several ranks: shift each rank's clock so that matching collectives end together. "
         "auto = only when ranks disagree by more than 0.5 ms; collectives = always; "
         "none = never. The shift and the residual skew per rank go to diagnostics.")


def default_output(inputs: tuple[str, ...], to: str) -> str:
    """``trace.json.gz --to perfetto`` writes ``trace.pftrace`` beside the input."""
    if inputs[0] == "-":
        return "-"
    name = inputs[0]
    base = os.path.basename(name)
    for suffix in (".gz",):
        base = base.removesuffix(suffix)
    base, _ = os.path.splitext(base)
    for suffix in (".pt.trace", ".trace", ".paddle_trace"):
        base = base.removesuffix(suffix)
    if len(inputs) > 1:
        base += "_merged"
    return os.path.join(os.path.dirname(name), base + registry.get(to).default_extension)


def _window(_ctx: click.Context, _param: click.Parameter,
            value: str | None) -> tuple[int | None, int | None] | None:
    try:
        return None if value is None else parse_window(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _regex(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    try:
        return None if value is None else re.compile(value).pattern
    except re.error as exc:
        raise click.BadParameter(f"{value!r} is not a valid regular expression: {exc}") from None


def trim_options(function: Callable) -> Callable:
    """The trimming options shared by commands that write a trace."""
    for option in reversed((
        click.option("--window", metavar="START:END", callback=_window,
                     help="Keep this time window, relative to the earliest timestamp "
                          "(units ns, us, ms, s; either side may be empty): 1.5s:2s, :300ms. "
                          "Slices overlapping it are clipped to it."),
        click.option("--only", metavar="REGEX", callback=_regex,
                     help="Keep slices whose name matches (re.search), and the slices "
                          "around them, so nesting stays valid."),
        click.option("--exclude", metavar="REGEX", callback=_regex,
                     help="Drop slices whose name matches (re.search)."),
        click.option("--tracks", metavar="REGEX", callback=_regex,
                     help="Keep tracks whose 'process / track' name matches (re.search): "
                          "'GPU', 'stream 7', 'rank 1: '."),
    )):
        function = option(function)
    return function


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
    """
    with handled_errors():
        check_inputs(inputs)   # a missing input is the first thing to hear about
        if not to and not output:
            raise FormatError("say what to write: --to FORMAT or -o OUTPUT")
        target = output or default_output(inputs, to)  # type: ignore[arg-type]
        trace = load_all(inputs, format, align, max_bytes=max_bytes)
        echo_digest(trace, inputs)
        echo_alignment(trace)
        trimming = TrimOptions(window, only, exclude, tracks)
        if trimming.active:
            trace = trim_with(trace, trimming)
        if "dataflow" in flows:
            trace = with_dataflow_flows(trace)
        if device_counters:
            from ..analysis.device_counters import with_device_counters

            trace = with_device_counters(trace)
        save(trace, target, format=to)
        if target != "-":
            click.echo(f"wrote {target}", err=True)
