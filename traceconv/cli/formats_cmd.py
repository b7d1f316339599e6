"""``traceconv formats``: the table of readable and writable formats."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from ..api import list_formats
from .app import app


@app.command("formats")
def formats_command() -> None:
    """List the formats traceconv reads and writes, with their extensions."""
    table = Table(title="traceconv formats")
    for column in ("name", "read", "write", "extensions", "description"):
        table.add_column(column, overflow="fold")
    for info in list_formats():
        table.add_row(info.name, "yes" if info.reads else "", "yes" if info.writes else "",
                      " ".join(info.extensions), info.description)
    Console().print(table)
