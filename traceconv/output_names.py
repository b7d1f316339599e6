"""Where outputs go: one naming rule for every command.

The rule (``convert``, ``batch``, ``memflow``, ``critical-path --highlight`` share it): the
input's name without its compression and trace suffixes (``.gz``, the last extension, then
``.pt.trace``, ``.trace``, ``.paddle_trace``), plus the format's extension, beside the input
(or in ``batch``'s OUTDIR). When that name is an input itself (``x.json --to chrome``), the
format's name goes before the extension: ``x.chrome.json``. So a default name never lands on
an input (:mod:`traceconv.outputs` refuses a name the user gives that is one).

>>> output_name(["runs/rank0.pt.trace.json.gz"], "perfetto")
'runs/rank0.pftrace'
>>> output_name(["profile.txt", "b.txt"], "chrome")
'profile_merged.json'
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TextIO

from . import registry
from .errors import OutputError
from .outputs import STDOUT, ChosenPath, Files, stem
from .registry import FormatInfo


def output_name(inputs: Sequence[str], to: str, *, outdir: str | None = None,
                tag: str = "", avoid: Files | None = None) -> str:  # a ChosenPath, or "-"
    """The default output of ``inputs`` written as format ``to`` (see the module's rule).

    ``outdir``: the folder to write in (default: beside the first input); ``tag``: added
    to the name (``_critical_path``); ``avoid``: the files the name must not be (default:
    ``inputs``). Several inputs give ``<first>_merged``; standard input gives ``-``.

    >>> output_name(["x.json"], "chrome"), output_name(["x.json"], "perfetto", tag="_path")
    ('x.chrome.json', 'x_path.pftrace')
    >>> output_name(["a/x.json.gz"], "chrome", outdir="out"), output_name(["-"], "chrome", outdir="o")
    ('out/x.json', 'o/stdin.json')
    """
    first = inputs[0]
    if first == STDOUT and outdir is None:   # standard input has no "beside"
        return STDOUT
    info = registry.get(to)
    if first == STDOUT:
        first = "stdin"
    avoid = Files(inputs) if avoid is None else avoid
    folder = os.path.dirname(first) if outdir is None else outdir
    base = stem(first) + ("_merged" if len(inputs) > 1 else "") + tag
    name = os.path.join(folder, base + info.default_extension)
    if avoid.find(name) is not None or name in inputs:
        name = os.path.join(folder, f"{base}.{info.name}{info.default_extension}")
    return ChosenPath(name)


class BinaryToTerminalError(OutputError):
    """A binary format asked for on standard output while that is a terminal.

    It is a usage error: the command line exits with status 2."""

    exit_status = 2


def refuse_binary_to_terminal(info: FormatInfo, target: str,
                              stream: TextIO | None = None) -> None:
    """Raise :class:`BinaryToTerminalError` when ``target`` is standard output, ``stream``
    (default ``sys.stdout``) is a terminal and ``info`` writes binary data; the message
    says how to write it instead.

    >>> from traceconv import registry
    >>> refuse_binary_to_terminal(registry.get("chrome"), "-")          # text: fine
    >>> refuse_binary_to_terminal(registry.get("perfetto"), "out.pftrace")   # a file: fine
    """
    stream = sys.stdout if stream is None else stream
    if target != STDOUT or not info.binary:
        return
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):   # replaced or closed stdout: not a terminal
        terminal = False
    if terminal:
        example = f"out{info.default_extension}"
        raise BinaryToTerminalError(
            f"{info.name} is a binary format: not writing it to a terminal; give -o "
            f"{example}, or redirect standard output (> {example})", file="<stdout>")
