"""The tables of an rpd file into the model, a table at a time, in numpy columns.

=======================  ===========================================================
table                    becomes
=======================  ===========================================================
rocpd_api                slices on the calling thread: ``hip_runtime`` calls,
                         ``user_annotation`` roctx ranges (``UserMarker``, named by
                         their text), ``cpu_op`` for those ``ext_autogradapi`` lists,
                         ``overhead`` for rpd's own bookkeeping (``*::writeRows``)
rocpd_kernelapi          args of the launch call (kernel, grid, workgroup, segments)
rocpd_copyapi            args of the copy call (bytes, kind, src/dst, stream)
ext_autogradapi          args of the autograd op (seq, op_id, sizes, input_op_ids)
rocpd_op                 slices on a track per (GPU, queue): ``kernel`` (KernelExecution,
                         graph Task), ``gpu_memcpy`` (Copy*), ``gpu_memset`` (FillBuffer)
rocpd_api_ops            flows call → op
rocpd_op_inputSignals    flows op → op (dependencies)
rocpd_monitor            counter tracks per (device, monitor type)
=======================  ===========================================================
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice
from typing import Any

import numpy as np

from ...model import ProcessKind, Trace, TrackKind
from ...model.args import Args
from ...model.block_pairing import key_codes, pair_events
from ...model.block_table import coded_column
from ...model.builder import TraceBuilder
from ...model.memory import add_live_bytes_counters
from ...model.slice_index import SliceIndex, enclosing_rows
from ...numbers import saturated_int, to_int64
from .._bulk import BATCH, add_flows, add_intervals_by_batch, intern_texts, map_keys
from .._sqlite import Database

READ_TABLES = {"rocpd_api", "rocpd_op", "rocpd_api_ops", "rocpd_kernelapi", "rocpd_copyapi",
               "rocpd_monitor", "rocpd_string", "rocpd_metadata", "ext_autogradapi",
               "rocpd_op_inputSignals", "sqlite_sequence"}
_OWN_WORK = re.compile(r"::writeRows$|^rpdflush$|^hcc_activity_callback$")
_COPY_KINDS = {0: "HtoH", 1: "HtoD", 2: "DtoH", 3: "DtoD", 4: "Default"}
_OP_CATEGORIES = {"KernelExecution": "kernel", "Task": "kernel", "FillBuffer": "gpu_memset"}
_MONITOR_UNITS = {"sclk": "MHz", "mclk": "MHz", "power": "W", "temp": "°C"}
_ALLOCATE = {"hipMalloc", "hipMallocAsync", "hipMallocManaged", "hipExtMallocWithFlags",
             "hipMallocFromPoolAsync"}
_FREE = {"hipFree", "hipFreeAsync"}
_PTR = re.compile(r"ptr=(0x[0-9a-fA-F]+|\d+)")
_SIZE = re.compile(r"size=(0x[0-9a-fA-F]+|\d+)")
_DEVICE_SORT = 1 << 30
# Every column the reader takes a string id from, with what NULL reads as there: only the
# strings they name are read, not the whole string table
_STRING_IDS = (("rocpd_api", "apiName_id", -1), ("rocpd_api", "args_id", -1),
               ("rocpd_op", "description_id", -1), ("rocpd_op", "opType_id", -1),
               ("rocpd_kernelapi", "kernelName_id", 0))


class Places:
    """Processes per pid (threads as tracks) and per GPU (queues and counters as tracks)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._processes: dict[int, int] = {}
        self._threads: dict[tuple[int, int], int] = {}
        self._devices: dict[int, int] = {}
        self._queues: dict[tuple[int, int], int] = {}

    def process(self, pid: int) -> int:
        found = self._processes.get(pid)
        if found is None:
            found = self._processes[pid] = self.trace.add_process(
                f"process {pid}", pid=pid, sort_index=pid)
        return found

    def thread(self, key: int) -> int:
        """The track of ``pid << 32 | tid``."""
        pid, tid = key >> 32, key & 0xFFFFFFFF
        found = self._threads.get((pid, tid))
        if found is None:
            found = self._threads[(pid, tid)] = self.trace.add_track(
                f"thread {tid}", process=self.process(pid), tid=tid, sort_index=tid)
        return found

    def device(self, gpu: int) -> int:
        found = self._devices.get(gpu)
        if found is None:
            found = self._devices[gpu] = self.trace.add_process(
                f"GPU {gpu}", kind=ProcessKind.DEVICE, sort_index=_DEVICE_SORT + gpu)
        return found

    def queue(self, key: int) -> int:
        """The track of ``gpu << 32 | queue``."""
        gpu, queue = key >> 32, key & 0xFFFFFFFF
        found = self._queues.get((gpu, queue))
        if found is None:
            found = self._queues[(gpu, queue)] = self.trace.add_track(
                f"queue {queue}", process=self.device(gpu), kind=TrackKind.STREAM, tid=queue,
                sort_index=queue)
        return found


