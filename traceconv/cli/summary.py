"""``traceconv summary IN [options] [--json]``: per-operator table: torch.profiler's
key_averages for timelines, MegEngine's profile_analyze for MegEngine profiles."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ..io import DEFAULT_MAX_BYTES
from ..presentation.json_text import json_text
from ..presentation.tables import console_for, table_width
from .allocation_sites import sites_data, sites_table
from .app import app, handled_errors
from .device_views import STEPS_OPTION, device_data, device_views, print_device_views, with_steps
from .graph_capture import GRAPH_CAPTURE_OPTION, replay_line, with_capture
from .loading import load_all
from .options import AGGREGATES, ALIGN_OPTION, max_bytes_option, wide_option
from .stragglers import print_stragglers

if TYPE_CHECKING:
    from ..analysis.align import Mode


@app.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("-t", "--top", type=int, default=None,
              help="Rows to print after sorting; 0 = all. Default: 20 (all with --json), "
                   "3 for MegEngine profiles (as profile_analyze).")
@click.option("--sort-by", metavar="COLUMN", help="Timelines: sort column, descending: "
              "self_device_ns (default when there is device time), self_host_ns, "
              "device_total_ns, host_total_ns, calls, flops, self_memory_bytes, name; torch's "
              "names work too (self_cpu_time_total, cuda_time_total, count...).")
@click.option("--group-by-input-shape", is_flag=True,
              help="Timelines: one row per (name, input shapes), as key_averages(group_by_"
                   "input_shape=True); needs record_shapes.")
@click.option("--type", "types", multiple=True, metavar="TYPE",
              help="Keep operators of this type (repeatable).")
@click.option("--aggregate-by", type=click.Choice(["type"]),
              help="Group rows by operator type.")
@click.option("--aggregate", type=click.Choice(AGGREGATES),
              help="Aggregate per group (one group 'all' without --aggregate-by; "
                   "default sum when grouping).")
@click.option("--opr-name", metavar="REGEX", help="Keep operators whose name matches "
              "(re.match: anchored at the start).")
@click.option("--input-dtype", metavar="DTYPE", help="Keep operators with an input of "
              "this dtype (e.g. Float32).")
@click.option("--order-by", default="time", show_default=True, metavar="[+]COLUMN",
              help="Sort column, descending; '+' = ascending: time, memory, computation, "
                   "flops, bandwidth, opr_id, count.")
@click.option("--min-time", type=float, default=float("-inf"), metavar="SECONDS",
              help="Drop operators faster than this.")
@click.option("--max-time", type=float, default=float("inf"), metavar="SECONDS",
              help="Drop operators slower than this.")
@click.option("--top-end-key", type=click.Choice(["end", "kern"]), default="end",
              show_default=True, help="Op time = END - start (kern: waiting time only).")
@click.option("--show-host", is_flag=True, help="Also print the host table.")
@click.option("--print-only", type=click.Choice(["summary", "device", "host"]),
              help="Print only this block.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--launch-stats", is_flag=True, help="Kernel launch statistics: CPU and GPU "
              "duration, launch delay (kernel start - end of its runtime call, clipped at 0).")
@click.option("--as", "definition", type=click.Choice(["traceconv", "hta"]),
              default="traceconv", show_default=True,
              help="--launch-stats by whose definition: traceconv's (every linked launch, "
                   "exact ns) or HTA's get_cuda_kernel_launch_stats (its launch calls, µs).")
@click.option("--streams", is_flag=True, help="Idle time per stream, split by cause.")
@click.option("--by-annotation", is_flag=True, help="GPU time per user annotation.")
@click.option("--sequences", type=int, default=0, metavar="N",
              help="The most frequent kernel sequences of N kernels.")
@GRAPH_CAPTURE_OPTION
@STEPS_OPTION
@click.option("--format", "format", metavar="NAME", help="Input format (skip detection).")
@ALIGN_OPTION
@max_bytes_option
@wide_option
def summary(inputs: tuple[str, ...], top: int | None, sort_by: str | None,
            group_by_input_shape: bool, types: tuple[str, ...],
            aggregate_by: str | None, aggregate: str | None, opr_name: str | None,
            input_dtype: str | None, order_by: str, min_time: float, max_time: float,
            top_end_key: str, show_host: bool, print_only: str | None, as_json: bool,
            format: str | None, align: Mode = "auto",
            max_bytes: int = DEFAULT_MAX_BYTES, launch_stats: bool = False,
            streams: bool = False, by_annotation: bool = False, sequences: int = 0,
            steps: str | None = None, wide: bool = False,
            definition: str = "traceconv", graph_capture: str | None = None) -> None:
    """Per-operator time, calls, FLOPs and memory.

    On a timeline (PyTorch / Kineto, Chrome JSON, Perfetto...) the numbers of torch.profiler's
    prof.key_averages(): per name, calls, self and total host time, self device time
    (kernels, memcpy, memset) and device total (the device work an op launched, itself or
    through its children), FLOPs and self memory. On MegEngine profiles the numbers of
    MegEngine's profile_analyze (its options: --type, --aggregate-by, --order-by,
    --show-host...); on Paddle reports and MIGraphX summaries, their statistics.

    \b
      traceconv summary model.pt.trace.json -t 10
      traceconv summary model.pt.trace.json --sort-by self_cpu_time_total
      traceconv summary model.pt.trace.json --group-by-input-shape --json
      traceconv summary profile.json --aggregate-by type --aggregate sum -t 0
      traceconv summary rank0.json rank1.json    (adds the straggler table of the ranks)
      traceconv summary replay.json --graph-capture capture.json --by-annotation
    """

    from ..analysis.runs import split_runs
    from ..analysis.stragglers import stragglers
    from ..analysis.summary import SummaryOptions, view_of
    from ..api import refuse_untimed_summary
    from ..errors import TraceconvError
    from ..presentation.summary import render, summary_data

    with handled_errors():
        trace = load_all(inputs, format, align, max_bytes=max_bytes)
        replay: dict[str, Any] = {}
        if graph_capture:   # (before --steps: the mapping follows the graph launch's flows)
            trace, replay = with_capture(trace, load_all((graph_capture,), None, "none",
                                                         max_bytes=max_bytes))
        trace = with_steps(trace, steps, inputs[0])
        refuse_untimed_summary(trace)
        views: dict[str, Any] = {"launch_stats": launch_stats, "streams": streams,
                                 "by_annotation": by_annotation, "sequences": sequences}
        extra = (device_data(trace, **views, definition=definition)
                 if device_views(views) else {})
        options = SummaryOptions(
            3, types, aggregate_by, aggregate,  # type: ignore[arg-type]
            opr_name, input_dtype, order_by, min_time, max_time,
            top_end_key)  # type: ignore[arg-type]
        try:
            if as_json:
                data = summary_data(trace, options, top=top, sort_by=sort_by,
                                    group_by_input_shape=group_by_input_shape,
                                    show_host=show_host, print_only=print_only)
            else:
                text = render(trace, options, top=top, sort_by=sort_by,
                              group_by_input_shape=group_by_input_shape, show_host=show_host,
                              print_only=print_only, width=table_width(wide))
        except (ValueError, TypeError) as exc:  # a bad sort column or --opr-name regex
            raise TraceconvError(str(exc)) from None
        if as_json:
            if len(inputs) > 1:
                data["stragglers"] = [row.as_dict() for row in stragglers(trace)]
            if print_only == "summary":   # the totals only, as the text block prints them
                data = {key: value for key, value in data.items() if "total" in key}
            data.update(extra)
            if replay:
                data["graph_replay"] = replay
            click.echo(json_text(data).decode())
        else:
            click.echo(text, nl=False)
            if replay:
                click.echo(replay_line(replay))
                print_device_views({"captured_ops": replay["ops"]}, wide)
            if extra:
                print_device_views(extra, wide)
            rows = stragglers(trace) if len(inputs) > 1 else []
            if rows:
                print_stragglers(rows, (trace.time_range or (0, 0))[0], wide)
            if trace.memory and not print_only:
                console = console_for(wide)
                several = split_runs(trace) if view_of(trace) != "timeline" else []
                for number, (_, run) in enumerate(several or [("", trace)], 1):
                    of = f"run {number} of {len(several)}" if several else ""
                    console.print(sites_table(sites_data(run, top or 10), console.width, of))
