"""``traceconv diff A B [--json]``: per-op change between two profiles of the same kind."""

from __future__ import annotations

import click
import orjson
from rich.console import Console
from rich.table import Table

from ..analysis.diff import OpDelta, diff
from .app import app, handled_errors
from .convert import load_all


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


def _table(rows: list[OpDelta], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    for column, justify in (("section", "left"), ("op", "left"), ("calls A", "right"),
                            ("calls B", "right"), ("Δ calls", "right"), ("total A ms", "right"),
                            ("total B ms", "right"), ("Δ total ms", "right"),
                            ("Δ CPU ms", "right"), ("Δ GPU ms", "right"), ("ratio A %", "right"),
                            ("ratio B %", "right")):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for r in rows:
        a, b, d = r.a, r.b, r.delta
        table.add_row(
            r.section, _short(r.name), "-" if a is None else f"{a.calls:,}",
            "-" if b is None else f"{b.calls:,}", _change(d["calls"], fmt="{:+,.0f}"),
            _ms(None if a is None else a.total_ns), _ms(None if b is None else b.total_ns), _change(d["total_ns"], 1e6),
            _change(d["cpu_ns"], 1e6), _change(d["device_ns"], 1e6),
            "-" if a is None or a.ratio is None else f"{a.ratio:.2f}",
            "-" if b is None or b.ratio is None else f"{b.ratio:.2f}")
    return table


@app.command("diff")
@click.argument("before", metavar="A")
@click.argument("after", metavar="B")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (times in ns).")
@click.option("--sort", type=click.Choice(["total", "calls", "cpu", "device", "ratio"]),
              default="total", show_default=True, help="Order by the absolute change of this.")
@click.option("--section", metavar="NAME",
              help="Only this section (events, memcpy, overhead, memory, ...).")
@click.option("--top", type=int, default=40, show_default=True,
              help="Rows in the table (0 = all; --json always prints all).")
@click.option("--format", "format", metavar="NAME", help="Input format of both (skip detection).")
def diff_command(before: str, after: str, as_json: bool, sort: str, section: str | None,
                 top: int, format: str | None) -> None:
    """Compare two profiles per op: calls, total, CPU/GPU time, ratio, memcpy counts.

    \b
    Example:
      traceconv diff before_report.txt after_report.txt --sort calls
    """
    with handled_errors():
        a, b = load_all((before,), format), load_all((after,), format)
        rows = [r for r in diff(a, b, sort) if section is None or r.section == section]
    if as_json:
        click.echo(orjson.dumps({"a": before, "b": after, "sort": sort,
                                 "rows": [r.as_dict() for r in rows]},
                                option=orjson.OPT_INDENT_2).decode())
        return
    shown = rows if top <= 0 else rows[:top]
    title = f"{before} → {after}: {len(rows)} ops, by |Δ {sort}|"
    if len(shown) < len(rows):
        title += f" (top {len(shown)})"
    console = Console()
    if not console.is_terminal:
        console = Console(width=200)
    console.print(_table(shown, title))
