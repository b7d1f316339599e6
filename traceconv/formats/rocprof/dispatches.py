"""Kernel dispatches (one record per dispatch, whatever file it comes from) into slices on
their device's queue tracks; the columns not used for placing and timing stay as args. What
each dispatch is (a kernel, a collective's kernel, a barrier packet) is the rocprof
vocabulary's to say, by its category and name (:mod:`traceconv.vocabularies.rocprof`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ...model import OpStat
from ...model.builder import TraceBuilder
from .places import Places
from .values import agent_number, arg_value, integer


@dataclass(frozen=True)
class DispatchColumns:
    """Which columns of a record hold the device, queue, kernel name, start and end (ns),
    and how the device's process is named from its id."""

    device: str
    queue: str
    name: str
    start: str
    end: str
    device_name: str   # a format with {} for the id

    @property
    def placing(self) -> frozenset[str]:
        return frozenset((self.device, self.queue, self.name, self.start, self.end))


V1 = DispatchColumns("gpu-id", "queue-id", "KernelName", "BeginNs", "EndNs", "GPU {}")
V3 = DispatchColumns("Agent_Id", "Queue_Id", "Kernel_Name", "Start_Timestamp",
                     "End_Timestamp", "agent {}")


def device_name(columns: DispatchColumns, device: object) -> tuple[str, int | None]:
    """The process name of a device id and its number: ``"Agent 1"`` and ``1`` name the
    same agent.

    >>> device_name(V3, "Agent 1"), device_name(V1, 2)
    (('agent 1', 1), ('GPU 2', 2))
    """
    number = agent_number(device)
    return columns.device_name.format(number if number is not None else device), number


def add_dispatches(trace: TraceBuilder, places: Places, records: Iterable[Mapping[str, object]],
                   columns: DispatchColumns) -> tuple[list[int], int]:
    """One slice per record whose start and end are integers: (the slice row of each
    record, -1 for one not read; how many were not read).

    >>> t = TraceBuilder(); rows, bad = add_dispatches(t, Places(t), [
    ...     {"gpu-id": "2", "queue-id": "0", "KernelName": "k", "BeginNs": "10",
    ...      "EndNs": "25", "grd": "256"}, {"KernelName": "x", "BeginNs": "?"}], V1)
    >>> rows, bad, t.slice(0).dur, t.slice(0).args
    ([0, -1], 1, 15, {'grd': 256})
    """
    placing = columns.placing
    rows: list[int] = []
    for record in records:
        start, end = integer(record.get(columns.start)), integer(record.get(columns.end))
        if start is None or end is None:
            rows.append(-1)
            continue
        device, number = device_name(columns, record.get(columns.device, ""))
        track = places.queue(device, number, record.get(columns.queue, ""))
        args = {key: arg_value(value) for key, value in record.items()
                if key not in placing and value not in ("", None)}
        rows.append(trace.add_interval(track, start, end, str(record.get(columns.name, "")),
                                       "kernel", args or None))
    return rows, rows.count(-1)


def add_counter_rows(trace: TraceBuilder, records: Iterable[Mapping[str, object]],
                     name: str) -> None:
    """Dispatches without times (a counter collection alone): one statistic row each, in
    section ``counters``, its columns (counters included) as the row's extra values.

    >>> t = TraceBuilder(); add_counter_rows(t, [{"KernelName": "k", "GPUBusy": "100"}],
    ...                                      "KernelName")
    >>> t.stats[0].name, t.stats[0].calls, t.stats[0].extra
    ('k', 1, {'KernelName': 'k', 'GPUBusy': '100'})
    """
    for record in records:
        trace.add_stat(OpStat(str(record.get(name, "")), calls=1, section="counters",
                              type="dispatch", extra=dict(record)))
