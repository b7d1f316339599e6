"""Reading the inputs of a command: a progress bar, warnings, several ranks combined."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..io import DEFAULT_MAX_BYTES
from ..units import format_duration

if TYPE_CHECKING:
    from ..analysis.align import Mode
    from ..model import Trace


def load_all(inputs: tuple[str, ...], format: str | None, align: Mode = "auto", *,
             max_bytes: int = DEFAULT_MAX_BYTES, memory_check: bool = True) -> Trace:
    """Load every input (with a progress bar on a terminal) and combine them into one trace:
    ranks are merged, clocks aligned on shared collectives as ``align`` says; an execution
    trace is linked to its Kineto trace (:func:`~traceconv.api.combine`)."""
    from ..api import combine

    traces = load_each(inputs, format, max_bytes=max_bytes, memory_check=memory_check)
    return traces[0] if len(traces) == 1 else combine(traces, align=align)


def load_each(inputs: tuple[str, ...], format: str | None, *,
              max_bytes: int = DEFAULT_MAX_BYTES, memory_check: bool = True) -> list[Trace]:
    """Load every input (with a progress bar on a terminal), each on its own; warnings
    about inputs that do not belong together on stderr (``memory_check``: see
    :func:`traceconv.load`)."""
    from ..api import check_inputs, load, merge_warnings
    from .progress import reading

    for warning in check_inputs(inputs):
        click.echo(f"traceconv: warning: {warning}", err=True)
    with reading(list(inputs)) as per_file:
        traces = [load(path, format=format, progress=per_file(i), max_bytes=max_bytes,
                       memory_check=memory_check, joining=len(inputs) > 1)
                  for i, path in enumerate(inputs)]
    for warning in merge_warnings(traces):
        click.echo(f"traceconv: warning: {warning}", err=True)
    return traces


def echo_alignment(trace: Trace) -> None:
    """Say on stderr what ``--align`` did to a merged trace (and how far ranks still differ)."""
    alignment = trace.metadata.attributes.get("alignment")
    if not alignment:
        return
    worst = max((r["residual_max_ns"] for r in alignment["ranks"]), default=0)
    residual = f"; residual skew up to {format_duration(worst)}" if alignment["collectives"] else ""
    click.echo(f"traceconv: clocks: {alignment['reason']}{residual}", err=True)
