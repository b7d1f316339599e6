"""Copy time, the one place ``advise`` reads it from: a timeline's copy slices or the copy
rows of a statistics table, whichever the trace holds.

Two measures, never mixed up:

- **copy time on the device** (:func:`device_copy_time`): how long copies and memsets ran
  on the devices of each input (rank), beside their busy time (all their streams). A timeline gives it from the copy slices
  on device tracks; a statistics table from the device time column of rows the shared
  vocabulary names a copy or a memset. A host-side copy (a reader's buffer copy, named
  no device copy) is not one, and a copy call's host time is never device time;
- **host time blocked in copies** (:func:`blocked_host_time`): how long the host waited in
  copy calls that return only after their copy has finished. A timeline tells these by
  their launch links (the call ends after its copy); a statistics table by name (a copy
  call not named asynchronous: ``cudaMemcpy``, ``hipMemcpy``, Paddle's ``GpuMemcpySync``),
  its host time column, judged against the step time the table states.

A report often lists the same copies in several tables (an overview, a per-operator table,
a copy table): each measure takes the one table of each input that states the most of it,
and in it a copy row nested in another copy row is part of that row, not counted again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import OpStat, Trace
from ..model.activity import decide
from ..model.entities import summed_calls
from .activity import Activity, Timeline, clip

STATISTICS_DEVICE = "the device"   # (a statistics table names no device)


@dataclass(frozen=True)
class DeviceCopyTime:
    """Copies and memsets on one device: their time there, the device's busy time (None
    when the input does not state it), how many, and their names."""

    device: str
    copy_ns: int
    busy_ns: int | None
    copies: int | None   # None: a row of them states no calls
    names: list[str]

    @property
    def share(self) -> float | None:
        """Copy time over busy time (None when the busy time is not known)."""
        return self.copy_ns / self.busy_ns if self.busy_ns else None


@dataclass(frozen=True)
class BlockedHostTime:
    """Copy calls that made the host wait, against the step time (``window_ns``)."""

    copies: int | None   # None: a row of them states no calls
    host_blocked_ns: int
    window_ns: int
    window_word: str               # what the window is in a sentence ("the steps", "3 steps")
    copy_device_ns: int | None     # their own time on the device, where stated
    names: list[str]               # the copies
    calls: list[str]               # the host calls that waited
    first_ns: int | None           # since the trace's start (a table has no times)


# -- timelines ---------------------------------------------------------------------------------


def _timeline_device_copies(tl: Timeline) -> list[DeviceCopyTime]:
    """Copy time against busy time per input (rank), all its device processes together:
    HTA's temporal breakdown is a rank's, and a stream that only copies (TensorFlow's GPU
    tracer writes each stream as a process of its own) is no device busy with copies."""
    copy_kinds = np.array((Activity.MEMCPY, Activity.MEMSET), np.int8)
    work = tl.device_work()
    found = []
    for part in range(tl.input_count):
        devices = [p for p in tl.device_processes() if tl.process_input[p] == part]
        rows = np.flatnonzero(np.isin(tl.process, devices) & np.isin(tl.activity, copy_kinds))
        if not len(rows):
            continue
        steps = tl.input_steps(part)
        busy = tl.union(work[np.isin(tl.process[work], devices)])
        found.append(DeviceCopyTime(
            " + ".join(tl.trace.processes[p].name for p in devices),
            clip(tl.union(rows), steps).total, clip(busy, steps).total, int(len(rows)),
            sorted(set(tl.names(rows)))))
    return found


def _timeline_blocked(tl: Timeline) -> BlockedHostTime | None:
    copies = tl.rows(Activity.MEMCPY)
    copies = copies[tl.launch_of[copies] >= 0]
    launch = tl.launch_of[copies]
    # the host call returned only after the copy had finished: the host waited for it
    blocking = tl.end[launch] >= tl.end[copies]
    if not blocking.any():
        return None
    rows = copies[blocking]
    return BlockedHostTime(
        int(blocking.sum()), int(tl.dur[launch[blocking]].sum()), tl.steps.total, tl.steps_word,
        int(tl.dur[rows].sum()), sorted(set(tl.names(rows))),
        sorted(set(tl.names(launch[blocking]))), tl.since_start(int(tl.start[rows].min())))


# -- statistics --------------------------------------------------------------------------------


def copy_kind(name: str) -> Activity | None:
    """MEMCPY / MEMSET when the shared vocabulary names ``name`` a device copy or memset.

    >>> copy_kind("GpuMemcpySync:GPU->CPU").name, copy_kind("[CUDA memset]").name
    ('MEMCPY', 'MEMSET')
    >>> copy_kind("BufferedReader:MemoryCopy") is None
    True
    """
    return copy_kinds([name])[0]


def copy_kinds(names: list[str]) -> list[Activity | None]:
    """:func:`copy_kind` of many names at once (the vocabulary's patterns scan them together).

    >>> [k and k.name for k in copy_kinds(["cudaMemcpyAsync", "aten::mm", "FillBuffer"])]
    ['MEMCPY', None, 'MEMSET']
    """
    from ..vocabularies.generic import GENERIC_VOCABULARY

    no_category = GENERIC_VOCABULARY.category_bits("")
    kinds = (decide(no_category, bits, True)
             for bits in GENERIC_VOCABULARY.name_bits_of(names).tolist())
    return [Activity(k) if k in (Activity.MEMCPY, Activity.MEMSET) else None for k in kinds]


def _waits_for_copy(name: str) -> bool:
    """Whether a copy call named ``name`` returns only after its copy (not asynchronous).

    >>> [_waits_for_copy(n) for n in ("cudaMemcpy", "GpuMemcpySync:GPU->CPU",
    ...                               "hipMemcpyAsync", "[CUDA memset]")]
    [True, True, False, False]
    """
    from ..vocabularies.common import ASYNC_CALL

    return copy_kind(name) is Activity.MEMCPY and not ASYNC_CALL.search(name)


def reports_of(stats: list[OpStat]) -> list[dict[str, list[int]]]:
    """The reports of a statistics table, each as section -> row numbers: rows of one
    section in a row are one table; a report ends where a section it already holds starts
    again (a page with several runs' tables) or the input changes (inputs given together
    keep their label in ``extra["input"]``).

    >>> rows = [OpStat("ProfileStep", section=s) for s in ("model", "overview", "model")]
    >>> reports_of(rows)
    [{'model': [0], 'overview': [1]}, {'model': [2]}]
    """
    reports: list[dict[str, list[int]]] = []
    previous: tuple[object, str] | None = None
    for i, stat in enumerate(stats):
        key = (stat.extra.get("input"), stat.section)
        if key != previous and (not reports or stat.section in reports[-1]
                                or previous is not None and key[0] != previous[0]):
            reports.append({})
        reports[-1].setdefault(stat.section, []).append(i)
        previous = key
    return reports


def _counted(stats: list[OpStat], rows: list[int], chosen: set[int]) -> list[int]:
    """Those of ``chosen`` with no ancestor in ``chosen`` (a nested row is part of it)."""
    counted = []
    for i in rows:
        if i not in chosen:
            continue
        parent = stats[i].parent
        while parent is not None and parent not in chosen:
            parent = stats[parent].parent
        if parent is None:
            counted.append(i)
    return counted


def _device_copy_rows(stats: list[OpStat], rows: list[int]) -> list[int]:
    chosen = {i for i in rows if stats[i].device_ns is not None and copy_kind(stats[i].name)}
    return _counted(stats, rows, chosen)


def _device_ns(stats: list[OpStat], rows: list[int]) -> int:
    return sum(stats[i].device_ns or 0 for i in rows)


def step_time_of_stats(stats: list[OpStat]) -> tuple[int | None, int | None]:
    """(steps, host time of the steps) a statistics table states: its ``ProfileStep`` row,
    else its one top-level event row; (None, None) without either.

    >>> step_time_of_stats([OpStat("ProfileStep", calls=3, total_ns=900)])
    (3, 900)
    """
    for stat in stats:
        if stat.name.startswith("ProfileStep") and stat.calls:
            return stat.calls, stat.total_ns or None
    tops = [s for s in stats if s.section == "events" and s.parent is None]
    if len(tops) == 1 and tops[0].calls:
        return tops[0].calls, tops[0].total_ns or None
    return None, None


def _statistics_device_copies(stats: list[OpStat]) -> list[DeviceCopyTime]:
    found = [f for report in reports_of(stats)
             if (f := _report_device_copies(stats, report)) is not None]
    return [max(found, key=lambda f: (f.copy_ns, f.copies))] if found else []


def _report_device_copies(stats: list[OpStat],
                          report: dict[str, list[int]]) -> DeviceCopyTime | None:
    copies = {section: _device_copy_rows(stats, rows) for section, rows in report.items()}
    copies = {section: rows for section, rows in copies.items() if rows}
    if not copies:
        return None
    section = max(copies, key=lambda k: (_device_ns(stats, copies[k]),
                                         summed_calls(stats[i].calls for i in copies[k]) or 0))
    rows = copies[section]
    copy_ns = _device_ns(stats, rows)
    # the device's busy time: the table that states the most device time (each row counted
    # unless a row around it already was); copies stated in another table are added
    busy = 0
    for table, members in report.items():
        timed = _counted(stats, members, {i for i in members if stats[i].device_ns is not None})
        busy = max(busy, _device_ns(stats, timed) + (0 if table in copies else copy_ns))
    # (a table of copies alone says nothing of the rest of the device's work)
    return DeviceCopyTime(STATISTICS_DEVICE, copy_ns, busy if busy > copy_ns else None,
                          summed_calls(stats[i].calls for i in rows),
                          sorted({stats[i].name for i in rows}))


def _rows(report: dict[str, list[int]]) -> list[int]:
    return sorted(i for rows in report.values() for i in rows)


def _statistics_blocked(stats: list[OpStat]) -> BlockedHostTime | None:
    found = [_report_blocked(stats, report) for report in reports_of(stats)]
    return max((f for f in found if f is not None), key=lambda f: f.host_blocked_ns,
               default=None)


def _report_blocked(stats: list[OpStat], report: dict[str, list[int]]) -> BlockedHostTime | None:
    steps, window = step_time_of_stats([stats[i] for i in _rows(report)])
    if not window or not steps:
        return None
    found = []
    for members in report.values():
        chosen = {i for i in members if host_ns(stats[i]) and _waits_for_copy(stats[i].name)}
        found.append(_counted(stats, members, chosen))
    rows = max(found, key=lambda r: sum(host_ns(stats[i]) or 0 for i in r), default=[])
    if not rows:
        return None
    device = [stats[i].device_ns for i in rows]
    names = sorted({stats[i].name for i in rows})
    return BlockedHostTime(
        summed_calls(stats[i].calls for i in rows), sum(host_ns(stats[i]) or 0 for i in rows),
        window,
        f"{steps} steps" if steps > 1 else "the step", None if None in device else sum(d or 0 for d in device), names, names, None)


def host_ns(stat: OpStat) -> int | None:
    """A row's host time: its CPU column, else its total when it states no device time."""
    if stat.cpu_ns is not None:
        return stat.cpu_ns
    return stat.total_ns if stat.device_ns is None else None


# -- the accessors -----------------------------------------------------------------------------


def device_copy_time(trace: Trace, timeline: Timeline | None = None) -> list[DeviceCopyTime]:
    """Copy time on each device: from the timeline's copies where it has any, else from
    the statistics' copy rows.

    >>> t = Trace()
    >>> _ = t.add_stat(OpStat("ProfileStep", calls=2, total_ns=900, device_ns=600,
    ...                       section="model"))
    >>> _ = t.add_stat(OpStat("GpuMemcpySync:GPU->CPU", calls=4, total_ns=500, cpu_ns=500,
    ...                       device_ns=30, section="memory manipulation"))
    >>> _ = t.add_stat(OpStat("BufferedReader:MemoryCopy", calls=3, total_ns=80, cpu_ns=80,
    ...                       device_ns=0, section="memory manipulation"))
    >>> (found,) = device_copy_time(t); found.copy_ns, found.busy_ns, found.copies
    (30, 630, 4)
    """
    tl = timeline or Timeline(trace)
    if tl.has(Activity.MEMCPY, Activity.MEMSET):
        return _timeline_device_copies(tl)
    return _statistics_device_copies(list(trace.stats))


def blocked_host_time(trace: Trace, timeline: Timeline | None = None) -> BlockedHostTime | None:
    """Host time spent in copy calls that waited for their copy (None: none, or no step time
    to judge it against).

    >>> t = Trace()
    >>> _ = t.add_stat(OpStat("ProfileStep", calls=2, total_ns=1000, section="model"))
    >>> for name, cpu in (("GpuMemcpySync:GPU->CPU", 600), ("GpuMemcpyAsync:CPU->GPU", 9)):
    ...     _ = t.add_stat(OpStat(name, calls=3, total_ns=cpu, cpu_ns=cpu, device_ns=1,
    ...                           section="memory manipulation"))
    >>> found = blocked_host_time(t); found.copies, found.host_blocked_ns, found.window_ns
    (3, 600, 1000)
    """
    tl = timeline or Timeline(trace)
    if tl.has(Activity.MEMCPY):
        return _timeline_blocked(tl) if (tl.launch_of >= 0).any() else None
    return _statistics_blocked(list(trace.stats))


def has_copy_calls(trace: Trace, timeline: Timeline) -> bool:
    """Whether the trace times copy calls on the host: a timeline's copies with their launch
    links, or a statistics table's copy rows with host time."""
    if timeline.has(Activity.MEMCPY):
        return bool((timeline.launch_of >= 0).any())
    return any(host_ns(s) is not None and copy_kind(s.name) is Activity.MEMCPY
               for s in trace.stats)


def has_step_time(trace: Trace, timeline: Timeline) -> bool:
    """Whether there is a time to judge blocked host time against: a timeline's steps (or
    its run), or the step time a statistics table states."""
    return bool(timeline.steps.total) or bool(step_time_of_stats(list(trace.stats))[1])
