"""The public functions: load a trace, save it, convert in one step.

Reading and writing run with Python's cyclic garbage collector paused: they create millions
of objects and no reference cycles, and a collection pass would walk every event's argument
dict each time (a 1 M-event trace converts 2-3x slower with it on).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from . import registry
from .errors import FormatError, InputError, TraceconvError
from .gcpause import paused_gc
from .io import DEFAULT_MAX_BYTES, Progress, Source, reading
from .memory_check import memory_limit
from .numbers import NumberError
from .output_files import atomic_output
from .output_names import refuse_binary_to_terminal
from .outputs import inputs_named, inputs_of, refuse_replacing_inputs, remember_inputs
from .units import format_duration

if TYPE_CHECKING:   # the model imports numpy and networkx: not needed to start the CLI
    from .analysis.align import Mode
    from .model import Diagnostics, OpStat, Trace
    from .model.check_report import CheckReport


def load(path: str | os.PathLike[str], format: str | None = None, *,
         progress: Progress | None = None, max_bytes: int = DEFAULT_MAX_BYTES,
         memory_check: bool = True, joining: bool = False, **options: Any) -> Trace:
    """Read any supported profiler output into a :class:`~traceconv.model.Trace`.

    The format is detected from the name and content unless ``format`` names it (a name
    from ``traceconv formats``, or ``chrome:kineto`` to force a flavour). ``options`` are
    the reader's keyword parameters; any other name is refused. An input holding
    more than ``max_bytes`` (after decompression; 16 GiB by default) is refused with an
    :class:`~traceconv.errors.InputError` rather than exhausting memory, and so is one whose
    measured peak (Chrome JSON: about a third of its size with argument texts on disk,
    0.85x without, and 100 MiB) exceeds the memory available, unless ``memory_check`` is False or the
    environment says ``TRACECONV_MEMORY_CHECK=off`` (:mod:`traceconv.memory_check`).
    ``joining`` says the input is one of several that :func:`combine` will join: a file of
    a run's settings alone (rocprofv3's ``agent_info.csv``) is read only so; alone it is
    nothing read.

    >>> trace = traceconv.load("samples/torch/cnn_step5.pt.trace.json")   # doctest: +SKIP
    >>> trace.counts()["slices"]                                          # doctest: +SKIP
    2725
    """
    source = Source(path, progress=progress, max_bytes=max_bytes)
    if format:
        resolved = registry.resolve(format)
        info = resolved.info
        if resolved.flavour:
            options = {**options, "flavour": resolved.flavour}
    else:
        info = registry.detect(source)
    if not info.reads:
        raise TraceconvError(f"traceconv cannot read {info.name} files", file=source.name)
    if memory_check:   # (judged by the input layer on the bytes it reads: Source)
        from .spilled_texts import text_store

        spilled = text_store() is not None
        source.memory_limit = memory_limit(info.name, spilled,
                                           row_peak=getattr(info.load(), "ROW_PEAK", None))
        source.held_limit = memory_limit(info.name, spilled, held_whole=True)
    return _read(source, info, options, joining=joining)


def _read(source: Source, info: registry.FormatInfo, options: dict[str, Any], *,
          joining: bool = False) -> Trace:
    """The frozen trace that ``info``'s reader makes of ``source`` (see :func:`load`)."""
    module = info.load()
    registry.check_options(module.read, options, f"the {info.name} reader",
                           getattr(module, "READ_OPTIONS", None))
    with paused_gc(), reading(source.name):
        try:
            trace: Trace = module.read(source, **options)
        except NumberError as exc:   # a reader met a number no trace can hold
            raise InputError(str(exc), file=source.name, location=exc.location) from None
        except RecursionError:   # a reader or a library recursed into a deep value
            raise InputError("nested deeper than traceconv reads (about 1,000 levels)",
                             file=source.name) from None
        finally:
            source.close()   # (what a piped input left: the trace holds what it needs)
    for code, count, example in source.notes:   # (the input layer's own findings)
        trace.diagnostics.add(code, count=count, example=example)
    from .model.builder import build

    with paused_gc():   # (freezing makes a dict per memory block and argument value)
        frozen = build(trace, source_format=info.name,
                       source_file=os.path.basename(source.name))
    if not joining:
        _refuse_settings_alone(frozen, source.name)
    _refuse_nothing_read(frozen, source.name, info.name)
    remember_inputs(frozen, [source.path])
    return frozen


