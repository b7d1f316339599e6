"""``traceconv formats [--json]``: the table of formats and the flavours of their readers."""

from __future__ import annotations

from typing import Any

import click

from ..presentation.json_text import json_text
from ..presentation.tables import console_for
from .app import app
from .options import wide_option


def formats_dict() -> dict[str, Any]:
    """The object ``formats --json`` prints: one entry per format, flavours inside.

    >>> chrome = formats_dict()["formats"][0]
    >>> chrome["name"], chrome["reads"], chrome["flavours"][3]["name"]
    ('chrome', True, 'chrome:kineto')
    """
    from ..api import list_formats

    return {"formats": [{
        "name": info.name, "description": info.description,
        "reads": info.reads, "writes": info.writes, "checks": info.checks,
        "extensions": list(info.extensions), "aliases": list(info.aliases),
        "origin": info.origin,
        "flavours": [{"name": f"{info.name}:{flavour}", "description": text}
                     for flavour, text in info.flavours().items()],
    } for info in list_formats()]}


@app.command("formats")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@wide_option
def formats_command(as_json: bool, wide: bool = False) -> None:
    """List the formats traceconv reads (r), writes (w) and checks (c), with the flavours
    of Chrome JSON it tells apart. Any name, alias or flavour works with --format / --to.

    \b
      traceconv formats
      traceconv info trace.json --format chrome:kineto
      traceconv formats --json
    """

    data = formats_dict()
    if as_json:
        click.echo(json_text(data).decode())
        return
    from rich.table import Table

    table = Table(box=None, pad_edge=False, header_style="bold",
                  caption="r = read, w = write, c = check; name:flavour forces a flavour",
                  caption_justify="left")
    table.add_column("name", no_wrap=True)
    table.add_column("r w c", no_wrap=True)
    table.add_column("extensions", overflow="fold", max_width=21)
    table.add_column("description", overflow="fold", ratio=1)
    for entry in data["formats"]:
        can = " ".join(letter if entry[key] else "-" for letter, key in
                       (("r", "reads"), ("w", "writes"), ("c", "checks")))
        table.add_row(entry["name"], can, " ".join(entry["extensions"]), entry["description"])
        for flavour in entry["flavours"]:
            table.add_row(f"  {flavour['name']}", "r - -", "", flavour["description"])
    console_for(wide).print(table)
