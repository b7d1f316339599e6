"""Diagnostics as a table when it fits the terminal, else as a list: a prose message squeezed
into a table column reads as a ribbon of word pieces, so at narrow widths each diagnostic
gets its own lines (count, kind and code, then its message and example, wrapped at spaces).
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

from .tables import Column, elided, fitted_table, printable_cell

if TYPE_CHECKING:
    from rich.console import RenderableType

INDENT = "    "


def diagnostics_view(rows: list[dict[str, Any]], title: str, width: int,
                     style: str = "") -> RenderableType:
    """``rows`` (``count``, ``code``, ``message``, ``example`` and, when present, ``kind``)
    as a table within ``width``, else as a list.

    >>> rows = [{"count": 1005, "kind": "note", "code": "chrome.flow_dangling",
    ...          "message": "flow events whose other end is not in the file", "example": "id 7"}]
    >>> print(diagnostics_view(rows, "diagnostics", 40))
    diagnostics
    1,005 note chrome.flow_dangling
        flow events whose other end is not
        in the file
        example: id 7
    """
    from rich.text import Text

    kinds = any("kind" in row for row in rows)
    headers = ["count", *(["kind"] if kinds else []), "code", "message", "example"]
    cells = [[f"{row['count']:,}", *([row.get("kind", "")] if kinds else []), row["code"],
              row["message"], row["example"] or ""] for row in rows]
    natural = sum(max(len(h), *(len(c[i]) for c in cells)) + 3
                  for i, h in enumerate(headers)) + 1
    if natural <= width:
        return fitted_table([Column(h, number=h == "count") for h in headers], cells, width,
                            title=title, title_justify="left", title_style=style or None)
    lines = [title]
    for row, cell in zip(rows, cells, strict=True):   # (file text shown escaped, as in cells)
        lines.append(" ".join(printable_cell(part) for part in (cell[0], row.get("kind"),
                                                              row["code"]) if part))
        lines += _wrapped(printable_cell(row["message"]), width)
        if row["example"]:
            lines += _wrapped(f"example: {printable_cell(row['example'])}", width)
    return Text("\n".join(lines), style=style)


def _wrapped(text: str, width: int) -> list[str]:
    """``text`` indented and wrapped at its spaces within ``width``; a word longer than a
    line is elided in the middle, never cut in two."""
    room = max(width - len(INDENT), 16)
    words = [elided(word, room) for word in text.split()]
    return textwrap.wrap(" ".join(words), room + len(INDENT), initial_indent=INDENT,
                         subsequent_indent=INDENT, break_long_words=False,
                         break_on_hyphens=False)
