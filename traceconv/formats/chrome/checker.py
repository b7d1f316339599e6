"""Check a Chrome Trace Event JSON file for what Perfetto's JSON importer drops or mangles.

Rules (the importer's behaviour, perfetto.md §3.2):

* errors (data is lost): a time field (``ts``, ``dur``, ``tts``, ``tdur``) that is
  neither a number nor a string spelling one (``true``, ``null``, ``"x"``), or an event
  that is not an object (the importer then refuses the whole file); events that lack
  ``ph``, or have no
  ``ts`` or a negative one; an ``X`` with no ``dur`` (dropped) or a negative one (shown
  with a negative length); an ``X`` or ``B``/``E`` slice that partially overlaps an open
  slice on its thread (dropped as ``slice_drop_overlapping_complete_event``); an ``E``
  with no open ``B``; slices deeper than 512 (shown at depth 0, outside their parents);
  counter (``C``) values that are not numbers or numeric strings; args holding a number
  beyond a double (``1e400``: valid JSON, infinity to ``JSON.parse``), which the importer
  drops from that one on (``args_beyond_double``);
* warnings (shown differently than meant): phases the importer ignores (legacy async
  ``S/T/p/F``, object ``N/O/D``, memory dumps ``V/v``, ``c``, ``(``/``)``) or does not
  know; events without ``pid`` (put on pid 0); flow events (v1 ``s``/``t``/``f``, v2
  ``bind_id``) that the importer drops or that draw no arrow, by reason, counting the
  arrows it draws as its flow tracker does (:mod:`.checked_flows`); ``M`` events that give one process or thread several names;
  ``B`` slices never ended; args holding an integer beyond int64, which the importer shows
  as a wrong real (``args_int_beyond_int64``).

Unescaped control characters, the other classic reason Perfetto rejects a JSON trace,
cannot survive parsing: such a file is refused as not valid JSON, with its line and column.

The file is read as the reader reads it (:mod:`.stream`: a piece of the event array at a
time), so memory follows the few numbers kept per slice and flow, not the file.

>>> report = check_chrome(Source("trace.json.gz"))    # doctest: +SKIP
>>> report.ok, report.counts["slices"]                 # doctest: +SKIP
(False, 747051)
"""

from __future__ import annotations

import math
import re
from array import array
from collections import defaultdict
from collections.abc import Iterator
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import orjson

from ...gcpause import paused_gc
from ...io import Source
from ...json_decode import any_value
from ...model.check_report import CheckReport
from ...numbers import beyond_int64
from ..slice_stack import NO_TEXT, SliceStack
from .checked_flows import (
    BEGIN,
    END,
    END_NEXT,
    STEP,
    FlowEvents,
    flow_number,
    flow_text,
    v2_operation,
)
from .located import located_errors
from .stream import read_document

MAX_DEPTH = 512
HANDLED = set("BEXiIRCbenstfM")
IGNORED = {"S": "legacy async", "T": "legacy async step", "p": "legacy async step",
           "F": "legacy async end", "N": "object", "O": "object", "D": "object",
           "V": "memory dump", "v": "memory dump", "c": "clock sync", "(": "context",
           ")": "context"}
# read by trace_processor into its tables of CPU profile samples, not drawn as slices
SAMPLES = frozenset("P")
NEEDS_PID = set("BEXCbensf")
# kinds of event on a thread's stack: I an instant; TOP a flow point bound to the slice on
# top of the stack (s, t, an f with "bp": "e"), NEXT one bound to the next slice begun (f)
_E, _X, _B, _I, _TOP, _NEXT = range(6)
_KIND = {"E": _E, "B": _B}
# At one time: E events, then X events longest first, then B events, instants, X events of
# no length and flow events in file order (seen on trace_processor v52: a flow event written
# before a B, an instant or an X of no length at its time binds below it, one written after
# binds to it, whatever other threads hold at that time)
_SORT_RANK = np.array([0, 1, 1, 1, 1, 1], dtype=np.uint8)
_V1_FLOW = {"s": BEGIN, "t": STEP, "f": END}
_REPLAY_BLOCK = 1 << 12   # sorted slice events turned into Python values this many at a time


