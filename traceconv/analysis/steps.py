"""Step windows on both sides: the host's step markers and their device-side twins, and the
selection of steps (``--steps 3:5``) for every analysis.

When the device runs behind the host (the host has queued step N+1 while the device still
computes step N), the host's ``ProfilerStep#N`` window holds device work of the step before.
Each host step therefore gets a device window: the span of the device work launched from
inside the host window (launch correlation) together with its GPU twin (a ``ProfilerStep#N``
range on a device track, which recent Kineto versions record; on ROCm the twin can be a
short mark away from the step's work, so it only widens the window). Analyses of device time
use each step's host window extended by its device window.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..numbers import NumberError, int_text

if TYPE_CHECKING:
    from ..model import Trace
    from .activity import Timeline

# a name's last number: tried from the start of a run of digits only (each of its digits
# as a start re-read the run)
_NUMBER = re.compile(r"(?<!\d)(\d++)\s*+$")


@dataclass(frozen=True)
class StepWindow:
    """One step: its number (from the marker's name; else its position), host and device
    windows (device None when nothing ran on a device in it), and the index of the input of
    a merged trace (the rank) that marked it."""

    number: int
    name: str
    host_start: int
    host_end: int
    device_start: int | None = None
    device_end: int | None = None
    input_index: int = 0

    @property
    def start(self) -> int:
        return min(self.host_start, self.device_start if self.device_start is not None
                   else self.host_start)

    @property
    def end(self) -> int:
        return max(self.host_end, self.device_end if self.device_end is not None
                   else self.host_end)

    @property
    def device_lag_ns(self) -> int:
        """How long the device ran on after the host closed the step (0 when it did not)."""
        return max(0, (self.device_end or self.host_end) - self.host_end)


def step_windows(tl: Timeline) -> list[StepWindow]:
    """The host step markers in time order, each with its device window: the work its own
    input (rank, in a merged trace) launched in it, and its own input's GPU twin.

    >>> from traceconv.model import Trace, ProcessKind
    >>> from traceconv.analysis.activity import Timeline
    >>> t = Trace(); h = t.add_process("host"); g = t.add_process("GPU", kind=ProcessKind.DEVICE)
    >>> main = t.add_track("main", process=h); s = t.add_track("stream 7", process=g)
    >>> _ = t.add_slice(main, 0, 100, "ProfilerStep#3", "user_annotation")
    >>> launch = t.add_slice(main, 10, 5, "cudaLaunchKernel", "cuda_runtime")
    >>> kernel = t.add_slice(s, 90, 40, "gemm", "kernel"); _ = t.add_flow(launch, kernel)
    >>> w = step_windows(Timeline(t))[0]
    >>> w.number, (w.host_start, w.host_end), (w.device_start, w.device_end), w.device_lag_ns
    (3, (0, 100), (90, 130), 30)
    """
    from .activity import Activity

    rows = tl.rows(Activity.STEP)
    rows = rows[~tl.on_device[rows]]
    if not len(rows):
        return []
    rows = rows[np.argsort(tl.start[rows], kind="stable")]
    names = tl.names(rows)
    twins = _device_twins(tl)
    launched = np.flatnonzero(tl.launch_of >= 0)
    launched = launched[tl.on_device[launched]]
    launch_start = tl.start[tl.launch_of[launched]]
    launch_input = tl.input_of(launched)
    windows = []
    for i, (row, name, part) in enumerate(zip(rows.tolist(), names,
                                              tl.input_of(rows).tolist(), strict=True)):
        found = _NUMBER.search(name)
        number = _number(found[1], i) if found else i
        s, e = int(tl.start[row]), int(tl.end[row])
        mine = launched[(launch_start >= s) & (launch_start < e) & (launch_input == part)]
        spans = [twins[part, name]] if (part, name) in twins else []
        if len(mine):
            spans.append((int(tl.start[mine].min()), int(tl.end[mine].max())))
        if spans:
            windows.append(StepWindow(number, name, s, e, min(a for a, _ in spans),
                                      max(b for _, b in spans), part))
        else:
            windows.append(StepWindow(number, name, s, e, input_index=part))
    return windows


def _number(digits: str, fallback: int) -> int:
    """A step marker's number, or its place among the markers past int64 (5,000 digits).

    >>> _number("12", 0), _number("9" * 5000, 3)
    (12, 3)
    """
    try:
        return int_text(digits, "step number")
    except NumberError:
        return fallback


def _device_twins(tl: Timeline) -> dict[tuple[int, str], tuple[int, int]]:
    """Device-side step ranges by input (rank) and name (GPU ``ProfilerStep#N`` user
    annotations): every rank of a merged trace has its own ``ProfilerStep#12``."""
    from .activity import Activity

    # ranges drawn on a device whose reader gave them the step role
    marks = tl.rows(Activity.DEVICE_ANNOTATION)
    marks = marks[tl.on_device[marks] & (tl.roles[marks] & Activity.STEP != 0)]
    twins: dict[tuple[int, str], tuple[int, int]] = {}
    for row, name, part in zip(marks.tolist(), tl.names(marks), tl.input_of(marks).tolist(),
                               strict=True):
        s, e = int(tl.start[row]), int(tl.end[row])
        old = twins.get((part, name))
        twins[part, name] = (s, e) if old is None else (min(old[0], s), max(old[1], e))
    return twins


def parse_steps(spec: str) -> tuple[int | None, int | None]:
    """``"3:5"`` → (3, 5), ``"4"`` → (4, 4), ``"2:"`` → (2, None); both ends inclusive.

    >>> parse_steps("3:5"), parse_steps("4"), parse_steps(":2")
    ((3, 5), (4, 4), (None, 2))
    """
    text = spec.strip()
    try:
        if ":" not in text:
            return int(text), int(text)
        lo, hi = text.split(":", 1)
        return (int(lo) if lo.strip() else None, int(hi) if hi.strip() else None)
    except ValueError:
        raise ValueError(f"--steps {spec!r}: expected N, A:B, A: or :B (step numbers, "
                         "both ends included)") from None


def launch_owner(tl: Timeline, windows: list[StepWindow]) -> np.ndarray:
    """Per slice row, the index in ``windows`` of the step of its own input (rank) whose
    host range holds the slice's launch (the runtime call linked to it); -1 for a slice
    launched outside every step, with no known launch, or not launched at all (host work).

    >>> from traceconv.model import Trace, ProcessKind
    >>> from traceconv.analysis.activity import Timeline
    >>> t = Trace(); h = t.add_process("host"); g = t.add_process("GPU", kind=ProcessKind.DEVICE)
    >>> main = t.add_track("main", process=h); s = t.add_track("stream 7", process=g)
    >>> for n, at in ((1, 0), (2, 100)): _ = t.add_slice(main, at, 100, f"ProfilerStep#{n}")
    >>> launch = t.add_slice(main, 90, 5, "cudaLaunchKernel", "cuda_runtime")
    >>> _ = t.add_flow(launch, t.add_slice(s, 150, 40, "gemm", "kernel"))
    >>> tl = Timeline(t); launch_owner(tl, step_windows(tl)).tolist()
    [-1, -1, -1, 0]
    """
    owner = np.full(len(tl.start), -1, np.int64)
    launched = np.flatnonzero(tl.launch_of >= 0)
    at = tl.start[tl.launch_of[launched]]
    part = tl.input_of(launched)
    for i, w in enumerate(windows):
        owner[launched[(at >= w.host_start) & (at < w.host_end) & (part == w.input_index)]] = i
    return owner


def select_steps(trace: Trace, spec: str) -> Trace:
    """A new trace holding steps ``spec`` (numbers of ``ProfilerStep#N``, both ends
    included); the input is not changed.

    Host work is kept by its own time (cut to the chosen steps' host range); device work
    by its launch: a kernel, copy or collective belongs to the step whose host range holds
    the runtime call that launched it, wherever it ran (the device may run behind the
    host). Device work launched in other steps, outside every step or with no known launch
    is left out and counted (``steps.device.*``); device marks, instants, counters and
    memory blocks are kept by time, over the host range and the chosen device work.

    >>> import traceconv
    >>> from traceconv.analysis.activity import Timeline
    >>> t = traceconv.load("samples/torch/resnet18_train_cuda.pt.trace.json.gz")
    >>> [w.number for w in step_windows(Timeline(t))]
    [2, 3]
    >>> cut = select_steps(t, "3"); [w.number for w in step_windows(Timeline(cut))]
    [3]
    """
    from ..model import Trace as NewTrace
    from ..model.copying import Keep, copy_into
    from .activity import Timeline
    from .trim import trim

    lo, hi = parse_steps(spec)
    tl = Timeline(trace)
    windows = step_windows(tl)
    if not windows:
        raise ValueError("--steps: the trace has no step markers (ProfilerStep#N)")
    chosen = [i for i, w in enumerate(windows)
              if (lo is None or w.number >= lo) and (hi is None or w.number <= hi)]
    if not chosen:
        numbers = ", ".join(str(w.number) for w in windows)
        raise ValueError(f"--steps {spec}: no such step (the trace has steps {numbers})")
    work = np.zeros(len(tl.start), bool)
    work[tl.device_work()] = True
    owner = launch_owner(tl, windows)
    owned = work & np.isin(owner, chosen)
    host_lo = min(windows[i].host_start for i in chosen)
    host_hi = max(windows[i].host_end for i in chosen)
    lo_ns = min(host_lo, int(tl.start[owned].min())) if owned.any() else host_lo
    hi_ns = max(host_hi, int(tl.end[owned].max())) if owned.any() else host_hi
    # host work by its own time, cut to the host range; device marks by time (the trim
    # below keeps, cuts or counts them, as instants, counters and memory blocks)
    host = ~tl.on_device & _overlapping(tl.start, tl.end, host_lo, host_hi)
    keep = owned | host | (tl.on_device & ~work)
    rows = np.flatnonzero(keep)
    cut = host[rows]
    start = np.where(cut, np.maximum(tl.start[rows], host_lo), tl.start[rows])
    end = np.where(cut, np.minimum(tl.end[rows], host_hi), tl.end[rows])
    out = NewTrace(trace.metadata.copy())
    copy_into(out, trace, Keep(slices=keep, slice_times=(start, end - start)),
              diagnostics=False)
    out.diagnostics.add("steps.device.other_steps",
                        count=int(np.count_nonzero(work & (owner >= 0) & ~owned)))
    out.diagnostics.add("steps.device.unowned", count=int(np.count_nonzero(work & (owner < 0))))
    out.diagnostics.add("steps.host.outside", count=int(np.count_nonzero(~tl.on_device & ~host)))
    bounds = out.time_range
    origin = bounds[0] if bounds else 0
    return trim(out, window=(lo_ns - origin, hi_ns - origin))


def _overlapping(start: np.ndarray, end: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Which [start, end) overlap [lo, hi); a zero-length one counts inside, ends included.

    >>> _overlapping(np.array([0, 5, 10, 10]), np.array([5, 9, 12, 10]), 5, 10).tolist()
    [False, True, False, True]
    """
    return ((start < hi) & (end > lo)) | ((start == end) & (start >= lo) & (start <= hi))
