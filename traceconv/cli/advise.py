"""``traceconv advise TRACE... [--json]``: what to try next, from rules over the model."""

from __future__ import annotations

import textwrap

import click

from ..presentation.json_text import json_text
from ..presentation.tables import console_for, inputs_heading
from ..terminal import printable
from .app import app, handled_errors
from .device_views import STEPS_OPTION, with_steps
from .options import wide_option

_STYLE = {"high": "bold red", "medium": "yellow", "info": "cyan"}


@app.command("advise")
@click.argument("inputs", nargs=-1, required=True, metavar="TRACE...")
@click.option("--json", "as_json", is_flag=True,
              help='Print {"findings": [...], "skipped": [...], "passed": [...]}.')
@click.option("--rule", "rules", multiple=True, metavar="ID",
              help="Run only this rule (repeatable).")
@click.option("--list-rules", is_flag=True, is_eager=True, expose_value=False,
              callback=lambda ctx, _param, value: _list_rules(ctx) if value else None,
              help="Print the rules with their thresholds and exit.")
@click.option("--device-memory", metavar="SIZE",
              help="Device memory (e.g. 16GiB; GB is decimal) for memory-peak when the trace "
                   "lacks it.")
@STEPS_OPTION
@click.option("--format", "format", metavar="NAME", help="Input format (skip detection).")
@wide_option
def advise_command(inputs: tuple[str, ...], as_json: bool, rules: tuple[str, ...],
                   device_memory: str | None, format: str | None,
                   steps: str | None = None, wide: bool = False) -> None:
    """Advice from the profile: idle GPU, launch-bound loops, blocking or pageable copies,
    no mixed precision, framework overhead, exposed communication, memory peaks, ...

    Each input is advised on its own, except the files of one run, which are one trace
    (a rocprofv3 run's CSVs, an execution trace beside its Kineto trace, a trtexec engine's
    exports). Rules whose inputs a trace lacks are listed as skipped with the reason (in
    --json), never guessed.

    \b
      traceconv advise resnet.pt.trace.json.gz
      traceconv advise before_report.txt --json
      traceconv advise trace.json --rule gpu-idle --rule sync-copy
      traceconv advise trace.json --device-memory 16GiB
    """

    from ..analysis.advise import RULES, advise
    from ..api import check_inputs, load, rank_traces
    from ..errors import TraceconvError
    from ..units import parse_bytes

    with handled_errors():
        known = {r.id for r in RULES}
        unknown = [r for r in rules if r not in known]
        if unknown:
            raise TraceconvError(f"unknown rule {unknown[0]!r} (known: {', '.join(sorted(known))})")
        options = {"device_memory": parse_bytes(device_memory)} if device_memory else {}
        check_inputs(inputs)   # (a missing or spent input before any is read)
        # (one trace a rank or run: the CSVs of one rocprofv3 run, an ET beside its trace)
        traces = [with_steps(trace, steps, trace.metadata.source_file) for trace in
                  rank_traces([load(path, format=format, joining=len(inputs) > 1)
                              for path in inputs])]
        result = advise(traces if len(traces) > 1 else traces[0], rules=rules or None,
                        **options)
    if as_json:
        click.echo(json_text(result.as_dict()).decode())
        return
    _print(result, inputs, wide)


def _list_rules(ctx: click.Context) -> None:
    from ..analysis.advise import RULES

    for rule in RULES:
        click.echo(f"{rule.id:22} {rule.threshold}")
    ctx.exit()


def _print(result, inputs: tuple[str, ...], wide: bool = False) -> None:
    from rich.markup import escape
    from rich.text import Text

    console = console_for(wide, highlight=False)
    fill = min(console.width, 96)   # advice reads best in lines of at most 96
    if not result.findings:
        passed = len(result.passed)
        counts = f" ({passed} rule{'s' * (passed != 1)} passed, {len(result.skipped)} not " \
            "applicable)"
        names = inputs_heading(inputs, "no findings for " + counts, fill)
        console.print(f"no findings for {escape(printable(names))}{counts}")
    for finding in result.findings:
        where = f" ({printable(finding.trace)})" if finding.trace else ""
        # (a headline that wraps goes on under its rule, as the advice below it)
        head = textwrap.fill(f"{finding.severity.upper():6} {finding.rule}{where}: "
                             f"{printable(finding.title)}", fill, subsequent_indent=" " * 7,
                             break_on_hyphens=False)
        severity, rest = head[:6], head[6:]
        console.print(f"[{_STYLE[finding.severity]}]{severity}[/]{escape(rest)}")
        console.print(Text(textwrap.fill(printable(finding.advice), fill, initial_indent=" " * 7,
                                         subsequent_indent=" " * 7, break_on_hyphens=False),
                           style="dim"))
    if result.skipped:
        skipped = ", ".join(sorted({s.rule for s in result.skipped}))
        from ..analysis.advise import STATISTICS_ONLY
        from ..analysis.statistics_inputs import NOT_A_TIMELINE

        statistics = any(s.reason.endswith(STATISTICS_ONLY) for s in result.skipped)
        why = NOT_A_TIMELINE if statistics else "--json says what each lacks"
        # (rule ids are not broken at their hyphens: memcpy-heavy stays one word)
        console.print(Text(textwrap.fill(f"not applicable: {skipped} ({why})", fill,
                                         break_on_hyphens=False), style="dim"))