# A number the importer cannot show needs a piece's text to hold an integer token of 19
# digits or more (int64 ends near 9.2e18) or an exponent of 3 digits (a double ends near
# 1.8e308); only the events of such a piece are walked. Matches inside strings are
# harmless: the walk then finds strings.
_MAYBE_UNSHOWABLE = re.compile(rb"[0-9]{19}|[eE][+\-]?[0-9]{3}")


class _ScreenedPieces:
    """Screens the pieces of the event array (as ``Document.records``): notes whether the
    piece about to be decoded may hold a number the importer cannot show, and leaves the
    decoding to the document (plain values, times exact, as the reader reads them)."""

    def __init__(self) -> None:
        self.maybe_unshowable = False

    def __call__(self, piece: bytes | bytearray) -> None:
        self.maybe_unshowable = bool(_MAYBE_UNSHOWABLE.search(piece))


def _infinite(value: Any) -> bool:
    """A non-finite float.

    >>> _infinite(float("-inf")), _infinite("inf"), _infinite(1.5)
    (True, False, False)
    """
    return isinstance(value, float) and not math.isfinite(value)


_NS_LIMIT = 1 << 62
# fields the importer reads as times: a number, or a string that spells one in JSON's
# grammar ("12", "1.5e3"); anything else there (true, null, "x", " 7", "1e400", a list)
# makes trace_processor v52 refuse the whole file ("JSON trace file is incomplete")
_TIME_FIELDS = ("ts", "dur", "tts", "tdur")
_NUMBER_TYPES = frozenset({int, float, Decimal})
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_JSON_INTEGER = re.compile(r"-?(?:0|[1-9][0-9]*)")
_ABSENT = object()


class _NotATime(Exception):
    """A time field the importer refuses the file for."""


def _time(event: dict, key: str) -> Any:
    """``event[key]`` as the importer reads a time field: a number as is, a numeric
    string as the number it spells; :data:`_ABSENT` when there is none; raises
    :class:`_NotATime` for any other value.

    >>> _time({"ts": "12"}, "ts"), _time({"ts": "1.5e3"}, "ts"), _time({}, "dur") is _ABSENT
    (12, 1500.0, True)
    >>> _time({"ts": " 7"}, "ts")
    Traceback (most recent call last):
    ...
    traceconv.formats.chrome.checker._NotATime: ' 7'
    """
    value = event.get(key, _ABSENT)
    if type(value) in _NUMBER_TYPES or value is _ABSENT:
        return value
    if isinstance(value, str) and _JSON_NUMBER.fullmatch(value):
        if _JSON_INTEGER.fullmatch(value):
            return int(value)
        if math.isfinite(number := float(value)):
            return number
    raise _NotATime(repr(value)[:80])


def _ident(value: Any) -> Any:
    """A pid, tid, name or category as a dictionary key: a list or object (type confusion in the
    file) stands as its JSON text.

    >>> _ident(7), _ident([1, 2])
    (7, '[1,2]')
    """
    if isinstance(value, list | dict):
        try:
            return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:   # nested deeper than orjson writes (254 levels), or not JSON
            return "<a value nested too deep to name>"
    return value


def _thread(pid: Any, tid: Any) -> tuple[Any, Any]:
    """The thread an event lands on, as the importer keys it: numbers as the unsigned
    32-bit values it reads (a negative or larger one is 0), and a tid of 0 (or none) in a
    process other than 0 is the process's main thread, tid = pid, whatever thread is
    numbered 0 in the file (trace_processor's JSON tokenizer).

    >>> _thread(7, 0), _thread(7, None), _thread(0, 0), _thread(7, -3), _thread("p", 0)
    ((7, 7), (7, 7), (0, 0), (7, 7), ('p', 'p'))
    """
    if type(pid) is int and type(tid) is int and 0 <= pid <= 0xFFFFFFFF \
            and 0 < tid <= 0xFFFFFFFF:   # (the usual case, at once)
        return pid, tid
    key_pid, key_tid = _id32(pid), _id32(tid)
    if key_tid == 0 and key_pid != 0 and not isinstance(tid, str):
        key_tid = key_pid
    return key_pid, key_tid


