"""The per-rank part of ``critical-path RANK0 RANK1 ...``: where the path crosses ranks, and
each rank's time over it (waiting at collectives and for whom, busy, idle)."""

from __future__ import annotations

from ..presentation.tables import Column, console_for, fitted_table, packed
from ..units import format_duration


def print_ranks(job, wide: bool = False) -> None:
    """The crossings, then one row per rank over the job's path: waiting at collectives
    and for whom, busy, idle, outside its trace (these four add up to the length)."""
    console = console_for(wide, highlight=False)
    ms = 1e6
    if job.crossings:
        console.print(f"where the path goes from one rank to another ({len(job.crossings)}):")
        for c in job.crossings:
            console.print(f"  at {format_duration(c.at_ns - job.origin_ns)} rank {c.from_rank} → "
                          f"{c.to_rank} ({c.via})")
    console.print("per rank over the path, ms (lower bound: its busiest thread; ±: clocks):")
    rows = []
    for r in job.ranks:
        # (numbers, never cut: a long list goes on several lines instead)
        whom = packed([f"{k}: {v / ms:,.3f}" for k, v in
                       sorted(r.waited_for.items(), key=lambda kv: -kv[1])], 24, indent="")
        rows.append([str(r.rank), f"{r.lower_bound_ns / ms:,.3f}",
                     f"{r.collective_wait_ns / ms:,.3f}", whom or "-", f"{r.busy_ns / ms:,.3f}",
                     f"{r.idle_ns / ms:,.3f}", f"{r.unrecorded_ns / ms:,.3f}",
                     f"{r.error_bound_ns / 1e3:,.0f}"])
    columns = [Column("rank", True), Column("lower bound", True, drop=2),
               Column("waiting", True), Column("for rank: ms", True), Column("busy", True),
               Column("idle", True), Column("outside", True, drop=1), Column("±µs", True, drop=3)]
    console.print(fitted_table(columns, rows, console.width,
                               show_lines=any("\n" in row[3] for row in rows)))