def read_database(db: Database, trace: TraceBuilder) -> None:
    """Fill ``trace`` from the rpd tables of ``db``."""
    for table in ("rocpd_api", "rocpd_op", "rocpd_string"):
        if table not in db.columns:
            from ...errors import InputError

            raise InputError(f"not an rpd trace: no {table} table", file=db.name)
    metadata = _metadata(db)
    trace.metadata.source_version = f"rpd schema {metadata.schema_version or '?'}"
    trace.metadata.attributes.update(metadata.model_dump(exclude_none=True))
    strings = db.named_texts("rocpd_string", "id", "string", _STRING_IDS)
    places = Places(trace)
    api_ids, api_rows, api_names, api_args = _read_api(db, trace, strings, places)
    op_ids, op_rows = _read_ops(db, trace, strings, places, api_ids, api_args)
    _read_flows(db, trace, api_ids, api_rows, op_ids, op_rows)
    _read_monitor(db, trace, places)
    _memory_blocks(trace, api_rows, api_names, api_args)
    _account_tables(db, trace)


def _metadata(db: Database) -> Any:
    from .schema import RpdMetadata

    rows = db.query("select tag, value from rocpd_metadata", "rocpd_metadata") if db.has(
        "rocpd_metadata", "tag", "value") else []
    return RpdMetadata.model_validate({str(t): str(v) for t, v in rows})


def _text_of(strings: dict[int, str], trace: Trace) -> Any:
    def text(string_id: int) -> str:
        found = strings.get(string_id)
        if found is None:
            trace.diagnostics.add("rpd.missing_string")
            return f"<string {string_id}>"
        return found
    return text


class _CallArgs:
    """The args of each API call, made when asked (a batch of rows at a time): the text rpd
    recorded (``args``), then what the side tables give for the calls they name (``extra``:
    a dict only for those calls). A UserMarker's text is its name, not an arg."""

    def __init__(self, texts: list[str], markers: np.ndarray) -> None:
        self.texts, self.markers = texts, markers
        self.extra: dict[int, dict[str, Any]] = {}

    def add(self, at: int, values: dict[str, Any]) -> None:
        """Add ``values`` to the args of the call at position ``at``."""
        self.extra[at] = {**self.extra.get(at, {}), **values}

    def __call__(self, part: slice) -> list[Args]:
        extra, texts, markers = self.extra, self.texts, self.markers[part].tolist()
        return [extra.get(i) or None if marker else
                {"args": texts[i], **extra.get(i, {})} if texts[i] else extra.get(i)
                for i, marker in zip(range(part.start, part.stop), markers, strict=True)]


