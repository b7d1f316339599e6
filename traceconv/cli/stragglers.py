"""The straggler section that ``traceconv summary`` adds for several ranks."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..analysis.stragglers import Straggler


def print_stragglers(rows: list[Straggler], origin_ns: int, wide: bool = False) -> None:
    """One row per collective (start relative to ``origin_ns``), then who was last how often."""
    from rich.table import Table

    from ..analysis.stragglers import last_counts
    from ..presentation.tables import console_for

    table = Table(title="stragglers: per collective, the rank that arrived last",
                  title_justify="left")
    for column in ("start", "collective", "#", "last rank", "late by", "spread"):
        table.add_column(column, justify="left" if column in ("collective", "last rank")
                         else "right")
    for r in rows:
        table.add_row(f"{(r.start_ns - origin_ns) / 1e6:,.3f} ms",
                      r.collective + (f" [{r.group}]" if r.group else ""), str(r.index),
                      r.last_rank, f"{r.late_by_ns / 1e3:,.1f} µs",
                      f"{r.spread_ns / 1e3:,.1f} µs")
    console = console_for(wide)
    console.print(table)
    console.print("last most often: " + ", ".join(
        f"{rank} ({n} of {len(rows)})" for rank, n in last_counts(rows).most_common()))
