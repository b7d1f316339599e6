"""trace_processor's slice stack on one track (its ``SliceTracker``), replayed by the
checkers that tell what Perfetto drops or ends early: the Chrome JSON checker per thread,
the protobuf checker per track (TrackEvent BEGIN/END and the legacy phases ``X``, ``B``,
``E``, ``I``); one replay, so both say the same of the same slices."""

from __future__ import annotations

import operator
from typing import Any

NO_TEXT = -1    # an E event's name or category left out (it matches any)


class SliceStack:
    """The importer's slice stack on one thread (trace_processor's ``SliceTracker``:
    ``MaybeCloseStack``, ``StartSlice``, ``CompleteSlice``), kept as it keeps it: each
    open slice's start, end (None while a B is open), name and category.

    >>> replay = SliceStack()
    >>> replay.push(0, 10, NO_TEXT, NO_TEXT); replay.push(2, None, 7, NO_TEXT)   # X, B
    >>> replay.close_before(12, 0), replay.misplaced, replay.stack   # the X ended the B
    (True, 1, [])
    """

    def __init__(self) -> None:
        self.stack: list[list[Any]] = []   # [start, end or None, name, category]
        self.nested = True   # each slice on the stack ends within the one below, none a B
        self.misplaced = 0

    def push(self, ts: int, dur: int | None, name: int, category: int) -> None:
        """A slice kept: an X (or instant) of ``dur``, or a B (``dur`` None)."""
        stack = self.stack
        end = None if dur is None else ts + dur
        self.nested = self.nested and end is not None and (
            not stack or stack[-1][1] is not None and end <= stack[-1][1])
        stack.append([ts, end, name, category])

    def close_before(self, ts: int, dur: int | None) -> bool:
        """Pop what ends before an event at ``ts`` of ``dur`` (None: a B or E); False when
        that event is an X partially overlapping an open slice (the importer drops it).

        Walked from the top as the importer walks it: a B still open above an X that has
        ended is ended at that X's end, with all above it (``misplaced``); a slice that
        ended pops the top of the stack."""
        stack = self.stack
        while self.nested and stack:   # X in X: only the top can end or be overlapped
            start, end = stack[-1][:2]
            if end < ts or (end == ts and not (end == start and dur == 0)):
                stack.pop()
            elif end > ts:
                return dur is None or ts + dur <= end
            else:   # (a slice of no length at ts, below which one may end: walk)
                break
        open_above = False
        i = len(stack) - 1
        while i >= 0:
            start, end, *_ = stack[i]
            if end is None:
                open_above = True
            elif open_above:
                if ts > end:
                    self.misplaced += 1
                    del stack[i:]   # (those above are ended at ``end``)
                    open_above = False
            elif end < ts or (end == ts and not (end == start and dur == 0)):
                stack.pop()
            elif dur is not None and ts < end < ts + dur:
                self._check_nested()
                return False
            i -= 1
        self._check_nested()
        return True

    def _check_nested(self) -> None:
        """After a walk the importer's way (which can leave an ended slice below one that
        has not: it pops the top when a lower slice ends), whether the stack is nested."""
        ends = [entry[1] for entry in self.stack]
        self.nested = None not in ends and all(map(operator.ge, ends, ends[1:]))

    def end(self, ts: int, name: int, category: int) -> bool | None:
        """An E at ``ts``: the topmost open B it matches ends (popped when it is the top:
        True; False when slices above it stay open); None when it matches none."""
        stack = self.stack
        for i in range(len(stack) - 1, -1, -1):
            entry = stack[i]
            if entry[1] is not None:
                continue
            if category != NO_TEXT and entry[3] != category:
                continue
            if name != NO_TEXT and entry[2] != NO_TEXT and entry[2] != name:
                continue
            entry[1] = ts
            if i == len(stack) - 1:
                stack.pop()
                self._check_nested()
                return True
            return False
        return None

    @property
    def unterminated(self) -> int:
        """B slices still open at the end of the trace."""
        return sum(entry[1] is None for entry in self.stack)