# counts that name or place what was read, and are not read on their own
_NOT_READ_ALONE = frozenset({"tracks", "span_ns"})


def _refuse_nothing_read(trace: Trace, name: str, format_name: str) -> None:
    """An input of which the reader took nothing is an error, whatever its format: an empty
    output would say it was read. When the reader left things out (every row of a table it
    could not read), the line names the largest of them, with its example, so that it says
    why. What is read is events, rows, ops, memory blocks or statistics: names (processes,
    tracks) and a run's settings alone (a Chrome file of metadata events, an execution
    trace with no node, trtexec's ``[{"count": 0}]``) are not, since an output of them would
    be empty; only a file that its reader says holds settings to join the traces given
    beside it (``input.settings_only``: rocprofv3's agent info) is read so, and only while
    they are joined (:func:`_refuse_settings_alone`)."""
    if _holds_work(trace) or trace.diagnostics.count("input.settings_only"):
        return
    dropped = [item for item in trace.diagnostics.as_list() if item["kind"] == "dropped"]
    why = ""
    if dropped:
        largest = max(dropped, key=lambda item: item["count"])
        why = f"; {largest['count']:,} left out ({largest['code']})" + (
            f", such as: {_shown_example(largest['example'])}" if largest["example"] else "")
    raise InputError(f"nothing read: the {format_name} reader found no event, statistic, op "
                     f"or memory block in it{why}", file=name)


def _holds_work(trace: Trace) -> bool:
    """Whether ``trace`` holds events, rows, ops, memory blocks or statistics."""
    counts = trace.counts()
    return bool(any(counts[key] for key in counts if key not in _NOT_READ_ALONE)
                or trace.stats or len(trace.reservations) or trace.has_graph)


def _refuse_settings_alone(trace: Trace, name: str) -> None:
    """A run's settings with nothing to join (given alone, or beside nothing of their run)
    are nothing read: the line says what to give with them (the example of the reader's
    ``input.settings_only``)."""
    if _holds_work(trace) or not trace.diagnostics.count("input.settings_only"):
        return
    joins = next(item["example"] for item in trace.diagnostics.as_list()
                 if item["code"] == "input.settings_only")
    raise InputError(f"nothing read: a run's settings alone, read only to join the traces "
                     f"given with them: give it together with {joins}", file=name)


def _shown_example(example: str, limit: int = 80) -> str:
    """A diagnostic's example as one line names it: cut at ``limit`` characters.

    >>> _shown_example("90.0 | 1,23,4 | 3 | gemm"), _shown_example("x" * 100, 10)
    ('90.0 | 1,23,4 | 3 | gemm', 'xxxxxxxxx…')
    """
    return example if len(example) <= limit else example[:limit - 1] + "…"


def save(trace: Trace, path: str | os.PathLike[str], format: str | None = None,
         **options: Any) -> Diagnostics:
    """Write ``trace`` to ``path`` atomically (``-`` for standard output, ``.gz`` compresses).

    ``trace`` is not changed. What the writer repaired or left out for the output format
    (slices moved to lane tracks, flows it cannot draw, ...) is returned, apart from the
    trace's own diagnostics. ``options`` are the writer's keyword parameters; any other
    name is refused before anything is written. A trace is never written over the file it
    was read from (standard input included), nor a binary format to a terminal; an error
    leaves nothing behind (:mod:`traceconv.output_files`).

    >>> traceconv.save(trace, "out.pftrace")          # doctest: +SKIP
    <Diagnostics ...>
    >>> traceconv.save(trace, "-", format="chrome")   # doctest: +SKIP
    """
    target = os.fspath(path)   # (a ChosenPath stays one)
    info = registry.for_output(target, format)
    refuse_binary_to_terminal(info, target)
    trace = _timeline_of(trace, info.name)
    _refuse_invalid(trace)
    module = info.load()
    writer = module.write
    registry.check_options(writer, options, f"the {info.name} writer",
                           getattr(module, "WRITE_OPTIONS", None))
    from .model import Diagnostics

    with atomic_output(target, inputs=inputs_of(trace)) as out, paused_gc():
        found = writer(trace, out, **options)
    return found if isinstance(found, Diagnostics) else Diagnostics()


