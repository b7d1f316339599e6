"""The arrows Perfetto's JSON importer draws from a Chrome trace's flow events, and the flow
events it drops, as trace_processor v52 makes them (its JSON parser and ``FlowTracker``).

Read from trace_processor's source and held against it on seeded random mixes
(``tests/chrome_flow_mixes.py``):

* a v1 flow (``s``, ``t``, ``f``) is known by its ``id``, category and name; a v2 flow by
  the ``bind_id`` of an ``X``, ``B``, ``b`` or ``n`` event. An id is an integer of int64
  (read as unsigned: -1 is 2**64 - 1) or hex text as ``strtoull`` reads it (spaces, a
  sign, ``0x``; too large is 2**64 - 1); anything else (a fraction, a larger integer, empty
  text) is no id and the event is dropped. A category or name that is not a non-empty
  string is none.
* the importer numbers v1 flows 0, 1, 2, ... as it first meets them and takes a ``bind_id``
  as the number itself, so a v1 flow and a v2 id of its number are one flow.
* a start (``s``, ``flow_out``) remembers the slice on top of its thread's stack (or its
  async track's); a flow already started is not started again (``flow_duplicate_id``): an
  ``f`` does not close its flow, so an id used again after it is such a duplicate.
* a step (``t``, ``flow_in`` and ``flow_out``) and an end (``f`` with ``"bp": "e"``,
  ``flow_in``) draw an arrow from the flow's last slice to the one on top of the stack
  (the step then moves the flow there), or are dropped when the flow was never started.
  Any of these with no slice on the stack is dropped (``flow_no_enclosing_slice``).
* another ``f`` waits for the next slice begun on its thread; then it draws its arrow from
  the flow's last slice or, for a flow never started, from the trace's first slice (what
  the importer's map of flows holds for an id it lacks), and the flow counts as started.

Besides the importer's own reasons, ``check`` names the flow events that draw nothing
without a word from it: starts that nothing follows, and ``f`` events after which no slice
begins on their thread.

>>> events = FlowEvents()
>>> start = events.add(0, 1, 0, 0, BEGIN, ("v1", 7, "c", None))
>>> end = events.add(9, 1, 0, 1, END, ("v1", 7, "c", None))
>>> events.bind(start, True); events.bind(end, True)
>>> tally = events.tally(); tally.arrows, tally.dropped
(1, {})
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np

BEGIN, STEP, END, END_NEXT = range(4)
_OWN, _BINDING = 1, 0   # at one place in the importer's order, a binding comes first
_UINT64 = 1 << 64
# strtoull(text, 16) as the importer calls it, which must read the whole text: spaces, a
# sign, 0x and hex digits (0x alone reads as 0 there)
_HEX = re.compile(r" *([+-]?)(0[xX])?([0-9a-fA-F]*)")


def flow_number(value: Any) -> int | None:
    """A flow ``id`` or ``bind_id`` as the importer reads it; None when it reads none.

    >>> flow_number(5), flow_number(-1) == 2**64 - 1, flow_number("0x10"), flow_number(" 10")
    (5, True, 16, 16)
    >>> flow_number(1.5), flow_number(2**63), flow_number(""), flow_number("q"), flow_number(True)
    (None, None, None, None, None)
    >>> flow_number("0x"), flow_number("1" * 17) == flow_number("-1") == 2**64 - 1
    (0, True)
    >>> flow_number("-0x10") == 2**64 - 16, flow_number("-" + "1" * 17) == 2**64 - 1
    (True, True)
    """
    if isinstance(value, bool | float | Decimal):
        return None   # (a JSON number with a fraction or an exponent is a double to it)
    if isinstance(value, int):
        return value % _UINT64 if -(1 << 63) <= value < (1 << 63) else None
    if not isinstance(value, str):
        return None
    match = _HEX.fullmatch(value)
    if match is None or not match.group(2) and not match.group(3):
        return None
    number = int(match.group(3) or "0", 16)
    if number >= _UINT64:
        return _UINT64 - 1   # (out of range: saturated, whatever the sign)
    return (-number) % _UINT64 if match.group(1) == "-" else number


def flow_text(value: Any) -> str | None:
    """A category or name as a flow's key: none unless a non-empty string.

    >>> flow_text("gpu"), flow_text(""), flow_text(5)
    ('gpu', None, None)
    """
    return value if isinstance(value, str) and value else None


def v2_operation(event: dict) -> int | None:
    """What a ``bind_id`` does by ``flow_in`` / ``flow_out`` (each only when ``true``);
    None when neither is.

    >>> v2_operation({"flow_out": True}), v2_operation({"flow_in": True, "flow_out": True})
    (0, 1)
    >>> v2_operation({"flow_in": 1}) is None
    True
    """
    flow_in, flow_out = event.get("flow_in") is True, event.get("flow_out") is True
    if flow_in and flow_out:
        return STEP
    if flow_out:
        return BEGIN
    return END if flow_in else None


@dataclass
class FlowTally:
    """Arrows drawn, and flow events that draw none, by reason (codes of ``check``), each
    with the file index of its first example."""

    arrows: int = 0
    dropped: dict[str, int] = field(default_factory=dict)
    examples: dict[str, int] = field(default_factory=dict)
    shared_ids: int = 0   # bind_ids that are numbers the importer gave v1 flows: one flow

    def count(self, code: str, index: int) -> None:
        self.dropped[code] = self.dropped.get(code, 0) + 1
        self.examples.setdefault(code, index)


class FlowEvents:
    """The flow events of a trace as columns (a few dozen bytes each): the flow each
    belongs to, what it does, its place in the importer's order (time, rank, minus duration,
    file index) and the place where it acts (its own, or for an ``f`` waiting for the next
    slice, that slice's), and whether a slice was there to bind to."""

    def __init__(self) -> None:
        self.keys: dict[tuple, int] = {}   # ("v1", id, category, name) or ("v2", id): a number
        self.key, self.operation = array("q"), bytearray()
        self.own = tuple(array("q") for _ in range(4))   # ts, rank, -dur, index
        self.at = tuple(array("q") for _ in range(5))    # the same and _OWN / _BINDING
        self.bound = bytearray()

    def __len__(self) -> int:
        return len(self.operation)

    def add(self, ts: int, rank: int, dur: int, index: int, operation: int, key: tuple) -> int:
        """One flow event (``key`` as in :attr:`keys`); returns its slot."""
        self.key.append(self.keys.setdefault(key, len(self.keys)))
        self.operation.append(operation)
        for column, value in zip(self.own, (ts, rank, -dur, index), strict=True):
            column.append(value)
        for column, value in zip(self.at, (ts, rank, -dur, index, _OWN), strict=True):
            column.append(value)
        self.bound.append(0)
        return len(self.operation) - 1

    def bind(self, slot: int, bound: bool) -> None:
        """Whether a slice was on top of the stack where the event acts."""
        self.bound[slot] = bound

    def bind_next(self, slot: int, ts: int, rank: int, dur: int, index: int) -> None:
        """An ``f`` waiting for the next slice: the slice begun (its place in the order)."""
        for column, value in zip(self.at, (ts, rank, -dur, index, _BINDING), strict=True):
            column[slot] = value
        self.bound[slot] = 1

    def _numbers(self) -> tuple[np.ndarray, int]:
        """Each event's flow number (v1 flows numbered as the importer first meets them, a
        ``bind_id`` itself, as a Python int: it may pass int64), and how many v1 flows."""
        kinds = list(self.keys)
        key = np.frombuffer(self.key, dtype=np.int64)
        codes, first = np.unique(key[_order(self.own)], return_index=True)   # first met
        v1 = np.array([kinds[code][0] == "v1" for code in codes.tolist()], dtype=bool)
        numbers = np.empty(len(kinds), dtype=object)
        v1_codes = codes[v1][np.argsort(first[v1], kind="stable")]
        numbers[v1_codes] = range(len(v1_codes))
        for code, kind in enumerate(kinds):
            if kind[0] == "v2":
                numbers[code] = kind[1]
        return numbers[key], len(v1_codes)

    def tally(self) -> FlowTally:
        """Replay the importer's flow tracker over the events in the order they act."""
        tally = FlowTally()
        if not len(self):
            return tally
        numbers, v1_flows = self._numbers()
        order = _order(self.at)
        columns = (numbers[order], np.frombuffer(self.operation, dtype=np.uint8)[order],
                   np.frombuffer(self.own[3], dtype=np.int64)[order],
                   np.frombuffer(self.bound, dtype=np.uint8)[order])
        # flow number: the index of its start while nothing followed it, else -1
        started: dict[Any, int] = {}
        for number, what, where, bound in zip(*(c.tolist() for c in columns), strict=True):
            if what == END_NEXT:
                if not bound:
                    tally.count("flow_end_without_next_slice", where)
                    continue
                if number not in started:
                    tally.count("flow_from_first_slice", where)
                started[number] = -1
                tally.arrows += 1
            elif not bound:
                tally.count("flow_not_bound", where)
            elif what == BEGIN:
                if number in started:
                    tally.count("flow_duplicate_start", where)
                else:
                    started[number] = where
            elif number in started:
                started[number] = -1
                tally.arrows += 1
            else:
                tally.count("flow_unpaired", where)
        for where in sorted(started.values()):
            if where >= 0:
                tally.count("flow_start_unfollowed", where)
        tally.shared_ids = sum(1 for kind in self.keys
                               if kind[0] == "v2" and kind[1] < v1_flows)
        return tally


def _order(columns: tuple[array, ...]) -> np.ndarray:
    """The order of rows given as columns, the first the most significant."""
    return np.lexsort(tuple(np.frombuffer(c, dtype=np.int64) for c in columns[::-1]))
