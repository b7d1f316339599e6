"""Trimming: a new trace holding only a time window, some slice names, some tracks.

* ``window`` (ns relative to the earliest timestamp of the trace): slices that overlap it
  are kept and clipped to it; instants and counter samples inside it are kept; memory
  blocks alive during it are kept (unclipped: an allocation time is a fact, not a drawing);
* ``only`` / ``exclude`` (regular expressions searched in slice names): ``only`` keeps the
  matching slices *and the slices that enclose them on their track*, so nesting stays
  valid; ``exclude`` removes the matching slices (what they enclosed stays, one level up);
* ``tracks`` (regular expression searched in ``"process / track"``): keeps those tracks
  (with their overlap lanes) and the processes that still have one.

Flows are kept when both their slices survive. Every removal and clip is counted in the
new trace's diagnostics under ``trim.*``. The input trace is never changed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from ..model import Diagnostics, Trace
from ..model.copying import Keep, copy_into
from ..model.nesting import clamped_durations
from ..model.timeline_order import timeline_order
from ..numbers import MAX_DIGITS, shown

# the longest time a command-line value may give: every trace time lies within
# -1e18 .. 3.5e18 ns (traceconv.value_bounds), so no window or piece needs more
LONGEST_NS = 5 * 10**18
UNITS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
# the number's digits are read once: "[0-9]*\.?[0-9]+" tried each split of a long run
_TIME = re.compile(r"^\s*+((?:[0-9]*+\.)?[0-9]++)\s*+(ns|us|µs|ms|s)\s*+$")


def parse_time(text: str) -> int:
    """``"1.5ms"`` -> 1500000 ns. A unit is required (ns, us, ms, s).

    >>> parse_time("1.5ms"), parse_time("20 us"), parse_time("2s")
    (1500000, 20000, 2000000000)
    >>> parse_time("9" * 5000 + "ms")
    Traceback (most recent call last):
    ValueError: '99999999999999999999999999999999999999999999999999999999'... is not a time: more than 40 digits
    """
    match = _TIME.match(text)
    if not match:
        raise ValueError(f"{shown(text)} is not a time: a number and a unit (ns, us, ms, s), "
                         "for example 250ms")
    number, unit = match.groups()
    whole, _, fraction = number.partition(".")
    if len(whole.lstrip("0")) > MAX_DIGITS or len(fraction) > MAX_DIGITS:   # (never int()'d)
        raise ValueError(f"{shown(text)} is not a time: more than {MAX_DIGITS} digits")
    scale = UNITS[unit]
    # whole and fraction apart: exact to the ns, no float rounding
    ns = int(whole or 0) * scale + (int(fraction) * scale // 10 ** len(fraction)
                                    if fraction else 0)
    if ns > LONGEST_NS:   # (added to a trace's first time, it must still fit int64)
        raise ValueError(f"{shown(text)} is longer than any trace ({LONGEST_NS:.0e} ns)")
    return ns


def parse_window(text: str) -> tuple[int | None, int | None]:
    """``"START:END"`` (either may be empty: open-ended) -> ns relative to the trace start.

    >>> parse_window("10ms:1.5s"), parse_window(":200us")
    ((10000000, 1500000000), (None, 200000))
    """
    start, sep, end = text.partition(":")
    if not sep:
        raise ValueError(f"--window {text!r}: write START:END, for example 0s:2.5s")
    window = (parse_time(start) if start.strip() else None,
              parse_time(end) if end.strip() else None)
    if window[0] is not None and window[1] is not None and window[1] < window[0]:
        raise ValueError(f"--window {text!r}: the end comes before the start")
    return window


@dataclass(frozen=True, slots=True)
class TrimOptions:
    """What to keep; None keeps everything on that axis."""

    window: tuple[int | None, int | None] | None = None
    only: str | None = None
    exclude: str | None = None
    tracks: str | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.window, self.only, self.exclude, self.tracks))


def _compile(pattern: str | None, what: str) -> re.Pattern[str] | None:
    if pattern is None:
        return None
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"{what} {pattern!r} is not a valid regular expression: {exc}") from None


def _matching_names(trace: Trace, pattern: re.Pattern[str]) -> np.ndarray:
    """Per string id: does the pattern occur in it (one search per distinct name)."""
    return np.fromiter((bool(pattern.search(s)) for s in trace.strings.strings), dtype=bool,
                       count=len(trace.strings))


def _with_ancestors(trace: Trace, keep: np.ndarray) -> np.ndarray:
    """``keep`` plus every slice that encloses a kept slice on its track (starts no later,
    ends no earlier: a slice that only overlaps partially is not an ancestor)."""
    s = trace.slices
    track, start = s.numpy("track"), s.numpy("start")
    end = start + clamped_durations(start, s.numpy("dur"))
    order = timeline_order(track, start, start - end)
    result = keep.copy()
    stack: list[int] = []   # rows of the slices open at this point, innermost last
    current = None
    for row in order.tolist():
        if track[row] != current:
            current, stack = track[row], []
        begin, finish = start[row], end[row]
        # closed before this one starts (one ending where it starts is a sibling)
        while stack and (end[stack[-1]] < begin or (
                end[stack[-1]] == begin and start[stack[-1]] != begin)):
            stack.pop()
        if keep[row]:
            for parent in stack:
                if end[parent] >= finish:   # else it overlaps partially: not around this one
                    result[parent] = True
        stack.append(row)
    return result


def trim(trace: Trace, *, window: str | tuple[int | None, int | None] | None = None,
         only: str | None = None, exclude: str | None = None,
         tracks: str | None = None) -> Trace:
    """A new trace with only what is asked for; removals counted in its diagnostics.

    ``window``: ``"START:END"`` with units (``"1.5s:2s"``, ``":300ms"``) or a pair of ns
    relative to the earliest timestamp (None = open). ``only`` / ``exclude``: regular
    expressions searched in slice names; ``tracks``: one searched in ``"process / track"``.
    ``ValueError`` for a malformed window or regular expression.

    >>> import traceconv
    >>> trace = traceconv.load("samples/torch/cnn_step5.pt.trace.json")
    >>> step = trim(trace, window="0ms:5ms", only="^aten::conv")
    >>> len(step.slices) < len(trace.slices)
    True
    """
    return trim_with(trace, TrimOptions(parse_window(window) if isinstance(window, str)
                                        else window, only, exclude, tracks))


def trim_with(trace: Trace, options: TrimOptions) -> Trace:
    """:func:`trim` with the options in one object (times already in ns).

    >>> from traceconv.model import Trace
    >>> t = Trace(); p = t.add_process("python", pid=1); th = t.add_track("main", process=p)
    >>> _ = t.add_slice(th, 0, 100, "step"); _ = t.add_slice(th, 10, 20, "aten::mm")
    >>> _ = t.add_slice(th, 60, 30, "aten::add"); _ = t.add_slice(th, 92, 6, "aten::relu")
    >>> out = trim_with(t, TrimOptions(window=(50, None), only="add"))
    >>> [(s.name, s.start, s.dur) for s in out.iter_slices()]
    [('step', 50, 50), ('aten::add', 60, 30)]
    >>> [out.diagnostics.count(f"trim.{c}") for c in ("window.slices", "only", "window.clipped")]
    [1, 1, 1]
    """
    out_diag = Diagnostics()
    out_diag.extend(trace.diagnostics)
    bounds = trace.time_range
    origin = bounds[0] if bounds else 0
    lo, hi = (None, None) if options.window is None else options.window
    w0 = -(1 << 63) if lo is None else origin + lo
    w1 = (1 << 63) - 1 if hi is None else origin + hi

    # tracks
    track_re = _compile(options.tracks, "--tracks")
    keep_track = np.ones(len(trace.tracks), dtype=bool)
    if track_re is not None:
        for t in trace.tracks:
            home = trace.tracks[t.parent] if t.parent is not None else t
            path = f"{trace.processes[home.process].name} / {home.name}"
            keep_track[t.id] = bool(track_re.search(path))
    # slices
    s = trace.slices
    start, dur = s.numpy("start"), s.numpy("dur")
    end = start + clamped_durations(start, dur)
    on_track = keep_track[s.numpy("track")]
    # overlapping the window; a zero-length slice counts when it lies inside, bounds included
    in_window = ((start < w1) & (end > w0)) | ((start == end) & (start >= w0) & (start <= w1))
    keep = on_track & in_window
    names = s.numpy("name")
    _count(out_diag, "trim.tracks.slices", ~on_track)
    _count(out_diag, "trim.window.slices", on_track & ~in_window)
    only_re, exclude_re = _compile(options.only, "--only"), _compile(options.exclude, "--exclude")
    if only_re is not None:
        wanted = _with_ancestors(trace, keep & _matching_names(trace, only_re)[names])
        _count(out_diag, "trim.only", keep & ~wanted)
        keep &= wanted
    if exclude_re is not None:
        unwanted = keep & _matching_names(trace, exclude_re)[names]
        _count(out_diag, "trim.exclude", unwanted)
        keep &= ~unwanted
    rows = np.flatnonzero(keep)
    new_start = np.maximum(start[rows], w0)
    new_end = np.minimum(end[rows], w1)
    clipped = (new_start != start[rows]) | (new_end != end[rows])
    out_diag.add("trim.window.clipped", count=int(clipped.sum()))

    # instants and counter samples: kept when inside the window on a kept track
    masks = {}
    for table, what in ((trace.instants, "instants"), (trace.counters, "counter_samples")):
        ts, on = table.numpy("ts"), keep_track[table.numpy("track")]
        inside = (ts >= w0) & (ts <= w1)
        _count(out_diag, f"trim.tracks.{what}", ~on)
        _count(out_diag, f"trim.window.{what}", on & ~inside)
        masks[what] = inside
    # memory blocks alive during the window
    memory = trace.memory
    alive = ((~memory.known("alloc_ns") | (memory.numbers("alloc_ns") <= w1))
             & (~memory.known("free_ns") | (memory.numbers("free_ns") >= w0)))
    out_diag.add("trim.window.memory_blocks", count=int(np.count_nonzero(~alive)))
    _count(out_diag, "trim.tracks", ~keep_track)
    out = Trace(replace(trace.metadata.copy(), diagnostics=out_diag))
    moved = copy_into(out, trace, Keep(tracks=keep_track, slices=keep,
                                       instants=masks["instants"],
                                       counters=masks["counter_samples"], memory=alive,
                                       slice_times=(new_start, new_end - new_start)),
                      diagnostics=False)
    out.diagnostics.add("trim.flows", count=moved.flows_dropped)
    return out.freeze()


def _count(diagnostics: Diagnostics, code: str, removed: np.ndarray) -> None:
    diagnostics.add(code, count=int(np.count_nonzero(removed)))
