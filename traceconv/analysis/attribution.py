"""Who had the time: the profiled window cut into pieces, each charged to exactly one thing.

At every instant inside the steps the time goes to, in order: the device work running (the
one that started last, when several streams overlap), else the innermost host slice running
(on any host thread; the one that started last; a step's own time between its ops is
Python and framework work), else **idle**. The pieces add up to the
window exactly, so differences between two runs add up to the change of the window.
"""

from __future__ import annotations

import heapq
from collections import defaultdict

import numpy as np

from ..model import Trace
from .activity import DEVICE_WORK, Timeline
from .critical_path import _kind
from .host_segments import HostSegments

IDLE = ("(idle: nothing running)", "idle")
_WINDOW, _HOST, _DEVICE = 0, 1, 2


def attribute_time(trace: Trace) -> tuple[dict[tuple[str, str], int], int, int]:
    """((name, kind) → ns, window ns, step count) for ``trace``.

    >>> from traceconv.model import ProcessKind
    >>> t = Trace(); h = t.add_process("host"); g = t.add_process("GPU", kind=ProcessKind.DEVICE)
    >>> main = t.add_track("main", process=h); s = t.add_track("stream", process=g)
    >>> _ = t.add_slice(main, 0, 100, "ProfilerStep#1", "user_annotation")
    >>> _ = t.add_slice(main, 0, 30, "aten::mm", "cpu_op")
    >>> _ = t.add_slice(s, 20, 50, "gemm", "kernel")
    >>> times, window, steps = attribute_time(t)
    >>> sorted(times.items()), window, steps
    ([(('ProfilerStep#1', 'cpu'), 30), (('aten::mm', 'cpu'), 20), (('gemm', 'kernel'), 50)], 100, 1)
    """
    tl = Timeline(trace)
    names = trace.strings.strings
    windows = tl.steps
    host = HostSegments(tl)
    device = tl.device_work()
    device = device[np.isin(tl.activity[device], np.array(DEVICE_WORK, np.int8))]
    # items: (start, end, class, key) with keys interned as small ints
    keys: list[tuple[str, str]] = [IDLE]
    key_ids: dict[tuple[str, str], int] = {IDLE: 0}

    def key_of(row: int) -> int:
        key = (names[tl.name[row]], _kind(tl.activity[row]))
        found = key_ids.get(key)
        if found is None:
            found = key_ids[key] = len(keys)
            keys.append(key)
        return found

    items: list[tuple[int, int, int, int]] = []
    items += [(s, e, _WINDOW, 0) for s, e in zip(windows.start.tolist(), windows.end.tolist(),
                                                 strict=True)]
    items += [(int(s), int(e), _HOST, key_of(int(r))) for s, e, r in zip(
        host.start.tolist(), host.end.tolist(), host.row.tolist(), strict=True)]
    items += [(int(tl.start[r]), int(tl.end[r]), _DEVICE, key_of(int(r))) for r in device.tolist()]
    totals = _sweep(items, len(keys))
    times = {keys[k]: ns for k, ns in enumerate(totals) if ns}
    steps = tl.step_count
    return times, windows.total, steps


def _sweep(items: list[tuple[int, int, int, int]], nkeys: int) -> list[int]:
    """Charge each stretch inside a window to the highest class running, latest start first."""
    events = sorted([(s, 1, i) for i, (s, _e, _c, _k) in enumerate(items)]
                    + [(e, 0, i) for i, (_s, e, _c, _k) in enumerate(items)])
    totals = [0] * nkeys
    active: list[tuple[int, int, int]] = []   # (-class, -start, item)
    ended: set[int] = set()
    open_windows = 0
    previous = None
    for time, is_start, index in events:
        if previous is not None and time > previous and open_windows:
            while active and active[0][2] in ended:
                heapq.heappop(active)
            winner = active[0][2] if active else None
            key = items[winner][3] if winner is not None else 0
            totals[key] += time - previous
        previous = time
        start, _end, cls, _key = items[index]
        if is_start:
            if cls == _WINDOW:
                open_windows += 1
            else:
                heapq.heappush(active, (-cls, -start, index))
        elif cls == _WINDOW:
            open_windows -= 1
        else:
            ended.add(index)
    return totals


def by_class(times: dict[tuple[str, str], int], classify) -> dict[tuple[str, str], int]:
    """The same times with names mapped through ``classify`` (kinds kept apart)."""
    out: dict[tuple[str, str], int] = defaultdict(int)
    for (name, kind), ns in times.items():
        out[(name if kind == "idle" else classify(name), kind)] += ns
    return dict(out)
