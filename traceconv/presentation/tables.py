"""How wide the command line draws: the terminal's width, unless ``--wide``.

Every table a command prints goes through :func:`console_for` (rich tables) or
:func:`table_width` (text rendered elsewhere), so one rule decides: ``COLUMNS`` when set,
else the terminal's width, else 80 columns (output to a pipe or file); ``--wide`` draws at
the tables' natural width. Inside that width rich wraps long cells (``overflow="fold"``)
or cuts them with "…" (``no_wrap`` columns).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

WIDE = 10_000      # "no limit": every table is narrower than this
FALLBACK = 80      # neither COLUMNS nor a terminal: what rich and the shell assume


def table_width(wide: bool = False) -> int:
    """The width to draw at: ``WIDE`` for ``--wide``, else ``COLUMNS``, the terminal's
    width, or 80.

    >>> import os; os.environ["COLUMNS"] = "72"; table_width(), table_width(wide=True)
    (72, 10000)
    >>> del os.environ["COLUMNS"]
    """
    if wide:
        return WIDE
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    return shutil.get_terminal_size((FALLBACK, 24)).columns or FALLBACK


def console_for(wide: bool = False, **options: Any) -> Console:
    """A rich console on standard output that draws at :func:`table_width`."""
    from rich.console import Console

    # emoji off: ":name:" in an op name (aten::x:) is data, not an emoji code
    return Console(width=table_width(wide), **{"emoji": False, **options})


@dataclass(frozen=True)
class Column:
    """One column of a :func:`fitted_table`: numbers never wrap; in a narrow terminal the
    columns with the highest ``drop`` go first (0: always kept), text wraps in its cell."""

    header: str
    number: bool = False
    drop: int = 0


TEXT_MIN = 12   # a text column is not squeezed below this to make room


def fitted_table(columns: list[Column], rows: list[list[str]], width: int,
                 **options: Any) -> Table:
    """A rich table of ``rows`` that fits ``width``: drawn as is when it fits; else with
    light rules, then without the least needed columns (the caption says which, and that
    ``--wide`` shows them). Text cells wrap; numbers stay whole.

    >>> cols = [Column("op"), Column("total ms", number=True), Column("calls", True, drop=1)]
    >>> table = fitted_table(cols, [["aten::convolution_backward", "12.500", "6"]], 30)
    >>> [c.header for c in table.columns], table.caption
    (['op', 'total ms'], '1 more column with --wide: calls')
    """
    from rich import box

    def build(keep: list[int], compact: bool, probe: bool = False) -> Table:
        from rich.table import Table

        table = Table(**options) if not compact else Table(
            **{**options, "box": box.SIMPLE_HEAD, "collapse_padding": True})
        for i in keep:
            column = columns[i]
            table.add_column(column.header, justify="right" if column.number else "left",
                             no_wrap=column.number, overflow="fold", min_width=None)
        for cells in rows:
            table.add_row(*(cells[i][:TEXT_MIN] if probe and not columns[i].number
                            else cells[i] for i in keep))
        return table

    keep = list(range(len(columns)))
    if _natural(build(keep, False)) <= width:
        return build(keep, False)
    droppable = sorted((i for i, c in enumerate(columns) if c.drop), key=lambda i: -columns[i].drop)
    dropped: list[int] = []
    while _natural(build(keep, True, probe=True)) > width and droppable:
        dropped.append(droppable.pop(0))
        keep.remove(dropped[-1])
    table = build(keep, True)
    if dropped:
        names = ", ".join(columns[i].header for i in sorted(dropped))
        plural = "s" if len(dropped) > 1 else ""
        table.caption = f"{len(dropped)} more column{plural} with --wide: {names}"
        table.caption_justify = "left"
    return table


def _natural(table: Table) -> int:
    """The width ``table`` takes when nothing limits it."""
    import io

    from rich.console import Console

    return Console(file=io.StringIO(), width=WIDE).measure(table).maximum


def elided(text: str, width: int) -> str:
    """``text`` cut in the middle to ``width`` characters (its start and its end kept: a
    file's folder and its name).

    >>> elided("runs/2026-11-29/rank0/trace.json", 20)
    'runs/2026…trace.json'
    """
    if len(text) <= width:
        return text
    keep = width - 1
    return f"{text[:keep // 2]}…{text[len(text) - (keep - keep // 2):]}"
