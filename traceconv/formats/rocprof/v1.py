"""rocprof v1/v2 (``rocprof --timestamp on`` / ``--hip-trace`` / ``--stats``): the kernel
trace as ``results.csv``, ``results.json`` and ``results.db``, each read into the same
dispatch slices (:mod:`.dispatches`).

``results.json`` is Chrome-like but states every number as a string, opens with an empty
event, and rounds times to microseconds; a dispatch's exact times are its args
``BeginNs``/``EndNs`` (the microsecond ``ts``/``dur`` only when they are missing).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from ...errors import InputError
from ...io import Source
from ...model.builder import TraceBuilder
from .._sqlite import open_database
from .csv_table import read_table
from .dispatches import V1, add_counter_rows, add_dispatches
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
                bad = _add_records(trace, places, records, _CATEGORIES.get(table, table))
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


def _add_records(trace: TraceBuilder, places: Places, records: Any, category: str) -> int:
    """Slices on the thread (``pid``/``tid``) of records that are no dispatch; how many had
    no integer times."""
    bad = 0
    for record in records:
        start, end = integer(record.get("BeginNs")), integer(record.get("EndNs"))
        if start is None or end is None:
            bad += 1
            continue
        name = next((str(record[k]) for k in _NAMES if record.get(k) not in (None, "")), category)
        track = places.thread(integer(record.get("pid")), integer(record.get("tid")))
        args = {k: arg_value(v) for k, v in record.items()
                if k not in ("BeginNs", "EndNs") and v not in (None, "")}
        trace.add_interval(track, start, end, name, category, args or None)
    return bad


def read_json(trace: TraceBuilder, source: Source) -> None:
    """``results.json``: its ``X`` events with a ``KernelName`` as dispatches, other ``X``
    events as slices on their thread; the empty first event, flows and other phases
    counted.

    >>> trace = TraceBuilder(); read_json(trace, Source("samples/rocprof/llamacpp_results.json"))
    >>> len(trace.slices), trace.slice(0).start   # (BeginNs, not the µs ts)
    (64, 769537350099688)
    """
    try:
        document = orjson.loads(source.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc}", file=source.name) from None
    events = document.get("traceEvents") if isinstance(document, dict) else None
    if not isinstance(events, list):
        raise InputError("no traceEvents list", file=source.name, location="$")
    places = Places(trace)
    kernels: list[Mapping[str, object]] = []
    others: list[Mapping[str, object]] = []
    skipped: dict[str, int] = {}
    for at, event in enumerate(events):
        if not isinstance(event, dict):
            raise InputError("an event that is not an object", file=source.name,
                             location=f"$.traceEvents[{at}]")
        phase = event.get("ph")
        if phase == "X":
            args = event.get("args")
            record = {**(args if isinstance(args, dict) else {}), **_json_times(event)}
            if "KernelName" in record:
                kernels.append(record)
            else:   # (a call or a copy: named and placed by the event itself)
                others.append({"Name": event.get("name"), "pid": event.get("pid"),
                               "tid": event.get("tid"), **record})
        else:
            code = ("rocprof.empty_event" if not event else "rocprof.metadata_event"
                    if phase == "M" else "rocprof.flow_not_read" if phase in ("s", "t", "f")
                    else "rocprof.event_not_read")
            skipped[code] = skipped.get(code, 0) + 1
    _, bad = add_dispatches(trace, places, kernels, V1)
    bad += _add_records(trace, places, others, "rocprof")
    trace.diagnostics.add("rocprof.malformed_row", count=bad, example=source.name)
    for code, count in skipped.items():
        trace.diagnostics.add(code, count=count)


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
