"""Options that several commands share, declared with click alone.

Declaring an option must not import what the command runs (numpy, the model, the
analyses): ``traceconv --help`` declares every command. So the few choice lists that the
analyses own are repeated here, and a test keeps them equal to the analyses' own
(``tests/test_cli_front_door.py``); values are checked by the analyses when they run.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import click

from ..io import DEFAULT_MAX_BYTES, parse_size
from ..units import format_bytes

ALIGN_MODES = ("none", "auto", "collectives")                 # analysis.align.MODES
AGGREGATES = ("sum", "mean", "max", "min")                     # analysis.summary.AGGREGATES
COLOR_BY = ("lifetime", "op-type", "category", "owner")        # formats.memflow_svg.COLOR_BY
PICTURE_WIDTH, PICTURE_HEIGHT = (400, 100_000), (300, 100_000)  # memflow_svg.WIDTH_RANGE, ...


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


class OutputPath(click.ParamType):
    """``-o PATH``: where a command writes. An empty name is a usage error: taken as no
    ``-o``, it would write the default output beside the input.

    >>> OutputPath().convert("out.pftrace", None, None)
    'out.pftrace'
    >>> OutputPath().convert("", None, None)
    Traceback (most recent call last):
    click.exceptions.BadParameter: an empty name: name a file or folder (`-` is standard output where a command writes one file)
    """

    name = "PATH"

    def convert(self, value, param, ctx) -> str:  # type: ignore[no-untyped-def]
        if value == "":
            self.fail("an empty name: name a file or folder (`-` is standard output where a "
                      "command writes one file)", param, ctx)
        return str(value)


OUTPUT_PATH = OutputPath()

max_bytes_option = click.option(
    "--max-bytes", type=ByteSize(), default=DEFAULT_MAX_BYTES, metavar="SIZE",
    help=f"Refuse an input holding more than SIZE bytes once decompressed (e.g. 500M, 32GiB; "
         f"MB/GB are decimal, M/MiB binary; default {format_bytes(DEFAULT_MAX_BYTES, 4)}): a "
         "small .gz can expand without bound.")

ALIGN_OPTION = click.option(
    "--align", type=click.Choice(ALIGN_MODES), default="auto", show_default=True,
    help="Several ranks: shift each rank's clock so that matching collectives end together. "
         "auto = only when ranks disagree by more than 0.5 ms; collectives = always; "
         "none = never. The shift and the residual skew per rank go to diagnostics.")

wide_option = click.option(
    "--wide", is_flag=True,
    help="Draw tables at their full width (default: fit the terminal, or COLUMNS: the "
         "least needed columns hidden, long names elided in the middle with …).")


def _window(_ctx: click.Context, _param: click.Parameter,
            value: str | None) -> tuple[int | None, int | None] | None:
    from ..analysis.trim import parse_window

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
