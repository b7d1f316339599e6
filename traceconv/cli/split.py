"""``traceconv split INPUT --by step|time=DUR|rank -o DIR``."""

from __future__ import annotations

import os

import click

from ..presentation.json_text import json_text
from .app import app, handled_errors
from .options import OUTPUT_PATH

EPILOG = """\b
Examples:
  traceconv split big.pt.trace.json.gz --by step -o steps
  traceconv split big.json --by time=500ms -o windows --clip
  traceconv split merged.json --by rank -o ranks
  traceconv split big.json --by step -o steps --then perfetto --engine dask -j 2
  traceconv split big.json --by step -o pieces --target-size 200MB
  traceconv split big.json --by step -o steps --to perfetto --engine dask --address tcp://sched:8786
"""


@app.command(epilog=EPILOG)
@click.argument("input", metavar="INPUT")
@click.option("--by", "by", default="step", show_default=True, metavar="step|time=DUR|rank",
              help="Where to cut: at each step marker (PyTorch's ProfilerStep#N, Paddle's "
                   "ProfileStep#N, MegEngine's StopStep; a step's GPU work goes with it), every DUR "
                   "(time=250ms; units ns, us, ms, s), or one piece per rank of a merged trace.")
@click.option("-o", "--outdir", type=OUTPUT_PATH, required=True, metavar="DIR",
              help="Directory for the pieces and manifest.json (created if missing).")
@click.option("--clip", is_flag=True,
              help="Slices crossing a cut end at it, and continue from the start of each "
                   "later piece they overlap (marked \"Continued from\"); default: kept whole "
                   "in the window where they start. Either way they are counted.")
@click.option("--target-size", "target_size", metavar="SIZE",
              help="Group consecutive steps or windows into pieces of about SIZE (200MB, "
                   "1GiB; one step larger than SIZE is a piece of its own; 0: one piece "
                   "per step). Default: one piece per step or window, except with --then "
                   "or --to perfetto: the input's event bytes / (4 x -j), about four "
                   "pieces per worker, at least 32 MB. --by rank: one piece per rank "
                   "always.")
@click.option("--to", "to", default="chrome", show_default=True, metavar="FORMAT",
              help="Format of the pieces: chrome (JSON, the input's own) or perfetto "
                   "(each JSON piece converted, then removed).")
@click.option("--then", "then", metavar="FORMAT",
              help="Also convert each JSON piece to FORMAT (perfetto), through the batch "
                   "engines.")
@click.option("--engine", type=click.Choice(["local", "dask", "ray"]), default="local",
              show_default=True, help="Where the conversions run (as `traceconv batch`).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Conversion workers (local processes, or the dask/ray workers started).")
@click.option("--address", metavar="ADDRESS",
              help="An existing dask scheduler (tcp://host:8786) or ray cluster; its workers "
                   "must see DIR.")
@click.option("--overview/--no-overview", "overview", default=True, show_default=True,
              help="Also write DIR/overview.pftrace: the whole run in one small trace "
                   "(`traceconv overview`), with a track naming the piece of each part.")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest (JSON).")
def split(input: str, by: str, outdir: str, clip: bool, target_size: str | None, to: str,
          then: str | None, engine: str, jobs: int, address: str | None, overview: bool,
          as_json: bool) -> None:
    """Cut a Chrome/Kineto JSON trace of any size into complete traces, in bounded memory.

    Two streaming passes (one finds the steps, one routes every event to its piece through
    temporary files), so memory does not grow with the input. Every piece repeats the
    envelope and the process/thread names; slices and flows crossing a cut, and memory
    blocks alive across one, are counted in DIR/manifest.json. A window without events
    of its own is not written (counted as empty_windows). With a conversion, each piece
    goes to the workers as soon as no later part of the file can add to it, while the
    events are still being cut; a piece whose worker dies is run once more, then
    reported.
    """
    from ..errors import UsageError
    from ..splitting import split as run_split
    from ..units import UnitError, parse_bytes
    from .progress import passes

    with handled_errors():
        try:
            size = parse_bytes(target_size) if target_size is not None else None
        except UnitError as exc:
            raise UsageError(f"--target-size: {exc}") from None
        with passes(input, 2) as meter:   # (surveying, cutting)
            manifest = run_split(input, outdir, by, clip=clip, to=to, then=then,
                                 engine=engine, jobs=jobs, address=address,
                                 target_size=size, overview=overview, progress=meter)
    if as_json:

        click.echo(json_text(manifest).decode())
        return
    cuts = manifest["cuts"]
    empty = f" ({_counted(manifest['empty_windows'], 'empty window')} not written)" \
        if manifest["empty_windows"] else ""
    also = ", overview.pftrace" if "overview" in manifest else ""
    click.echo(f"wrote {_counted(len(manifest['pieces']), 'piece')}{empty}{also} and "
               f"manifest.json to {os.path.normpath(outdir)}: "
               f"{_counted(cuts['slices'], 'slice')} and {_counted(cuts['flows'], 'flow')} "
               f"cut, {_counted(cuts['memory_blocks_carried'], 'memory block')} carried")
    failed = manifest.get("converted", {}).get("failed", [])
    for line in failed:
        click.echo(f"traceconv: error: {line}", err=True)
    if failed:
        raise SystemExit(1)


def _counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless one.

    >>> _counted(1, "piece"), _counted(0, "flow"), _counted(28, "memory block")
    ('1 piece', '0 flows', '28 memory blocks')
    """
    return f"{count} {noun}{'' if count == 1 else 's'}"
