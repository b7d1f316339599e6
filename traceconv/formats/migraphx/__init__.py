"""AMD MIGraphX text outputs: program printouts, ``migraphx-driver perf`` reports and
``MIGRAPHX_TRACE_EVAL`` logs, in every dialect from ROCm 3.5 to 7.2 and the Hygon DCU fork.

The reader builds the op graph (instructions as operators, results as tensors), a
program-order timeline from the mean times (the report has no timestamps), the printed and
recomputed op statistics, and the scratch-memory layout (``load[offset,end]`` regions with
lifetimes) for ``traceconv memflow``.

>>> trace = traceconv.load("samples/migraphx/perf_simple_graph_rocm4.txt")  # doctest: +SKIP
>>> trace.counts()["ops"], len(trace.memory)                                # doctest: +SKIP
(20, 13)
"""

from __future__ import annotations

from functools import partial

from ...errors import InputError
from ...io import Source
from ...model import Metadata, Trace
from ...model.activity import fill_activity
from ...model.builder import TraceBuilder
from ...model.lazy_graph import LazyDiGraph
from ...model.memory import add_live_bytes_counters
from ...model.partial_timeline import mark_partial_timeline
from ...vocabularies.migraphx import MIGRAPHX_VOCABULARY
from ..pasted_text import PastedLines
from ..stray_lines import count_elided, count_foreign, count_table_cut
from ..text_lines import text_lines
from ..text_sniffing import migraphx as sniff  # noqa: F401  (this format's sniff, kept light)
from .document import Document, PerfReport, parse_document
from .graph import GraphPart, fill_graph, node_counts
from .memory import add_memory
from .schema import Document as DocumentSchema
from .stated import compare_stated, missing_ends
from .stats import add_recomputed, add_summary, partial_listing, recompute
from .timeline import add_host_totals, lay_out, ms_to_ns
from .units import Unit, units_of

SCHEMAS = {"migraphx_document": DocumentSchema}

def read(source: Source) -> Trace:
    """Read a MIGraphX program listing, perf report or trace-eval log into a Trace."""
    return build(parse_document(PastedLines(text_lines(source))), source.name, consume=True)


def build(document: Document, name: str = "<text>", *, consume: bool = False) -> Trace:
    """Turn a parsed document into the model (see the module docstring). ``consume``: the
    document is given up to the build, which drops what the trace will not need as soon
    as it can (the program listings that a perf report of the same run supersedes are
    half of a perf log)."""
    trace = TraceBuilder(Metadata(source_format="migraphx", framework="MIGraphX"))
    diagnostics = trace.diagnostics
    units = units_of(document, diagnostics)
    if consume:
        for unit in units:
            if unit.report is not None and unit.report.lines:
                unit.run.listings.clear()   # counted as migraphx.listing_superseded
    if not units:
        first = min((found[0] for found in (*document.unparsed[:1], document.first_foreign)
                     if found is not None), default=1)
        raise InputError("no MIGraphX program listing, perf report or trace-eval record found",
                         file=name, location=first)
    _note_document(document, trace)
    missing_ends(document, diagnostics)
    # (why each report's instruction lines are only part of its program; None: whole)
    elisions = [partial_listing(u.report, document.elided) if u.report is not None else None
                for u in units]
    parts = [_build_unit(trace, unit, whole=why is None)
             for unit, why in zip(units, elisions, strict=True)]
    _note_partial_listings(trace, [(u, why) for u, why in zip(units, elisions, strict=True)
                                   if why is not None])
    last = units[-1].report
    # (one cut, counted once: a last report cut before its trailer is report_truncated)
    if document.table_cut is not None and (last is None or not _cut_before_trailer(last)):
        count_table_cut(diagnostics, "migraphx", document.table_cut)
    # the op graph is made when first used: info and conversions never use it, and on a
    # large program it is most of the memory (traceconv.model.lazy_graph)
    trace.graph = LazyDiGraph(partial(fill_graph, parts), node_counts(parts))
    add_live_bytes_counters(trace)
    meta = trace.metadata
    meta.source_version = next((u.run.version for u in units if u.run.version), None)
    timed = any(u.report is not None or u.eval_passes for u in units)
    # Durations are measured, positions are not: a real-time axis, but no real timestamps.
    meta.clock = ("measured durations laid back to back in program order (no timestamps)"
                  if timed else "synthetic (program order, 1 µs per instruction)")
    meta.attributes["timestamps"] = ("none in the source: instructions are laid back to back "
                                     "in program order with their mean (perf) or trace-eval "
                                     "times")
    meta.attributes["programs"] = [_unit_summary(u) for u in units]
    fill_activity(trace, MIGRAPHX_VOCABULARY)
    return trace


