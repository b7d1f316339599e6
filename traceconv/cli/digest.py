"""The one line on stderr that says a read was not whole: dropped / guessed / repaired counts."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..presentation.tables import elided

if TYPE_CHECKING:
    from ..model import Trace

_KINDS = ("dropped", "guessed", "repaired")
WIDTH = 100   # (the line stays one line in a terminal and in CI logs)


def digest(trace: Trace, inputs: tuple[str, ...]) -> str | None:
    """One line for stderr when the readers dropped, guessed or repaired anything, else None.

    >>> from traceconv.model import Trace
    >>> trace = Trace()
    >>> trace.diagnostics.add("chrome.missing_timestamp", count=2)       # (dropped)
    >>> trace.diagnostics.add("xplane.unknown_device_line", count=5)     # (guessed)
    >>> digest(trace, ("a.txt",))
    'traceconv: a.txt: 2 dropped, 5 guessed (traceconv info a.txt --json lists them)'

    The line fits :data:`WIDTH` columns: past it the command is given without the names,
    then the names are elided in the middle.
    """
    totals = dict.fromkeys(_KINDS, 0)
    for item in trace.diagnostics:
        if item.kind in totals:
            totals[item.kind] += item.count
    parts = [f"{count:,} {kind}" for kind, count in totals.items() if count]
    if not parts:
        return None
    names, counts = " ".join(inputs), ", ".join(parts)
    line = f"traceconv: {names}: {counts} (traceconv info {names} --json lists them)"
    if len(line) <= WIDTH:
        return line
    tail = f": {counts} (info --json lists them)"
    room = max(WIDTH - len("traceconv: ") - len(tail), 12)
    return f"traceconv: {elided(names, room)}{tail}"


def echo_digest(trace: Trace, inputs: tuple[str, ...]) -> None:
    """Print :func:`digest` on stderr when there is something to say."""
    line = digest(trace, inputs)
    if line is not None:
        click.echo(line, err=True)
