"""One side of a diff as samples: the steps of one or several traces (runs, ``split``
pieces), each step's time per (name, kind), chosen by step number and named by op class
when asked."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from .activity import Activity
from .attribution import StepTimes

Key = tuple[str, str]   # (name, kind)


def join(parts: Iterable[StepTimes]) -> StepTimes:
    """The steps of several traces side by side (keys united, in first-seen order).

    >>> x = StepTimes([("mm", "cpu")], np.array([[5, 6]]), [1, 2])
    >>> y = StepTimes([("add", "cpu"), ("mm", "cpu")], np.array([[1], [7]]), [1])
    >>> j = join([x, y]); j.keys, j.ns.tolist(), j.steps
    ([('mm', 'cpu'), ('add', 'cpu')], [[5, 6, 7], [0, 0, 1]], [1, 2, 1])
    """
    parts = list(parts)
    index = {key: i for i, key in enumerate(dict.fromkeys(k for p in parts for k in p.keys))}
    width = sum(len(p.steps) for p in parts)
    ns = np.zeros((len(index), width), np.int64)
    column = 0
    for part in parts:
        ns[[index[k] for k in part.keys], column:column + len(part.steps)] = part.ns
        column += len(part.steps)
    return StepTimes(list(index), ns, [s for p in parts for s in p.steps],
                     _united(pair for p in parts for pair in p.activities.items()))


def _united(pairs: Iterable[tuple[Key, frozenset[Activity]]]) -> dict[Key, frozenset[Activity]]:
    """Each key's activities (:attr:`StepTimes.activities`) over several entries of it.

    >>> _united([(("mm", "cpu"), {Activity.HOST_OP}), (("mm", "cpu"), {Activity.LAUNCH})])
    {('mm', 'cpu'): frozenset({<Activity.HOST_OP: 1>, <Activity.LAUNCH: 4>})}
    """
    united: dict[Key, frozenset[Activity]] = {}
    for key, found in pairs:
        united[key] = united.get(key, frozenset()) | found
    return united


def parse_step_list(spec: str) -> list[tuple[int | None, int | None]]:
    """``"2:5,8,10:"`` → ranges (both ends included; None: open).

    >>> parse_step_list("2:5, 8,10:")
    [(2, 5), (8, 8), (10, None)]
    """
    from .steps import parse_steps

    parts = [p for p in spec.split(",") if p.strip()]
    try:
        if parts:
            return [parse_steps(p) for p in parts]
    except ValueError:
        pass
    raise ValueError(f"{spec!r}: expected N, A:B, A: or :B (step numbers, both ends "
                     "included) or a list of them: 3:50 or 2,4,6:9")


def select(times: StepTimes, spec: str) -> StepTimes:
    """The steps whose numbers ``spec`` names (:func:`parse_step_list`); ValueError naming
    the steps there are when it names none.

    >>> t = StepTimes([("mm", "cpu")], np.array([[5, 6, 7]]), [1, 2, 3])
    >>> select(t, "1,3").ns.tolist()
    [[5, 7]]
    """
    ranges = parse_step_list(spec)
    keep = [i for i, n in enumerate(times.steps)
            if any((lo is None or n >= lo) and (hi is None or n <= hi) for lo, hi in ranges)]
    if not keep:
        shown = ", ".join(str(n) for n in sorted(set(times.steps))[:20])
        raise ValueError(f"{spec!r} names none of the steps there are ({shown}"
                         f"{', ...' if len(set(times.steps)) > 20 else ''})")
    return StepTimes(times.keys, times.ns[:, keep], [times.steps[i] for i in keep],
                     times.activities)


def renamed(times: StepTimes, rename: Callable[[str, str], str]) -> StepTimes:
    """The same steps with each (name, kind) named ``rename(name, kind)`` (kinds kept
    apart; idle kept); rows that meet are summed.

    >>> t = StepTimes([("aten::mm", "cpu"), ("mm", "cpu")], np.array([[1, 2], [3, 4]]), [1, 2])
    >>> c = renamed(t, lambda name, kind: name.split("::")[-1]); c.keys, c.ns.tolist()
    ([('mm', 'cpu')], [[4, 6]])
    """
    named = [key if key[1] == "idle" else (rename(*key), key[1]) for key in times.keys]
    index = {key: i for i, key in enumerate(dict.fromkeys(named))}
    ns = np.zeros((len(index), len(times.steps)), np.int64)
    np.add.at(ns, [index[k] for k in named], times.ns)
    return StepTimes(list(index), ns, times.steps, _united(
        (new, times.activities[old]) for old, new in zip(times.keys, named, strict=True)
        if old in times.activities))