def _build_unit(trace: TraceBuilder, unit: Unit, *, whole: bool) -> GraphPart:
    diagnostics = trace.diagnostics
    program = unit.program
    layout = lay_out(trace, unit, diagnostics)
    add_host_totals(trace, unit)
    prefix = f"{unit.label}/" if unit.label else ""
    add_memory(trace, program, layout, prefix, diagnostics)
    if unit.report is not None:
        groups = recompute(unit.report, [n.inputs for n in program.nodes])
        # (only a whole listing counts the calls a Summary before ROCm 5.3 leaves out)
        add_summary(trace, unit.report, unit.label,
                    {g.name: g.calls for g in groups} if whole else {})
        add_recomputed(trace, groups, unit.label)
        report = unit.report
        compare_stated(report, diagnostics, unit.label)
        if where := _cut_before_trailer(report):
            diagnostics.add("migraphx.report_truncated", example=f"ends {where}")
    if unit.untimed_report is not None:
        add_summary(trace, unit.untimed_report, unit.label, {})
        compare_stated(unit.untimed_report, diagnostics, unit.label)
    diagnostics.add("migraphx.unresolved_input", count=len(program.unresolved),
                    example=next((f"line {ln}: {nm}" for ln, nm in program.unresolved), None))
    diagnostics.add("migraphx.name_repeated", count=program.repeated)
    for node in program.nodes:
        ins = node.instruction
        if ins.truncated:
            diagnostics.add("migraphx.truncated_instruction",
                            example=f"line {ins.line}: {ins.name}")
        if ins.shape is not None and ins.shape.too_large:
            diagnostics.add("migraphx.shape_too_large", example=f"line {ins.line}: {ins.name}")
        if ins.unclosed_attributes:
            diagnostics.add("migraphx.unclosed_attributes", example=f"line {ins.line}: {ins.name}")
    return GraphPart(program, layout, prefix)


def _cut_before_trailer(report: PerfReport) -> str | None:
    """Where a perf report without its trailer (Total time ...) was cut, None if it was
    not: a Summary alone is a fragment someone chose to paste; after timed lines, a Summary
    with no trailer is a report cut inside its Summary."""
    if report.trailer.total_ms is None and (not report.summary or report.lines):
        return "inside its Summary" if report.summary else "before its Summary"
    return None


def _note_partial_listings(trace: TraceBuilder, partial: list[tuple[Unit, str]]) -> None:
    """Where a paste kept a report's Summary but elided its instruction lines (``partial``:
    each such unit and why), the Summary measures the run
    (:mod:`traceconv.model.partial_timeline`); the totals the report states go with it."""
    if not partial:
        return
    reports = [(unit.label, unit.report) for unit, _ in partial if unit.report is not None]
    mark_partial_timeline(trace, "; ".join(
        (f"{unit.label}: " if unit.label else "") + why for unit, why in partial),
        sum(len(report.lines) for _, report in reports))
    stated = {}
    for label, report in reports:
        run = f"{label} " if label else ""
        for what, ms in (("instructions", report.trailer.instructions_ms),
                         ("end to end", report.trailer.total_ms)):
            ns = ms_to_ns(ms)   # (a total no trace holds: the builder's time rule)
            stated[f"{run}{what}"] = None if ns is None else trace.time(ns)
    trace.metadata.attributes["stated_totals_ns"] = stated


def _note_document(document: Document, trace: Trace) -> None:
    diagnostics = trace.diagnostics
    if document.unparsed:
        number, text = document.unparsed[0]
        diagnostics.add("migraphx.unparsed_line", count=len(document.unparsed),
                        example=f"line {number}: {text}")
    count_foreign(diagnostics, "migraphx", document.foreign, document.first_foreign,
                  document.other_report)
    count_elided(diagnostics, "migraphx", len(document.elided), document.first_elided)
    diagnostics.add("migraphx.untitled_summary", count=document.untitled_summary)
    diagnostics.add("migraphx.wrapped_line", count=len(document.wrapped),
                    example=f"line {document.wrapped[0]}"
                    if document.wrapped else None)


def _unit_summary(unit: Unit) -> dict:
    run = unit.run
    out: dict = {"label": unit.label or "program", "instructions": len(unit.program.nodes),
                 "timing": "perf" if unit.report else "trace eval" if unit.eval_passes
                 else "none"}
    for key in ("version", "command", "model_file", "complete_s"):
        if (value := getattr(run, key)) is not None:
            out[key] = value
    if run.environment:
        out["environment"] = dict(run.environment)
    report = unit.report or unit.untimed_report
    if report is not None:
        out["trailer"] = report.trailer.model_dump(exclude_none=True)
    if unit.eval_passes:
        out["eval_passes"] = len(unit.eval_passes)
    return out