def _id32(value: Any) -> Any:
    """A pid or tid as the importer reads it: a number as an unsigned 32-bit one (0 when
    it is out of that range), ``true`` and ``false`` as 0 (seen on trace_processor v52;
    Python's ``True == 1`` would put them on thread 1), a string as itself, anything else
    as its JSON text.

    >>> _id32(5.7), _id32(-1), _id32(1 << 40), _id32("x"), _id32(None), _id32([1])
    (5, 0, 0, 'x', 0, '[1]')
    >>> _id32(True), _thread(1, True)
    (0, (1, 1))
    """
    if value is None or isinstance(value, bool):
        return 0
    if isinstance(value, int | float) and not isinstance(value, bool):
        if not math.isfinite(value):
            return 0
        number = int(value)
        return number if 0 <= number <= 0xFFFFFFFF else 0
    return _ident(value)


def _unshowable(value: Any) -> bool:
    """A number Perfetto's importer cannot show: non-finite, or an integer beyond int64.

    >>> _unshowable(float("inf")), _unshowable(2**63), _unshowable(2**63 - 1)
    (True, True, False)
    """
    return _infinite(value) or beyond_int64(value)


def _ns(value: Any) -> int | None:
    """µs (int, float, or the exact Decimal of a time a double cannot hold) to integer ns
    as the importer computes it, ``llround(us * 1000)``: halves round away from zero
    (Python's ``round`` would go to even and disagree by 1 ns, enough to turn a child
    ending with its parent into an overlap). An int64 integer is multiplied in int64, as
    the importer does: a product beyond it wraps around (seen on trace_processor v52:
    ``"dur": 4611686018427387904`` is a slice of no length, ``"ts": 9300000000000000`` a
    negative time, dropped). None if not a number, an integer beyond int64 (the importer
    then draws the event at a time that is no function of it alone), or a real beyond
    ±2**62 ns (the importer's int64 then overflows on ``ts + dur``).

    >>> _ns(4482801341167.555), _ns(-0.0005), _ns(7), _ns("7"), _ns(1e300), _ns(2**64)
    (4482801341167555, -1, 7000, None, None, None)
    >>> _ns(4611686018427387904), _ns(9300000000000000) < 0
    (0, True)
    >>> _ns(Decimal("1712195495505582.9885")), _ns(Decimal("1E+400"))
    (1712195495505582989, None)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return None
    if type(value) is int:
        return None if beyond_int64(value) else _wrapped_int64(value * 1000)
    scaled = value * 1000 if isinstance(value, int | Decimal) else value * 1000.0
    if not -_NS_LIMIT <= scaled <= _NS_LIMIT:   # also NaN
        return None
    if isinstance(scaled, int):
        return scaled
    if isinstance(scaled, Decimal):
        return int(scaled.to_integral_value(ROUND_HALF_UP))   # (half away from zero)
    return math.floor(scaled + 0.5) if scaled >= 0 else -math.floor(0.5 - scaled)


def _wrapped_int64(value: int) -> int:
    """``value`` as int64 arithmetic leaves it (modulo 2**64, signed).

    >>> _wrapped_int64(2**63), _wrapped_int64(-1)
    (-9223372036854775808, -1)
    """
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def _numeric(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        return True
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return False
        return True
    return False


class _SliceEvents:
    """One thread's slice events (``X``, ``B``, ``E`` and thread-scoped instants, which the
    importer puts on the same stack) as columns: what the replay needs of each, about 33
    bytes an event (a tuple of them took about 200), so that ``check`` of a file of ten
    million events holds hundreds of MB, not gigabytes.

    >>> events = _SliceEvents()
    >>> events.add(5, _B, 0, 0); events.add(5, _E, 0, 1); events.add(7, _B, 0, 2)
    >>> events.add(7, _X, 3, 3); events.add(7, _I, 0, 4); events.add(7, _X, 9, 5)
    >>> [(ts, kind, index) for ts, kind, _, index, _, _ in events.in_importer_order()]
    [(5, 0, 1), (5, 2, 0), (7, 1, 5), (7, 1, 3), (7, 2, 2), (7, 3, 4)]
    >>> events.ambiguous_ties
    3
    """

    def __init__(self) -> None:
        self.ts, self.dur, self.index = array("q"), array("q"), array("q")
        self.name, self.category = array("i"), array("i")
        self.kind = bytearray()
        self.ambiguous_ties = 0

    def add(self, ts: int, kind: int, dur: int, index: int, name: int = NO_TEXT,
            category: int = NO_TEXT) -> None:
        """One event: its start, kind, duration (X), index in the file, and for a B or E
        its name and category (numbers the checker gave their texts); for a flow event,
        ``name`` is its slot among the flow events (:class:`.checked_flows.FlowEvents`)."""
        self.ts.append(ts)
        self.kind.append(kind)
        self.dur.append(dur)
        self.index.append(index)
        self.name.append(name)
        self.category.append(category)

    def in_importer_order(self) -> Iterator[tuple[int, int, int, int, int, int]]:
        """(ts, kind, dur, index, name, category) per event in the importer's order, a block
        at a time: by start; at one start, E events, then X events longest first, then B
        events, instants, X events of no length and flow events in file order.

        trace_processor v52 sorts so (seen on it) only in part: an E comes before an X and
        an X of some length before a B, but the order of a B and an E, or of a B or an E
        and an instant or an X of no length, at one time is not fixed by the file (events
        at that time on other threads change it). Such B and E events are counted in
        :attr:`ambiguous_ties`: the importer may nest them otherwise."""
        ts = np.frombuffer(self.ts, dtype=np.int64)
        dur = np.frombuffer(self.dur, dtype=np.int64)
        index = np.frombuffer(self.index, dtype=np.int64)
        kind = np.frombuffer(self.kind, dtype=np.uint8)
        name = np.frombuffer(self.name, dtype=np.int32)
        category = np.frombuffer(self.category, dtype=np.int32)
        order = np.lexsort((index, -dur, _SORT_RANK[kind], ts))
        on_stack = order[kind[order] < _TOP]
        self.ambiguous_ties = _shared_times(ts[on_stack], kind[on_stack])
        for lo in range(0, len(order), _REPLAY_BLOCK):
            block = order[lo:lo + _REPLAY_BLOCK]
            yield from zip(ts[block].tolist(), kind[block].tolist(), dur[block].tolist(),
                           index[block].tolist(), name[block].tolist(),
                           category[block].tolist(), strict=True)


def _async_cookie(event: dict) -> bool:
    """Whether a ``b``, ``e`` or ``n`` event names its async slice as the importer needs:
    an ``id`` (text, or an integer of int64) or an ``id2`` with a ``local`` or ``global``
    text.

    >>> _async_cookie({"id": "0x1"}), _async_cookie({"id": 1.5}), _async_cookie({"id2": {"local": "a"}})
    (True, False, True)
    """
    ident = event.get("id")
    if isinstance(ident, str) or type(ident) is int and -(1 << 63) <= ident < (1 << 63):
        return True
    id2 = event.get("id2")
    return isinstance(id2, dict) and any(flow_text(id2.get(k)) for k in ("local", "global"))


def _place(index: int, thread: tuple) -> str:
    """Where a finding's example event is."""
    return f"$.traceEvents[{index}] on {thread}"


