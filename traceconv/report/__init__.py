"""``traceconv report``: one self-contained HTML page about a trace.

Sections: run metadata, step-time breakdown (compute / memcpy / communication / host / idle;
per rank for a merged trace, with the slowest rank: :mod:`.step_time`), top ops and kernels,
``advise`` findings, the memory pane (per device: allocated and reserved over time, the
moment that matters and the sites live then: :mod:`.memory_pane`) and the memory-flow picture, and the critical path. Plots are inline SVG; the page has no script
and loads nothing from the network. Each section says so when the trace lacks what it needs.
"""

from __future__ import annotations

import io
from collections import defaultdict

from ..markup import escape
from ..model import DeviceInfo, StatedRun, Trace
from ..model.clock import span_text
from ..units import column_figures, format_bytes, format_duration
from .page import page, table
from .step_time import BREAKDOWN, step_time_section
from .svg import path_strip, stacked_bar

_PATH_BREAKDOWN = (*BREAKDOWN[:4], ("wait", "wait"), ("untraced", "host (untraced)"),
                   *BREAKDOWN[4:])


def render_report(trace: Trace, title: str | None = None) -> str:
    """The report of ``trace`` as one HTML document.

    >>> import traceconv
    >>> html = render_report(traceconv.load("samples/torch/streams_graph_nccl_cuda.pt.trace.json.gz"))
    >>> html.startswith("<!DOCTYPE html>"), "<script" in html, "src=" in html, 'href="http' in html
    (True, False, False, False)
    """
    from ..analysis.runs import split_runs

    meta = trace.metadata
    sections = [("Run", _metadata(trace))]
    several = split_runs(trace)
    if not several:
        sections += _run_sections(trace)
    for number, (label, run) in enumerate(several, 1):   # each run's numbers, never a sum
        sections += _run_sections(run, f", run {number} of {len(several)} ({label})")
    subtitle = " · ".join(x for x in (meta.framework, meta.source_format, meta.source_version,
                                      _length(trace)) if x)
    return page(title or f"traceconv report: {_inputs_named(trace)}", subtitle, sections)


def _run_sections(trace: Trace, of: str = "") -> list[tuple[str, str]]:
    """The sections of one run's numbers, their headings ending with ``of``."""
    from ..analysis.timeline_diff import is_timeline

    timeline = is_timeline(trace)
    sections = [("Step time", step_time_section(trace))] if timeline else []
    sections += [("Top ops and kernels", _top_ops(trace)), ("Advice", _advice(trace)),
                 ("Memory", _memory(trace))]
    if timeline or trace.graph.number_of_nodes():
        sections.append(("Critical path", _critical_path(trace)))
    return [(heading + of, inner) for heading, inner in sections]


def _inputs_named(trace: Trace) -> str:
    """The file (or the files, several merged) that ``trace`` was read from.

    >>> from traceconv.model import Metadata
    >>> _inputs_named(Trace(Metadata(attributes={"inputs": [{"label": "rank 0"}, {"label": "b.json"}]})))
    'rank 0, b.json'
    """
    meta = trace.metadata
    merged = ", ".join(str(part["label"]) for part in meta.attributes.get("inputs", ()))
    return meta.source_file or merged or "trace"


def _span(trace: Trace) -> str:
    return span_text(trace.span_ns, trace.metadata.clock)


def _length(trace: Trace) -> str:
    """The headline's length of the run: the wall time the source states, else the span
    (which says what it is where it is no elapsed time: summed totals, steps, no clock).

    >>> from traceconv.model import Metadata, StatedRun
    >>> _length(Trace(Metadata(run=StatedRun(walltime_ns=3_000_520_000))))
    '3.001 s host walltime (stated by the run)'
    """
    walltime = trace.metadata.run.walltime_ns
    if walltime is not None:
        return f"{format_duration(walltime)} host walltime (stated by the run)"
    inputs = trace.metadata.attributes.get("inputs") or ()
    return f"{_span(trace)} across {len(inputs)} inputs" if len(inputs) > 1 else _span(trace)


def _stated_rows(run: StatedRun) -> list[tuple[str, object]]:
    """The figures the source states about its run, as the Run section's rows.

    >>> _stated_rows(StatedRun(throughput_per_s=81.9895, latency_mean_ns=12_195_200,
    ...                        latency_median_ns=12_168_200))
    [('throughput (stated)', '81.99 a second'), ('latency (stated)', 'mean 12.2 ms, median 12.17 ms')]
    """
    rows: list[tuple[str, object]] = []
    for label, ns in (("host walltime (stated)", run.walltime_ns),
                      ("device time (stated)", run.device_ns)):
        if ns is not None:
            rows.append((label, format_duration(ns)))
    if run.throughput_per_s is not None:
        rows.append(("throughput (stated)", f"{run.throughput_per_s:,.2f} a second"))
    latency = ", ".join(f"{word} {format_duration(ns)}" for word, ns in (
        ("mean", run.latency_mean_ns), ("median", run.latency_median_ns),
        ("min", run.latency_min_ns), ("max", run.latency_max_ns)) if ns is not None)
    if latency:
        rows.append(("latency (stated)", latency))
    return rows


