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

from collections.abc import Callable
from typing import Any

from ...model import ProcessKind, TrackKind

INT64 = 1 << 63
UINT64 = 1 << 64
_PROCESS_KINDS = frozenset(kind.value for kind in ProcessKind)
_TRACK_KINDS = frozenset(kind.value for kind in TrackKind)


class _Bad(Exception):
    """A part of the attribute that does not hold together; its text says where."""


Check = Callable[[Any, str], None]
# A check's test of a whole list at once (C-speed type and range tests): a list of a
# million block addresses is judged without a Python call per item; only a list that fails
# it is walked item by item, to name the first bad one.
_HOLDS_FOR_ALL: dict[Check, Callable[[list[Any]], bool]] = {}


def _with_bulk(check: Check, holds_for_all: Callable[[list[Any]], bool]) -> Check:
    _HOLDS_FOR_ALL[check] = holds_for_all
    return check


def _ints_within(items: list[Any], lo: int, hi: int) -> bool:
    return set(map(type, items)) <= {int} and (not items or lo <= min(items) and max(items) < hi)


def _fail(where: str, expected: str) -> None:
    raise _Bad(f"{where}: expected {expected}")


def _integer(lo: int, hi: int) -> Check:
    def check(value: Any, where: str) -> None:
        if type(value) is not int or not lo <= value < hi:
            _fail(where, f"an integer in [{lo}, {hi})")
    return _with_bulk(check, lambda items: _ints_within(items, lo, hi))


def _index(size: int) -> Check:
    def check(value: Any, where: str) -> None:
        if type(value) is not int or not 0 <= value < size:
            _fail(where, f"an index below {size}")
    return _with_bulk(check, lambda items: _ints_within(items, 0, size))


def _text(value: Any, where: str) -> None:
    if type(value) is not str:
        _fail(where, "a text")


_with_bulk(_text, lambda items: set(map(type, items)) <= {str})


def _optional(check: Check) -> Check:
    def optional(value: Any, where: str) -> None:
        if value is not None:
            check(value, where)
    bulk = _HOLDS_FOR_ALL.get(check)
    if bulk is None:
        return optional
    return _with_bulk(optional, lambda items: bulk([v for v in items if v is not None]))


def _one_of(values: frozenset[str]) -> Check:
    def check(value: Any, where: str) -> None:
        if type(value) is not str or value not in values:
            _fail(where, "one of " + ", ".join(sorted(values)))
    return check


def _number_or_text(value: Any, where: str) -> None:
    """An id the writer kept: a number, or its decimal text when beyond 64 bits."""
    if not (value is None or type(value) is str or type(value) is int
            and -INT64 <= value < UINT64):
        _fail(where, "an integer, its text or null")


def _list(value: Any, where: str, size: int | None = None) -> list[Any]:
    if type(value) is not list or size is not None and len(value) != size:
        _fail(where, "a list" if size is None else f"a list of {size}")
    return value  # type: ignore[no-any-return]


def _each(value: Any, where: str, check: Check) -> list[Any]:
    """``value``, a list whose every item passes ``check``; else the first bad item named.

    >>> _each([0, 5, 1 << 63, 2], "memory.size", _INT64)
    Traceback (most recent call last):
    ...
    traceconv.formats.perfetto.model_attribute_check._Bad: memory.size[2]: expected an integer in [-9223372036854775808, 9223372036854775808)
    >>> _each([None, 3, True], "memory.free_ns", _optional(_INT64))   # (a bool is no int)
    Traceback (most recent call last):
    ...
    traceconv.formats.perfetto.model_attribute_check._Bad: memory.free_ns[2]: expected an integer in [-9223372036854775808, 9223372036854775808)
    """
    items = _list(value, where)
    bulk = _HOLDS_FOR_ALL.get(check)
    if bulk is not None and bulk(items):
        return items
    for k, item in enumerate(items):
        check(item, f"{where}[{k}]")
    return items


def _row(value: Any, where: str, checks: tuple[Check, ...]) -> None:
    for k, (item, check) in enumerate(zip(_list(value, where, len(checks)), checks,
                                          strict=True)):
        check(item, f"{where}[{k}]")


def _dict(value: Any, where: str) -> dict[str, Any]:
    if type(value) is not dict:
        _fail(where, "an object")
    return value  # type: ignore[no-any-return]


def _object(value: Any, where: str) -> None:
    _dict(value, where)


_with_bulk(_object, lambda items: set(map(type, items)) <= {dict})


