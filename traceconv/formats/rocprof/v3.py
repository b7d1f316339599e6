"""rocprofv3 CSV files (``--output-format csv``), one or several of one run, into one trace:
dispatches on agent queues, API calls on their threads, copies on their agent, counter
values as args of their dispatch, memory allocations and scratch memory as memory blocks
(:mod:`.allocations`), and a flow from each call to the work of its correlation id. The
JSON and rocpd readers put their records into the same tables, so every layout is read
by this one code, activities included (:mod:`traceconv.vocabularies.rocprof`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from ...io import Source
from ...model import DeviceInfo, Metadata
from ...model.activity import Activity, fill_activity
from ...model.builder import TraceBuilder
from ...vocabularies.rocprof import ROCPROF_VOCABULARY
from . import CLOCK
from .allocations import add_allocations
from .csv_table import Table, read_table
from .dispatches import V3, add_counter_rows, add_dispatches, device_name
from .places import Places
from .values import agent_number, arg_value, integer

_TIMES = ("Start_Timestamp", "End_Timestamp")
REQUIRED = {
    "v3-kernels": ("Agent_Id", "Queue_Id", "Kernel_Name", *_TIMES),
    "v3-api": ("Domain", "Function", *_TIMES),   # (rocprofv2's: no process, no thread)
    "v3-copies": ("Direction", "Source_Agent_Id", "Destination_Agent_Id", *_TIMES),
    "v3-counters": ("Dispatch_Id", "Agent_Id", "Kernel_Name", "Counter_Name", "Counter_Value"),
    "v3-allocations": ("Operation", "Agent_Id", "Address", "Allocation_Size", *_TIMES),
    # (some rocprofv3 versions write no Allocation_Size here: the blocks are counted, not read)
    "v3-scratch": ("Operation", "Agent_Id", "Queue_Id", *_TIMES),
    "v3-agent-info": ("Logical_Node_Id", "Name", "Product_Name"),
}
# a call's category by the first word in its domain (HIP_RUNTIME_API, HSA_CORE_API...); the
# activity of each category is the vocabulary's (traceconv.vocabularies.rocprof)
_DOMAINS = (("MARKER", "user_annotation"), ("HSA", "hsa_api"), ("RCCL", "rccl"),
            ("", "hip_runtime"))
_COUNTER = ("Counter_Name", "Counter_Value")
# what each agent is, where a file says (the JSON's agents, rocpd's rocpd_info_agent, the
# run's agent_info.csv): the process of a device keeps its name ("agent 2", as every layout
# names it) and gets these as labels. The traces' agent ids are the agents' logical node ids
# (rocprofv3's default agent index), the number agent_info.csv gives as Logical_Node_Id
AGENT_COLUMNS = ("Agent_Id", "Name", "Product_Name")
_AGENT_NUMBERS = ("Agent_Id", "Logical_Node_Id")
_AGENT_KINDS = ("v3-agents", "v3-agent-info")


@dataclass(frozen=True)
class Part:
    """One rocprofv3 CSV of a run: its kind (a ``v3-`` kind of
    :data:`traceconv.formats.rocprof_sniffing.CSV_KINDS`, ``v3-agent-info`` among them, or
    ``v3-agents``: what the agents of a JSON or rocpd database are, :data:`AGENT_COLUMNS`)
    and its table."""

    kind: str
    table: Table

    @property
    def file(self) -> str:
        return self.table.file


def load_part(source: Source, kind: str) -> Part:
    """The table of ``source``, with the columns its kind needs (an error names the first
    one missing).

    >>> part = load_part(Source("tests/data/rocprof/ROCm__rocm-systems__docs_rccl_trace.csv"),
    ...                  "v3-api")
    >>> len(part.table.rows), part.table.rows[0][1]
    (21, 'ncclGetVersion')
    """
    table = read_table(source)
    table.require(*REQUIRED[kind])
    return Part(kind, table)


def build_run(parts: list[Part], written_as: str = "CSV") -> TraceBuilder:
    """One trace from the tables of one run (CSV files, or a JSON file's records).

    >>> run = "samples/rocprof/jimw567__rocprof-unified-viewer__decode_"
    >>> trace = build_run([load_part(Source(run + "kernel_trace.csv"), "v3-kernels"),
    ...                    load_part(Source(run + "hip_api_trace.csv"), "v3-api")])
    >>> len(trace.slices), len(trace.flows)
    (1064, 27)
    """
    kinds = ", ".join(sorted({p.kind.removeprefix("v3-") for p in parts}))
    trace = TraceBuilder(Metadata(source_format="rocprof",
                                  source_version=f"rocprofv3 {written_as} ({kinds})",
                                  clock=CLOCK))
    labels = _agent_labels([p.table for p in parts if p.kind in _AGENT_KINDS])
    trace.metadata.devices = _gpu_agents(labels)
    places = Places(trace, labels)
    diagnostics = trace.diagnostics
    if all(p.kind == "v3-agent-info" for p in parts):   # (alone: its agents are what it holds)
        for number in sorted(labels):
            places.device(device_name(V3, number)[0], number)
        # (a run's settings, read to join its traces: not "nothing read" while joined)
        diagnostics.add("input.settings_only", count=len(parts),
                        example="the trace CSV files of its run (kernel_trace.csv, "
                                "hip_api_trace.csv...)")
    for part in parts:
        part.table.count_repairs(diagnostics)
    calls: dict[int, int] = {}
    for part in (p for p in parts if p.kind == "v3-api"):
        calls.update(_add_calls(trace, places, part.table))
    counters = _counters_by_dispatch([p.table for p in parts if p.kind == "v3-counters"])
    works: list[tuple[list[int], Table]] = []   # slice rows of the work of each table
    for part in parts:
        if part.kind == "v3-kernels":
            records = ({**r, **counters.pop(_dispatch_key(r), {})}
                       for r in part.table.records())
            rows, bad = add_dispatches(trace, places, records, V3)
            works.append((rows, part.table))
            diagnostics.add("rocprof.malformed_row", count=bad, example=part.file)
        elif part.kind == "v3-copies":
            rows = _add_copies(trace, places, part.table.records())
            works.append((rows, part.table))
            diagnostics.add("rocprof.malformed_row", count=rows.count(-1), example=part.file)
    if any(p.kind == "v3-kernels" for p in parts):
        diagnostics.add("rocprof.counter_without_dispatch", count=len(counters),
                        example=" ".join(next(iter(counters), ())) or None)
    else:
        _add_counter_dispatches(trace, places, [p.table for p in parts
                                                if p.kind == "v3-counters"])
    if calls:
        _add_flows(trace, calls, works)
    add_allocations(trace, [p.table for p in parts
                            if p.kind in ("v3-allocations", "v3-scratch")])
    fill_activity(trace, ROCPROF_VOCABULARY)
    return trace


def _gpu_agents(labels: dict[int, list[str]]) -> list[DeviceInfo]:
    """The GPU agents as the model's devices: those whose name is a ``gfx`` target (a CPU
    agent is named for its processor), by their product name.

    >>> _gpu_agents({0: ["AMD EPYC 9654 96-Core Processor"], 2: ["AMD Instinct MI300X", "gfx942"]})
    [DeviceInfo(id=2, name='AMD Instinct MI300X', memory_bytes=None, compute_major=None, compute_minor=None)]
    """
    return [DeviceInfo(number, words[0]) for number, words in sorted(labels.items())
            if any(word.startswith("gfx") for word in words)]


def _agent_labels(tables: list[Table]) -> dict[int, list[str]]:
    """``{agent number: [product name, name]}`` (each once, empty ones left out).

    >>> _agent_labels([Table("r.json", list(AGENT_COLUMNS),
    ...                      [["2", "gfx942", "AMD Instinct MI300X"], ["0", "", ""]])])
    {2: ['AMD Instinct MI300X', 'gfx942']}
    >>> _agent_labels([Table("agent_info.csv", ["Logical_Node_Id", "Name", "Product_Name"],
    ...                      [["4", "gfx942", "AMD Instinct MI300A"]])])
    {4: ['AMD Instinct MI300A', 'gfx942']}
    """
    found: dict[int, list[str]] = {}
    for table in tables:
        column = next((c for c in _AGENT_NUMBERS if c in table.header), _AGENT_NUMBERS[0])
        for record in table.records():
            number = agent_number(record.get(column, ""))
            words = [str(record.get(c) or "") for c in ("Product_Name", "Name")]
            if number is not None and any(words):
                found[number] = list(dict.fromkeys(w for w in words if w))
    return found


def _add_calls(trace: TraceBuilder, places: Places, table: Table) -> dict[int, int]:
    """A slice per API call on its thread; ``{correlation id: slice row}``."""
    calls: dict[int, int] = {}
    bad = 0
    for record in table.records():
        start, end = integer(record.get(_TIMES[0])), integer(record.get(_TIMES[1]))
        if start is None or end is None:
            bad += 1
            continue
        domain = str(record.get("Domain", ""))
        category = next(c for word, c in _DOMAINS if word in domain)
        pid, tid = integer(record.get("Process_Id")), integer(record.get("Thread_Id"))
        track = (places.ranges(pid) if tid == 0 and category == "user_annotation"
                 else places.thread(pid, tid))
        args = {k: arg_value(v) for k, v in record.items()
                if k not in (*_TIMES, "Function", "Process_Id", "Thread_Id") and v != ""}
        row = trace.add_interval(track, start, end, str(record.get("Function", "")), category,
                                 args or None)
        correlation = integer(record.get("Correlation_Id"))
        if correlation is not None:
            calls.setdefault(correlation, row)
    trace.diagnostics.add("rocprof.malformed_row", count=bad, example=table.file)
    return calls


def _add_copies(trace: TraceBuilder, places: Places, records: Iterable[dict[str, object]]
                ) -> list[int]:
    """A slice per copy on a track per direction of the device end of the copy (the source
    of a device-to-host copy, else the destination); the slice rows, -1 where not read."""
    rows: list[int] = []
    for record in records:
        start, end = integer(record.get(_TIMES[0])), integer(record.get(_TIMES[1]))
        if start is None or end is None:
            rows.append(-1)
            continue
        direction = str(record.get("Direction", ""))
        end_agent = ("Source_Agent_Id" if "DEVICE_TO_HOST" in direction
                     else "Destination_Agent_Id")
        device, number = device_name(V3, record.get(end_agent, ""))
        track = places.device_track(device, number, f"copies {direction}".strip())
        args = {k: arg_value(v) for k, v in record.items() if k not in _TIMES and v != ""}
        rows.append(trace.add_interval(track, start, end, direction, "gpu_memcpy", args,
                                       Activity.MEMCPY))
    return rows


def _counters_by_dispatch(tables: list[Table]) -> dict[tuple[str, str], dict[str, object]]:
    """``{(dispatch id, kernel): {counter name: value, ...}}`` of counter collection files
    (long format: one row per dispatch and counter)."""
    found: dict[tuple[str, str], dict[str, object]] = defaultdict(dict)
    for table in tables:
        for record in table.records():
            _add_counter(found[_dispatch_key(record)], record)
    return dict(found)


def _add_counter(counters: dict[str, object], record: dict[str, object]) -> None:
    """The counter of ``record`` (long format) into ``counters``: a value not given (an
    empty cell; ``...``, :mod:`.csv_table`) is no value, left out as any empty cell is.

    >>> found = {}; _add_counter(found, {"Counter_Name": "SQ_WAVES", "Counter_Value": "16"})
    >>> _add_counter(found, {"Counter_Name": "GRBM_COUNT", "Counter_Value": ""}); found
    {'SQ_WAVES': 16.0}
    """
    value = str(record.get("Counter_Value", ""))
    if value != "":
        counters[str(record.get("Counter_Name"))] = counter_value(value)


def _dispatch_key(record: dict[str, object]) -> tuple[str, str]:
    """A dispatch's id and kernel name: counters join a dispatch of the same kernel only
    (files of another run given together have the same ids for other kernels).

    >>> _dispatch_key({"Dispatch_Id": "7", "Kernel_Name": "k", "Queue_Id": "1"})
    ('7', 'k')
    """
    return str(record.get("Dispatch_Id")), str(record.get("Kernel_Name"))


def _add_counter_dispatches(trace: TraceBuilder, places: Places, tables: list[Table]) -> None:
    """Counter files without their kernel trace: a dispatch slice per dispatch id when the
    file has times, else a statistic row per dispatch (section ``counters``)."""
    for table in tables:
        first: dict[str, dict[str, object]] = {}
        for record in table.records():
            fields: dict[str, object] = {k: v for k, v in record.items() if k not in _COUNTER}
            _add_counter(first.setdefault(str(record.get("Dispatch_Id")), fields), record)
        if all(t in table.header for t in _TIMES):
            _, bad = add_dispatches(trace, places, list(first.values()), V3)
            trace.diagnostics.add("rocprof.malformed_row", count=bad, example=table.file)
            continue
        add_counter_rows(trace, first.values(), "Kernel_Name")


def counter_value(text: str) -> float | str:
    """A counter's value as a number, or its text when it is none.

    >>> counter_value("3564.000000"), counter_value("n/a")
    (3564.0, 'n/a')
    """
    try:
        return float(text)
    except ValueError:
        return text


def _add_flows(trace: TraceBuilder, calls: dict[int, int],
               works: list[tuple[list[int], Table]]) -> None:
    """A flow from each call to the dispatches and copies of its correlation id (``works``:
    the slice row of each row of a table, -1 where not read); those with no call in the API
    trace are counted."""
    orphans = 0
    for rows, table in works:
        for row, correlation in zip(rows, table.column("Correlation_Id"), strict=True):
            if row < 0:
                continue
            call = calls.get(integer(correlation) or -1)
            if call is None:
                orphans += 1
            else:
                trace.add_flow(call, row, "ac2g", "correlation")
    trace.diagnostics.add("rocprof.work_without_call", count=orphans)