def _device_text(device: DeviceInfo) -> str:
    """A device's name and what the source states of it.

    >>> _device_text(DeviceInfo(0, "NVIDIA GeForce RTX 3090", 25446842368, 8, 6))
    'NVIDIA GeForce RTX 3090, 23.7 GiB, compute 8.6'
    >>> _device_text(DeviceInfo(0, "MI300X"))
    'MI300X'
    """
    parts = [device.name or "?"]
    if device.memory_bytes:
        parts.append(format_bytes(device.memory_bytes))
    if device.compute_major is not None:
        minor = "?" if device.compute_minor is None else device.compute_minor
        parts.append(f"compute {device.compute_major}.{minor}")
    return ", ".join(parts)


def _inputs_table(inputs: list[dict]) -> str:
    """A merged trace's inputs: label, file, format and devices of each."""
    return table(["input", "file", "format", "devices"],
                 [(part.get("label", "-"), part.get("file") or "-", part.get("format") or "-",
                   ", ".join(part.get("devices") or ()) or "-") for part in inputs])


def _metadata(trace: Trace) -> str:
    meta = trace.metadata
    inputs = list(meta.attributes.get("inputs") or ())
    rows: list[tuple[str, object]] = [
        ("file", meta.source_file or (f"{len(inputs)} inputs (below)" if inputs else "-")),
        ("format", meta.source_format or "-"),
        ("version", meta.source_version or "-"), ("framework", meta.framework or "-"),
        ("clock", meta.clock), ("span", _span(trace)), *_stated_rows(meta.run)]
    if meta.rank is not None:
        rows.append(("rank", meta.rank))
    for device in meta.devices:
        if device.name:
            rows.append((f"device {'' if device.id is None else device.id}".strip(),
                         _device_text(device)))
    counts = ", ".join(f"{k} {v:,}" for k, v in trace.counts().items() if v and k != "span_ns")
    rows.append(("contents", counts))
    diagnostics = list(trace.diagnostics)
    details = ""
    if diagnostics:
        kinds = "1 kind" if len(diagnostics) == 1 else f"{len(diagnostics)} kinds"
        rows.append(("diagnostics", f"{kinds} of repaired / dropped / guessed things (below)"))
        details = ("<details><summary>diagnostics</summary>" + table(
            ["code", "kind", "count", "what"],
            [(d.code, d.kind, d.count, d.message) for d in diagnostics],
            [False, False, True, False]) + "</details>")
    return table(["", ""], rows) + (_inputs_table(inputs) if inputs else "") + details


def _top_ops(trace: Trace, top: int = 15) -> str:
    """The timeline's per-op table (with the statistics tables given with it), or the
    statistics' or op graph's (also where the statistics measure a partial timeline)."""
    from ..analysis.statistics_inputs import joined_statistics
    from ..analysis.timeline_diff import is_timeline
    from ..model.partial_timeline import timeline_is_partial

    pooled = _pooled_note(trace)
    if not is_timeline(trace) or timeline_is_partial(trace):
        return pooled + _profile_summary(trace, top)
    statistics = joined_statistics(trace)
    if statistics is None:
        return pooled + _key_averages(trace, top)
    files = escape(statistics.metadata.source_file or "")
    return (f"{pooled}{_key_averages(trace, top)}<p>Statistics given with the timeline "
            f"({files}):</p>{_profile_summary(statistics, top)}")


def _pooled_note(trace: Trace) -> str:
    """For several inputs: that the tables are the job's, every input's rows pooled.

    >>> from traceconv.model import Metadata
    >>> _pooled_note(Trace(Metadata(attributes={"inputs": [{"label": "rank 0"}, {"label": "rank 1"}]})))
    '<p><b>Job level</b>: rank 0, rank 1 pooled (calls and times summed over the 2 inputs; the Step time above is per input).</p>'
    """
    inputs = trace.metadata.attributes.get("inputs") or ()
    if len(inputs) < 2:
        return ""
    return (f"<p><b>Job level</b>: {escape(_inputs_named(trace))} pooled (calls and times "
            f"summed over the {len(inputs)} inputs; the Step time above is per input).</p>")


def _key_averages(trace: Trace, top: int) -> str:
    """Timelines: torch ``key_averages`` semantics (self / total, host / device by launch)."""
    from ..analysis.op_summary import op_summary, sort_rows

    rows = op_summary(trace)
    cards = []
    for place, self_key, total_key in (("device", "self_device_ns", "device_total_ns"),
                                       ("host", "self_host_ns", "host_total_ns")):
        ranked = [r for r in sort_rows(rows, self_key, top) if getattr(r, self_key)]
        if not ranked:
            continue
        # (no share column: an op's self device time is its kernels' time, listed again as
        # the kernels' own rows, as in torch's table)
        self_unit, selfs = column_figures([getattr(r, self_key) for r in ranked])
        total_unit, totals = column_figures([getattr(r, total_key) or 0 for r in ranked])
        body = table(["name", "kind", "calls", f"self {place} {self_unit}",
                      f"{place} total {total_unit}"],
                     [(r.name, r.kind, f"{r.calls:,}", own, total)
                      for r, own, total in zip(ranked, selfs, totals, strict=True)],
                     [False, False, True, True, True])
        cards.append(f'<div class="card"><b>by self {place} time</b>, top {len(ranked)}'
                     f"{body}</div>")
    return "".join(cards) if cards else '<p class="muted">No per-op times in this trace.</p>'


