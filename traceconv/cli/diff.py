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

from ..errors import TraceconvError, UsageError
from ..outputs import refuse_replacing_inputs
from ..presentation.json_text import json_text
from ..presentation.tables import Column, console_for, fitted_table, heading_name
from ..terminal import plain
from ..units import column_unit, format_duration, in_column_unit
from .app import app, handled_errors
from .device_views import STEPS_OPTION, with_steps
from .diff_sides import expand, read_side, split_sides
from .loading import load_all
from .options import OUTPUT_PATH, wide_option

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from ..analysis.attribution import StepTimes
    from ..analysis.diff import OpDelta, OpTotals
    from ..analysis.timeline_diff import TimelineDiff

_RUN_SUFFIX = re.compile(r"^(?P<path>.+)@(?P<run>\d+)$")


MS = 1_000_000   # the op-statistics table's columns are in ms


def _ms(ns: float | int | None) -> str:
    return "-" if ns is None else in_column_unit(ns, MS)


def _change(delta: float | int | None, scale: int = 1) -> str:
    """The signed change as a column prints it (``scale``: its unit in ns, 1 for counts),
    blank when it rounds to nothing."""
    text = "" if not delta else in_column_unit(delta, scale, signed=True)
    return "" if not text.strip("+-0.,") else text


def _calls(totals: OpTotals | None) -> str:
    """A side's calls: ``-`` for an op it lacks, ``?`` for calls its input does not state."""
    if totals is None:
        return "-"
    return "?" if totals.calls is None else f"{totals.calls:,}"


def _short(path: str) -> str:
    """The last two components of an op path: enough to tell ops apart in a table."""
    parts = path.split("/")
    return path if len(parts) <= 2 else "…/" + "/".join(parts[-2:])


# in a narrow terminal the least needed columns go first (highest number), op and Δ stay
# (a change's empty cell: none, or no figure to change: see _change)
CHANGE_BLANK = "no change or N/A"
_STAT_COLUMNS = [Column("section", drop=3), Column("op", symbols=True), Column("calls A", True, drop=5),
                 Column("calls B", True, drop=5), Column("Δ calls", True, drop=2, blank=CHANGE_BLANK),
                 Column("total A ms", True, drop=1), Column("total B ms", True, drop=1),
                 Column("Δ total ms", True, blank=CHANGE_BLANK),
                 Column("Δ CPU ms", True, drop=4, blank=CHANGE_BLANK),
                 Column("Δ GPU ms", True, drop=4, blank=CHANGE_BLANK),
                 Column("ratio A %", True, drop=6), Column("ratio B %", True, drop=6)]


