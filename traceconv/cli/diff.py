"""``traceconv diff A [B] [--json]``: what changed between two profiles.

Timelines: per op and kernel, the time each had in the steps, with deltas that add up to the
change of the step window. Reports and summaries: per op, calls, total, CPU/device time,
ratio. ``FILE@N`` picks run N of a file that holds several; one file with two runs and no B
diffs its runs.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING

import click

from ..errors import TraceconvError
from ..presentation.tables import Column, console_for, fitted_table
from ..terminal import plain
from .app import app, handled_errors
from .device_views import STEPS_OPTION, with_steps
from .loading import load_all
from .options import wide_option

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from ..analysis.diff import OpDelta

_RUN_SUFFIX = re.compile(r"^(?P<path>.+)@(?P<run>\d+)$")


def _ms(ns: float | int | None) -> str:
    return "-" if ns is None else f"{ns / 1e6:,.3f}"


def _change(delta: float | int | None, scale: float = 1.0, fmt: str = "{:+,.3f}") -> str:
    """The signed change as printed, blank when it rounds to nothing."""
    text = "" if not delta else fmt.format(delta / scale)
    return "" if not text.strip("+-0.,") else text


def _short(path: str) -> str:
    """The last two components of an op path: enough to tell ops apart in a table."""
    parts = path.split("/")
    return path if len(parts) <= 2 else "…/" + "/".join(parts[-2:])


# in a narrow terminal the least needed columns go first (highest number), op and Δ stay
_STAT_COLUMNS = [Column("section", drop=3), Column("op"), Column("calls A", True, drop=5),
                 Column("calls B", True, drop=5), Column("Δ calls", True, drop=2),
                 Column("total A ms", True, drop=1), Column("total B ms", True, drop=1),
                 Column("Δ total ms", True), Column("Δ CPU ms", True, drop=4),
                 Column("Δ GPU ms", True, drop=4), Column("ratio A %", True, drop=6),
                 Column("ratio B %", True, drop=6)]


def _table(rows: list[OpDelta], title: str, width: int) -> Table:
    cells = []
    for r in rows:
        a, b, d = r.a, r.b, r.delta
        cells.append([
            plain(r.section), plain(_short(r.name)), "-" if a is None else f"{a.calls:,}",
            "-" if b is None else f"{b.calls:,}", _change(d["calls"], fmt="{:+,.0f}"),
            _ms(None if a is None else a.total_ns), _ms(None if b is None else b.total_ns),
            _change(d["total_ns"], 1e6), _change(d["cpu_ns"], 1e6), _change(d["device_ns"], 1e6),
            "-" if a is None or a.ratio is None else f"{a.ratio:.2f}",
            "-" if b is None or b.ratio is None else f"{b.ratio:.2f}"])
    return fitted_table(_STAT_COLUMNS, cells, width, title=title, title_justify="left")


def _load(spec: str, format: str | None):
    """Load ``PATH`` or ``PATH@N`` (run N of a file with several runs)."""
    from ..analysis.runs import select_run

    match = _RUN_SUFFIX.match(spec)
    if match and not os.path.exists(spec):
        trace = load_all((match["path"],), format)
        try:
            return select_run(trace, int(match["run"]))
        except ValueError as exc:
            raise TraceconvError(f"no {exc}", file=match["path"]) from None
    return load_all((spec,), format)


def _file_of(spec: str) -> str:
    """The file of ``PATH`` or ``PATH@N``."""
    match = _RUN_SUFFIX.match(spec)
    return match["path"] if match and not os.path.exists(spec) else spec


def _inputs(before: str, after: str | None, format: str | None):
    """The two traces (and their labels): two files, two runs, or one file's two runs."""
    from ..analysis.runs import runs, select_run

    if after is not None:
        return _load(before, format), _load(after, format), before, after
    trace = _load(before, format)
    labels = runs(trace)
    if len(labels) != 2:
        raise TraceconvError(f"give B, or a file with two runs (this one has {len(labels) or 1})",
                             file=before)
    return select_run(trace, 1), select_run(trace, 2), f"{before}@1", f"{before}@2"


