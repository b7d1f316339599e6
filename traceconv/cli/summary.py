"""``traceconv summary IN [options] [--json]``: per-operator table, like profile_analyze."""

from __future__ import annotations

import click
import orjson

from ..analysis.align import Mode
from ..analysis.stragglers import stragglers
from ..analysis.summary import AGGREGATES, SummaryOptions, summarize
from ..errors import TraceconvError
from ..formats.summary import render_text, summary_dict
from .app import app, handled_errors
from .convert import ALIGN_OPTION, load_all
from .stragglers import print_stragglers

# The totals stay in every --json object (profile_analyze prints them with any block).
_TOTALS = ("total_device_time", "total_host_time")
_PRINT_ONLY_KEYS = {"summary": _TOTALS, "device": (*_TOTALS, "rows"),
                    "host": (*_TOTALS, "host_rows")}


@app.command()
@click.argument("inputs", nargs=-1, required=True, metavar="INPUT...")
@click.option("-t", "--top", default=3, show_default=True,
              help="Rows to print after sorting; 0 = all.")
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
@click.option("--format", "format", metavar="NAME", help="Input format (skip detection).")
@ALIGN_OPTION
def summary(inputs: tuple[str, ...], top: int, types: tuple[str, ...],
            aggregate_by: str | None, aggregate: str | None, opr_name: str | None,
            input_dtype: str | None, order_by: str, min_time: float, max_time: float,
            top_end_key: str, show_host: bool, print_only: str | None, as_json: bool,
            format: str | None, align: Mode = "auto") -> None:
    """Per-operator time, FLOPs, memory and bandwidth; the numbers of MegEngine's
    profile_analyze for MegEngine profiles, self time per slice name for any timeline.

    \b
      traceconv summary profile.json -t 10
      traceconv summary profile.json --aggregate-by type --aggregate sum -t 0
      traceconv summary profile.json --order-by +time --show-host --json
      traceconv summary rank0.json rank1.json    (adds the straggler table of the ranks)
    """
    with handled_errors():
        options = SummaryOptions(top, types, aggregate_by, aggregate, opr_name, input_dtype,
                                 order_by, min_time, max_time, top_end_key)
        trace = load_all(inputs, format, align)
        try:
            result = summarize(trace, options)
        except (ValueError, TypeError) as exc:  # a bad --order-by column or --opr-name regex
            raise TraceconvError(str(exc)) from None
        if as_json:
            data = summary_dict(result, show_host=show_host or print_only == "host")
            if len(inputs) > 1:
                data["stragglers"] = [row.as_dict() for row in stragglers(trace)]
            if print_only:   # the JSON keys of the block asked for, as the text prints it
                data = {key: value for key, value in data.items()
                        if key in _PRINT_ONLY_KEYS[print_only]}
            click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
        else:
            click.echo(render_text(result, show_host=show_host, print_only=print_only),
                       nl=False)
            rows = stragglers(trace) if len(inputs) > 1 else []
            if rows:
                print_stragglers(rows, (trace.time_range or (0, 0))[0])
