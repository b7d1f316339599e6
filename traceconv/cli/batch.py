"""``traceconv batch INPUT... -o OUTDIR --to FORMAT [--engine local|dask|ray] [-j N]``."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from ..presentation.json_text import json_text
from ..presentation.tables import console_for
from .app import app, handled_errors
from .options import ALIGN_OPTION, OUTPUT_PATH, trim_options, wide_option

if TYPE_CHECKING:
    from rich.table import Table

    from ..analysis.align import Mode
    from ..analysis.trim import TrimOptions
    from ..batch.jobs import BatchResult, Task
    from ..model import Trace

EPILOG = """\b
Examples:
  traceconv batch runs/*.json.gz -o out --to perfetto          one .pftrace per input
  traceconv batch rank*.json -o out --to perfetto --merge      one aligned trace of all ranks
  traceconv batch big/*.json -o out --to chrome --engine dask -j 8
  traceconv batch big/*.json -o out --to chrome --engine dask --address tcp://sched:8786
"""


@app.command(epilog=EPILOG)
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("-o", "--outdir", type=OUTPUT_PATH, required=True, metavar="OUTDIR",
              help="Directory for the outputs (created if missing); one file per input, "
                   "named after it.")
@click.option("--to", "to", required=True, metavar="FORMAT",
              help="Output format: perfetto, chrome, ... (`traceconv formats`).")
@click.option("--engine", type=click.Choice(["local", "dask", "ray"]), default="local",
              show_default=True, help="Where the work runs: local = a process pool here; "
                                      "dask / ray = a cluster (pip install 'traceconv[dask]').")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=os.cpu_count() or 1,
              show_default="CPU count", help="Workers (local processes, or the dask/ray "
                                             "workers started for the run).")
@click.option("--address", metavar="ADDRESS",
              help="dask scheduler (tcp://host:8786) or ray cluster address; default: a "
                   "cluster of -j workers on this machine, started for the run. One that "
                   "does not answer within --connect-timeout is an error.")
@click.option("--connect-timeout", type=click.FloatRange(min=0.1), default=10.0,
              show_default=True, metavar="SECONDS",
              help="How long to wait for the --address scheduler to answer.")
@click.option("--merge", is_flag=True,
              help="Read all inputs (in parallel) and write one merged trace, OUTDIR/merged.")
@ALIGN_OPTION
@trim_options
@click.option("--format", "format", metavar="NAME", help="Input format (skip detection).")
@click.option("--json", "as_json", is_flag=True,
              help='Print one JSON object: {"engine", "jobs", "failed", "results": [{"file", '
                   '"output", "status", "events", "seconds", "error", ...}]}.')
@wide_option
def batch(inputs: tuple[str, ...], outdir: str, to: str, engine: str, jobs: int,
          address: str | None, merge: bool, align: Mode, format: str | None,
          as_json: bool, window: tuple[int | None, int | None] | None = None,
          only: str | None = None, exclude: str | None = None,
          tracks: str | None = None, connect_timeout: float = 10.0, wide: bool = False) -> None:
    """Convert many traces on a pool of workers: one output per input, or --merge.

    A bad input is reported and the others go on; the exit status is 1 at the end if any
    input failed. Each worker holds one input at a time. The outputs are the same bytes
    whatever the engine. Trimming options apply to each input (with --merge: to the merged
    trace, the window relative to its earliest timestamp, as convert does).
    """

    from .. import registry
    from ..analysis.trim import TrimOptions
    from ..batch import plan, run_batch
    from ..batch.jobs import convert_one, load_one
    from ..output_files import output_folder
    from ..outputs import refuse_replacing_inputs

    results: list[BatchResult] = []
    with handled_errors():
        registry.get(to)   # an unknown format is refused before any work
        if merge:
            refuse_replacing_inputs([_merged_name(outdir, to)], inputs)
        output_folder(outdir)
        trimming = TrimOptions(window, only, exclude, tracks)
        tasks = plan(list(inputs), outdir, to, format, None if merge else trimming)
        job = load_one if merge else convert_one
        traces: dict[str, Trace] = {}
        running = run_batch(job, tasks, engine, jobs, address, connect_timeout=connect_timeout)
        for item in _progress(running, len(tasks)):
            # (a task whose worker died is a plain result, even with --merge)
            result, trace = item if isinstance(item, tuple) else (item, None)
            results.append(result)
            if trace is not None:
                traces[result.file] = trace
        order = {path: i for i, path in enumerate(inputs)}
        results.sort(key=lambda r: order[r.file])
        if merge:
            results.append(_write_merged(tasks, traces, outdir, to, align, trimming))
    failed = sum(r.status != "ok" for r in results)
    if as_json:
        click.echo(json_text({"engine": engine, "jobs": jobs, "failed": failed,
                                 "results": [r.as_dict() for r in results]}).decode())
    else:
        console = console_for(wide)
        console.print(_table(results, console.width))
    for r in results:
        if r.status != "ok":
            click.echo(f"traceconv: error: {r.error}", err=True)
    if failed:
        sys.exit(1)


def _write_merged(tasks: list[Task], traces: dict[str, Trace], outdir: str, to: str,
                  align: Mode, trimming: TrimOptions) -> BatchResult:
    """Merge the traces read (in input order) and write OUTDIR/merged.<ext>."""
    import time

    from ..analysis.trim import trim_with
    from ..api import combine, save
    from ..batch.jobs import BatchResult
    from ..errors import TraceconvError

    output = _merged_name(outdir, to)
    began = time.perf_counter()
    loaded = [traces[t.path] for t in tasks if t.path in traces]
    if not loaded:
        return BatchResult("(merged)", None, "failed", error="no input could be read")
    try:
        trace = combine(loaded, align=align)   # (as convert: statistics join, not ranks)
        if trimming.active:
            trace = trim_with(trace, trimming)
        save(trace, output, format=to)
    except TraceconvError as exc:
        return BatchResult("(merged)", None, "failed", error=str(exc))
    return BatchResult("(merged)", output, "ok",
                       len(trace.slices) + len(trace.instants) + len(trace.counters),
                       time.perf_counter() - began,
                       diagnostics=trace.diagnostics.as_list())


def _merged_name(outdir: str, to: str) -> str:
    from .. import registry
    from ..outputs import ChosenPath

    return ChosenPath(os.path.join(outdir, "merged" + registry.get(to).default_extension))


def _progress(items: Iterator[Any], total: int) -> Iterator[Any]:
    """Pass ``items`` through, drawing a bar on stderr when it is a terminal."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    console = Console(stderr=True)
    columns = (TextColumn("converting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, disable=not console.is_terminal,
                  transient=True) as bar:
        task = bar.add_task("files", total=total)
        for item in items:
            yield item
            bar.advance(task)


def _table(results: list[BatchResult], width: int) -> Table:
    from ..presentation.tables import Column, fitted_table

    columns = [Column("file"), Column("events", True), Column("seconds", True, drop=1),
               Column("status")]
    cells = [[r.file, f"{r.events:,}", f"{r.seconds:.2f}", r.status] for r in results]
    failed = sum(r.status != "ok" for r in results)
    table = fitted_table(columns, cells, width)
    hidden = f"\n{table.caption}" if table.caption else ""   # (the columns hidden, if any)
    table.caption = f"{len(results) - failed} ok, {failed} failed{hidden}"
    table.caption_justify = "left"
    return table