@app.command("diff")
@click.argument("before", metavar="A")
@click.argument("after", metavar="B", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (times in ns).")
@click.option("--sort", type=click.Choice(["total", "calls", "cpu", "device", "ratio"]),
              default="total", show_default=True,
              help="Reports: order by the absolute change of this.")
@click.option("--section", metavar="NAME",
              help="Reports: only this section (events, memcpy, overhead, memory, ...).")
@click.option("--top", type=int, default=40, show_default=True,
              help="Rows in the table (0 = all; --json always prints all).")
@click.option("--by-class/--by-name", "by_class", default=None,
              help="Timelines: compare op classes (conv2d = aten::convolution = ...) or "
                   "names as recorded (default: classes when the frameworks differ).")
@click.option("--timeline", "prefer_timeline", is_flag=True,
              help="Compare the timelines even when both inputs also carry statistics.")
@click.option("-o", "--output", metavar="DIFF.pftrace",
              help="Timelines: also write one viewable trace with A and B aligned at their "
                   "first step and a track of per-op deltas (Perfetto, or by extension).")
@click.option("--fail-if", "fail_if", multiple=True, metavar="SUBJECT:+LIMIT",
              help="Timelines: exit 3 when B regresses past LIMIT (repeatable): total:+5%, "
                   "kernel:+2ms, idle:+10%, aten::conv2d:+10%, convolution:+1ms.")
@STEPS_OPTION
@click.option("--format", "format", metavar="NAME", help="Input format of both (skip detection).")
@wide_option
def diff_command(before: str, after: str | None, as_json: bool, sort: str, section: str | None,
                 top: int, by_class: bool | None, prefer_timeline: bool,
                 format: str | None, output: str | None = None,
                 fail_if: tuple[str, ...] = (), steps: str | None = None,
                 wide: bool = False) -> None:
    """Compare two profiles: where the time went (timelines), or per-op statistics (reports).

    \b
    Timelines: each step window is charged to the device work running, else the host op
    running, else idle; the rows' deltas add up to the change of the window.
    Reports and summaries (and sources that carry statistics, unless --timeline): calls,
    total, CPU/GPU time and ratio per op.
    A file with two runs: `traceconv diff FILE` or `traceconv diff FILE@1 FILE@2`.

    \b
    Examples:
      traceconv diff before.pt.trace.json.gz after.pt.trace.json.gz --top 10
      traceconv diff before_report.txt after_report.txt --sort calls
      traceconv diff two_windows.log                    (window 1 against window 2)
    """
    import orjson

    from ..analysis.diff import diff
    from ..analysis.fail_if import evaluate, parse_gate
    from ..analysis.timeline_diff import diff_mode, timeline_diff
    from ..outputs import refuse_replacing_inputs

    verdict = None
    try:
        gates = [parse_gate(g) for g in fail_if]
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    with handled_errors():
        if output:
            refuse_replacing_inputs([output], [_file_of(spec) for spec in (before, after) if spec])
        a, b, label_a, label_b = _inputs(before, after, format)
        a, b = with_steps(a, steps, label_a), with_steps(b, steps, label_b)
        mode = diff_mode(a, b, prefer_timeline or bool(output or gates))
        if mode != "timeline" and (output or gates):
            raise TraceconvError("-o and --fail-if need two timelines")
        if mode == "timeline":
            result = timeline_diff(a, b, by_class)
            verdict = evaluate(result, gates) if gates else None
            if output:
                from ..analysis.diff_trace import diff_trace
                from ..api import save

                save(diff_trace(a, b, result), output,
                     format="perfetto" if output == "-" or output.endswith(".pftrace") else None)
        else:
            rows = [r for r in diff(a, b, sort) if section is None or r.section == section]
    console = console_for(wide, highlight=False)
    if mode == "timeline":
        if as_json:
            data = {"a": label_a, "b": label_b, **result.as_dict()}
            if verdict is not None:
                data["verdict"] = verdict
            if output != "-":
                click.echo(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode())
        elif output != "-":
            _print_timeline(console, result, label_a, label_b, top)
            if verdict is not None:
                _print_verdict(console, verdict)
        if output and output != "-":
            sys.stdout.flush()   # the table first, then the note on stderr
            click.echo(f"wrote {output}", err=True)
        if verdict is not None and verdict["regressed"]:
            sys.exit(3)
        return
    if as_json:
        click.echo(orjson.dumps({"a": label_a, "b": label_b, "kind": "statistics", "sort": sort,
                                 "rows": [r.as_dict() for r in rows]},
                                option=orjson.OPT_INDENT_2).decode())
        return
    shown = rows if top <= 0 else rows[:top]
    title = f"{plain(label_a)} → {plain(label_b)}: {len(rows)} ops, by |Δ {sort}|"
    if len(shown) < len(rows):
        title += f" (top {len(shown)})"
    console.print(_table(shown, title, console.width))


def _print_verdict(console: Console, verdict: dict) -> None:
    for check in verdict["checks"]:
        pct = "" if check["delta_pct"] is None else f" ({check['delta_pct']:+.2f}%)"
        state = "REGRESSED" if check["regressed"] else "ok"
        console.print(f"{state:9} {plain(check['gate'])}: {check['a_ns'] / 1e6:,.3f} → "
                      f"{check['b_ns'] / 1e6:,.3f} ms, Δ {check['delta_ns'] / 1e6:+,.3f} ms{pct}")


def _print_timeline(console: Console, result, label_a: str, label_b: str, top: int) -> None:
    from rich.table import Table

    # µs for short runs (a perf report's mean iteration), ms otherwise
    scale, unit = (1e3, "µs") if max(result.window_a_ns, result.window_b_ns) < 1e7 else (1e6, "ms")

    def num(ns: int) -> str:
        return f"{ns / scale:,.3f}"

    names = "op classes" if result.by_op_class else "names"
    console.print(f"{plain(label_a)} → {plain(label_b)}: steps {result.steps_a} → {result.steps_b}, "
                  f"window {num(result.window_a_ns)} → {num(result.window_b_ns)} {unit}, "
                  f"Δ {_change(result.total_delta_ns, scale) or '0'} {unit} (by {names}; "
                  "rows add up to Δ)")
    table = Table()
    for column, justify in (("name", "left"), ("kind", "left"), (f"A {unit}", "right"),
                            (f"B {unit}", "right"), (f"Δ {unit}", "right"),
                            ("share of Δ", "right")):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    rows = result.rows
    shown = rows if top <= 0 or len(rows) <= top else rows[:top - 1]
    total = result.total_delta_ns
    for r in shown:
        table.add_row(plain(r.name), plain(r.kind), num(r.a_ns), num(r.b_ns), _change(r.delta_ns, scale),
                      f"{100 * r.delta_ns / total:.1f}%" if total else "")
    rest = rows[len(shown):]
    if rest:
        delta = sum(r.delta_ns for r in rest)
        table.add_row(f"({len(rest)} more rows)", "", num(sum(r.a_ns for r in rest)),
                      num(sum(r.b_ns for r in rest)), _change(delta, scale),
                      f"{100 * delta / total:.1f}%" if total else "")
    console.print(table)
