"""Ftrace event bundles decoded many at a time with numpy (:mod:`..protowire.columns`): the
bundles of a block, then all their events, then the bodies of each event kind modelled,
one ``decode_fields`` call each. Python then runs once per event kept (to parse an atrace
line or make a record), not once per field.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..protowire.columns import LENGTH, VARINT, Fields, as_int64, decode_fields
from .atrace import parse

Text = Callable[[bytes], str]   # raw string bytes -> text

# FtraceEventBundle: cpu 1, event 2, compact_sched 4, ftrace_clock 5; FtraceEvent: timestamp
# 1, pid 2, then one field per event kind
BUNDLE_CPU, BUNDLE_EVENT, BUNDLE_COMPACT_SCHED, BUNDLE_CLOCK = 1, 2, 4, 5
EVENT_TIMESTAMP, EVENT_PID = 1, 2
PRINT, SCHED_SWITCH, CPU_FREQUENCY, CPU_IDLE, SCHED_WAKING = 3, 4, 11, 13, 20
_HEADER = np.array([EVENT_TIMESTAMP, EVENT_PID])
_UINT32 = np.uint64(0xFFFFFFFF)


class Switch(NamedTuple):
    """A sched_switch (the compact form does not state the previous thread: -1, ""; its
    state, the kernel's task state bits, is -1 where not read)."""

    prev_pid: int
    prev_comm: str
    next_pid: int
    next_comm: str
    prev_state: int = -1


class Waking(NamedTuple):
    """A sched_waking: the thread made runnable."""

    pid: int
    comm: str


class CpuState(NamedTuple):
    """A cpu_frequency (kHz) or cpu_idle (state) event."""

    state: int
    cpu_id: int


@dataclass
class Bundles:
    """What the bundles of a block hold: per event kept its (timestamp, cpu, tid, kind,
    decoded body), in file order; the rest counted."""

    events: list[tuple[int, int, int, int, object]] = field(default_factory=list)
    compact: list[tuple[int, int, int]] = field(default_factory=list)  # offset, end, cpu
    unmodelled: Counter[int] = field(default_factory=Counter)   # event field -> count
    not_atrace: list[str] = field(default_factory=list)
    other_clock: int = 0


def decode_bundles(data: bytes, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                   text: Text) -> Bundles:
    """The bundles ``data[starts[i]:ends[i]]`` (``buf``: ``data`` padded); ``text`` makes
    the string fields text (the reader's counts those that are not UTF-8); raises
    :class:`~..protowire.columns.WireError` on bytes that are not wire format.

    >>> from traceconv.formats.protowire.columns import padded
    >>> event = b"\\x08\\x64\\x10\\x07\\x1a\\x0a\\x12\\x08B|7|step"   # ts 100, pid 7, print
    >>> bundle = b"\\x08\\x03\\x12" + bytes([len(event)]) + event      # cpu 3
    >>> decode_bundles(bundle, padded(bundle), np.array([0]), np.array([len(bundle)]),
    ...                bytes.decode).events
    [(100, 3, 7, 3, AtraceLine(phase='B', tgid=7, name='step', value=0.0))]
    """
    found = Bundles()
    bundles = decode_fields(buf, starts, ends)
    count = len(starts)
    cpu = bundles.last_per_message(BUNDLE_CPU, VARINT, count)[0].astype(np.int64)
    clock = bundles.last_per_message(BUNDLE_CLOCK, VARINT, count)[0]
    found.other_clock = int((clock > 1).sum())   # (global, local, mono_raw)
    compact = bundles.where(BUNDLE_COMPACT_SCHED, LENGTH)
    found.compact = list(zip(compact.offset.tolist(),
                             (compact.offset + compact.length).tolist(),
                             cpu[compact.msg].tolist(), strict=True))
    owner, offset, length = bundles.payloads(BUNDLE_EVENT)
    events = decode_fields(buf, offset, offset + length)
    total = len(owner)
    ts = events.last_per_message(EVENT_TIMESTAMP, VARINT, total)[0].tolist()
    tid = events.last_per_message(EVENT_PID, VARINT, total)[0].tolist()
    event_cpu = cpu[owner].tolist()
    bodies = events.where_not_in(_HEADER)
    lengths = bodies.wire == LENGTH
    kind = np.zeros(total, dtype=np.int64)
    body_start = np.zeros(total, dtype=np.int64)
    body_end = np.zeros(total, dtype=np.int64)
    kind[bodies.msg[lengths]] = bodies.field[lengths]
    body_start[bodies.msg[lengths]] = bodies.offset[lengths]
    body_end[bodies.msg[lengths]] = (bodies.offset + bodies.length)[lengths]
    decoded: dict[int, object] = {}
    for what, read in ((PRINT, _prints), (SCHED_SWITCH, _switches),
                       (CPU_FREQUENCY, _cpu_states), (CPU_IDLE, _cpu_states),
                       (SCHED_WAKING, _wakings)):
        rows = np.flatnonzero(kind == what)
        if len(rows):
            body = decode_fields(buf, body_start[rows], body_end[rows])
            decoded.update(zip(rows.tolist(), read(data, body, len(rows), text),
                               strict=True))
    kept = found.events
    for row in range(total):
        value = decoded.get(row)
        if value is None:
            found.unmodelled[int(kind[row])] += 1
        elif isinstance(value, str):   # (a print that is no atrace line)
            found.not_atrace.append(value)
        else:
            kept.append((ts[row], event_cpu[row], tid[row], int(kind[row]), value))
    return found


def _texts(data: bytes, fields: Fields, number: int, count: int, text: Text) -> list[str]:
    """The last string field ``number`` of each message ("" where none), made text by
    ``text``."""
    rows = fields.where(number, LENGTH)
    start = np.zeros(count, dtype=np.int64)
    end = np.zeros(count, dtype=np.int64)
    start[rows.msg], end[rows.msg] = rows.offset, rows.offset + rows.length
    return [text(data[a:b]) for a, b in zip(start.tolist(), end.tolist(), strict=True)]


def _prints(data: bytes, fields: Fields, count: int, text: Text) -> list[object]:
    """Each print's atrace line, or its text when it is none (PrintFtraceEvent.buf: 2)."""
    return [parse(text) or text for text in _texts(data, fields, 2, count, text)]


def _switches(data: bytes, fields: Fields, count: int, text: Text) -> list[object]:
    """(prev_pid, prev_comm, next_pid, next_comm, prev_state) of each sched_switch (fields
    2, 1, 6, 5, 4)."""
    prev_pid = as_int64(fields.last_per_message(2, VARINT, count)[0]).tolist()
    next_pid = as_int64(fields.last_per_message(6, VARINT, count)[0]).tolist()
    state = as_int64(fields.last_per_message(4, VARINT, count)[0]).tolist()
    return [Switch(*row) for row in zip(prev_pid, _texts(data, fields, 1, count, text),
                                        next_pid, _texts(data, fields, 5, count, text), state,
                                        strict=True)]


def _wakings(data: bytes, fields: Fields, count: int, text: Text) -> list[object]:
    """(pid, comm) of each sched_waking (fields 2, 1)."""
    pid = as_int64(fields.last_per_message(2, VARINT, count)[0]).tolist()
    return [Waking(*row) for row in zip(pid, _texts(data, fields, 1, count, text),
                                        strict=True)]


def _cpu_states(data: bytes, fields: Fields, count: int, _: Text) -> list[object]:
    """(state, cpu_id) of each cpu_frequency / cpu_idle event (uint32 fields 1, 2)."""
    state = (fields.last_per_message(1, VARINT, count)[0] & _UINT32).tolist()
    cpu_id = (fields.last_per_message(2, VARINT, count)[0] & _UINT32).tolist()
    return [CpuState(*row) for row in zip(state, cpu_id, strict=True)]
