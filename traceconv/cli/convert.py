"""``traceconv [convert] IN... --to FORMAT [-o OUT]``."""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING

import click

from ..io import DEFAULT_MAX_BYTES
from ..memory_check import GZIP_GUESS, expanded_size
from ..output_names import output_name
from .app import app, handled_errors
from .digest import echo_digest, written_digest
from .loading import echo_alignment, load_all
from .options import ALIGN_OPTION, OUTPUT_PATH, ByteSize, max_bytes_option, trim_options

if TYPE_CHECKING:
    from ..analysis.align import Mode
    from ..model import Diagnostics, Trace

SPILL_ABOVE = 1 << 30   # input bytes from which --spill-args is the default

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
@click.option("-o", "--output", type=OUTPUT_PATH, metavar="PATH",
              help="Output file; `-` is standard output; a .gz name compresses. "
                   "Default: the first input's name with the format's extension.")
@click.option("--format", "format", metavar="NAME",
              help="Input format, when detection by name and content is not wanted.")
@click.option("--flows", type=click.Choice(["dataflow"]), multiple=True,
              help="Add flows: dataflow = producer op -> consumer op (from the op graph).")
@click.option("--device-counters", is_flag=True,
              help="Add counter tracks: launch queue per stream, memcpy bandwidth (GB/s) per "
                   "device and copy direction.")
@click.option("--spill-args/--no-spill-args", "spill_args", default=None,
              help="Keep the events' argument texts in a scratch file beside the output "
                   "while converting, not in memory (the same output, about 40 % less "
                   "peak memory for a Kineto trace). Default: on when the inputs hold "
                   f"{SPILL_ABOVE >> 30} GiB or more (a .gz counted at {GZIP_GUESS}x its "
                   "size).")
@click.option("--memory-check/--no-memory-check", "memory_check", default=True,
              help="Estimate the memory converting a JSON input whole needs (about a third "
                   "of the JSON with --spill-args, 0.85x without) and refuse, saying what to "
                   "run instead (overview, split), when this machine (or its container) "
                   "has less available: a file before it is read, a compressed or piped "
                   "input as its bytes are read (TRACECONV_MEMORY_CHECK=off: for every "
                   "command). Default: on.")
@click.option("--piece-by-piece/--whole", "piece_by_piece", default=None,
              help="Convert a Chrome / Kineto JSON trace to .pftrace one piece at a time, in "
                   "bounded memory whatever its size (cut as `split` cuts, by step or time; "
                   "every piece read and written on as one trace: the same slices, counters, "
                   "memory blocks and diagnostics; only flows between pieces are lost, "
                   "counted as stream.flows_cut), or whole. Default: piece by piece when "
                   "reading it whole would need more than 1 GiB or more than is available.")
@ALIGN_OPTION
@trim_options
@max_bytes_option
def convert(inputs: tuple[str, ...], to: str | None, output: str | None,
            format: str | None, flows: tuple[str, ...] = (), align: Mode = "auto",
            window: tuple[int | None, int | None] | None = None, only: str | None = None,
            exclude: str | None = None, tracks: str | None = None,
            max_bytes: int = DEFAULT_MAX_BYTES, device_counters: bool = False,
            spill_args: bool | None = None, memory_check: bool = True,
            piece_by_piece: bool | None = None) -> None:
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
    A Chrome / Kineto JSON trace too big to read whole (more than 1 GiB of memory, or more
    than is available) is converted to .pftrace piece by piece, in bounded memory
    (--piece-by-piece / --whole); another input that would not fit is refused before it is
    read, saying what to run instead (`overview`, `split`); --no-memory-check tries anyway.
    """
    from .. import registry
    from ..api import check_inputs
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
        reshaped = any(x is not None for x in (window, only, exclude, tracks)) \
            or bool(flows) or device_counters
        if _in_pieces(inputs, format, registry.for_output(target, to).name, piece_by_piece,
                      reshaped, memory_check):
            from ..streaming import convert_piece_by_piece
            from .progress import PASS_ORDER, passes

            with passes(inputs[0], len(PASS_ORDER)) as meter:
                loaded, written = convert_piece_by_piece(inputs[0], target, progress=meter)
            # (after the write, as below: a refusal is then the run's only line)
            click.echo(f"traceconv: {inputs[0]}: converted piece by piece, in bounded "
                       "memory (--whole reads it at once)", err=True)
            echo_digest(loaded, inputs)
            line = written_digest(written, target)
            if line is not None:
                click.echo(line, err=True)
            if target != "-":
                click.echo(f"wrote {target}", err=True)
            return
        with _args_storage(inputs, target, spill_args):
            loaded, written = _converted(inputs, target, to, format, align, max_bytes,
                                         memory_check, window, only, exclude, tracks, flows,
                                         device_counters)
            # (after the write: a refusal to write is then the run's only line on stderr)
            echo_digest(loaded, inputs)
            echo_alignment(loaded)
            line = written_digest(written, target)
            if line is not None:
                click.echo(line, err=True)
        if target != "-":
            click.echo(f"wrote {target}", err=True)


def _in_pieces(inputs: tuple[str, ...], format: str | None, target_format: str,
               asked: bool | None, reshaped: bool, memory_check: bool) -> bool:
    """Whether the conversion goes piece by piece (:mod:`traceconv.streaming`): one input,
    converted as it is (no --window, --only, --flows...), and
    :func:`~traceconv.streaming.goes_piece_by_piece`."""
    from ..errors import UsageError
    from ..streaming import goes_piece_by_piece

    if len(inputs) != 1 or reshaped:
        if asked:
            raise UsageError("--piece-by-piece converts one input as it is: no --window, "
                             "--only, --exclude, --tracks, --flows or --device-counters")
        return False
    return goes_piece_by_piece(inputs[0], format, target_format, asked, memory_check)


def _converted(inputs: tuple[str, ...], target: str, to: str | None, format: str | None,
               align: Mode, max_bytes: int, memory_check: bool,
               window: tuple[int | None, int | None] | None,
               only: str | None, exclude: str | None, tracks: str | None,
               flows: tuple[str, ...], device_counters: bool) -> tuple[Trace, Diagnostics]:
    """Read ``inputs``, apply the options, write ``target``; return the trace as read and
    what the writer counted (slices moved to overlap lanes...)."""
    from ..api import save

    trace = loaded = load_all(inputs, format, align, max_bytes=max_bytes,
                              memory_check=memory_check)
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
    return loaded, save(trace, target, format=to)


def spills(inputs: tuple[str, ...], asked: bool | None) -> bool:
    """Whether the argument texts go to disk: as asked, else for inputs of
    :data:`SPILL_ABOVE` bytes or more (a ``.gz`` counted at :data:`GZIP_GUESS` times its size;
    standard input never).

    >>> spills(("samples/torch/cnn_step5.pt.trace.json",), None), spills(("-",), True)
    (False, True)
    """
    if asked is not None:
        return asked
    total = 0
    for name in inputs:
        if name != "-" and os.path.isfile(name):
            total += expanded_size(name)
    return total >= SPILL_ABOVE


def _args_storage(inputs: tuple[str, ...], target: str,
                  asked: bool | None) -> contextlib.AbstractContextManager[object]:
    """The block in which the readers keep argument texts on disk (beside ``target``), or
    one that changes nothing."""
    if not spills(inputs, asked):
        return contextlib.nullcontext()
    from ..spilled_texts import texts_on_disk

    return texts_on_disk(None if target == "-" else os.path.dirname(os.path.abspath(target)))
