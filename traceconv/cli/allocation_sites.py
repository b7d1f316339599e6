"""The "top allocation sites" table that ``info`` and ``summary`` print for memory traces."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..terminal import plain

if TYPE_CHECKING:
    from rich.table import Table

    from ..model import Trace


def sites_data(trace: Trace, top: int = 10) -> list[dict[str, Any]]:
    """The ``allocation_sites`` JSON rows of ``trace`` (empty without memory blocks)."""
    from ..analysis.allocation_sites import top_allocation_sites

    if not trace.memory:
        return []
    return [s.as_dict() for s in top_allocation_sites(trace.memory, top)]


def sites_table(rows: list[dict[str, Any]]) -> Table:
    """``rows`` of :func:`sites_data` as a rich table."""
    from rich.table import Table

    table = Table(title="top allocation sites (by peak live bytes)", title_justify="left")
    for column in ("site", "peak bytes", "blocks", "bytes allocated"):
        table.add_column(column, justify="left" if column == "site" else "right",
                         overflow="fold")
    for row in rows:
        table.add_row(plain(row["site"]), f"{row['peak_bytes']:,}", f"{row['blocks']:,}",
                      f"{row['bytes']:,}")
    return table
