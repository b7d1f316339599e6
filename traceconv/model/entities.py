"""The small, named things of a trace: processes, tracks, memory blocks, op statistics."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..numbers import beyond_int64


class ProcessKind(str, Enum):
    """What a process group stands for."""

    HOST = "host"          # an OS process with threads
    DEVICE = "device"      # an accelerator: its tracks are streams / queues / comp nodes
    SYNTHETIC = "synthetic"  # made by traceconv or the source tool (spans, aggregates, memory)


class TrackKind(str, Enum):
    """What a track holds."""

    THREAD = "thread"        # slices and instants of one host thread
    STREAM = "stream"        # slices of one device stream / queue / comp node
    COUNTER = "counter"      # counter samples only
    LANE = "lane"            # overflow lane for slices that overlap partially on their home track
    ASYNC = "async"          # async (b/e) spans; may overlap freely, so each id gets its own lane
    SYNTHETIC = "synthetic"  # anything else made by a reader (aggregate breakdowns, program order)
    GLOBAL = "global"        # instants of the whole trace, no thread (Chrome's scope "s":"g")


@dataclass(slots=True)
class Process:
    """A group of tracks: an OS process, a device, or a synthetic group."""

    id: int
    name: str
    kind: ProcessKind = ProcessKind.HOST
    pid: int | None = None        # the source's numeric pid when it had one
    sort_index: int | None = None
    labels: list[str] = field(default_factory=list)

    def ids_out_of_range(self) -> tuple[str, ...]:
        """The id fields (pid, sort index) that are integers past int64: the builder makes
        them not known, the validator refuses them.

        >>> Process(0, "pid 1e30", pid=10**30).ids_out_of_range()
        ('pid',)
        """
        return _beyond_int64(self, ("pid", "sort_index"))


@dataclass(slots=True)
class Track:
    """A timeline row. ``parent`` is the home track of a lane (None otherwise)."""

    id: int
    name: str
    process: int
    kind: TrackKind = TrackKind.THREAD
    tid: int | None = None        # OS thread id or device stream id when the source had one
    sort_index: int | None = None
    unit: str | None = None       # counters: "bytes", "count", "ns", "%", or free text
    description: str | None = None
    parent: int | None = None

    def ids_out_of_range(self) -> tuple[str, ...]:
        """The id fields (tid, sort index) that are integers past int64 (as
        :meth:`Process.ids_out_of_range`)."""
        return _beyond_int64(self, ("tid", "sort_index"))


def _beyond_int64(record: object, names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(name for name in names if beyond_int64(getattr(record, name)))


@dataclass(slots=True)
class MemoryBlock:
    """One allocation: an address range alive from ``alloc_ns`` to ``free_ns``.

    ``alloc_ns`` None means "allocated before the trace starts" (weights, pre-existing
    tensors); ``free_ns`` None means "still alive at the end". ``address`` is a real device
    address or a logical offset inside ``pool`` (a static memory plan, a scratch buffer).
    """

    address: int
    size: int
    alloc_ns: int | None = None
    free_ns: int | None = None
    device: str = ""
    pool: str = ""
    name: str = ""
    owner_op: str | None = None       # node id of the owning op in ``trace.graph``, else None
    owner_name: str | None = None     # display name of the owning op, whenever one is known
    owner_tensor: str | None = None   # op-graph node id of the tensor stored here
    category: str = ""                # e.g. activation, weight, gradient, workspace, scratch
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def end_address(self) -> int:
        return self.address + self.size


# Process.labels: "run=LABEL" says the process is that run's (analysis.runs), for a reader
# whose process names do not end with the run's label (a report drawn per window)
RUN_LABEL = "run="
TOTALS_OF = "totals of"   # OpStat.extra: the rows this one adds up (not counted beside them)
# OpStat.extra: the source listed only some of this row's children (a paste's elision or a
# cut among them): a time derived from the listed children, its self time, is unknown
CHILDREN_LEFT_OUT = "children left out"
# OpStat.section of per-kernel device statistics (Paddle's Kernel Summary, rocprof's kernel
# stats): a summary takes device time by kernel from it, as from a timeline's kernels
KERNEL_SECTION = "kernel"
# OpStat.extra: what a row's time is when it is nobody's own work, so that no summary adds it
# to a total of work; the values, and what a summary says of them
TIME_IS = "time is"
NOT_WORK_TIMES = {
    "waiting": "threads blocked in calls, summed over the threads (it may exceed the run)",
    "device waiting": "device queues waiting for the work they depend on (barrier packets)",
    "enclosing": "ranges around other rows' calls (their time holds those rows')",
    "none": "no time: the row counts something else (bytes)",
}


@dataclass(slots=True)
class OpStat:
    """One row of an operator-statistics table (times in integer nanoseconds).

    Sources that only print aggregates (Paddle's report, MIGraphX's summary) fill these
    directly; ``traceconv summary`` computes them for any timeline. ``parent`` is the index
    of the enclosing row in :attr:`Trace.stats` for nested reports; ``section`` separates
    the tables of one report (``events``, ``overhead``, ``memcpy``, ...). A row that only
    adds up other rows of the run (rocprofv3's per-domain totals) says what it totals in
    ``extra[TOTALS_OF]``: a summary counts it only when those rows are not there. A row
    whose time is no work (an OS runtime table's waits, ranges around other rows) says
    which in ``extra[TIME_IS]`` (a key of :data:`NOT_WORK_TIMES`): no total counts it. A
    row whose children the source listed only in part says so in
    ``extra[CHILDREN_LEFT_OUT]``: its self time is unknown (:func:`~traceconv.model.breakdown.self_time`).
    ``calls`` is None when the input does not state them (a MIGraphX Summary before ROCm
    5.3, a table without a calls column): unknown, never 0.
    """

    name: str
    calls: int | None = 0
    total_ns: int = 0
    self_ns: int | None = None
    min_ns: int | None = None
    max_ns: int | None = None
    avg_ns: int | None = None
    cpu_ns: int | None = None
    device_ns: int | None = None
    ratio: float | None = None        # percent of the section total, as printed by the source
    type: str = ""
    section: str = "events"
    parent: int | None = None
    depth: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def summed_calls(calls: Iterable[int | None]) -> int | None:
    """The calls of several statistics rows added up; None (unknown) when any row's are.

    >>> summed_calls([3, 4]), summed_calls([3, None]), summed_calls([])
    (7, None, 0)
    """
    total = 0
    for count in calls:
        if count is None:
            return None
        total += count
    return total
