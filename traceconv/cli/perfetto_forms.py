"""Perfetto's ``traceconv`` command forms: ``json IN [OUT]``, ``text IN [OUT]``, and a clear
answer for the modes only Perfetto's tool has.

Perfetto ships a CLI of the same name (``traceconv json IN OUT``, ``traceconv text IN``,
``traceconv systrace ...``), and tools such as AMD TraceLens run it from PATH as
``traceconv json in.pftrace out.json``. These forms behave as Perfetto's: the input is read
(standard input when absent), the output written (standard output when absent or ``-``).
A file literally named ``json`` or ``text`` is still an input: ``traceconv ./json ...``.
"""

from __future__ import annotations

import click

from ..outputs import refuse_replacing_inputs
from .app import app, handled_errors

# Perfetto traceconv modes this traceconv does not have, and where to get them.
PERFETTO_ONLY = {
    "systrace": "the ftrace text format of Android systrace",
    "profile": "pprof profiles from heap profiles and callstack samples",
    "bundle": "a trace bundled with its symbols",
    "firefox": "the Firefox profiler format",
    "java_heap_profile": "Java heap profiles",
    "hprof": "Java heap dumps",
    "symbolize": "symbolization",
    "deobfuscate": "deobfuscation",
    "decompress_packets": "decompressed packets",
    "binary": "a binary trace",
}


def _paths(input_path: str | None, output: str | None) -> tuple[str, str]:
    """(input, output): ``-`` where absent; an output that is the input is refused before
    reading (standard input too: ``traceconv json - p.json < p.json``)."""
    source, target = input_path or "-", output or "-"
    refuse_replacing_inputs([target], [source])
    return source, target


@app.command("json")
@click.argument("input_path", required=False, metavar="IN")
@click.argument("output", required=False, metavar="[OUT]")
def json_form(input_path: str | None, output: str | None) -> None:
    """Perfetto's `traceconv json IN [OUT]`: the trace as Chrome JSON (standard output when
    OUT is absent; standard input when IN is).

    \b
      traceconv json trace.pftrace trace.json
      traceconv json trace.pftrace | head
    """
    from ..api import load, save

    with handled_errors():
        source, target = _paths(input_path, output)
        save(load(source), target, format="chrome")


@app.command("text")
@click.argument("input_path", required=False, metavar="IN")
@click.argument("output", required=False, metavar="[OUT]")
def text_form(input_path: str | None, output: str | None) -> None:
    """Perfetto's `traceconv text IN [OUT]`: the packets of a .pftrace in protobuf text
    format (`packet { ... }`; standard output when OUT is absent).

    \b
      traceconv text trace.pftrace | less
    """
    from ..formats.perfetto.text_format import write_text
    from ..io import Source
    from ..output_files import atomic_output

    with handled_errors():
        source, target = _paths(input_path, output)
        with atomic_output(target, inputs=[source]) as out:
            write_text(Source(source), out)


def _perfetto_only(mode: str, what: str) -> click.Command:
    @click.command(mode, hidden=True,
                   context_settings={"ignore_unknown_options": True,
                                     "allow_extra_args": True})
    def command() -> None:
        click.echo(f"traceconv: error: '{mode}' ({what}) is a mode of Perfetto's traceconv, "
                   "which this traceconv does not have: run Perfetto's (curl -LO "
                   f"https://get.perfetto.dev/traceconv; python3 traceconv {mode} ...); this "
                   "one converts to json and text only", err=True)
        raise SystemExit(1)

    command.help = (f"Perfetto's `traceconv {mode}` ({what}): not in this traceconv; it says "
                    f"where to get it.\n\n\b\n  traceconv {mode} trace.pftrace OUT")
    return command


for _mode, _what in PERFETTO_ONLY.items():
    app.add_command(_perfetto_only(_mode, _what))
