"""The op statistics a trace traceconv writes carries for reading back: one record, kept by
every writer that promises a round trip (the Perfetto model attribute, the Chrome writer's
``traceconv`` key), and read back by one rule.

A timeline writer draws statistics as an aggregate breakdown (slices side by side), which
reads back as slices; the rows themselves (calls, totals, sections, parents) come back from
this record. Reading it back trusts it no further than its types, and all or nothing: the
rows index one another (``parent``), so one row not as the writer makes it leaves them all
out, counted (``input.carried_stats_unread``).

>>> from traceconv.model import OpStat, Trace
>>> t = Trace()
>>> restore_stats(t, stats_record([OpStat("gemm", calls=2, total_ns=9, extra={"k": (1, 2)})]))
>>> t.stats
[OpStat(name='gemm', calls=2, total_ns=9, self_ns=None, min_ns=None, max_ns=None, avg_ns=None, cpu_ns=None, device_ns=None, ratio=None, type='', section='events', parent=None, depth=0, extra={'k': [1, 2]})]
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from ..numbers import int64
from .entities import OpStat
from .json_values import as_json, holds_json
from .trace import Trace

_COUNTS = ("calls", "self_ns", "min_ns", "max_ns", "avg_ns", "cpu_ns", "device_ns", "parent")
_FIELDS = frozenset(f.name for f in dataclasses.fields(OpStat))


def stats_record(stats: Sequence[OpStat]) -> list[dict[str, Any]]:
    """Each row's fields as JSON values (tuples as lists; a value of ``extra`` that JSON
    cannot hold left out).

    >>> stats_record([OpStat("gemm", extra={"bad": {1, 2}})])[0]["extra"]
    {}
    """
    rows = []
    for stat in stats:
        row = {name: getattr(stat, name) for name in _FIELDS if name != "extra"}
        row["extra"] = {str(k): as_json(v) for k, v in stat.extra.items() if holds_json(v)}
        rows.append(row)
    return rows


def restore_stats(trace: Trace, record: Any) -> None:
    """Add the rows ``record`` holds to ``trace`` (being read), all of them or none: none
    when one is not as :func:`stats_record` makes it, counted. No record (a file written
    before statistics were kept) adds nothing.

    >>> t = Trace(); restore_stats(t, [{"name": "a", "total_ns": 5, "parent": 0}])
    >>> len(t.stats), t.diagnostics.count("input.carried_stats_unread")
    (0, 1)
    """
    if record is None:
        return
    rows = record if isinstance(record, list) else [record]
    made = [_stat(row, k) for k, row in enumerate(rows)]
    if None in made:
        trace.diagnostics.add("input.carried_stats_unread", count=len(rows),
                              example=f"row {made.index(None)}")
        return
    for stat in made:
        trace.add_stat(stat)   # type: ignore[arg-type]  # (no None: checked above)


def _stat(row: Any, index: int) -> OpStat | None:
    """Row ``index`` as an :class:`OpStat`; None when a field is missing or of another type
    (a parent must be an earlier row)."""
    if not isinstance(row, dict) or set(row) != _FIELDS:
        return None
    ratio, parent = row["ratio"], row["parent"]
    fits = (isinstance(row["name"], str) and isinstance(row["type"], str)
            and isinstance(row["section"], str) and isinstance(row["extra"], dict)
            and int64(row["total_ns"]) is not None and int64(row["depth"]) is not None
            and all(row[name] is None or int64(row[name]) is not None for name in _COUNTS)
            and (ratio is None or isinstance(ratio, int | float) and not isinstance(ratio, bool)
                 and math.isfinite(ratio))
            and (parent is None or 0 <= parent < index))
    return OpStat(**{**row, "ratio": None if ratio is None else float(ratio)}) if fits else None