def _texts(value: Any, where: str) -> None:
    _each(value, where, _text)


_INT64 = _integer(-INT64, INT64)


def _numbers(value: Any, where: str) -> None:
    _each(value, where, _INT64)


_SHAPE = _optional(_numbers)
# MemoryBlock fields (see model_attribute._blocks): plain columns, then columns kept as
# [distinct values, an index per block]
_PLAIN_COLUMNS: dict[str, Check] = {
    "address": _INT64, "size": _INT64, "alloc_ns": _optional(_INT64),
    "free_ns": _optional(_INT64), "args": _object}
_INDEXED_COLUMNS: dict[str, Check] = {
    "device": _text, "pool": _text, "name": _text, "category": _text,
    "owner_op": _optional(_text), "owner_name": _optional(_text),
    "owner_tensor": _optional(_text), "dtype": _optional(_text), "shape": _SHAPE}


def _blocks(value: Any, where: str) -> None:
    if value is None:
        return
    columns = _dict(value, where)
    size = len(_list(columns.get("address"), f"{where}.address"))
    for name, check in _PLAIN_COLUMNS.items():
        _each(_list(columns.get(name), f"{where}.{name}", size), f"{where}.{name}", check)
    for name, check in _INDEXED_COLUMNS.items():
        place = f"{where}.{name}"
        values, index = _list(columns.get(name), place, 2)
        _each(values, f"{place}[0]", check)
        _each(_list(index, f"{place}[1]", size), f"{place}[1]", _index(len(values)))


def _diagnostic(value: Any, where: str) -> None:
    # (code, count and example are the carried-diagnostic rule's to judge, in one place:
    # an unknown code or a bad count is counted as input.unknown_diagnostic, not a reason
    # to distrust the rest of the attribute)
    _dict(value, where)


def _flows(value: Any, where: str, flow_ids: int) -> None:
    total = 0
    for k, run in enumerate(_list(value, where)):
        _row(run, f"{where}[{k}]", (_integer(1, INT64), _text, _text))
        total += run[0]
        if total > flow_ids:   # (a run's count is what flow_labels allocates)
            _fail(f"{where}[{k}][0]", f"at most {flow_ids} flows in all, as the file has "
                  f"{flow_ids} flow ids")


def _metadata(value: Any, where: str) -> None:
    saved = _dict(value, where)
    for name in ("source_format", "source_version", "framework", "clock"):
        _optional(_text)(saved.get(name), f"{where}.{name}")
    for name in ("rank", "clock_base_ns", "world_size"):
        _number_or_text(saved.get(name), f"{where}.{name}")
    if not isinstance(saved.get("devices"), list | None):
        _fail(f"{where}.devices", "a list")
    _optional(_object)(saved.get("run"), f"{where}.run")
    _optional(_object)(saved.get("attributes"), f"{where}.attributes")


def _check(data: Any, flow_ids: int, version: int) -> None:
    data = _dict(data, "the attribute")
    if data.get("version") != version or type(data.get("version")) is not int:
        _fail("version", str(version))
    _integer(0, UINT64)(data.get("base"), "base")
    processes = _list(data.get("processes"), "processes")
    for k, process in enumerate(processes):
        _row(process, f"processes[{k}]", (_text, _one_of(_PROCESS_KINDS), _number_or_text,
                                          _number_or_text, _texts))
    tracks = _list(data.get("tracks"), "tracks")
    in_process, parent = _index(len(processes)), _optional(_index(len(tracks)))
    for k, track in enumerate(tracks):
        _row(track, f"tracks[{k}]", (_text, in_process, _one_of(_TRACK_KINDS),
                                     _number_or_text, _number_or_text, _optional(_text),
                                     _optional(_text), parent))
    _optional(_metadata)(data.get("metadata"), "metadata")
    _flows(data.get("flows") or [], "flows", flow_ids)
    _each(data.get("dotted") or [], "dotted", _text)
    _each(data.get("diagnostics") or [], "diagnostics", _diagnostic)
    # (its rows are the statistics rule's to judge: traceconv/model/stats_record.py)
    if data.get("stats") is not None:
        _list(data["stats"], "stats")
    _blocks(data.get("memory"), "memory")
    _blocks(data.get("reservations"), "reservations")


def problem(data: Any, *, flow_ids: int, version: int = 1) -> str | None:
    """Where the decoded attribute ``data`` does not hold together (None: nowhere), for
    a file with ``flow_ids`` flow ids on its events."""
    try:
        _check(data, flow_ids, version)
    except _Bad as bad:
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
