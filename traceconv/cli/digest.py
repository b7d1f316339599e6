"""The one line on stderr after a read: what the outputs lack (the ``dropped`` codes, by name),
then how many values were repaired and guessed; nothing when the read was whole.

It speaks of what the user lost. Repairs keep every event (a slice moved to an overlap lane
is still drawn) and guesses fill a gap (a free with no allocation starts at the trace start),
so they are counted after the loss and never called "dropped".
"""

from __future__ import annotations

import os
import textwrap
from typing import TYPE_CHECKING

import click

from ..presentation.left_out import counts_text, dropped
from ..presentation.tables import elided

if TYPE_CHECKING:
    from ..model import Diagnostics, Trace

WIDTH = 100   # (the line stays one line in CI logs; a narrower terminal narrows it)
NAME_MIN = 16  # an input name is not elided below this to make room for codes


def digest(trace: Trace, inputs: tuple[str, ...]) -> str | None:
    """One line for stderr when a reader left something out, repaired or guessed, else None.

    >>> from traceconv.model import Trace
    >>> trace = Trace()
    >>> trace.diagnostics.add("chrome.missing_phase", count=2)       # (dropped)
    >>> digest(trace, ("a.txt",))
    'traceconv: a.txt: 2 left out (chrome.missing_phase) (traceconv info a.txt --json lists them)'
    >>> trace.diagnostics.add("xplane.unknown_device_line", count=5)     # (guessed)
    >>> digest(trace, ("a.txt",))[len("traceconv: a.txt: "):]
    '2 left out (chrome.missing_phase); 5 guessed (info --json)'
    >>> digest(Trace(), ("a.txt",)) is None
    True

    The line fits :func:`line_width` columns: past it the command is given without the names,
    then the smaller codes give way to "+N codes" (all of them to "N codes" at last) until
    the names, elided in the middle, keep :data:`NAME_MIN` characters.
    """
    lost = dropped(trace.diagnostics)
    changed = {kind: sum(item.count for item in trace.diagnostics if item.kind == kind)
               for kind in ("repaired", "guessed")}
    if not lost and not any(changed.values()):
        return None
    names = " ".join(inputs)
    width = line_width()
    for counts in [counts_text(lost, shown, changed) for shown in range(len(lost), -1, -1)]:
        for line in (f"traceconv: {names}: {counts} (traceconv info {names} --json lists them)",
                     f"traceconv: {names}: {counts} (info --json)"):
            if len(line) <= width:
                return line
        tail = f": {counts} (info --json)"
        room = width - len("traceconv: ") - len(tail)
        if room >= NAME_MIN:
            break
    return f"traceconv: {elided(names, max(room, NAME_MIN))}{tail}"


def line_width() -> int:
    """:data:`WIDTH`, or the terminal's width when narrower (``COLUMNS``, else standard
    error's terminal; a log or a pipe keeps :data:`WIDTH`)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdecimal() and int(columns) > 0:
        return min(WIDTH, int(columns))
    try:
        return min(WIDTH, os.get_terminal_size(2).columns)
    except OSError:   # (not a terminal)
        return WIDTH


def written_digest(written: Diagnostics, target: str) -> str | None:
    """A line for stderr when the writer left something out, repaired or guessed (slices
    moved to an overlap lane, times shifted where Perfetto shows them), by code, and each
    code in its own words below: what the reader counted is in the input's ``info --json``,
    this is not.

    >>> from traceconv.model import Diagnostics
    >>> written = Diagnostics(); written.add("nesting.overlap_moved", count=21)
    >>> print(written_digest(written, "out.pftrace"))
    traceconv: out.pftrace: written with 21 repaired (nesting.overlap_moved)
      nesting.overlap_moved: slices that partially overlap the slice enclosing them
        were moved to an overlap lane track
    >>> written_digest(Diagnostics(), "out.pftrace") is None
    True
    """
    from ..model.diagnostic_codes import lookup

    items = sorted((item for item in written if item.kind != "note"),
                   key=lambda item: (-item.count, item.code))
    if not items:
        return None

    said = ", ".join(f"{item.count:,} {'left out' if item.kind == 'dropped' else item.kind} "
                     f"({item.code})" for item in items)
    room = max(line_width() - len(said) - len("traceconv: : written with "), NAME_MIN)
    line = f"traceconv: {elided(target, room)}: written with {said}"
    # (each code in its own words, indented below: no command lists what a writer did)
    words = [textwrap.fill(f"{item.code}: {info.text}", 80, initial_indent="  ",
                           subsequent_indent="    ") for item in items
             if (info := lookup(item.code)) is not None]
    return "\n".join([line, *words])


def echo_digest(trace: Trace, inputs: tuple[str, ...]) -> None:
    """Print :func:`digest` on stderr when there is something to say."""
    line = digest(trace, inputs)
    if line is not None:
        click.echo(line, err=True)
