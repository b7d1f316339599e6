"""Options shared by the analysis commands: ``--steps`` (step selection) and the device views
of ``summary`` (``--launch-stats``, ``--streams``, ``--by-annotation``, ``--sequences``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from ..errors import TraceconvError

if TYPE_CHECKING:
    from rich.table import Table

STEPS_OPTION = click.option(
    "--steps", metavar="A:B",
    help="Only steps A to B (ProfilerStep#N numbers, both included; N, A: and :B work too): "
         "host work by its time, device work by the step that launched it (wherever it ran).")


def with_steps(trace, spec: str | None, path: str | None = None):
    """``trace`` cut to the steps of ``spec`` (a new trace), or ``trace`` itself."""
    if not spec:
        return trace
    from ..analysis.steps import select_steps

    try:
        cut = select_steps(trace, spec)
    except ValueError as exc:
        raise TraceconvError(str(exc), file=path) from None
    other = cut.diagnostics.count("steps.device.other_steps")
    unowned = cut.diagnostics.count("steps.device.unowned")
    if other or unowned:   # said, not only counted: these numbers are not in the tables
        click.echo(f"--steps {spec}: device work left out: {other:,} launched in other steps, "
                   f"{unowned:,} launched outside every step or with no known launch",
                   err=True)
    return cut


def device_views(options: dict[str, Any]) -> bool:
    """True when any device view is asked for."""
    return bool(options.get("launch_stats") or options.get("streams")
                or options.get("by_annotation") or options.get("sequences"))


def device_data(trace, *, launch_stats: bool = False, streams: bool = False,
                by_annotation: bool = False, sequences: int = 0,
                definition: str = "traceconv") -> dict[str, Any]:
    """The JSON objects of the device views asked for (``definition``: whose definition of
    a launch ``--launch-stats`` uses, traceconv's or HTA's)."""
    from ..analysis.activity import Timeline

    tl = Timeline(trace)
    data: dict[str, Any] = {}
    if launch_stats:
        from ..analysis.launch_stats import hta_launch_stats
        from ..analysis.launch_stats import launch_stats as compute

        data["launch_stats"] = (hta_launch_stats(tl) if definition == "hta"
                                else compute(tl).as_dict())
    if streams:
        from ..analysis.idle import stream_idle

        data["stream_idle"] = [s.as_dict(tl.origin) for s in stream_idle(tl)]
        data["stream_idle_over"] = tl.steps_word   # (the steps, or the run's work span)
    if by_annotation:
        from ..analysis.kernel_patterns import by_annotation as annotations

        data["annotations"] = annotations(tl)
    if sequences:
        from ..analysis.kernel_patterns import frequent_sequences

        data["kernel_sequences"] = frequent_sequences(tl, sequences)
    return data


def _short(name: str, width: int = 40) -> str:
    """A kernel name without its argument list, cut to ``width``.

    >>> _short("void at::native::vectorized_elementwise_kernel<4, float>(int, float)")
    'void at::native::vectorized_elementwise…'
    """
    name = name.split("(", 1)[0] if "(" in name[1:] else name
    return name if len(name) <= width else name[:width - 1] + "…"


def _us(ns: int | None) -> str:
    return "-" if ns is None else f"{ns / 1e3:,.1f}"


# the statistics of --launch-stats; in a narrow terminal p95, min, mean, then p99 are hidden
_LAUNCH_COLUMNS = (("count", 0), ("min", 3), ("median", 0), ("p90", 0), ("p95", 4), ("p99", 1),
                   ("max", 0), ("mean", 2))


def _launch_table(stats: dict[str, Any], width: int) -> tuple[str, Table]:
    """``--launch-stats``: a line of counts, and a table in µs of traceconv's (ns values) or
    HTA's (µs values) statistics, fitted to ``width``
    (:func:`~traceconv.presentation.tables.fitted_table`: numbers whole, columns hidden when
    narrow). The line is no title: a title wraps at the table's width, which is narrower."""
    from ..presentation.tables import Column, fitted_table

    hta = stats.get("definition") == "hta"
    if hta:
        line = (f"launches as HTA counts them: {stats['launches']:,} "
                f"({stats['short_kernels']:,} short, "
                f"{stats['runtime_outliers']['count']:,} calls > 50 µs, "
                f"{stats['long_delay']['count']:,} wait > 100 µs)")
    else:
        line = (f"kernel launches: {stats['launches']:,} "
                f"({stats['shorter_than_launch']:,} shorter than their launch call, "
                f"{stats['long_delay']['count']:,} wait > 100 µs)")
    unit = "us" if hta else "ns"
    rows = []
    for key, label in (("cpu", "CPU (runtime call)"), ("gpu", "GPU (kernel)"),
                       ("delay", "launch delay")):
        d = stats[f"{key}_{unit}"]
        cells = [d.get(k) for k, _ in _LAUNCH_COLUMNS[1:]]
        rows.append([label, f"{d.get('count', 0):,}", *(
            ("-" if v is None else f"{v:,.1f}") if hta else _us(v) for v in cells)])
    columns = [Column("µs"), *(Column(name, number=True, drop=drop)
                               for name, drop in _LAUNCH_COLUMNS)]
    return line, fitted_table(columns, rows, width)