def _named(trace: Trace) -> str:
    """How an error about loaded ``trace`` names its input: the path as given, as a read
    error does (:func:`~traceconv.outputs.inputs_named`), not the file name alone."""
    return inputs_named(trace) or "<trace>"


def _refuse_invalid(trace: Trace) -> None:
    """A trace made invalid by hand (a slice on a track that does not exist, a flow to a
    missing row) is refused with its named problem before anything is written."""
    from .model.builder import InvalidTraceError, check

    try:
        check(trace)
    except InvalidTraceError as exc:
        raise TraceconvError(f"{exc}; nothing written",
                             file=_named(trace)) from None


TIMELINE_FORMATS = frozenset({"perfetto", "chrome", "svg"})


def _timeline_of(trace: Trace, output_format: str) -> Trace:
    """What a timeline format draws of ``trace``: statistics that no reader drew, as an
    aggregate breakdown (a new trace: the rows not stated to have no calls, when they hold
    time, one lane per section, each as long as its total, on a process that says it is
    not a timeline), whichever reader they came from: alone from 0 when the trace has no
    timed event, beside the timeline from its start when inputs holding only statistics
    joined it (:mod:`traceconv.analysis.statistics_inputs`) or when its own table measures
    the run better than its partial timeline (:mod:`traceconv.model.partial_timeline`);
    the trace itself when there is nothing to draw; else an error, since an empty timeline
    would say nothing (an execution trace: op order, no clock; a layer list without
    timings; averages or counter values without calls).

    >>> drawn = _timeline_of(load("tests/data/nsys_stats/cuda_api_sum.csv"), "perfetto")
    >>> len(drawn.slices), drawn.processes[0].name
    (11, 'nsys-stats statistics: aggregate breakdown (not a timeline)')
    """
    from .analysis.statistics_inputs import joined_rows, timed_events
    from .model.clock import has_no_clock

    if output_format not in TIMELINE_FORMATS:
        return trace
    from .model.entities import TIME_IS
    from .model.partial_timeline import timeline_is_partial

    timed = timed_events(trace)
    # (a timeline's own statistics are drawn where they measure more than it does)
    rows = joined_rows(trace) if timed and not timeline_is_partial(trace) \
        else range(len(trace.stats))
    counted = [k for k in rows   # (rows of sizes hold no time; unknown calls are calls)
               if trace.stats[k].calls != 0 and trace.stats[k].extra.get(TIME_IS) != "none"]
    if any(trace.stats[k].total_ns for k in counted):
        from .analysis.runs import run_label, runs
        from .model.breakdown import add_aggregate_breakdown

        # (of an input holding several runs, each run's rows on lanes of their own)
        numbers = {label: n for n, label in enumerate(runs(trace), 1)}

        def lane(row: OpStat) -> str:
            section = row.section or row.type or "statistics"
            number = numbers.get(run_label(row.extra) or "")
            return section if number is None else f"{section}, run {number}"

        out = trace.copy()
        add_aggregate_breakdown(
            out, counted,
            f"{trace.metadata.source_format or 'input'} statistics: aggregate breakdown "
            "(not a timeline)", lane,
            start=trace.time_range[0] if timed and trace.time_range else None)
        return out.freeze()
    if timed:
        return trace
    clock = trace.metadata.clock or ""
    if has_no_clock(clock) and trace.op_count:
        raise InputError(f"nothing to put on a timeline: the input has no times "
                         f"{clock.removeprefix('none ')}; give it beside its timed trace (traceconv TRACE ET "
                         f"--to {output_format}) or write dot or graphml (the op graph)",
                         file=_named(trace))
    held = ", ".join(f"{n:,} {what}{'s' * (n != 1)}" for n, what in (
        (trace.op_count, "op"), (len(trace.stats), "statistic row")) if n)
    if not held:   # (a trace built by hand, empty)
        return trace
    raise InputError(f"nothing to put on a timeline: the input holds no timed event ({held}); "
                     "see it with `traceconv info`" + (", or write dot or graphml (the op graph)"
                                                       if trace.op_count else ""),
                     file=_named(trace))


