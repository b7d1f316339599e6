"""The per-rank part of ``critical-path RANK0 RANK1 ...``: where the path crosses ranks, and
each rank's time over it (waiting at collectives and for whom, busy, idle)."""

from __future__ import annotations

from ..presentation.tables import console_for


def print_ranks(job, wide: bool = False) -> None:
    """The crossings, then one row per rank over the job's path: waiting at collectives
    and for whom, busy, idle, outside its trace (these four add up to the length)."""
    from rich.table import Table

    console = console_for(wide, highlight=False)
    ms = 1e6
    if job.crossings:
        console.print(f"where the path goes from one rank to another ({len(job.crossings)}):")
        for c in job.crossings:
            console.print(f"  at {(c.at_ns - job.origin_ns) / ms:,.3f} ms rank {c.from_rank} → "
                          f"{c.to_rank} ({c.via})")
    console.print("per rank over the path, ms (lower bound: its busiest thread; ±: clocks):")
    table = Table()
    for column in ("rank", "lower bound", "waiting", "for rank: ms", "busy", "idle",
                   "outside", "±µs"):
        table.add_column(column, justify="left" if column == "for rank: ms" else "right",
                         overflow="fold")
    for r in job.ranks:
        whom = ", ".join(f"{k}: {v / ms:,.3f}" for k, v in
                         sorted(r.waited_for.items(), key=lambda kv: -kv[1]))
        table.add_row(str(r.rank), f"{r.lower_bound_ns / ms:,.3f}",
                      f"{r.collective_wait_ns / ms:,.3f}", whom or "-", f"{r.busy_ns / ms:,.3f}",
                      f"{r.idle_ns / ms:,.3f}", f"{r.unrecorded_ns / ms:,.3f}",
                      f"{r.error_bound_ns / 1e3:,.0f}")
    console.print(table)