def print_device_views(data: dict[str, Any], wide: bool = False) -> None:
    """The device views as short tables, at the terminal's width (``wide``: unbounded)."""

    from ..presentation.tables import Column, console_for, fitted_table
    from ..terminal import plain
    from ..units import column_figures

    console = console_for(wide, highlight=False)
    stats = data.get("launch_stats")
    if stats is not None:
        counts, table = _launch_table(stats, console.width)
        console.print(counts)
        console.print(table)
    over = data.get("stream_idle_over", "the steps")
    for key, title, columns, empty in (
            ("stream_idle", f"idle per stream (over {over}"
             + (": first work to last)" if over == "the run" else ")"),
             (("name", "name"), ("busy", "busy_ns"), ("idle", "idle_ns"),
              ("host wait", "host_wait_ns"), ("kernel wait", "kernel_wait_ns"),
              ("other", "other_ns")), "no device stream in this trace"),
            ("annotations", "GPU time per annotation",
             (("annotation", "annotation"), ("kernels", "kernels"), ("GPU", "gpu_ns")),
             "no kernel runs under an annotation"),
            ("captured_ops", "GPU time per op that captured the replayed kernels",
             (("op", "op"), ("kernels", "kernels"), ("GPU", "gpu_ns")),
             "no replayed kernel was matched to a capturing op"),
            ("kernel_sequences", "most frequent kernel sequences",
             (("sequence", "sequence"), ("count", "count"), ("GPU", "gpu_ns")),
             "no kernel sequence repeats")):
        rows = data.get(key)
        if rows is None:
            continue
        if not rows:   # (an empty table would say nothing: say why)
            console.print(f"{title}: {empty}")
            continue
        labels, figures = [], []
        for label, field in columns:
            values = [row[field] for row in rows]
            if field.endswith("_ns"):   # a duration column: one unit for its figures
                unit, texts = column_figures(values)
                label = f"{label} {unit}"
            elif isinstance(values[0], list):
                texts = [plain(" → ".join(_short(v) for v in value)) for value in values]
            else:
                texts = [plain(_short(value, 60)) if isinstance(value, str) else f"{value:,}"
                         for value in values]
            labels.append(label)
            figures.append(texts)
        numbers = [field.endswith("_ns") or field in ("kernels", "count") for _, field in columns]
        # (the first column names the row; the others, numbers, go last-first when narrow)
        console.print(fitted_table(
            [Column(label, number=number, drop=0 if i < 2 else len(columns) - i)
             for i, (label, number) in enumerate(zip(labels, numbers, strict=True))],
            [list(line) for line in zip(*figures, strict=True)], console.width, title=title,
            title_justify="left"))