def _shared_times(ts: np.ndarray, kind: np.ndarray) -> int:
    """How many B and E events share their time with another slice event (``ts`` sorted).

    >>> _shared_times(np.array([1, 1, 2, 3, 3]), np.array([_B, _E, _B, _X, _E], np.uint8))
    3
    """
    shared = np.zeros(len(ts), dtype=bool)
    same = ts[1:] == ts[:-1]
    shared[1:] |= same
    shared[:-1] |= same
    return int(np.count_nonzero(shared & ((kind == _B) | (kind == _E))))


class _Checker:
    def __init__(self) -> None:
        self.report = CheckReport("chrome")
        # per (pid, tid): its slice events as columns (25 bytes an event, not a tuple)
        self.threads: dict[tuple, _SliceEvents] = defaultdict(_SliceEvents)
        self.flows = FlowEvents()
        self.v2_flows: dict[int, int] = {}   # index of an X or B with a bind_id: its flow slot
        self.names: dict[tuple, dict[str, int]] = defaultdict(dict)
        self.texts: dict[Any, int] = {}   # names and categories of B and E events, numbered
        self.counts = {"events": 0, "slices": 0, "instants": 0, "counter_values": 0,
                       "flows": 0, "metadata": 0}
        self.phases_ignored: dict[str, int] = defaultdict(int)
        # "beyond_double" / "beyond_int64": (first event index, events) of args holding one
        self.unshowable: dict[str, tuple[int, int]] = {}

    def feed(self, events: list[Any], start: int, walk_numbers: bool = True) -> None:
        """Check ``events`` (``$.traceEvents[start:]``); ``walk_numbers``: their args may
        hold a number the importer cannot show."""
        for index, event in enumerate(events, start):
            self._event(index, event)
        if walk_numbers:
            self._arg_numbers(events, start)

    def finish(self) -> CheckReport:
        """The report, once every event was fed."""
        report = self.report
        for phase, count in sorted(self.phases_ignored.items()):
            kind = IGNORED.get(phase)
            if kind:
                report.warning(f"ignored_phase_{kind.replace(' ', '_')}", f"'{kind}' events "
                               "are ignored by Perfetto's JSON importer", count=count,
                               example=f"ph={phase!r}")
            else:
                report.warning("unknown_phase", "events with a phase Perfetto does not know "
                               "are ignored", count=count, example=f"ph={phase!r}")
        self._replay()
        self._report_flows()
        for key, names in self.names.items():
            if len(names) > 1:
                report.warning("conflicting_metadata_names", "M events give one process or "
                               "thread several names; the last one wins",
                               example=f"{key}: {sorted(names)}")
        self.counts["tracks"] = len(self.threads)
        report.counts = self.counts
        self._report_arg_numbers()
        return report

    def _arg_numbers(self, events: list[Any], start: int) -> None:
        """Note the events whose args hold a number beyond a double or an integer beyond
        int64 (their first index and how many)."""
        for index, event in enumerate(events, start):
            args = event.get("args") if isinstance(event, dict) else None
            if isinstance(args, dict) and any_value(args, _unshowable):
                for kind, test in (("beyond_double", _infinite), ("beyond_int64", beyond_int64)):
                    if any_value(args, test):
                        first, count = self.unshowable.get(kind, (index, 0))
                        self.unshowable[kind] = (first, count + 1)

    def _report_arg_numbers(self) -> None:
        """Perfetto's importer (trace_processor v52) keeps an event whose args hold a number
        beyond a double (``1e400``) and drops its args from that number on, silently; it
        shows an integer beyond int64 as a wrong real (2**64 - 1 as -1.0)."""
        if "beyond_double" in self.unshowable:
            first, count = self.unshowable["beyond_double"]
            self.report.error("args_beyond_double", "an event's args hold a number beyond a "
                              "double (JSON.parse reads infinity): Perfetto drops its args "
                              "from that one on", count=count,
                              example=f"$.traceEvents[{first}].args")
        if "beyond_int64" in self.unshowable:
            first, count = self.unshowable["beyond_int64"]
            self.report.warning("args_int_beyond_int64", "an event's args hold an integer "
                                "beyond int64: Perfetto shows it as a wrong number",
                                count=count, example=f"$.traceEvents[{first}].args")

    def _event(self, index: int, event: Any) -> None:
        report, counts = self.report, self.counts
        counts["events"] += 1
        where = f"$.traceEvents[{index}]"
        if not isinstance(event, dict):
            report.error("event_not_object", "an event is not a JSON object: Perfetto's "
                         "JSON importer refuses the whole file", example=where)
            return
        try:
            ts, dur = _time(event, "ts"), _time(event, "dur")
            if "tts" in event or "tdur" in event:
                _time(event, "tts"), _time(event, "tdur")
        except _NotATime as refused:
            report.error("time_not_a_number", "an event's ts, dur, tts or tdur is neither a "
                         "number nor a string that spells one: Perfetto's JSON importer "
                         "refuses the whole file", example=f"{where}: {refused}")
            return
        phase = event.get("ph")
        if not isinstance(phase, str) or not phase:
            report.error("missing_ph", "an event has no 'ph': it is dropped", example=where)
            return
        phase = phase[0]   # (the importer reads the first character: "Xyz" is an X)
        if phase in SAMPLES:
            counts["sample_events"] = counts.get("sample_events", 0) + 1   # (when any)
            return
        if phase not in HANDLED:
            self.phases_ignored[phase] += 1
            return
        if phase == "M":
            counts["metadata"] += 1
            self._metadata(event)
            return
        ts = _ns(ts)
        if ts is None or ts < 0:   # (the importer's sorter drops a negative time)
            report.error("missing_ts", "an event has no 'ts', a negative one or one out of "
                         "range: it is dropped", example=where)
            return
        if phase in NEEDS_PID and "pid" not in event:
            report.warning("missing_pid", "an event has no 'pid': it lands in process 0",
                           example=where)
        thread = _thread(event.get("pid"), event.get("tid"))
        if phase == "X":
            dur = _ns(dur)
            if dur is None:
                report.error("bad_dur", "an X event has no 'dur' (or one out of range): it "
                             "is dropped", example=where)
            elif dur < 0:   # (kept as a row, on no slice's stack)
                report.error("negative_dur", "an X event has a negative 'dur': it is "
                             "shown with a negative length", example=where)
                counts["slices"] += 1
            else:
                self.threads[thread].add(ts, _X, dur, index)
                self._v2_flow(event, index, ts, _X, dur)
        elif phase in "BE":
            self.threads[thread].add(ts, _KIND[phase], 0, index, self._text_id(event, "name"),
                                     self._text_id(event, "cat"))
            if phase == "B":
                self._v2_flow(event, index, ts, _B, 0)
        elif phase in "iIR":
            counts["instants"] += 1
            if phase != "R" and event.get("s", "t") == "t":   # on its thread's stack
                self.threads[thread].add(ts, _I, 0, index)
        elif phase == "C":
            self._counter(event, where)
        elif phase in "sft":
            self._v1_flow(event, index, ts, thread)
        elif phase in "bn" and "pid" in event and _async_cookie(event):
            self._v2_flow(event, index, ts, _TOP, 0, bound=True)   # (its own async slice)

    def _v1_flow(self, event: dict, index: int, ts: int, thread: tuple) -> None:
        """An ``s``, ``t`` or ``f``: a point of the flow of its id, category and name."""
        number = flow_number(event.get("id"))
        if number is None:
            self._invalid_flow_id(f"$.traceEvents[{index}].id")
            return
        phase = event["ph"]
        waits = phase == "f" and event.get("bp") != "e"   # for the next slice begun
        slot = self.flows.add(ts, _SORT_RANK[_TOP], 0, index,
                              END_NEXT if waits else _V1_FLOW[phase],
                              ("v1", number, flow_text(event.get("cat")),
                               flow_text(event.get("name"))))
        self.threads[thread].add(ts, _NEXT if waits else _TOP, 0, index, slot)

    def _v2_flow(self, event: dict, index: int, ts: int, kind: int, dur: int,
                 bound: bool = False) -> None:
        """The flow v2 point of an event with a ``bind_id``; it binds to the slice on top
        of the event's track once the event is handled (``bound``: known to be one)."""
        if "bind_id" not in event:
            return
        number, operation = flow_number(event["bind_id"]), v2_operation(event)
        if number is None:
            self._invalid_flow_id(f"$.traceEvents[{index}].bind_id")
        elif operation is None:
            self.report.warning("flow_without_direction", "an event with a bind_id but "
                                "neither flow_in nor flow_out true: no flow",
                                example=f"$.traceEvents[{index}]")
        else:
            slot = self.flows.add(ts, _SORT_RANK[kind], dur, index, operation,
                                  ("v2", number))
            if bound:
                self.flows.bind(slot, True)
            else:
                self.v2_flows[index] = slot

    def _invalid_flow_id(self, where: str) -> None:
        self.report.warning("flow_invalid_id", "flow events whose id is neither an integer "
                            "of int64 nor hex text: the importer drops them (flow_invalid_id)",
                            example=where)

    def _text_id(self, event: dict, key: str) -> int:
        """The number of an event's name or category; :data:`NO_TEXT` when it is left out
        or empty (the importer's null, which an E matches to any B)."""
        value = event.get(key)
        if value is None or value == "":
            return NO_TEXT
        return self.texts.setdefault(_ident(value), len(self.texts))

    def _metadata(self, event: dict) -> None:
        name = event.get("name")
        args = event.get("args") or {}
        if name == "process_name":
            key: tuple = ("process", _ident(event.get("pid")))
        elif name == "thread_name":
            key = ("thread", _ident(event.get("pid")), _ident(event.get("tid")))
        else:
            return
        value = args.get("name") if isinstance(args, dict) else None
        if isinstance(value, str):
            self.names[key][value] = 1

    def _counter(self, event: dict, where: str) -> None:
        args = event.get("args")
        if not isinstance(args, dict):
            self.report.error("counter_without_values", "a C event has no args object",
                              example=where)
            return
        for key, value in args.items():
            if _numeric(value):
                self.counts["counter_values"] += 1
            else:
                self.report.error("non_numeric_counter", "a counter value that is not a "
                                  "number: the importer drops it",
                                  example=f"{where}.args[{key!r}] = {value!r}"[:120])

    def _replay(self) -> None:
        """Per thread, build slices like the importer, and bind its flow events."""
        for thread, events in self.threads.items():
            self._replay_thread(thread, events)

    def _replay_thread(self, thread: tuple, events: _SliceEvents) -> None:
        """One thread's slices as the importer's slice stack builds them (trace_processor's
        ``SliceTracker``): what it drops, what it ends early, what never ends; and where
        its flow events bind (the slice on top of the stack, or the next one begun; a
        bind_id the slice on top once its X or B is handled)."""
        report, flows, v2_flows = self.report, self.flows, self.v2_flows
        replay = SliceStack()
        waiting: list[int] = []   # slots of flow events binding to the next slice begun
        for ts, kind, dur, index, name, category in events.in_importer_order():
            if kind >= _TOP:   # (a flow event's name column holds its slot)
                if kind == _NEXT:
                    waiting.append(name)
                else:
                    flows.bind(name, bool(replay.stack))
                continue
            if not replay.close_before(ts, dur if kind in (_X, _I) else None):
                report.error("overlapping_slice", "an X event partially overlaps an open "
                             "slice on its thread: the v52 importer drops it "
                             "(newer ones spill it to an overflow track)",
                             example=_place(index, thread))
                if v2_flows and index in v2_flows:   # (bound below the X it was on)
                    flows.bind(v2_flows[index], bool(replay.stack))
                continue
            if kind == _E:
                closed = replay.end(ts, name, category)
                if closed is None:
                    report.error("end_without_begin", "an E event with no open B on its "
                                 "thread (of its name and category, when it gives them) is "
                                 "dropped", example=_place(index, thread))
                elif not closed:
                    report.warning("end_below_open_slice", "an E event ends a B while a "
                                   "slice inside it is still open: that slice outlives its "
                                   "parent in the view", example=_place(index, thread))
                continue
            if len(replay.stack) >= MAX_DEPTH:   # (v52 keeps it off the stack, at depth 0)
                report.error("slice_depth_over_512", "a slice deeper than 512 is shown at "
                             "depth 0, outside the slices enclosing it (a B there never "
                             "ends)", example=_place(index, thread))
                self.counts["slices"] += kind != _I
            else:
                replay.push(ts, dur if kind != _B else None, name, category)
                for slot in waiting:
                    flows.bind_next(slot, ts, _SORT_RANK[kind], dur, index)
                waiting.clear()
                if kind != _I:   # (counted among the instants)
                    self.counts["slices"] += 1
            if v2_flows and index in v2_flows:   # (to it, or to the slice it was in)
                flows.bind(v2_flows[index], True)
        if events.ambiguous_ties:
            report.warning("ambiguous_same_time_order", "B/E events at the same time as X "
                           "events or instants on their thread: the importer's order among "
                           "them is not fixed by the file, so it may nest them otherwise",
                           count=events.ambiguous_ties, example=f"thread {thread}")
        if replay.misplaced:
            report.warning("slice_ended_by_parent", "slices still open when the X slice "
                           "enclosing them ended: the importer ends them there (its "
                           "misplaced_end_event)", count=replay.misplaced,
                           example=f"thread {thread}")
        if replay.unterminated:
            report.warning("unterminated_slice", "B events never ended (shown as 'Did "
                           "not end')", count=replay.unterminated, example=f"thread {thread}")

    def _report_flows(self) -> None:
        """The arrows the importer draws (``counts["flows"]``) and the flow events that
        draw none, by reason (:mod:`.checked_flows`)."""
        tally = self.flows.tally()
        self.counts["flows"] = tally.arrows
        for code, count in tally.dropped.items():
            self.report.warning(code, _FLOW_FINDINGS[code], count=count,
                                example=f"$.traceEvents[{tally.examples[code]}]")
        if tally.shared_ids:
            self.report.warning("flow_v2_id_of_a_v1_flow", "bind_ids that are numbers the "
                                "importer gives v1 flows (0, 1, 2, ... as it meets them): "
                                "their points join that v1 flow", count=tally.shared_ids)


