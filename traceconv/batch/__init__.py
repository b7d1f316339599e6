"""``traceconv batch``: convert many files (one output each, or one merged trace) on a pool
of workers: a local process pool, or a dask / ray cluster when those are installed.

>>> from traceconv.batch import plan
>>> [t.output for t in plan(["a/rank0.pt.trace.json.gz", "b/rank0.json"], "out", "perfetto")]
['out/rank0.pftrace', 'out/rank0-2.pftrace']
"""

from __future__ import annotations

from .jobs import BatchResult, Task, plan
from .run import ENGINES, Pool, open_pool, run_batch

__all__ = ["ENGINES", "BatchResult", "Pool", "Task", "open_pool", "plan", "run_batch"]
