"""The two sides of ``traceconv diff``: each one trace, several (``A1 A2 vs B1 B2``) or a
folder of traces (``split`` pieces), read into step samples one trace at a time."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import TraceconvError, UsageError

if TYPE_CHECKING:
    from ..analysis.attribution import StepTimes

SEPARATOR = "vs"
# split's list of its pieces, and its overview of the whole run: neither is a piece
_SKIPPED_NAMES = ("manifest.json", "overview.pftrace")


def split_sides(inputs: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The inputs of each side: ``A B``, ``A`` (a file with two runs: B empty), or
    ``A... vs B...``.

    >>> split_sides(("a1", "a2", "vs", "b1")), split_sides(("a", "b")), split_sides(("a",))
    ((['a1', 'a2'], ['b1']), (['a'], ['b']), (['a'], []))
    """
    if SEPARATOR in inputs:
        at = inputs.index(SEPARATOR)
        a, b = list(inputs[:at]), list(inputs[at + 1:])
        if not a or not b or SEPARATOR in b:
            raise UsageError(f"diff A... {SEPARATOR} B...: give traces on both sides of one "
                             f"'{SEPARATOR}'")
        return a, b
    if not inputs or len(inputs) > 2:
        raise UsageError(f"diff takes A and B; several traces a side are separated by "
                         f"'{SEPARATOR}' (A1 A2 {SEPARATOR} B1 B2), or give two folders")
    return [inputs[0]], list(inputs[1:])


def expand(specs: list[str]) -> list[str]:
    """Each folder replaced by the files in it (by name; hidden files and a ``split``
    manifest and overview left out); files and ``FILE@N`` kept."""
    files: list[str] = []
    for spec in specs:
        if not os.path.isdir(spec):
            files.append(spec)
            continue
        inside = sorted(name for name in os.listdir(spec) if not name.startswith(".")
                        and name not in _SKIPPED_NAMES
                        and os.path.isfile(os.path.join(spec, name)))
        if not inside:
            raise TraceconvError("the folder holds no trace", file=spec)
        files += [os.path.join(spec, name) for name in inside]
    return files


@dataclass
class Side:
    """One side's steps (:class:`~traceconv.analysis.attribution.StepTimes`), the
    frameworks and sources (format and framework) it came from and the traces left out (no step markers beside traces that
    have them: a ``split`` folder's piece before the first step)."""

    times: StepTimes
    frameworks: set[str]
    sources: set[str]
    traces: int
    left_out: list[str]


def read_side(paths: list[str], format: str | None, load) -> Side:
    """Read each trace of a side into step samples (one trace held at a time); ``load``
    reads one path (``FILE@N`` included)."""
    from ..analysis.activity import Timeline
    from ..analysis.attribution import attribute_steps
    from ..analysis.step_samples import join
    from ..analysis.timeline_diff import is_timeline, source_of

    parts, marked = [], []
    frameworks: set[str] = set()
    sources: set[str] = set()
    for path in paths:
        trace = load(path, format)
        if not is_timeline(trace):
            raise TraceconvError("not a timeline: steps as samples need measured slices "
                                 "(diff two reports one against one)", file=path)
        frameworks.add(trace.metadata.framework or "")
        sources.add(source_of(trace))
        parts.append(attribute_steps(trace))
        marked.append(Timeline(trace).has_step_markers)
    left_out = [p for p, m in zip(paths, marked, strict=True) if not m] if any(marked) else []
    parts = [part for part, m in zip(parts, marked, strict=True) if m or not any(marked)]
    return Side(join(parts), frameworks, sources, len(parts), left_out)
