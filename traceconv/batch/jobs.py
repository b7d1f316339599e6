"""One unit of batch work, runnable in any worker process: read one file, write one file.

Functions here take and return small picklable records, so that a process pool, a dask
worker and a ray worker run exactly the same code and write byte-identical outputs. A
worker holds one input's trace at a time and frees it before the next task.
"""

from __future__ import annotations

import os
import resource
import socket
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

from .. import registry
from ..errors import TraceconvError
from ..output_names import output_name
from ..outputs import ChosenPath, Files, refuse_replacing_inputs

if TYPE_CHECKING:
    from ..analysis.trim import TrimOptions
    from ..model import Trace

@dataclass(frozen=True, slots=True)
class Task:
    """Convert ``path`` (format detected unless ``format``) to ``output`` as ``to``."""

    path: str
    output: str
    to: str
    format: str | None = None
    trim: TrimOptions | None = None   # applied to each input before it is written


@dataclass(slots=True)
class BatchResult:
    """What happened to one input."""

    file: str
    output: str | None
    status: str                 # "ok" or "failed"
    events: int = 0             # slices + instants + counter samples read
    seconds: float = 0.0
    error: str | None = None
    worker: str = ""            # host:pid of the worker that ran it
    peak_rss_mb: float = 0.0    # that worker's peak resident memory so far
    diagnostics: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def plan(inputs: list[str], outdir: str, to: str, format: str | None = None,
         trim: TrimOptions | None = None) -> list[Task]:
    """One task per input, outputs named by the rule of :mod:`traceconv.outputs` in
    ``outdir`` (``-2``, ``-3`` for repeated names); no output is an input, and each is a
    :class:`~traceconv.outputs.ChosenPath` (never written through a link planted there)."""
    extension = registry.get(to).default_extension
    avoid = Files(inputs)
    used: set[str] = set()
    tasks = []
    for path in inputs:
        output = first = output_name([path], to, outdir=outdir, avoid=avoid)
        count = 1
        while output in used or avoid.find(output) is not None:
            count += 1
            output = ChosenPath(f"{first.removesuffix(extension)}-{count}{extension}")
        used.add(output)
        tasks.append(Task(path, output, to, format, trim))
    return tasks


def _worker() -> tuple[str, float]:
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss   # KiB on Linux
    return f"{socket.gethostname()}:{os.getpid()}", peak_kb / 1024


def _events(trace: Trace) -> int:
    return len(trace.slices) + len(trace.instants) + len(trace.counters)


def convert_one(task: Task) -> BatchResult:
    """Run one task; a handled error becomes a failed result, never an exception."""
    from ..api import load, save

    began = time.perf_counter()
    try:
        refuse_replacing_inputs([task.output], [task.path])   # checked again where it runs
        trace = load(task.path, format=task.format)
        if task.trim is not None and task.trim.active:
            from ..analysis.trim import trim_with

            trace = trim_with(trace, task.trim)
        save(trace, task.output, format=task.to)
        result = BatchResult(task.path, task.output, "ok", _events(trace),
                             diagnostics=trace.diagnostics.as_list())
        del trace
    except (TraceconvError, OSError) as exc:
        result = BatchResult(task.path, None, "failed", error=str(exc))
    result.seconds = time.perf_counter() - began
    result.worker, result.peak_rss_mb = _worker()
    return result


def load_one(task: Task) -> tuple[BatchResult, Trace | None]:
    """Read one input for ``--merge``: the trace travels back to the caller."""
    from ..api import load

    began = time.perf_counter()
    try:
        trace: Trace | None = load(task.path, format=task.format, joining=True)
        result = BatchResult(task.path, None, "ok", _events(trace))   # type: ignore[arg-type]
    except (TraceconvError, OSError) as exc:
        trace, result = None, BatchResult(task.path, None, "failed", error=str(exc))
    result.seconds = time.perf_counter() - began
    result.worker, result.peak_rss_mb = _worker()
    return result, trace