def refuse_untimed_summary(trace: Trace) -> None:
    """An input with ops but no clock (an execution trace: op order only) has no time to
    summarize: say so in one line instead of printing an empty table.

    >>> refuse_untimed_summary(load("samples/torch/resnet18_train_et.json.gz"))
    Traceback (most recent call last):
    traceconv.errors.InputError: samples/torch/resnet18_train_et.json.gz: nothing to summarize: ...
    """
    from .analysis.statistics_inputs import timed_events
    from .model.clock import has_no_clock

    clock = trace.metadata.clock or ""
    if not has_no_clock(clock) or trace.stats or timed_events(trace) or not trace.op_count:
        return
    raise InputError(f"nothing to summarize: the input has no times {clock.removeprefix('none ')}"
                     f"; give it beside its timed trace (traceconv summary TRACE ET) or see its "
                     f"{trace.op_count:,} ops with `traceconv info`, or write dot or graphml",
                     file=_named(trace))


def convert(src: str | os.PathLike[str], dst: str | os.PathLike[str], to: str | None = None,
            *, format: str | None = None, **options: Any) -> Trace:
    """Load ``src`` and save it as ``dst``; returns the loaded trace. ``dst`` may not be
    ``src`` (checked before reading, as the same file, whatever the path says).

    >>> traceconv.convert("trace.json.gz", "trace.pftrace")   # doctest: +SKIP
    <Trace chrome: ...>
    """
    refuse_replacing_inputs([dst], [src])
    trace = load(src, format=format)
    save(trace, dst, format=to, **options)
    return trace


def combine(traces: Sequence[Trace], *, align: Mode = "auto") -> Trace:
    """One trace from several loaded inputs.

    A PyTorch execution trace given beside its Kineto trace is linked to it, not merged as
    a rank (see :mod:`traceconv.analysis.link_et`); the trtexec exports of one engine are
    read as one trace (:mod:`traceconv.formats.trtexec.engine_set`), and so are rocprofv3's
    CSV files of one run (:mod:`traceconv.formats.rocprof.run_set`); all other inputs (ranks,
    runs) are merged with :func:`traceconv.analysis.merge.merge` (``align``: its clock alignment).

    >>> traceconv.combine([traceconv.load("run.pt.trace.json.gz"),      # doctest: +SKIP
    ...                    traceconv.load("run_et.json.gz")]).op_count
    1996
    """
    from .analysis.merge import merge

    linked = rank_traces(traces)
    combined = linked[0] if len(linked) == 1 else merge(linked, align=align)
    remember_inputs(combined, [path for trace in traces for path in inputs_of(trace)])
    return combined


def rank_traces(traces: Sequence[Trace]) -> list[Trace]:
    """The inputs as one trace per rank (or run), before :func:`combine` merges them: an
    execution trace linked to its Kineto trace, the exports of one trtexec engine or the
    CSV files of one rocprofv3 run as one trace each; inputs that hold only statistics
    (rocprof's ``--stats`` tables) are no rank: they join the timeline given with them, or
    each other (:func:`~traceconv.analysis.statistics_inputs.join_statistics`).

    >>> from traceconv.api import rank_traces
    >>> len(rank_traces([traceconv.load("rank-0.json"), traceconv.load("rank-1.json")]))  # doctest: +SKIP
    2
    """
    from .analysis.link_et import link_execution_trace, pair_execution_traces
    from .analysis.statistics_inputs import join_statistics
    from .formats.rocprof.run_set import combine_runs
    from .formats.trtexec.engine_set import combine_engine_sets

    linked = []
    for timeline, ets in pair_execution_traces(combine_runs(combine_engine_sets(traces))):
        for et in ets:
            timeline = link_execution_trace(timeline, et)
        _refuse_settings_alone(timeline, _named(timeline))   # (settings nothing joined)
        linked.append(timeline)
    return join_statistics(linked)


def list_formats() -> list[registry.FormatInfo]:
    """The table of formats traceconv can read and/or write.

    (Not ``formats()``: ``traceconv.formats`` is the package of format modules.)

    >>> [f.name for f in list_formats()][:2]
    ['chrome', 'perfetto']
    """
    return registry.all_formats()