_FLOW_FINDINGS = {
    "flow_not_bound": "a flow event with no slice on its thread's stack to bind to: the "
                      "importer drops it (flow_no_enclosing_slice)",
    "flow_unpaired": "flow steps or ends whose id has no start before them: the importer "
                     "drops them (flow_step_without_start, flow_end_without_start)",
    "flow_duplicate_start": "flow starts whose id was started before (an 'f' does not "
                            "close its id): the importer drops them and draws the later "
                            "arrows from the first start (flow_duplicate_id)",
    "flow_start_unfollowed": "flow starts that nothing follows: no arrow",
    "flow_end_without_next_slice": "'f' events (without \"bp\": \"e\") after which no "
                                   "slice begins on their thread: no arrow, and the "
                                   "importer says nothing",
    "flow_from_first_slice": "'f' events (without \"bp\": \"e\") whose id was never "
                             "started: the importer draws their arrow from the trace's "
                             "first slice",
}


def check_chrome(source: Source) -> CheckReport:
    """Check a Chrome JSON trace (gzip or not) and return the report. The event array is
    read a piece at a time (as the reader does): what is held is the little per event that
    the rules need, never the events themselves."""
    checker, pieces = _Checker(), _ScreenedPieces()
    with source.open() as stream, located_errors(source, stream), paused_gc():
        doc = read_document(stream)
        doc.records = pieces
        index = 0
        for chunk in doc.chunks:
            checker.feed(chunk, index, walk_numbers=pieces.maybe_unshowable)
            index += len(chunk)
    return checker.finish()


def check_chrome_events(events: list[Any]) -> CheckReport:
    """Check an already parsed event list.

    >>> r = check_chrome_events([{"ph": "X", "ts": 0, "dur": 5, "pid": 1, "tid": 1},
    ...                          {"ph": "X", "ts": 2, "dur": 9, "pid": 1, "tid": 1}])
    >>> r.counts["slices"], [e["code"] for e in r.errors]
    (1, ['overlapping_slice'])
    """
    checker = _Checker()
    with paused_gc():
        checker.feed(events, 0)
    return checker.finish()
