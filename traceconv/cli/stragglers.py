"""The straggler section that ``traceconv summary`` adds for several ranks."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..analysis.stragglers import Straggler


def print_stragglers(rows: list[Straggler], origin_ns: int, wide: bool = False) -> None:
    """One row per collective (start relative to ``origin_ns``), then who was last how often."""
    from ..analysis.stragglers import last_counts
    from ..presentation.tables import Column, console_for, fitted_table
    from ..units import column_figures

    start_unit, starts = column_figures([r.start_ns - origin_ns for r in rows])
    late_unit, lates = column_figures([r.late_by_ns for r in rows])
    spread_unit, spreads = column_figures([r.spread_ns for r in rows])
    columns = [Column(f"start {start_unit}", True), Column("collective", symbols=True),
               Column("#", True, drop=1), Column("last rank"), Column(f"late by {late_unit}", True),
               Column(f"spread {spread_unit}", True, drop=2)]
    cells = [[start, r.collective + (f" [{r.group}]" if r.group else ""), str(r.index),
              r.last_rank, late, spread]
             for r, start, late, spread in zip(rows, starts, lates, spreads, strict=True)]
    console = console_for(wide)
    console.print(fitted_table(columns, cells, console.width,
                               title="stragglers: per collective, the rank that arrived last",
                               title_justify="left"))
    console.print("last most often: " + ", ".join(
        f"{rank} ({n} of {len(rows)})" for rank, n in last_counts(rows).most_common()))
