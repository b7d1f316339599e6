"""What a ``.pftrace`` cannot say about the model, kept in one trace attribute.

Perfetto has no words for a process's kind (host or device), a track's kind, a flow's
category and name, or an argument name with a dot (written as nested dicts, see
:mod:`.annotations`). The writer puts them in the trace attribute ``traceconv.model`` (one
JSON text) and the reader, finding it in a file traceconv wrote, gives back the model the
file came from: same processes and tracks (lane tracks folded back into their home track),
same metadata and reading diagnostics, flows with their labels, dotted names flat again, and
the memory blocks (which Perfetto shows only as the live-bytes counters made of them).

>>> from traceconv.model import Trace
>>> t = Trace(); _ = t.add_track("main", process=t.add_process("python", pid=7), tid=7)
>>> described = describe(t, base=64)
>>> described["processes"], described["tracks"], described["base"]
([['python', 'host', 7, None, []]], [['main', 0, 'thread', 7, None, None, None, None]], 64)
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import orjson

from ...model import Trace
from ...model.block_record import block_columns, record_text
from ...model.graph_record import graph_record
from ...model.json_values import json_text, jsonable
from ...model.metadata_record import metadata_record
from ...model.stats_record import stats_record
from .dotted_names import DottedNames, expanded
from .model_attribute_check import problem
from .model_attribute_check import time_shift as checked_shift

ATTRIBUTE = "traceconv.model"
VERSION = 1
# DebugAnnotation has no null and no empty value: the writer writes this field (unknown to
# trace_processor, which skips it) instead of a value, saying which of the three it is.
SPELLED_MARK = 2047
SPELLED_NULL, SPELLED_LIST, SPELLED_DICT = 0, 1, 2
# The same field on a dict the writer made of dotted names (``est. a`` → ``est`` → `` a``):
# the reader makes exactly those flat again.
NESTED_MARK = 3


def describe(trace: Trace, base: int, reversed_flows: Sequence[int] = ()) -> dict[str, Any]:
    """The attribute's content for ``trace`` whose uuids start at ``base`` and whose flows
    ``reversed_flows`` (ids) the file gives reversed, target first. (Its
    ``dotted``, the argument names written as nested dicts, is empty since the writer marks
    the dicts it makes (:data:`NESTED_MARK`); a file written before lists them.)"""
    return {**_described(trace, base, reversed_flows), "memory": block_columns(trace.memory),
            "reservations": block_columns(trace.reservations)}


def _described(trace: Trace, base: int, reversed_flows: Sequence[int]) -> dict[str, Any]:
    """:func:`describe` but the memory blocks and reservations (:data:`_BLOCK_LISTS`)."""
    meta = trace.metadata
    return {
        "version": VERSION, "base": base,
        "processes": [[p.name, p.kind.value, p.pid, p.sort_index, list(p.labels)]
                      for p in trace.processes],
        "tracks": [[t.name, t.process, t.kind.value, t.tid, t.sort_index, t.unit, t.description,
                    t.parent] for t in trace.tracks],
        "metadata": {**metadata_record(meta), "attributes": jsonable(meta.attributes)},
        "flows": _flow_labels(trace),
        "backwards": list(reversed_flows),
        "dotted": [],
        "diagnostics": trace.diagnostics.as_list(),
        "stats": stats_record(trace.stats),
        "graph": graph_record(trace),
    }


_BLOCK_LISTS = ("memory", "reservations")   # the attribute's last keys, written field by field


def encode(trace: Trace, base: int, reversed_flows: Sequence[int] = ()) -> Iterator[bytes]:
    """:func:`describe` as JSON text, in pieces made as they are asked for (an integer
    beyond 64 bits, which a fuzzed input can give a pid or a rank, as its decimal text).
    The memory blocks are made into text :data:`~traceconv.model.block_record.CHUNK` values at a time, so a trace of
    10^7 blocks never holds a field as a list, nor more than a piece of the text (the
    writer asks twice: once for the size, once to write).

    >>> from traceconv.model import Trace
    >>> t = Trace(); _ = t.add_process("p", pid=2**70)
    >>> decode(b"".join(encode(t, 0)).decode(), flow_ids=0)[0]["processes"][0][2]
    '1180591620717411303424'
    """
    yield b"{"
    for key, value in _described(trace, base, reversed_flows).items():
        yield json_text(key) + b":" + json_text(value) + b","
    for n, key in enumerate(_BLOCK_LISTS):
        yield json_text(key) + b":"
        yield from record_text(getattr(trace, key))
        yield b"," if n + 1 < len(_BLOCK_LISTS) else b"}"


def decode(text: str, *, flow_ids: int, time_shift: Any = None
           ) -> tuple[dict[str, Any] | None, str | None]:
    """The attribute read back, with the ``time_shift_ns`` attribute ``time_shift`` as its
    ``"shift"``, for a file whose events carry ``flow_ids`` flow ids; or (None, where it
    does not hold together) when it is not one this reader knows or any part of it fails
    the checks of :mod:`.model_attribute_check` (the file is then read as any Perfetto
    trace).

    >>> decode('{"version": 1, "base": 0, "processes": [["p"]], "tracks": []}', flow_ids=0)
    (None, 'processes[0]: expected a list of 5')
    >>> decode('{"version": 1, "base": 0, "processes": [], "tracks": []}', flow_ids=0,
    ...        time_shift="12")
    (None, 'time_shift_ns: expected an integer in [0, 2^63)')
    """
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return None, "not JSON"
    found = problem(data, flow_ids=flow_ids, version=VERSION)
    shift = checked_shift(time_shift)
    if found is None and shift is None:
        found = "time_shift_ns: expected an integer in [0, 2^63)"
    if found is not None:
        return None, found
    for part in ("flows", "backwards", "dotted", "diagnostics"):   # (parts a writer may leave out)
        data[part] = data.get(part) or []
    data["metadata"] = data.get("metadata") or {}
    data["shift"] = shift
    return data, None


def _flow_labels(trace: Trace) -> list[list[Any]]:
    """Flow (category, name) in flow order, run-length encoded: [[count, category, name]]."""
    strings = trace.strings.strings
    runs: list[list[Any]] = []
    for category, name in zip(trace.flows.category, trace.flows.name, strict=True):
        if runs and runs[-1][1] == category and runs[-1][2] == name:
            runs[-1][0] += 1
        else:
            runs.append([1, category, name])
    return [[count, strings[c], strings[n]] for count, c, n in runs]


def flow_labels(runs: list[list[Any]]) -> list[tuple[str, str]]:
    """The (category, name) of each flow, from :func:`_flow_labels`'s runs.

    >>> flow_labels([[2, "ac2g", ""], [1, "fwdbwd", "fwdbwd"]])
    [('ac2g', ''), ('ac2g', ''), ('fwdbwd', 'fwdbwd')]
    """
    out: list[tuple[str, str]] = []
    for count, category, name in runs:
        out += [(str(category), str(name))] * int(count)
    return out


def flatten_dotted(args: Iterable[tuple[str, Any]], dotted: DottedNames) -> dict[str, Any]:
    """The (name, value) pairs ``args`` as a dict with the dicts that the writer made of
    dotted names flat again: marked ones (:class:`.dotted_names.NestedGroup`), or in a file
    written before the marks, those that ``dotted`` names (a name given twice keeps its
    last value).

    >>> flatten_dotted([("est", {" achieved occupancy %": 50}), ("grid", [1])],
    ...                DottedNames({"est. achieved occupancy %"}))
    {'grid': [1], 'est. achieved occupancy %': 50}
    """
    out: dict[str, Any] = {}
    nested: list[tuple[str, Any]] = []
    for key, value in expanded(args):
        if isinstance(value, dict) and dotted.nests(key):
            nested.append((key, value))
        else:
            out[key] = value
    for key, value in nested:
        _flatten_into(out, key, value, dotted)
    return out


def _flatten_into(out: dict[str, Any], prefix: str, value: dict[str, Any],
                  dotted: DottedNames) -> None:
    for key, item in value.items():
        name = f"{prefix}.{key}"
        if name in dotted:
            out[name] = item
        elif isinstance(item, dict) and dotted.nests(name):
            _flatten_into(out, name, item, dotted)
        else:
            out[name] = item
