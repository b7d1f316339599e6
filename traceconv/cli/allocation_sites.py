"""The "top allocation sites" table that ``info`` and ``summary`` print for memory traces."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.table import Table

    from ..model import Trace


def sites_data(trace: Trace, top: int = 10) -> list[dict[str, Any]]:
    """The ``allocation_sites`` JSON rows of ``trace`` (empty without memory blocks)."""
    from ..analysis.allocation_sites import top_allocation_sites

    if not trace.memory:
        return []
    return [s.as_dict() for s in top_allocation_sites(trace.memory, top)]


def sites_table(rows: list[dict[str, Any]], width: int, of: str = "") -> Table:
    """``rows`` of :func:`sites_data` as a table within ``width`` columns (``of``: whose
    sites, in the title instead of the order: ``"run 2 of 2"``)."""
    from ..presentation.tables import Column, fitted_table

    columns = [Column("site"), Column("peak bytes", True), Column("blocks", True, drop=2),
               Column("bytes allocated", True, drop=1)]
    return fitted_table(columns, [[row["site"], f"{row['peak_bytes']:,}", f"{row['blocks']:,}",
                                   f"{row['bytes']:,}"] for row in rows], width,
                        title=f"top allocation sites, {of}" if of
                        else "top allocation sites (by peak live bytes)", title_justify="left")