def _table(rows: list[OpDelta], title: str, width: int) -> Table:
    cells = []
    for r in rows:
        a, b, d = r.a, r.b, r.delta
        cells.append([
            r.section, _short(r.name), _calls(a), _calls(b), _change(d["calls"]),
            _ms(None if a is None else a.total_ns), _ms(None if b is None else b.total_ns),
            _change(d["total_ns"], MS), _change(d["cpu_ns"], MS), _change(d["device_ns"], MS),
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
@click.argument("inputs", metavar="A [B] | A... vs B...", nargs=-1, required=True)
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
@click.option("--names", type=click.Choice(["auto", "normalised", "raw"]), default="auto",
              show_default=True,
              help="Timelines: kernels without template arguments, copies, memsets and "
                   "runtime calls in one spelling across CUDA/ROCm and profilers "
                   "(auto: when the two sides were recorded differently), or as recorded.")
@click.option("--timeline", "prefer_timeline", is_flag=True,
              help="Compare the timelines even when both inputs also carry statistics.")
@click.option("-o", "--output", type=OUTPUT_PATH, metavar="DIFF.pftrace",
              help="Timelines: also write one viewable trace with A and B aligned at their "
                   "first step and a track of per-op deltas (Perfetto, or by extension).")
@click.option("--fail-if", "fail_if", multiple=True, metavar="SUBJECT:+LIMIT",
              help="Timelines: exit 3 when B's median step regresses past LIMIT with 95 % "
                   "confidence (the interval's lower bound past it; repeatable): total:+5%, "
                   "kernel:+2ms, idle:+10%, aten::conv2d:+10%, convolution:+1ms.")
@click.option("--fail-if-any", "fail_if_any", multiple=True, metavar="SUBJECT:+LIMIT",
              help="Like --fail-if, on the median change alone (noise can fire it).")
@STEPS_OPTION
@click.option("--steps-a", metavar="STEPS",
              help="Timelines: A's steps used as samples: numbers, ranges and lists "
                   "(3:50, 2,4,6:9).")
@click.option("--steps-b", metavar="STEPS", help="Timelines: B's steps used as samples.")
@click.option("--report", type=click.Choice(["junit", "markdown", "github", "json"]),
              help="Print the result for CI instead of the table: JUnit XML, a Markdown "
                   "table (a pull-request comment), GitHub Actions annotations, or JSON.")
@click.option("--format", "format", metavar="NAME", help="Input format of both (skip detection).")
@wide_option
def diff_command(inputs: tuple[str, ...], as_json: bool, sort: str, section: str | None,
                 top: int, by_class: bool | None, prefer_timeline: bool,
                 format: str | None, output: str | None = None, names: str = "auto",
                 fail_if: tuple[str, ...] = (), fail_if_any: tuple[str, ...] = (),
                 steps: str | None = None, steps_a: str | None = None,
                 steps_b: str | None = None, report: str | None = None,
                 wide: bool = False) -> None:
    """Compare two profiles: where the time went (timelines), or per-op statistics (reports).

    \b
    Timelines: each step window is charged to the device work running, else the host op
    running, else idle; the rows' deltas add up to the change of the window. Each step is a
    sample: rows also give the change of the median step with its 95 % interval (seeded
    bootstrap). A side is one trace, several (A1 A2 vs B1 B2) or a folder of traces
    (split pieces).
    Reports and summaries (and sources that carry statistics, unless --timeline): calls,
    total, CPU/GPU time and ratio per op.
    A file with two runs: `traceconv diff FILE` or `traceconv diff FILE@1 FILE@2`.
    Exit status: 0 pass, 3 a gate fired, 2 usage (a gate matching nothing), 1 bad input.

    \b
    Examples:
      traceconv diff before.pt.trace.json.gz after.pt.trace.json.gz --top 10
      traceconv diff before_steps/ after_steps/ --fail-if total:+3% --report github
      traceconv diff before_report.txt after_report.txt --sort calls
      traceconv diff two_windows.log                    (window 1 against window 2)
    """

    from ..analysis.fail_if import evaluate, parse_gate

    try:
        gates = [parse_gate(g) for g in fail_if] + [parse_gate(g, False) for g in fail_if_any]
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    as_json = as_json or report == "json"
    verdict = None
    with handled_errors():
        sides = split_sides(inputs)
        files = (expand(sides[0]), expand(sides[1])) if sides[1] else None
        if files:   # (standard input on both sides: refused, not read empty the second time)
            from ..api import check_inputs

            check_inputs([_file_of(spec) for side in files for spec in side])
        if files is None or len(files[0]) == len(files[1]) == 1:
            compared = _compare_two(sides, files, format, (by_class, names), prefer_timeline,
                                    output, bool(gates), steps, steps_a, steps_b)
        else:
            if output:
                raise UsageError("-o draws one trace a side; give one trace each for it")
            compared = _compare_sides(files, format, (by_class, names), steps or steps_a,
                                      steps or steps_b)
        label_a, label_b, result = compared[:3]
        if isinstance(result, list):
            rows = [r for r in result if section is None or r.section == section]
        else:
            verdict = evaluate(result, gates) if gates else None
    console = console_for(wide, highlight=False)
    if not isinstance(result, list):
        data = {"a": label_a, "b": label_b, **result.as_dict(), **compared[3]}
        if verdict is not None:
            data["verdict"] = verdict
        if output == "-":
            pass
        elif as_json:
            click.echo(json_text(data).decode())
        elif report:
            from ..presentation.gate_reports import REPORTS

            click.echo(REPORTS[report](data, top), nl=False)
        else:
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
        click.echo(json_text({"a": label_a, "b": label_b, "kind": "statistics", "sort": sort,
                                 "rows": [r.as_dict() for r in rows]}).decode())
        return
    shown = rows if top <= 0 else rows[:top]
    title = f"{_sides(label_a, label_b, console.width)}: {len(rows)} ops, by |Δ {sort}|"
    if len(shown) < len(rows):
        title += f" (top {len(shown)})"
    console.print(_table(shown, title, console.width))


def _sides(label_a: str, label_b: str, width: int) -> str:
    """``A → B`` for a heading, each name elided in the middle to half of ``width``.

    >>> _sides("runs/2026-11-29/before/rank0.pt.trace.json", "after.json", 40)
    'runs/202…race.json → after.json'
    """
    room = (width - len(" → ")) // 2
    return " → ".join(plain(heading_name(label, "", room)) for label in (label_a, label_b))


Compared = tuple[str, str, "list[OpDelta] | TimelineDiff", dict]
Naming = tuple["bool | None", str]   # --by-class/--by-name, --names


def _compare_two(sides: tuple[list[str], list[str]], files: tuple[list[str], list[str]] | None,
                 format: str | None, naming: Naming, prefer_timeline: bool,
                 output: str | None, gated: bool, steps: str | None, steps_a: str | None,
                 steps_b: str | None) -> Compared:
    """One trace a side (or one file's two runs): statistics rows, or the timeline diff
    (and the ``-o`` trace); ``(label A, label B, rows or TimelineDiff, extra JSON)``."""
    from ..analysis.attribution import attribute_steps
    from ..analysis.diff import diff
    from ..analysis.timeline_diff import diff_mode, source_of

    before, after = sides[0][0], (files[1][0] if files else None)
    if output:
        refuse_replacing_inputs([output], [_file_of(spec) for spec in (before, after) if spec])
    a, b, label_a, label_b = _inputs(files[0][0] if files else before, after, format)
    a, b = with_steps(a, steps, label_a), with_steps(b, steps, label_b)
    mode = diff_mode(a, b, prefer_timeline or bool(output or gated or steps_a or steps_b))
    if mode != "timeline" and (output or gated or steps_a or steps_b):
        raise TraceconvError("-o, --fail-if and --steps-a/-b need two timelines")
    if mode != "timeline":
        return label_a, label_b, diff(a, b), {}
    times = [_chosen(attribute_steps(t), spec, flag)
             for t, spec, flag in ((a, steps_a, "--steps-a"), (b, steps_b, "--steps-b"))]
    result = _compared(times, naming, [{a.metadata.framework or ""}, {b.metadata.framework or ""}],
                       [{source_of(a)}, {source_of(b)}])
    if output:
        from ..analysis.diff_trace import diff_trace
        from ..api import save

        save(diff_trace(a, b, result), output,
             format="perfetto" if output == "-" or output.endswith(".pftrace") else None)
    return label_a, label_b, result, {}


def _compare_sides(files: tuple[list[str], list[str]], format: str | None, naming: Naming,
                   steps_a: str | None, steps_b: str | None) -> Compared:
    """Several traces on a side (runs, a folder): their steps are the samples."""
    side_a, side_b = (read_side(paths, format, _load) for paths in files)
    for side in (side_a, side_b):
        if side.left_out:
            click.echo(f"traceconv: note: left out {len(side.left_out)} trace(s) without "
                       f"step markers beside traces with them: "
                       f"{', '.join(side.left_out[:3])}{', ...' if len(side.left_out) > 3 else ''}",
                       err=True)
    times = [_chosen(side.times, spec, flag) for side, spec, flag in (
        (side_a, steps_a, "--steps-a"), (side_b, steps_b, "--steps-b"))]
    labels = [_side_label(paths, side.traces) for paths, side in zip(files, (side_a, side_b), strict=True)]
    extra = {"traces_a": side_a.traces, "traces_b": side_b.traces,
             "left_out_a": side_a.left_out, "left_out_b": side_b.left_out}
    result = _compared(times, naming, [side_a.frameworks, side_b.frameworks],
                       [side_a.sources, side_b.sources])
    return labels[0], labels[1], result, extra


def _compared(times: list[StepTimes], naming: Naming, frameworks: list[set[str]],
              sources: list[set[str]]) -> TimelineDiff:
    """The diff of the two sides' steps, with ``--by-class`` and ``--names`` (``auto``:
    op classes when the frameworks differ; normalised names when the sources differ)."""
    from ..analysis.timeline_diff import compare, normalise_by_default

    by_class, names = naming
    if by_class is None:
        by_class = frameworks[0] != frameworks[1]
    normalise = names == "normalised" or (
        names == "auto" and normalise_by_default(times[0], times[1], sources[0], sources[1]))
    return compare(times[0], times[1], by_class, normalise)


def _chosen(times: StepTimes, spec: str | None, flag: str) -> StepTimes:
    """The steps of ``spec`` (a usage error naming the steps there are when none match)."""
    from ..analysis.step_samples import select

    if not spec:
        return times
    try:
        return select(times, spec)
    except ValueError as exc:
        raise UsageError(f"{flag} {exc}") from None


def _side_label(paths: list[str], traces: int) -> str:
    folder = os.path.dirname(paths[0])
    if len(paths) > 1 and all(os.path.dirname(p) == folder for p in paths):
        return f"{folder}/ ({traces} traces)"
    return " ".join(paths) if len(paths) <= 3 else f"{paths[0]} ... ({traces} traces)"


def _print_verdict(console: Console, verdict: dict) -> None:
    from ..presentation.gate_reports import describe_check

    for check in verdict["checks"]:
        state = "REGRESSED" if check["regressed"] else "ok"
        console.print(f"{state:9} {plain(describe_check(check))}")


def _print_timeline(console: Console, result, label_a: str, label_b: str, top: int) -> None:
    # the columns' one unit: no row is longer than the longer window
    unit, scale = column_unit(max(result.window_a_ns, result.window_b_ns))

    def num(ns: float) -> str:
        return in_column_unit(ns, scale)

    def interval(change) -> str:
        return f"{_change(change.low_ns, scale) or '0'} … {_change(change.high_ns, scale) or '0'}"

    names = "op classes" if result.by_op_class else \
        "normalised names" if result.normalised_names else "names"
    console.print(f"{_sides(label_a, label_b, console.width)}: steps {result.steps_a} → "
                  f"{result.steps_b}, "
                  f"window {format_duration(result.window_a_ns)} → "
                  f"{format_duration(result.window_b_ns)}, "
                  f"Δ {format_duration(result.total_delta_ns, signed=True)} (by {names}; "
                  "rows add up to Δ)")
    total = result.total
    sampled = result.steps_a > 1 or result.steps_b > 1
    if sampled:
        console.print(f"median step {format_duration(total.median_a_ns)} → "
                      f"{format_duration(total.median_b_ns)}, "
                      f"Δ {format_duration(total.change_ns, signed=True)}, 95% interval "
                      f"{format_duration(total.low_ns, signed=True)} … "
                      f"{format_duration(total.high_ns, signed=True)} "
                      f"({result.steps_a} → {result.steps_b} samples)")
    shares = total.beyond_noise
    columns = [Column("name", symbols=True), Column("kind", drop=1), Column(f"A {unit}", True, drop=3),
               Column(f"B {unit}", True, drop=3), Column(f"Δ {unit}", True, blank=CHANGE_BLANK)]
    columns += [Column(f"Δ median {unit}/step", True, drop=4, blank=CHANGE_BLANK),
                Column(f"95% interval {unit}/step", True, drop=2)] if sampled else []
    columns += [Column("share of Δ", True, drop=2)] if shares else []
    cells = []
    rows = result.rows
    shown = rows if top <= 0 or len(rows) <= top else rows[:top - 1]
    delta = result.total_delta_ns

    def share(ns: int) -> list[str]:
        return [f"{100 * ns / delta:.1f}%" if delta else ""] if shares else []

    for r in shown:
        extra = [_change(r.change.change_ns, scale), interval(r.change)] if sampled else []
        cells.append([r.name, r.kind, num(r.a_ns), num(r.b_ns), _change(r.delta_ns, scale),
                      *extra, *share(r.delta_ns)])
    rest = rows[len(shown):]
    if rest:
        moved = sum(r.delta_ns for r in rest)
        cells.append([f"({len(rest)} more rows)", "", num(sum(r.a_ns for r in rest)),
                      num(sum(r.b_ns for r in rest)), _change(moved, scale),
                      *(["", ""] if sampled else []), *share(moved)])
    console.print(fitted_table(columns, cells, console.width))
    if not shares:
        console.print("(share of Δ left out: the change of the step time is inside its 95% "
                      "interval, so its shares would divide by noise)")