def _read_api(db: Database, trace: TraceBuilder, strings: dict[int, str], places: Places
              ) -> tuple[np.ndarray, np.ndarray, list[str], _CallArgs]:
    """API calls; returns their ids, slice rows, names and args (in id order)."""
    rows = db.numeric_columns("rocpd_api", {
        "id": ("i8", 0), "pid": ("i8", 0), "tid": ("i8", 0), "start": ("i8", 0),
        "end": ("i8", 0), "apiName_id": ("i8", -1), "args_id": ("i8", -1)}, order="id")
    text = _text_of(strings, trace)
    api = [text(i) for i in rows["apiName_id"].tolist()]
    arg_texts = [strings.get(i, "") for i in rows["args_id"].tolist()]
    args = _CallArgs(arg_texts, np.fromiter((n == "UserMarker" for n in api), bool, len(api)))
    autograd = _autograd(db, rows["id"], args)
    _kernel_args(db, rows["id"], args, text)
    _copy_args(db, rows["id"], args)
    names, categories = [], []
    for i, (name, arg_text) in enumerate(zip(api, arg_texts, strict=True)):
        if name == "UserMarker":
            names.append(arg_text or name)
            categories.append("cpu_op" if i in autograd else "user_annotation")
        else:
            names.append(name)
            categories.append("overhead" if _OWN_WORK.search(name) else "hip_runtime")
    tracks = map_keys((rows["pid"] << 32) | (rows["tid"] & 0xFFFFFFFF), places.thread)
    slice_rows = add_intervals_by_batch(trace, tracks, rows["start"], rows["end"],
                                        intern_texts(trace, names),
                                        intern_texts(trace, categories), args)
    return rows["id"], slice_rows, api, args


def _calls_named(db: Database, sql: str, table: str, api_ids: np.ndarray
                 ) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """The rows of ``sql`` (an ``api_ptr_id`` first) as (the position of their call in the
    sorted ``api_ids``, the rest of the row), a batch at a time; rows naming no call are
    left out."""
    rows = db.iterate(sql, table)
    while batch := list(islice(rows, BATCH)):
        ids = [_id_of(row[0]) for row in batch]
        at = _positions(api_ids, np.array([-1 if i is None else i for i in ids], np.int64))
        at[[i is None for i in ids]] = -1
        for i, row in zip(at.tolist(), batch, strict=True):
            if i >= 0:
                yield i, row[1:]


def _id_of(value: Any) -> int | None:
    """A cell as an id: an integer, or a REAL that is one (None: no id).

    >>> _id_of(3), _id_of(3.0), _id_of(2.5), _id_of("3"), _id_of(1e300)
    (3, 3, None, None, None)
    """
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        return int(value)
    return value if isinstance(value, int) else None


def _autograd(db: Database, api_ids: np.ndarray, args: _CallArgs) -> set[int]:
    """Autograd op args (``ext_autogradapi``) on their UserMarker calls; returns those rows."""
    if not db.has("ext_autogradapi", "api_ptr_id"):
        return set()
    rows: set[int] = set()
    columns = [c for c in ("seq", "op_id", "sizes", "input_op_ids")
               if db.has("ext_autogradapi", c)]
    for i, values in _calls_named(
            db, f"select api_ptr_id{''.join(', ' + c for c in columns)} from ext_autogradapi",
            "ext_autogradapi", api_ids):
        rows.add(i)
        extra = {k: v for k, v in zip(columns, values, strict=True) if v not in (None, "")}
        if extra:
            args.add(i, extra)
    return rows


def _kernel_args(db: Database, api_ids: np.ndarray, args: _CallArgs, text: Any) -> None:
    """Launch geometry of kernel launch calls (``rocpd_kernelapi``)."""
    if not db.has("rocpd_kernelapi", "api_ptr_id"):
        return
    wanted = ("gridX", "gridY", "gridZ", "workgroupX", "workgroupY", "workgroupZ",
              "groupSegmentSize", "privateSegmentSize", "kernelName_id")
    values = ", ".join(db.expression("rocpd_kernelapi", c, 0) for c in wanted)
    stream = db.expression("rocpd_kernelapi", "stream", "")
    for i, (gx, gy, gz, wx, wy, wz, group, private, name, queue) in _calls_named(
            db, f"select api_ptr_id, {values}, {stream} from rocpd_kernelapi",
            "rocpd_kernelapi", api_ids):
        args.add(i, {"kernel": text(name), "grid": [gx, gy, gz], "workgroup": [wx, wy, wz],
                     "group segment size": group, "private segment size": private,
                     "stream": queue})


