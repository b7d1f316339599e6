"""The ``traceconv.model`` attribute checked before any of it is used.

The attribute is part of the input: a file can say anything in it. Every part the reader
uses is checked here for its type, its range and its count against the file (a flow label
run cannot name more flows than the file has flow ids, an index must point into its list,
a diagnostic is an object, its code and count judged by ``Diagnostics.add_carried``'s one
rule), so that the reader only ever sees an attribute that holds together; otherwise :func:`problem` names the first part that does
not and the file is read as any Perfetto trace. The check is one pass over the decoded
JSON and allocates nothing in proportion to a number the file gives.

>>> problem({"version": 1, "base": 0, "processes": [], "tracks": [[]]}, flow_ids=0)
'tracks[0]: expected a list of 8'
>>> problem({"version": 1, "base": 0, "processes": [["p", "host", 1, None, []]],
...          "tracks": [["t", 1.0, "thread", 1, None, None, None, None]]}, flow_ids=0)
'tracks[0][1]: expected an index below 1'
"""

from __future__ import annotations

from typing import Any

from ...model import ProcessKind, TrackKind
from ...model.block_record import check_blocks
from ...model.record_check import (
    INT64,
    UINT64,
    Bad,
    a_dict,
    a_list,
    a_row,
    a_text,
    an_object,
    each,
    fail,
    index_below,
    integer_in,
    number_or_text,
    one_of,
    optional,
    texts,
)

_PROCESS_KINDS = frozenset(kind.value for kind in ProcessKind)
_TRACK_KINDS = frozenset(kind.value for kind in TrackKind)


def _diagnostic(value: Any, where: str) -> None:
    # (code, count and example are the carried-diagnostic rule's to judge, in one place:
    # an unknown code or a bad count is counted as input.unknown_diagnostic, not a reason
    # to distrust the rest of the attribute)
    a_dict(value, where)


def _flows(value: Any, where: str, flow_ids: int) -> None:
    total = 0
    for k, run in enumerate(a_list(value, where)):
        a_row(run, f"{where}[{k}]", (integer_in(1, INT64), a_text, a_text))
        total += run[0]
        if total > flow_ids:   # (a run's count is what flow_labels allocates)
            fail(f"{where}[{k}][0]", f"at most {flow_ids} flows in all, as the file has "
                  f"{flow_ids} flow ids")


def _metadata(value: Any, where: str) -> None:
    saved = a_dict(value, where)
    for name in ("source_format", "source_version", "framework", "clock"):
        optional(a_text)(saved.get(name), f"{where}.{name}")
    for name in ("rank", "clock_base_ns", "world_size"):
        number_or_text(saved.get(name), f"{where}.{name}")
    if not isinstance(saved.get("devices"), list | None):
        fail(f"{where}.devices", "a list")
    optional(an_object)(saved.get("run"), f"{where}.run")
    optional(an_object)(saved.get("attributes"), f"{where}.attributes")


def _check(data: Any, flow_ids: int, version: int) -> None:
    data = a_dict(data, "the attribute")
    if data.get("version") != version or type(data.get("version")) is not int:
        fail("version", str(version))
    integer_in(0, UINT64)(data.get("base"), "base")
    processes = a_list(data.get("processes"), "processes")
    for k, process in enumerate(processes):
        a_row(process, f"processes[{k}]", (a_text, one_of(_PROCESS_KINDS), number_or_text,
                                          number_or_text, texts))
    tracks = a_list(data.get("tracks"), "tracks")
    in_process, parent = index_below(len(processes)), optional(index_below(len(tracks)))
    for k, track in enumerate(tracks):
        a_row(track, f"tracks[{k}]", (a_text, in_process, one_of(_TRACK_KINDS),
                                     number_or_text, number_or_text, optional(a_text),
                                     optional(a_text), parent))
    optional(_metadata)(data.get("metadata"), "metadata")
    _flows(data.get("flows") or [], "flows", flow_ids)
    each(data.get("backwards") or [], "backwards", integer_in(1, INT64))
    each(data.get("dotted") or [], "dotted", a_text)
    each(data.get("diagnostics") or [], "diagnostics", _diagnostic)
    # (its rows are the statistics rule's to judge: traceconv/model/stats_record.py)
    if data.get("stats") is not None:
        a_list(data["stats"], "stats")
    # (the graph is the graph rule's to judge, once the slices are in: model/graph_record.py)
    check_blocks(data.get("memory"), "memory")
    check_blocks(data.get("reservations"), "reservations")


def problem(data: Any, *, flow_ids: int, version: int = 1) -> str | None:
    """Where the decoded attribute ``data`` does not hold together (None: nowhere), for
    a file with ``flow_ids`` flow ids on its events."""
    try:
        _check(data, flow_ids, version)
    except Bad as bad:
        return str(bad)
    return None


def time_shift(value: Any) -> int | None:
    """The ``time_shift_ns`` attribute (what the writer added to every timestamp) as a
    number of ns, or None when it is not one (a text, negative, past int64).

    >>> time_shift(None), time_shift(5), time_shift("5"), time_shift(-1)
    (0, 5, None, None)
    """
    if value is None:
        return 0
    return value if type(value) is int and 0 <= value < INT64 else None
