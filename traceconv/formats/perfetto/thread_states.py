"""What each thread was doing, from ``sched_switch`` and ``sched_waking``, as trace_processor's
``thread_state`` table has it: one slice per state on a "state" track of the thread, named as
trace_processor names the state.

* a thread switched in is ``Running`` (its CPU an arg) until it is switched out; then it is
  in the state its ``prev_state`` bits say (:func:`state_name`: ``S`` sleeping, ``D``
  uninterruptible, ``R`` runnable, ``R+`` preempted ...) until it is woken or switched in;
* a wakeup (``sched_waking``) of a thread that is neither running nor runnable makes it ``R``
  (the waker's tid an arg) until it is switched in;
* a state replaced at the time it began leaves nothing (a thread switched out and back in at
  once stays ``Running``); the idle thread (tid 0) has no states; a state still open
  when the trace ends has no end in the input (trace_processor leaves it open): the
  builder ends it, marked ``unfinished``
  (:meth:`~traceconv.model.builder.TraceBuilder.not_ended`, counted); the compact form of sched_switch,
  which does not state the thread switched out, gives no states (counted).
"""

from __future__ import annotations

from typing import Any

from ...model.builder import TraceBuilder
from .ftrace_columns import SCHED_SWITCH, SCHED_WAKING

_LETTERS = "SDTtXZxKWPN"   # the kernel's task state bits 0 to 10 (TASK_INTERRUPTIBLE ...)
_PREEMPTED, _IDLE, _KNOWN = 0x800, 0x402, 0x7FF
RUNNING = "Running"


def state_name(bits: int) -> str:
    """The state a thread switched out with ``prev_state`` = ``bits`` is in.

    >>> [state_name(b) for b in (0, 1, 2, 3, 130, 0x402, 0x800, 0x1000)]
    ['R', 'S', 'D', 'SD', 'DK', 'I', 'R+', 'R']
    """
    known = bits & _KNOWN
    if known == 0:
        return "R+" if bits & _PREEMPTED else "R"
    if known == _IDLE:
        return "I"
    return "".join(letter for k, letter in enumerate(_LETTERS) if known >> k & 1)


class _Open:
    """The state a thread is in: since when, and what."""

    __slots__ = ("args", "name", "since")

    def __init__(self, since: int, name: str, args: dict[str, int] | None) -> None:
        self.since, self.name, self.args = since, name, args


def build_thread_states(trace: TraceBuilder, track_of: Any, records: list[Any]) -> None:
    """Add the states of the threads that ``records`` (sorted by time) switch or wake;
    ``track_of(tid)`` gives a thread's state track.

    >>> from traceconv.formats.perfetto.ftrace import FtraceRecord
    >>> from traceconv.formats.perfetto.ftrace_columns import Switch, Waking
    >>> from traceconv.model import TrackKind
    >>> trace = TraceBuilder()
    >>> track = trace.add_track("t7 state", process=trace.add_process("p"),
    ...                         kind=TrackKind.SYNTHETIC)
    >>> build_thread_states(trace, lambda tid: track, [
    ...     FtraceRecord(10, 0, 0, SCHED_SWITCH, Switch(0, "swapper", 7, "t7", 0)),
    ...     FtraceRecord(30, 0, 7, SCHED_SWITCH, Switch(7, "t7", 0, "swapper", 1)),
    ...     FtraceRecord(45, 1, 9, SCHED_WAKING, Waking(7, "t7"))])
    >>> _ = trace.add_instant(track, 60, "the last event")
    >>> [(s.name, s.start, s.dur) for s in trace.build().iter_slices()]
    [('Running', 10, 20), ('S', 30, 15), ('R', 45, 15)]
    """
    current: dict[int, _Open] = {}
    states: list[tuple[int, int, int | None, str, dict[str, int] | None]] = []
    compact = 0

    def enter(tid: int, ts: int, name: str, args: dict[str, int] | None) -> None:
        was = current.get(tid)
        if was is not None and was.since < ts:   # (a state of no time is replaced, as in tp)
            states.append((tid, was.since, ts, was.name, was.args))
        current[tid] = _Open(ts, name, args)

    for record in records:
        if record.what == SCHED_SWITCH:
            switch = record.data
            if switch.prev_pid < 0:   # (the compact form)
                compact += 1
                continue
            if switch.prev_pid:
                enter(switch.prev_pid, record.ts, state_name(switch.prev_state), None)
            if switch.next_pid:
                enter(switch.next_pid, record.ts, RUNNING, {"cpu": record.cpu})
        elif record.what == SCHED_WAKING:
            woken = record.data.pid
            was = current.get(woken)
            if woken and (was is None or not was.name.startswith("R")):   # (R, R+, Running)
                enter(woken, record.ts, "R", {"waker tid": record.tid})
    trace.diagnostics.add("perfetto.thread_state_compact_switch", count=compact)
    # (still open: no end in the input, the builder's rule)
    states += [(tid, was.since, None, was.name, was.args) for tid, was in current.items()]
    not_ended: list[int] = []
    for tid, start, end, name, args in sorted(states, key=lambda s: (s[0], s[1])):
        row = trace.add_interval(track_of(tid), start, start if end is None else end, name,
                                 "thread_state", args)
        if end is None:
            not_ended.append(row)
    trace.not_ended(not_ended, "perfetto.thread_state_not_ended")
