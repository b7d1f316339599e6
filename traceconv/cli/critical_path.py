"""``traceconv critical-path TRACE [--json] [--highlight]``: the chain that sets the run time."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import click

from ..output_names import output_name
from ..presentation.json_text import json_text
from ..presentation.tables import Column, console_for, fitted_table, packed
from ..units import column_figures, format_duration
from .app import app, handled_errors
from .device_views import STEPS_OPTION, with_steps
from .graph_capture import GRAPH_CAPTURE_OPTION, path_captured_ops, with_capture
from .job_path_table import print_ranks
from .loading import load_all, load_each
from .nothing_to_show import nothing_to_show
from .options import OUTPUT_PATH, wide_option

if TYPE_CHECKING:
    from ..analysis.critical_path import CriticalPath


@app.command("critical-path")
@click.argument("inputs", nargs=-1, required=True, metavar="TRACE")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"mode", "length_ns", "span_ns", "breakdown", "path": [...]} '
              '(no path: "why_empty" says why, exit 1).')
@click.option("--highlight", is_flag=True,
              help="Also write a Perfetto trace with the path as a track and flows.")
@click.option("-o", "--output", type=OUTPUT_PATH, metavar="PATH",
              help="Where --highlight writes (default: TRACE_critical_path.pftrace).")
@click.option("--mode", type=click.Choice(["auto", "graph", "timeline"]), default="auto",
              show_default=True, help="graph: longest op → tensor → op chain; timeline: "
              "host op → launch → kernel → stream order → syncs.")
@click.option("--top", type=int, default=10, show_default=True,
              help="Rows of the table of largest contributors.")
@STEPS_OPTION
@GRAPH_CAPTURE_OPTION
@click.option("--format", "format", metavar="NAME", help="Input format (skip detection).")
@wide_option
def critical_path_command(inputs: tuple[str, ...], as_json: bool, highlight: bool,
                          output: str | None, mode: str, top: int, format: str | None,
                          steps: str | None = None, wide: bool = False,
                          graph_capture: str | None = None) -> None:
    """The critical path: the chain of dependent work (host ops, launches, kernels, copies,
    collectives, syncs) that sets the length of the run, split by kind, with idle gaps.

    Op graphs (MegEngine, MIGraphX, Paddle protobuf) give the longest producer → consumer
    chain; timelines the chain HTA-style; gaps are waits on another thread or device,
    untraced host time or idle. --highlight writes the path into a Perfetto trace.
    Several ranks (one trace each): the job's path, crossing ranks at collectives to the
    rank that arrived last, and per rank its waits at collectives and whom for.

    \b
      traceconv critical-path trace.pt.trace.json.gz
      traceconv critical-path trace.pt.trace.json.gz --json
      traceconv critical-path trace.pt.trace.json.gz --highlight -o path.pftrace
      traceconv critical-path rank*.pt.trace.json.gz --json
      traceconv critical-path replay.json --graph-capture capture.json
    """

    from ..analysis.critical_path import critical_path
    from ..analysis.job_path import job_critical_path
    from ..analysis.runs import split_runs
    from ..api import rank_traces, save
    from ..errors import UsageError
    from ..outputs import refuse_replacing_inputs

    with handled_errors():
        if highlight:
            refuse_replacing_inputs([output or _highlight_name(inputs)], inputs)
        ranks = rank_traces(load_each(inputs, format)) if len(inputs) > 1 else None
        if ranks is not None and len(ranks) > 1:
            if highlight:
                raise UsageError("--highlight draws the path of one trace; give one rank")
            job = job_critical_path([with_steps(r, steps, inputs[0]) for r in ranks])
            if not job.path:   # (the one rule of a single trace's empty path, below)
                nothing_to_show(f"no critical path: {_no_path_reason(*ranks)} (see "
                                "`traceconv info`)", ", ".join(inputs), as_json=as_json,
                                empty=job.as_dict())
            if as_json:
                click.echo(json_text(job.as_dict()).decode())
            else:
                _print(job, top, wide)
                print_ranks(job, wide)
            return
        trace = ranks[0] if ranks else load_all(inputs, format)
        if graph_capture:
            trace, _ = with_capture(trace, load_all((graph_capture,), None, "none"))
        trace = with_steps(trace, steps, inputs[0])
        if not (highlight or graph_capture) and (several := split_runs(trace)):
            paths = [(label, critical_path(run, mode)) for label, run in several]
            if as_json or any(path.path for _, path in paths):   # (else: refused below)
                _print_runs(paths, as_json, top, wide)
                return
        result = critical_path(trace, mode)
        if not result.path:   # (nothing to highlight either)
            nothing_to_show(f"no critical path: {_no_path_reason(trace)} (see `traceconv "
                            "info`)", inputs[0], as_json=as_json, empty=result.as_dict())
        target = None
        if highlight:
            from ..analysis.highlight import highlight as draw

            target = output or _highlight_name(inputs)
            save(draw(trace, result), target, format="perfetto" if not output else None)
    captured = path_captured_ops(trace, result.path) if graph_capture else None
    if as_json:
        data = result.as_dict()
        if captured is not None:
            data["captured_ops"] = captured.totals
            for item, op in zip(data["path"], captured.per_entry, strict=True):
                if op is not None:
                    item["captured_op"] = op
        click.echo(json_text(data).decode())
    else:
        _print(result, top, wide)
        if captured is not None:
            click.echo(captured.line(top))
    if target and target != "-":
        click.echo(f"wrote {target}", err=True)


def _no_path_reason(*traces) -> str:
    """Why ``traces`` (one, or a job's ranks) have no critical path."""
    from ..analysis.statistics_inputs import NOT_A_TIMELINE, statistics_not_timeline

    if all(statistics_not_timeline(trace) for trace in traces):
        return NOT_A_TIMELINE if len(traces) == 1 else f"each input: {NOT_A_TIMELINE}"
    return ("this trace holds no" if len(traces) == 1 else "no rank's trace holds any") + \
        " host or device work to walk"


def _highlight_name(inputs: tuple[str, ...]) -> str:
    return output_name(inputs, "perfetto", tag="_critical_path")


def _print_runs(results: list[tuple[str, CriticalPath]], as_json: bool, top: int, wide: bool) -> None:
    """Each run's path (a file holding several: its runs ran apart), as ``summary`` shows
    runs: ``run N of M`` blocks, ``{"runs": [...]}`` in JSON."""
    if as_json:
        click.echo(json_text({"runs": [{"run": number, "label": label, **result.as_dict()}
                                       for number, (label, result) in enumerate(results, 1)]
                              }).decode())
        return
    for number, (_, result) in enumerate(results, 1):
        if number > 1:
            click.echo()
        click.echo(f"run {number} of {len(results)} (FILE@{number} to diff):")
        _print(result, top, wide)


def _print(result, top: int, wide: bool = False) -> None:
    console = console_for(wide, highlight=False)
    length = result.length_ns or 1
    ranks = f" across {len(result.ranks)} ranks" if getattr(result, "ranks", None) else ""
    # (span_ns: first to last slice of work, not the trace's span: instants and memory
    # events outside the work do not lengthen it)
    console.print(f"critical path ({result.mode}{ranks}): {format_duration(result.length_ns)} of "
                  f"{format_duration(result.span_ns)} of {'the job' if ranks else 'work'}, "
                  f"{len(result.path)} links")
    console.print(packed([f"{kind} {format_duration(ns)} ({100 * ns / length:.1f}%)"
                          for kind, ns in result.breakdown.items() if ns], console.width))
    untimed = getattr(result, "not_timed", 0)
    if untimed:
        console.print(f"  {untimed:,} slice{'s' * (untimed != 1)} never ended in the input: "
                      "not on the path (no known length)")
    totals: dict[tuple[int | None, str, str], list[int]] = defaultdict(lambda: [0, 0])
    for entry in result.path:
        item = totals[(entry.rank, entry.name, entry.kind)]
        item[0] += entry.dur_ns
        item[1] += 1
    console.print(f"largest contributors (top {top}):")
    ranked = sorted(totals.items(), key=lambda kv: -kv[1][0])[:top]
    with_rank = bool(ranks)
    unit, on_path = column_figures([ns for _, (ns, _) in ranked])
    columns = ([Column("rank", True)] if with_rank else []) + [
        Column("name", symbols=True), Column("kind", drop=1), Column(f"on path {unit}", True),
        Column("%", True), Column("links", True, drop=2)]
    console.print(fitted_table(columns, [([str(rank)] if with_rank else []) + [
        name, kind, figure, f"{100 * ns / length:.1f}", f"{count:,}"]
        for ((rank, name, kind), (ns, count)), figure in zip(ranked, on_path, strict=True)],
        console.width))