def _copy_args(db: Database, api_ids: np.ndarray, args: _CallArgs) -> None:
    """What copy calls asked for (``rocpd_copyapi``)."""
    if not db.has("rocpd_copyapi", "api_ptr_id"):
        return
    wanted = {"size": 0, "kind": -1, "src": "", "dst": "", "srcDevice": -1, "dstDevice": -1,
              "stream": "", "sync": 0, "pinned": 0}
    values = ", ".join(db.expression("rocpd_copyapi", c, d) for c, d in wanted.items())
    for i, (size, kind, src, dst, src_device, dst_device, queue, sync, pinned) in _calls_named(
            db, f"select api_ptr_id, {values} from rocpd_copyapi", "rocpd_copyapi", api_ids):
        args.add(i, {"bytes": size, "kind": _COPY_KINDS.get(kind, str(kind)), "src": src,
                     "dst": dst, "src device": src_device, "dst device": dst_device,
                     "stream": queue, "sync": bool(sync), "pinned": bool(pinned)})


def _read_ops(db: Database, trace: TraceBuilder, strings: dict[int, str], places: Places,
              api_ids: np.ndarray, api_args: _CallArgs) -> tuple[np.ndarray, np.ndarray]:
    """GPU work; returns op ids and slice rows (in id order)."""
    rows = db.numeric_columns("rocpd_op", {
        "id": ("i8", 0), "gpuId": ("i8", 0), "queueId": ("i8", 0), "sequenceId": ("i8", 0),
        "start": ("i8", 0), "end": ("i8", 0), "description_id": ("i8", -1),
        "opType_id": ("i8", -1)}, order="id")
    text = _text_of(strings, trace)
    types = [text(i) for i in rows["opType_id"].tolist()]
    descriptions = [strings.get(i, "") for i in rows["description_id"].tolist()]
    names = [d or t for d, t in zip(descriptions, types, strict=True)]
    categories = [_op_category(t) for t in types]
    unknown = sum(c == "gpu_op" for c in categories)
    trace.diagnostics.add("rpd.unknown_op_type", count=unknown)
    copy_bytes = _copy_bytes_of_ops(db, rows["id"], api_ids, api_args)
    tracks = map_keys((rows["gpuId"] << 32) | (rows["queueId"] & 0xFFFFFFFF), places.queue)

    def args(part: slice) -> list[Args]:
        return [{"op type": t} if b is None else {"op type": t, **b}
                for t, b in zip(types[part], copy_bytes[part], strict=True)]

    slice_rows = add_intervals_by_batch(trace, tracks, rows["start"], rows["end"],
                                        intern_texts(trace, names),
                                        intern_texts(trace, categories), args)
    return rows["id"], slice_rows


def _op_category(op_type: str) -> str:
    """The category of an op type.

    >>> _op_category("CopyHostToDevice"), _op_category("Task"), _op_category("Barrier")
    ('gpu_memcpy', 'kernel', 'gpu_op')
    """
    if op_type.startswith("Copy"):
        return "gpu_memcpy"
    return _OP_CATEGORIES.get(op_type, "gpu_op")


def _api_ops(db: Database) -> dict[str, np.ndarray]:
    if not db.has("rocpd_api_ops", "api_id", "op_id"):
        return {"api_id": np.zeros(0, np.int64), "op_id": np.zeros(0, np.int64)}
    return db.numeric_columns("rocpd_api_ops", {"api_id": ("i8", -1), "op_id": ("i8", -1)})


def _copy_bytes_of_ops(db: Database, op_ids: np.ndarray, api_ids: np.ndarray,
                       api_args: _CallArgs) -> list[dict[str, Any] | None]:
    """Per op, the bytes and kind of the copy call that enqueued it (None for others)."""
    found: list[dict[str, Any] | None] = [None] * len(op_ids)
    links = _api_ops(db)
    api_at = _positions(api_ids, links["api_id"])
    op_at = _positions(op_ids, links["op_id"])
    for a, o in zip(api_at.tolist(), op_at.tolist(), strict=True):
        if a >= 0 and o >= 0:
            call = api_args.extra.get(a)
            if call and "bytes" in call:
                found[o] = {"bytes": call["bytes"], "kind": call["kind"]}
    return found


