"""Lanes for one home track's slices, one slice at a time, in O(n log n).

Each slice, in walk order (start, then longest first), goes to the first lane whose stack
it nests in: after the lane's slices that ended by its start are closed, it lies inside
the innermost one still open (or the lane is empty) and fewer than ``max_depth + 1`` are
open. Trying lane after lane costs a pass over the lanes per slice: quadratic when every
slice overlaps the one before (a "staircase" of n slices needs n lanes). Here a tree over
the lanes keeps, per subtree, the most room any of its lanes offers (the end of its
innermost open slice; none when full, unbounded when empty), so the first lane with room
is found in one descent; a heap of ends tells which lanes to close as time passes.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

_EMPTY = float("inf")    # room of a lane with no open slice: anything nests there
_FULL = float("-inf")    # room of a lane with max_depth + 1 open slices: nothing does


def first_fit_lanes(starts: Sequence[int], ends: Sequence[int], max_depth: int,
                    carried: dict[int, list[int]] | None = None) -> list[int]:
    """The lane (0, 1, ...) of each slice of one home track, slices in walk order;
    ``carried``: lane -> ends of the slices open on it before the first slice (outermost
    first), that stay where they are.

    >>> first_fit_lanes([0, 1, 2, 5], [10, 11, 12, 6], max_depth=5)   # a staircase
    [0, 1, 2, 0]
    >>> first_fit_lanes([0, 0, 0], [9, 9, 9], max_depth=1)   # two fit on a lane
    [0, 0, 1]
    >>> first_fit_lanes([3], [8], max_depth=5, carried={0: [5]})
    [1]
    """
    carried = carried or {}
    stacks: list[list[int]] = [[] for _ in range(max(carried, default=-1) + 1)]
    leaves = 1 << (len(stacks) + len(starts)).bit_length()   # more than lanes can be used
    room = [_EMPTY] * (2 * leaves)   # a max-tree: room[leaves + lane] is the lane's
    closing: list[tuple[int, int]] = []   # (end, lane) of every open slice

    def set_room(lane: int) -> None:
        stack = stacks[lane]
        at = leaves + lane
        room[at] = _EMPTY if not stack else stack[-1] if len(stack) <= max_depth else _FULL
        at >>= 1
        while at:
            most = max(room[2 * at], room[2 * at + 1])
            if room[at] == most:
                break   # (nothing above changes either)
            room[at] = most
            at >>= 1

    for lane, open_ends in carried.items():
        stacks[lane] = list(open_ends)
        for end in open_ends:
            heapq.heappush(closing, (end, lane))
        set_room(lane)
    placed = []
    for start, end in zip(starts, ends, strict=True):
        while closing and closing[0][0] <= start:
            lane = heapq.heappop(closing)[1]
            stack = stacks[lane]
            while stack and stack[-1] <= start:
                stack.pop()
            set_room(lane)
        at = 1   # the leftmost leaf with room >= end (the root always has: unused lanes)
        while at < leaves:
            at = 2 * at if room[2 * at] >= end else 2 * at + 1
        lane = at - leaves
        if lane == len(stacks):   # (the first empty lane: the next after those in use)
            stacks.append([])
        stacks[lane].append(end)
        heapq.heappush(closing, (end, lane))
        set_room(lane)
        placed.append(lane)
    return placed
