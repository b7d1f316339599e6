"""The straggler section that ``traceconv summary`` adds for several ranks."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..analysis.stragglers import Straggler


def print_stragglers(rows: list[Straggler], origin_ns: int, wide: bool = False) -> None:
    """One row per collective (start relative to ``origin_ns``), then who was last how often."""
    from ..analysis.stragglers import last_counts
    from ..presentation.tables import Column, console_for, fitted_table

    columns = [Column("start", True), Column("collective", symbols=True), Column("#", True, drop=1),
               Column("last rank"), Column("late by", True), Column("spread", True, drop=2)]
    cells = [[f"{(r.start_ns - origin_ns) / 1e6:,.3f} ms",
              r.collective + (f" [{r.group}]" if r.group else ""), str(r.index), r.last_rank,
              f"{r.late_by_ns / 1e3:,.1f} µs", f"{r.spread_ns / 1e3:,.1f} µs"] for r in rows]
    console = console_for(wide)
    console.print(fitted_table(columns, cells, console.width,
                               title="stragglers: per collective, the rank that arrived last",
                               title_justify="left"))
    console.print("last most often: " + ", ".join(
        f"{rank} ({n} of {len(rows)})" for rank, n in last_counts(rows).most_common()))
