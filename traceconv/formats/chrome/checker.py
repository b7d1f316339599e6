"""Check a Chrome Trace Event JSON file for what Perfetto's JSON importer drops or mangles.

Rules (the importer's behaviour, perfetto.md §3.2):

* errors (data is lost): events that are not objects or lack ``ph``/``ts``; an ``X`` or
  ``B``/``E`` slice that partially overlaps an open slice on its thread (dropped as
  ``slice_drop_overlapping_complete_event``); an ``E`` with no open ``B``; slices deeper
  than 512; counter (``C``) values that are not numbers or numeric strings; args holding
  a number beyond a double (``1e400``: valid JSON, infinity to ``JSON.parse``), which the
  importer drops from that one on (``args_beyond_double``);
* warnings (shown differently than meant): phases the importer ignores (legacy async
  ``S/T/p/F``, object ``N/O/D``, memory dumps ``V/v``, ``c``, ``(``/``)``) or does not
  know; events without ``pid`` (put on pid 0); flow ``s``/``f`` events that bind to no
  slice or have no partner; ``M`` events that give one process or thread several names;
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
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np
import orjson

from ...gcpause import paused_gc
from ...io import Source
from ...json_decode import any_value
from ...model.check_report import CheckReport
from ...numbers import beyond_int64
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
# The importer's order at one timestamp: E first, then X by decreasing duration, then B.
_RANK = {"E": 0, "X": 1, "B": 2}


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


def _ident(value: Any) -> Any:
    """A pid, tid or flow id as a dictionary key: a list or object (type confusion in the
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
    ending with its parent into an overlap). None if not a number, or beyond ±2**62 ns (the
    importer's int64 then overflows on ``ts + dur``).

    >>> _ns(4482801341167.555), _ns(-0.0005), _ns(7), _ns("7"), _ns(1e300)
    (4482801341167555, -1, 7000, None, None)
    >>> _ns(Decimal("1712195495505582.9885")), _ns(Decimal("1E+400"))
    (1712195495505582989, None)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return None
    scaled = value * 1000 if isinstance(value, int | Decimal) else value * 1000.0
    if not -_NS_LIMIT <= scaled <= _NS_LIMIT:   # also NaN
        return None
    if isinstance(scaled, int):
        return scaled
    if isinstance(scaled, Decimal):
        return int(scaled.to_integral_value(ROUND_HALF_UP))   # (half away from zero)
    return math.floor(scaled + 0.5) if scaled >= 0 else -math.floor(0.5 - scaled)


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


class _Checker:
    def __init__(self) -> None:
        self.report = CheckReport("chrome")
        # per (pid, tid): slice events as (ts, rank, -dur, index, phase, end)
        self.threads: dict[tuple, list[tuple]] = defaultdict(list)
        self.flows: list[tuple[str, tuple, int, bool, tuple, int]] = []
        self.names: dict[tuple, dict[str, int]] = defaultdict(dict)
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
        spans = self._replay()
        self._check_flows(spans)
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
            report.error("event_not_object", "an event is not a JSON object", example=where)
            return
        phase = event.get("ph")
        if not isinstance(phase, str) or not phase:
            report.error("missing_ph", "an event has no 'ph': it is dropped", example=where)
            return
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
        ts = _ns(event.get("ts"))
        if ts is None:
            report.error("missing_ts", "an event has no numeric 'ts' (or one out of range): it is dropped",
                         example=where)
            return
        if phase in NEEDS_PID and "pid" not in event:
            report.warning("missing_pid", "an event has no 'pid': it lands in process 0",
                           example=where)
        thread = (_ident(event.get("pid")), _ident(event.get("tid", event.get("pid"))))
        if phase == "X":
            dur = _ns(event.get("dur", 0))
            if dur is None or dur < 0:
                report.error("bad_dur", "an X event has a missing or negative 'dur'",
                             example=where)
                return
            self.threads[thread].append((ts, 1, -dur, index, "X", ts + dur))
        elif phase in "BE":
            self.threads[thread].append((ts, _RANK[phase], 0, index, phase, None))
        elif phase in "iIR":
            counts["instants"] += 1
        elif phase == "C":
            self._counter(event, where)
        elif phase in "sft":
            flow_id = (_ident(event.get("cat")), _ident(event.get("id", event.get("bind_id"))))
            bind_enclosing = phase == "s" or event.get("bp") == "e"
            self.flows.append((phase, flow_id, ts, bind_enclosing, thread, index))

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

    def _replay(self) -> dict[tuple, tuple[np.ndarray, np.ndarray]]:
        """Per thread, build slices like the importer; returns the kept slices' sorted starts
        and the running maximum of their ends (for flow binding)."""
        report = self.report
        spans = {}
        for thread, events in self.threads.items():
            events.sort()
            stack: list[tuple[int | None, int]] = []   # (end or None for B, event index)
            starts: list[int] = []
            ends: list[int] = []
            open_b: list[int] = []   # positions in starts of open B slices
            for ts, _, _, index, phase, end in events:
                while stack and stack[-1][0] is not None and stack[-1][0] <= ts:
                    stack.pop()
                if phase == "E":
                    if stack and stack[-1][0] is None:
                        stack.pop()
                        ends[open_b.pop()] = ts
                    elif stack:
                        report.error("overlapping_slice", "an E event closes a B while an X "
                                     "slice inside it is still open: the slices overlap",
                                     example=f"$.traceEvents[{index}] on {thread}")
                    else:
                        report.error("end_without_begin", "an E event with no open B on its "
                                     "thread is dropped", example=f"$.traceEvents[{index}] on "
                                     f"{thread}")
                    continue
                if stack and end is not None and stack[-1][0] is not None \
                        and end > stack[-1][0]:
                    report.error("overlapping_slice", "an X event partially overlaps an open "
                                 "slice on its thread: the v52 importer drops it "
                                 "(newer ones spill it to an overflow track)",
                                 example=f"$.traceEvents[{index}] on {thread}")
                    continue
                if len(stack) >= MAX_DEPTH:
                    report.error("slice_depth_over_512", "a slice deeper than 512 is dropped",
                                 example=f"$.traceEvents[{index}] on {thread}")
                    continue
                stack.append((end, index))
                self.counts["slices"] += 1
                if end is None:
                    open_b.append(len(starts))
                starts.append(ts)
                ends.append(end if end is not None else ts)
            if open_b:
                report.warning("unterminated_slice", "B events never ended (shown as 'Did "
                               "not end')", count=len(open_b), example=f"thread {thread}")
            order = np.argsort(np.asarray(starts, dtype=np.int64), kind="stable")
            ends_so_far = np.maximum.accumulate(np.asarray(ends, np.int64)[order]) if ends \
                else np.zeros(0, np.int64)
            spans[thread] = (np.asarray(starts, np.int64)[order], ends_so_far)
        return spans

    def _check_flows(self, spans: dict[tuple, tuple[np.ndarray, np.ndarray]]) -> None:
        report = self.report
        ends_by_id: dict[tuple, set[str]] = defaultdict(set)
        for phase, flow_id, ts, enclosing, thread, index in self.flows:
            ends_by_id[flow_id].add(phase)
            starts, ends = spans.get(thread, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
            if enclosing:
                before = int(np.searchsorted(starts, ts, "right"))
                bound = before > 0 and bool(ends[before - 1] >= ts)
            else:   # binds to the next slice that starts at or after ts
                bound = int(np.searchsorted(starts, ts, "left")) < len(starts)
            if not bound:
                report.warning("flow_not_bound", "a flow event has no slice to bind to on its "
                               "thread: no arrow", example=f"$.traceEvents[{index}]")
        arrows = 0
        for flow_id, phases in ends_by_id.items():
            if "s" in phases and "f" in phases:
                arrows += 1
            else:
                report.warning("flow_unpaired", "flow ids with a start but no end or the "
                               "reverse: no arrow", example=f"cat/id {flow_id}")
        self.counts["flows"] = arrows


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
