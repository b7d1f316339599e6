"""Which parts of a document become one program in the trace, and how each is timed.

A run with a perf report is one unit (the report lists the whole program; printed listings
of the same run are superseded). Trace-eval records time the unit of their run, or form
their own unit from the first evaluation pass. Runs with listings only give one untimed
unit per listing (``migraphx-driver verify`` prints four programs).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...model import Diagnostics
from .document import Document, EvalRecord, Listing, PerfReport, Run
from .program import Program, assign_modules, resolve


@dataclass
class Unit:
    """One program of the document and its time sources."""

    run: Run
    program: Program
    report: PerfReport | None = None
    eval_passes: list[list[EvalRecord]] = field(default_factory=list)
    listing: Listing | None = None
    label: str = ""
    untimed_report: PerfReport | None = None   # a trailer or Summary but no times


def eval_passes(records: list[EvalRecord]) -> list[list[EvalRecord]]:
    """Split records into evaluation passes: a pass ends when an instruction repeats."""
    passes: list[list[EvalRecord]] = []
    seen: set[str] = set()
    for record in records:
        key = record.instruction.name if record.instruction else None
        if not passes or key in seen:
            passes.append([])
            seen = set()
        passes[-1].append(record)
        if key is not None:  # ROCm 4.1 names no instruction: those never start a pass
            seen.add(key)
    return passes


def units_of(document: Document, diagnostics: Diagnostics) -> list[Unit]:
    """The units of ``document`` in order, labelled when there is more than one."""
    units: list[Unit] = []
    for run in document.runs:
        passes = eval_passes(run.eval_records)
        if run.report is not None and run.report.lines:
            items = assign_modules(line.instruction for line in run.report.lines)
            units.append(Unit(run, resolve(items), report=run.report, eval_passes=passes))
            diagnostics.add("migraphx.listing_superseded", count=len(run.listings))
        elif passes and not run.listings:
            items = assign_modules(r.instruction for r in passes[0] if r.instruction)
            units.append(Unit(run, resolve(items), eval_passes=passes))
        else:
            for k, listing in enumerate(run.listings):
                last = k == len(run.listings) - 1
                units.append(Unit(run, resolve(_listing_items(listing)), listing=listing,
                                  eval_passes=passes if last else []))
        if run.report is not None and not run.report.lines and run.listings:
            # a listing with a perf trailer but no per-instruction times: the program is
            # untimed; the trailer and Summary are kept beside it
            units[-1].untimed_report = run.report
            diagnostics.add("migraphx.report_without_lines")
        if run.report is not None and not run.report.lines and not run.listings:
            # a pasted Summary or trailer alone: stats and totals, no program
            units.append(Unit(run, resolve([]), report=run.report))
            diagnostics.add("migraphx.report_without_lines")
    if len(units) > 1:
        for k, unit in enumerate(units, 1):
            unit.label = f"program {k}"
    return units


def _listing_items(listing: Listing) -> list:
    return [(module, ins) for module, body in listing.modules.items() for ins in body]