def _positions(sorted_ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Where each of ``wanted`` is in ``sorted_ids`` (-1: absent).

    >>> _positions(np.array([3, 5, 9]), np.array([5, 4, 9, 10])).tolist()
    [1, -1, 2, -1]
    """
    if not len(sorted_ids):
        return np.full(len(wanted), -1, np.int64)
    at = np.minimum(np.searchsorted(sorted_ids, wanted), len(sorted_ids) - 1)
    return np.where(sorted_ids[at] == wanted, at, -1)


def _read_flows(db: Database, trace: Trace, api_ids: np.ndarray, api_rows: np.ndarray,
                op_ids: np.ndarray, op_rows: np.ndarray) -> None:
    """Call → op flows (``rocpd_api_ops``) and op → op dependencies (input signals)."""
    links = _api_ops(db)
    api_at, op_at = _positions(api_ids, links["api_id"]), _positions(op_ids, links["op_id"])
    ok = (api_at >= 0) & (op_at >= 0)
    add_flows(trace, api_rows[api_at[ok]], op_rows[op_at[ok]], "ac2g", "api_op")
    trace.diagnostics.add("rpd.dangling_api_op", count=int((~ok).sum()))
    if db.has("rocpd_op_inputSignals", "from_op_id", "to_op_id"):
        deps = db.numeric_columns("rocpd_op_inputSignals",
                                  {"from_op_id": ("i8", -1), "to_op_id": ("i8", -1)})
        src, dst = _positions(op_ids, deps["from_op_id"]), _positions(op_ids, deps["to_op_id"])
        ok = (src >= 0) & (dst >= 0)
        add_flows(trace, op_rows[src[ok]], op_rows[dst[ok]], "dependency", "input signal")
        trace.diagnostics.add("rpd.dangling_input_signal", count=int((~ok).sum()))


def _read_monitor(db: Database, trace: Trace, places: Places) -> None:
    """One counter track per (device, monitor type); a sample at each row's start, and one
    at the end of the last row (a value holds until the next row)."""
    if not db.has("rocpd_monitor", "monitorType", "start", "value"):
        return
    device_type = db.expression("rocpd_monitor", "deviceType", "")
    device_id = db.expression("rocpd_monitor", "deviceId", 0)
    end = db.expression("rocpd_monitor", "end", 0)
    series: dict[tuple[str, int, str], list[tuple[int, int, float]]] = {}
    bad = 0
    for kind, device, monitor, start, stop, value in db.iterate(
            f"select {device_type}, {device_id}, monitorType, start, {end}, value "
            "from rocpd_monitor order by start, id", "rocpd_monitor"):
        try:
            number = float(value)
            device = to_int64(device, "deviceId")   # (a REAL cell may be infinite)
        except (TypeError, ValueError):
            bad += 1
            continue
        if not isinstance(start, int):
            bad += 1
            continue
        stop = stop if isinstance(stop, int) and stop >= start else start
        series.setdefault((str(kind), device, str(monitor)), []).append(
            (start, stop, number))
    for (kind, device, monitor), samples in sorted(series.items()):
        process = places.device(device) if kind == "gpu" else places.process(device)
        track = trace.add_track(f"{monitor} ({kind} {device})", process=process,
                                kind=TrackKind.COUNTER, unit=_MONITOR_UNITS.get(monitor),
                                description=f"rocpd_monitor {monitor}")
        times = [s for s, _, _ in samples] + [samples[-1][1]]
        values = [v for _, _, v in samples] + [samples[-1][2]]
        trace.add_counter_series(track, times, values)
    trace.diagnostics.add("rpd.monitor_value_not_a_number", count=bad)
    trace.diagnostics.add("rpd.monitor_series_end", count=len(series))


def _memory_blocks(trace: Trace, api_rows: np.ndarray, names: list[str], args: _CallArgs
                   ) -> None:
    """hipMalloc/hipFree calls whose args (ptr, size) were recorded, paired by pointer as
    columns by the rule of every allocator log
    (:func:`~traceconv.model.block_pairing.pair_events`)."""
    starts = trace.slices.numpy("start")
    ends = starts + trace.slices.numpy("dur")
    unparsed = 0
    # per call paired: (its slice, allocates, pointer, size; 0 for a free)
    calls: list[tuple[int, bool, int, int]] = []
    rows = [i for i, n in enumerate(names) if n in _ALLOCATE or n in _FREE]
    for i in sorted(rows, key=lambda i: int(starts[api_rows[i]])):
        text = args.texts[i]   # (no UserMarker: its text is its name)
        pointer = _PTR.search(text)
        if pointer is None:
            unparsed += 1
            continue
        address = _number(pointer[1])
        if names[i] in _ALLOCATE:
            size = _SIZE.search(text)
            if size is None:
                unparsed += 1
                continue
            calls.append((i, True, address, _number(size[1])))
        elif address:   # (hipFree of a null pointer frees nothing)
            calls.append((i, False, address, 0))
    trace.diagnostics.add("rpd.allocation_without_args", count=unparsed)
    if not calls:
        return
    call_of, allocating, addresses, sizes = zip(*calls, strict=True)
    slices = api_rows[np.array(call_of, dtype=np.int64)]
    allocates = np.array(allocating, dtype=bool)
    paired = pair_events((key_codes(addresses),), allocates)
    paired.count(trace.diagnostics, "rpd")
    # (an allocation from its call's end, a free at its call's start)
    times = np.where(allocates, ends[slices], starts[slices])
    events = paired.block_events()
    alloc_ns, free_ns = paired.block_times(times, events)
    block_allocates = allocates[events]
    picked = events.tolist()
    # (a number past int64 is the builder's to leave out and count: object columns)
    trace.add_memory_columns(
        {"address": np.array([addresses[k] for k in picked], dtype=object),
         "size": np.array([sizes[k] for k in picked], dtype=object),
         "alloc_ns": alloc_ns, "free_ns": free_ns},
        {"device": "hip",
         "category": (["allocation", "allocated before trace"],
                      np.where(block_allocates, 0, 1)),
         "owner_name": _owner_names(trace, np.where(block_allocates, slices[events], -1))},
        [{"call": names[call_of[k]]} for k in picked])
    add_live_bytes_counters(trace)


def _number(text: str) -> int:
    """A ``ptr=`` or ``size=`` value (hex with ``0x``, else decimal) as an int, ±2**64 past
    :data:`~traceconv.numbers.MAX_DIGITS` digits (:func:`~traceconv.numbers.saturated_int`).

    >>> _number("0x7f00"), _number("4096"), _number("9" * 5000) == 2**64
    (32512, 4096, True)
    """
    hexadecimal = text[:2].lower() == "0x"
    return saturated_int(text[2:] if hexadecimal else text, 16 if hexadecimal else 10)


def _owner_names(trace: Trace, calls: np.ndarray) -> tuple[list[str | None], np.ndarray]:
    """Per allocation call (a slice row; -1: a block allocated before the trace), its
    owner: the innermost autograd op (``cpu_op``) around it on that thread, else the
    innermost roctx range there; None when neither. As (names, per call its number)."""
    owner = np.full(len(calls), -1, dtype=np.int64)
    made = calls >= 0
    tracks = trace.slices.numpy("track")[calls[made]]
    times = trace.slices.numpy("start")[calls[made]]
    found = enclosing_rows(SliceIndex(trace, "cpu_op"), tracks, times)
    owner[made] = np.where(found >= 0, found,
                           enclosing_rows(SliceIndex(trace, "user_annotation"), tracks, times))
    names = trace.slices.numpy("name")
    return coded_column(None if row < 0 else trace.strings[int(names[row])]
                        for row in owner.tolist())


def _account_tables(db: Database, trace: Trace) -> None:
    unread = [(t, n) for t in db.columns if t not in READ_TABLES and (n := db.count(t))]
    derived = [(t, n) for t, n in unread if t == "ext_callstack"]
    other = [(t, n) for t, n in unread if t != "ext_callstack"]
    trace.diagnostics.add("rpd.callstack_not_read", count=sum(n for _, n in derived))
    trace.diagnostics.add("rpd.table_not_read", count=sum(n for _, n in other),
                          example=", ".join(f"{t} ({n})" for t, n in other[:8]) or None)