def check(path: str | os.PathLike[str], format: str | None = None, *,
          max_bytes: int = DEFAULT_MAX_BYTES) -> CheckReport:
    """What a viewer would drop or misdraw in a written trace (``.pftrace`` or Chrome JSON,
    ``.gz`` too); the format comes from the name and content unless ``format`` names it.

    Any other readable input is read, and its reader's findings make the report
    (:func:`~traceconv.analysis.read_check.read_check`): an input cut short is an error.

    >>> report = check("samples/torch/cnn_step5.pt.trace.json")
    >>> report.format, report.counts["slices"], [e["code"] for e in report.errors]
    ('chrome', 2702, ['overlapping_slice'])
    >>> check("samples/migraphx/perf_simple_graph_rocm4.txt").ok
    True
    """
    source = Source(path, max_bytes=max_bytes)
    info = registry.get(format) if format else registry.detect(source)
    if not info.checks and info.reads:
        from .analysis.read_check import read_check

        return read_check(_read(source, info, {}))
    if not info.checks:
        raise FormatError(f"traceconv cannot check {info.name} files", file=source.name)
    try:
        with reading(source.name):
            report: CheckReport = info.load().check(source)
    except RecursionError:   # (as in load)
        raise InputError("nested deeper than traceconv reads (about 1,000 levels)",
                         file=source.name) from None
    return report


def check_inputs(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """Refuse a missing input before any work is done, and one that yields its bytes once
    (standard input, a FIFO) given twice: the second read would find it spent.
    Warn about a file given twice (it would be merged with itself). Returns the warnings.

    >>> check_inputs(["samples/torch/cnn_step5.pt.trace.json", "./samples/torch/cnn_step5.pt.trace.json"])
    ['./samples/torch/cnn_step5.pt.trace.json is the same file as samples/torch/cnn_step5.pt.trace.json: it is merged with itself']
    >>> check_inputs(["no/such.json"])
    Traceback (most recent call last):
    ...
    traceconv.errors.InputError: no/such.json: No such file or directory
    >>> check_inputs(["-", "samples/torch/cnn_step5.pt.trace.json", "-"])
    Traceback (most recent call last):
    traceconv.errors.InputError: <stdin>: given twice: standard input or a FIFO yields its bytes once, so it can be read once
    """
    seen: dict[str, str] = {}
    found = []
    for path in (os.fspath(p) for p in paths):
        if path == "-":
            real = path
        else:
            try:
                status = os.stat(path)
            except OSError as exc:   # (a symbolic link loop says so, not "No such file")
                from .special_files import reason

                raise InputError(reason(exc), file=path) from None
            real = os.path.realpath(path)
        if real in seen and (path == "-" or stat.S_ISFIFO(status.st_mode)):
            raise InputError("given twice: standard input or a FIFO yields its bytes once, so "
                             "it can be read once",
                             file="<stdin>" if path == "-" else path)
        if real in seen:
            found.append(f"{path} is the same file as {seen[real]}: it is merged with itself"
                         if path != seen[real] else f"{path} is given twice: it is merged with "
                         "itself")
        seen.setdefault(real, path)
    return found


def merge_warnings(traces: Sequence[Trace]) -> list[str]:
    """What is suspicious about merging ``traces`` onto one clock: inputs of different
    frameworks (their clocks need not share an origin), and the span that results.

    >>> from traceconv.model import Metadata, Trace
    >>> a, b = Trace(Metadata(framework="PyTorch")), Trace(Metadata(framework="MegEngine"))
    >>> merge_warnings([a, b])
    ['inputs from different frameworks (PyTorch, MegEngine) are merged onto one clock, which their times need not share']
    """
    frameworks = list(dict.fromkeys(t.metadata.framework for t in traces if t.metadata.framework))
    if len(frameworks) < 2:
        return []
    ranges = [r for t in traces if (r := t.time_range) is not None]
    span = (max(hi for _, hi in ranges) - min(lo for lo, _ in ranges)) if ranges else 0
    longest = max((hi - lo for lo, hi in ranges), default=0)
    note = (f" (the merged span is {format_duration(span)}, the longest input "
            f"{format_duration(longest)})" if span > 2 * longest else "")
    return [f"inputs from different frameworks ({', '.join(frameworks)}) are merged onto one "
            f"clock, which their times need not share{note}"]
