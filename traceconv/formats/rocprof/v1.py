"""rocprof v1/v2 (``rocprof --timestamp on`` / ``--hip-trace`` / ``--stats``): the kernel
trace as ``results.csv``, ``results.json`` and ``results.db``, each read into the same
dispatch slices (:mod:`.dispatches`).

``results.json`` is Chrome-like but states every number as a string, opens with an empty
event, and rounds times to microseconds; a dispatch's exact times are its args
``BeginNs``/``EndNs`` (the microsecond ``ts``/``dur`` only when they are missing).
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from ...errors import InputError
from ...io import Source
from ...model.activity import Activity
from ...model.builder import TraceBuilder
from .._sqlite import open_database
from .csv_table import read_table
from .dispatches import V1, add_counter_rows, add_dispatches, device_name
from .places import Places
from .values import arg_value, integer

PLACING = ("KernelName", "gpu-id", "queue-id")
REQUIRED = (*PLACING, "BeginNs", "EndNs")
# other tables of results.db and other events of results.json: the category of their rows
_CATEGORIES = {"HIP": "hip_runtime", "HSA": "hsa_api", "COPY": "gpu_memcpy", "OPS": "gpu_op",
               "rocTX": "user_annotation"}
_NAMES = ("KernelName", "Name", "Function", "Message", "name")


def read_csv(trace: TraceBuilder, source: Source) -> None:
    """``results.csv``: one dispatch a row; without times (``rocprof --pmc`` alone writes
    counters only), one statistic row a dispatch with its counters (section ``counters``).

    >>> trace = TraceBuilder(); read_csv(trace, Source("samples/rocprof/llamacpp_results.csv"))
    >>> len(trace.slices), trace.processes[0].name, trace.slice(0).name
    (64, 'GPU 2', '__amd_rocclr_fillBufferAligned.kd')
    """
    table = read_table(source)
    table.count_repairs(trace.diagnostics)
    if "BeginNs" not in table.header and "EndNs" not in table.header:
        table.require(*PLACING)
        add_counter_rows(trace, table.records(), "KernelName")
        return
    table.require(*REQUIRED)
    _, bad = add_dispatches(trace, Places(trace), table.records(), V1)
    trace.diagnostics.add("rocprof.malformed_row", count=bad, example=source.name)


def read_database(trace: TraceBuilder, source: Source) -> None:
    """``results.db``: ``KERN`` as dispatches; a table of other records with ``BeginNs`` and
    ``EndNs`` (HIP, COPY, OPS, rocTX) as slices by the ids it has; the rest counted.

    >>> trace = TraceBuilder(); read_database(trace, Source("samples/rocprof/llamacpp_results.db"))
    >>> len(trace.slices), trace.slice(0).name
    (64, '__amd_rocclr_fillBufferAligned.kd')
    """
    places = Places(trace)
    with open_database(source) as db:
        for table, columns in db.columns.items():
            if not columns:   # (every column generated: nothing the file itself holds)
                trace.diagnostics.add("rocprof.table_not_read", count=1, example=table)
                continue
            # (the columns read, named: a generated column the access layer skips is
            # not in them, and `select *` would still hand it over as a NULL)
            named = ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
            rows = db.iterate(f'select {named} from "{table.replace(chr(34), chr(34) * 2)}"',
                              table)
            unquoted = Unquoted()
            records = (unquoted.record(columns, row) for row in rows)
            if table == "KERN":
                missing = [c for c in REQUIRED if c not in columns]
                if missing:
                    raise InputError(f"no column {missing[0]!r} in table KERN", file=source.name,
                                     location="KERN")
                _, bad = add_dispatches(trace, places, records, V1)
            elif {"BeginNs", "EndNs"} <= set(columns):
                bad = _add_records(trace, places, records,
                                   _CATEGORIES.get(table, table)).count(-1)
            else:
                trace.diagnostics.add("rocprof.table_not_read", count=db.count(table),
                                      example=table)
                continue
            trace.diagnostics.add("rocprof.malformed_row", count=bad, example=table)
            trace.diagnostics.add("rocprof.quoted_text", count=unquoted.count, example=table)


class Unquoted:
    """results.db keeps the CSV's quotes around texts (``"kernel.kd"`` with the quotes):
    each record's texts without them, counted.

    >>> u = Unquoted(); u.record(["KernelName", "gpu-id"], ['"k.kd"', 2]), u.count
    ({'KernelName': 'k.kd', 'gpu-id': 2}, 1)
    """

    def __init__(self) -> None:
        self.count = 0

    def record(self, columns: list[str], row: tuple[object, ...]) -> dict[str, object]:
        out = dict(zip(columns, row, strict=False))
        for key, value in out.items():
            if isinstance(value, str) and len(value) > 1 and value[0] == value[-1] == '"':
                out[key] = value[1:-1]
                self.count += 1
        return out


def _add_records(trace: TraceBuilder, places: Places, records: Any, category: str) -> list[int]:
    """Slices of records that are no dispatch: a copy (category ``gpu_memcpy``) with a
    ``dev-id`` on its device's copies track, the others on their thread (``pid``/``tid``);
    the slice row of each record, -1 for one without integer times."""
    rows = []
    for record in records:
        start, end = integer(record.get("BeginNs")), integer(record.get("EndNs"))
        if start is None or end is None:
            rows.append(-1)
            continue
        name = next((str(record[k]) for k in _NAMES if record.get(k) not in (None, "")), category)
        device = record.get("dev-id") if category == "gpu_memcpy" else None
        if device not in (None, ""):
            gpu, number = device_name(V1, device)
            track = places.device_track(gpu, number, "copies")
        else:
            track = places.thread(integer(record.get("pid")), integer(record.get("tid")))
        args = {k: arg_value(v) for k, v in record.items()
                if k not in ("BeginNs", "EndNs") and v not in (None, "")}
        activity = Activity.MEMCPY if category == "gpu_memcpy" else 0
        rows.append(trace.add_interval(track, start, end, name, category, args or None,
                                       activity))
    return rows


def read_json(trace: TraceBuilder, source: Source) -> None:
    """``results.json``: its ``X`` events as dispatches (those with a ``KernelName``, or
    in a ``GPU<n>`` process), copies (in the ``COPY`` process) and calls on their thread
    (the rest), and its ``s``/``t`` flows from a call to the work it started; the empty first
    event, the metadata events and the flow ends that bind to no slice counted.

    >>> trace = TraceBuilder(); read_json(trace, Source("samples/rocprof/llamacpp_results.json"))
    >>> len(trace.slices), trace.slice(0).start   # (BeginNs, not the µs ts)
    (64, 769537350099688)
    """
    document = source.read_json()
    events = document.get("traceEvents") if isinstance(document, dict) else None
    if not isinstance(events, list):
        raise InputError("no traceEvents list", file=source.name, location="$")
    for at, event in enumerate(events):
        if not isinstance(event, dict):
            raise InputError("an event that is not an object", file=source.name,
                             location=f"$.traceEvents[{at}]")
    process_names = {str(e.get("pid")): str((e.get("args") or {}).get("name", ""))
                     for e in events if e.get("ph") == "M" and e.get("name") == "process_name"
                     and isinstance(e.get("args"), dict)}
    places = Places(trace)
    lanes = _JsonLanes()
    bad, skipped = 0, Counter[str]()
    for event in events:
        phase = event.get("ph")
        if phase != "X":
            code = ("rocprof.empty_event" if not event else "rocprof.metadata_event"
                    if phase == "M" else "rocprof.event_not_read")
            if phase not in _FLOW_PHASES:
                skipped[code] += 1
            continue
        row = _add_json_slice(trace, places, event, process_names.get(str(event.get("pid")), ""))
        if row is None:
            bad += 1
        else:
            lanes.add(event, trace, row)
    flows, unbound = lanes.flows(e for e in events if e.get("ph") in _FLOW_PHASES)
    for source_row, target_row in flows:
        trace.add_flow(source_row, target_row, "DataFlow", "dep")
    trace.diagnostics.add("rocprof.malformed_row", count=bad, example=source.name)
    trace.diagnostics.add("rocprof.flow_not_read", count=unbound)
    for code, count in skipped.items():
        trace.diagnostics.add(code, count=count)


_FLOW_PHASES = ("s", "t", "f")
# (rocprof puts a GPU's barrier packets in a process of their own, "GPU Barriers<n>")
_GPU_PROCESS = re.compile(r"GPU(?:\s*Barriers)?\s*(\d+)\Z")


def _add_json_slice(trace: TraceBuilder, places: Places, event: Mapping[str, Any],
                    process: str) -> int | None:
    """One ``X`` event of a results.json as a slice (its row; None without integer times):
    a dispatch when it names a ``KernelName`` or sits in a ``GPU<n>`` (or ``GPU Barriers<n>``)
    process, a copy on its device when in the ``COPY`` process, else a call on its thread
    (args ``pid``/``tid``, which the Chrome ``pid`` only groups)."""
    args = event.get("args")
    record = {**(args if isinstance(args, dict) else {}), **_json_times(event)}
    gpu = _GPU_PROCESS.match(process)
    if "KernelName" not in record and gpu is not None:
        record = {"KernelName": record.pop("Name", event.get("name")),
                  "gpu-id": record.pop("dev-id", gpu.group(1)), **record}
    if "KernelName" in record:
        rows, _ = add_dispatches(trace, places, [record], V1)
        return rows[0] if rows[0] >= 0 else None
    category = next((c for word, c in _CATEGORIES.items() if word.lower() in process.lower()),
                    "rocprof")
    record = {"Name": event.get("name"), "pid": event.get("pid"), "tid": event.get("tid"),
              **record}
    rows = _add_records(trace, places, [record], category)
    return rows[0] if rows[0] >= 0 else None


class _JsonLanes:
    """The slices of each Chrome (pid, tid) lane of a results.json, to bind its flow
    events as Chrome does: ``s`` to the innermost slice around its time, ``t``/``f`` to the
    slice that starts at it (else the one around it); times in the file's µs. Each binding
    is a binary search and a bounded look back (a hostile file cannot make it quadratic)."""

    LOOK_BACK = 64   # slices before the time that may still be open at it

    def __init__(self) -> None:
        self.lanes: dict[tuple[str, str], list[tuple[int, int, int]]] = defaultdict(list)

    def add(self, event: Mapping[str, Any], trace: TraceBuilder, row: int) -> None:
        start, dur = trace.slices.start[row], trace.slices.dur[row]
        lane = (str(event.get("pid")), str(event.get("tid")))
        self.lanes[lane].append((start // 1000, -(-(start + dur) // 1000), row))

    def flows(self, events: Iterable[Mapping[str, Any]]) -> tuple[list[tuple[int, int]], int]:
        """(source row, target row) per flow id whose ends both bind; how many flow
        events did not make a flow."""
        for lane in self.lanes.values():
            lane.sort()
        ends: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
        unbound = 0
        for event in events:
            ts = integer(event.get("ts"))
            lane = self.lanes.get((str(event.get("pid")), str(event.get("tid"))), [])
            row = None if ts is None else self._bound(lane, ts, event.get("ph") == "s")
            key = (str(event.get("cat")), str(event.get("id")))
            side = "source" if event.get("ph") == "s" else "target"
            if row is None or side in ends[key]:
                unbound += 1
                continue
            ends[key][side] = row
        pairs = [(e["source"], e["target"]) for e in ends.values() if len(e) == 2]
        unbound += sum(len(e) for e in ends.values() if len(e) == 1)
        return pairs, unbound

    @classmethod
    def _bound(cls, lane: list[tuple[int, int, int]], ts: int, source: bool) -> int | None:
        """The row a flow event at ``ts`` binds to in ``lane`` (sorted by start).

        >>> lane = [(0, 100, 7), (10, 20, 8)]   # (start, end, row): 8 nested in 7
        >>> [_JsonLanes._bound(lane, ts, source) for ts, source in
        ...  ((15, True), (10, False), (50, True), (200, True))]
        [8, 8, 7, None]
        """
        if not source:
            at = bisect.bisect_left(lane, (ts, -2**63, -1))
            if at < len(lane) and lane[at][0] == ts:
                return lane[at][2]
        last = bisect.bisect_right(lane, (ts, 2**63, 2**63)) - 1
        for start, end, row in reversed(lane[max(0, last - cls.LOOK_BACK + 1):last + 1]):
            if start <= ts <= end:
                return row
        return None


def _json_times(event: Mapping[str, Any]) -> dict[str, object]:
    """``BeginNs``/``EndNs`` from the event's args when it has them, else from its
    microsecond ``ts``/``dur`` (strings or numbers).

    >>> _json_times({"ts": "769537350099", "dur": "7", "args": {"BeginNs": "5", "EndNs": "9"}})
    {'BeginNs': '5', 'EndNs': '9'}
    >>> _json_times({"ts": "12", "dur": "3"})
    {'BeginNs': 12000, 'EndNs': 15000}
    """
    args = event.get("args")
    if isinstance(args, dict) and "BeginNs" in args and "EndNs" in args:
        return {"BeginNs": args["BeginNs"], "EndNs": args["EndNs"]}
    ts, dur = integer(event.get("ts")), integer(event.get("dur"))
    return {} if ts is None or dur is None else {"BeginNs": ts * 1000, "EndNs": (ts + dur) * 1000}
