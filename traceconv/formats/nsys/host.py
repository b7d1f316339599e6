"""Host-side tables besides CUDA: OS runtime calls (``OSRT_API``) and the profiler's own
overhead (``PROFILER_OVERHEAD``), as slices on their threads."""

from __future__ import annotations

import numpy as np

from ...model.args import Args
from .._bulk import intern_ids
from .context import Context

OSRT = "OSRT_API"
PROFILER_OVERHEAD = "PROFILER_OVERHEAD"


def read_os_runtime(ctx: Context) -> np.ndarray:
    """``pthread_cond_wait``, ``ioctl``, ``read`` ... with their return value and nesting."""
    return _named_calls(ctx, OSRT, "os_runtime", with_return=True)


def read_profiler_overhead(ctx: Context) -> np.ndarray:
    """Time nsys itself spent on a thread (``CUDA profiling data flush`` and the like)."""
    return _named_calls(ctx, PROFILER_OVERHEAD, "overhead", with_return=False)


def _named_calls(ctx: Context, table: str, category: str, *, with_return: bool) -> np.ndarray:
    if not ctx.db.has(table, "start", "end", "globalTid", "nameId"):
        return np.zeros(0, np.int64)
    rows = ctx.db.numeric_columns(table, {"start": ("i8", 0), "end": ("i8", 0),
                                          "globalTid": ("i8", 0), "nameId": ("i8", -1),
                                          "returnValue": ("i8", 0)})
    returns = rows["returnValue"].tolist()
    args: list[Args] = ([{"return value": r} if r else None for r in returns] if with_return
            else [None] * len(returns))
    return ctx.add_slices(ctx.places.threads(rows["globalTid"]), rows["start"], rows["end"],
                          intern_ids(ctx.trace, rows["nameId"], ctx.text), category, args,
                          table)
