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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

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