def _profile_summary(trace: Trace, top: int) -> str:
    """Statistics and op graphs: the ``summary`` (profile_analyze) rows."""
    from ..analysis.summary import summarize

    result = summarize(trace, top=top)
    cards = []
    for place, rows, total in (("device", result.device_rows, result.total_device_time),
                               ("host", result.host_rows, result.total_host_time)):
        if not rows:
            continue
        with_calls = any(r.calls is not None for r in rows)   # (a graph's ops run once)
        unit, times = column_figures([r.time * 1e9 for r in rows])   # (seconds)
        body = table(["name", "type", *(["calls"] if with_calls else []), unit, "share"],
                     [(r.name, r.type, *([_calls(r.calls)] if with_calls else []), time,
                       f"{100 * r.time / total:.1f}%" if total else "-")
                      for r, time in zip(rows, times, strict=True)],
                     [False, False, *([True] if with_calls else []), True, True])
        cards.append(f'<div class="card"><b>{place}</b>, top {len(rows)}{body}</div>')
    return f'<div class="grid">{"".join(cards)}</div>' if cards else (
        '<p class="muted">No per-op times in this trace.</p>')


def _calls(calls: int | None) -> str:
    return "-" if calls is None else f"{calls:,}"


def _advice(trace: Trace) -> str:
    from ..analysis.advise import advise

    result = advise(trace)
    if not result.findings:
        passed = len(result.passed)
        return (f'<p>No findings: {passed} rule{"s" * (passed != 1)} passed, '
                f'{len(result.skipped)} not applicable.</p>')
    items = []
    for f in result.findings:
        evidence = "\n".join(f"{k}: {v}" for k, v in f.evidence.items())
        items.append(f'<div class="finding {f.severity}"><span class="sev">{f.severity}</span>'
                     f'<span class="rule">{escape(f.rule)}</span><div><b>{escape(f.title)}</b>'
                     f'</div><p class="advice">{escape(f.advice)}</p><details><summary>'
                     f'evidence</summary><pre>{escape(evidence)}</pre></details></div>')
    skipped = ", ".join(f"{s.rule} ({s.reason.removeprefix('not applicable: ')})"
                        for s in result.skipped)
    return "".join(items) + (f'<p class="muted">Not applicable: {escape(skipped)}.</p>'
                             if skipped else "")


def _memory(trace: Trace) -> str:
    if not trace.memory and not trace.reservations:
        return '<p class="muted">No memory blocks in this trace.</p>'
    from .memory_pane import memory_pane

    return (f"<p>{len(trace.memory):,} memory blocks: allocated bytes (the blocks live) and "
            "reserved bytes (the allocator's segments, where the trace has them) per "
            "device.</p>" + memory_pane(trace) + _memflow(trace))


def _memflow(trace: Trace) -> str:
    from ..formats.memflow_svg import write

    out = io.BytesIO()
    try:
        write(trace, out, width=1040, height=420)
    except Exception as exc:  # the picture is optional: say why it is missing
        return f'<p class="muted">No memory-flow picture: {escape(str(exc))}</p>'
    svg = out.getvalue().decode("utf-8")
    svg = svg[svg.index("<svg"):] if "<svg" in svg else svg
    return f'<h3>Memory flow</h3><div class="memflow">{svg}</div>'


def _critical_path(trace: Trace, top: int = 12) -> str:
    from ..analysis.critical_path import critical_path

    result = critical_path(trace)
    if not result.path:
        return '<p class="muted">No critical path (no timed work).</p>'
    length = result.length_ns or 1
    parts = [(label, result.breakdown.get(kind, 0)) for kind, label in _PATH_BREAKDOWN]
    totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for e in result.path:
        totals[(e.name, e.kind)][0] += e.dur_ns
        totals[(e.name, e.kind)][1] += 1
    ranked = sorted(totals.items(), key=lambda kv: -kv[1][0])[:top]
    unit, on_path = column_figures([ns for _, (ns, _) in ranked])
    rows = [(name, kind, figure, f"{100 * ns / length:.1f}%", n)
            for ((name, kind), (ns, n)), figure in zip(ranked, on_path, strict=True)]
    strip = path_strip([(e.name, e.kind, e.start_ns, e.dur_ns) for e in result.path],
                       result.path[0].start_ns, length)
    return (f"<p>{result.mode} critical path: {format_duration(result.length_ns)} of "
            f"{format_duration(result.span_ns)} of work (its first to its last slice), "
            f"{len(result.path):,} links.</p>"
            + stacked_bar(parts) + strip
            + table(["name", "kind", f"on path {unit}", "share", "links"], rows,
                    [False, False, True, True, True]))
