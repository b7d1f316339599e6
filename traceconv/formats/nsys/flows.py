"""Launch → GPU work flows: a kernel, copy or memset and the API call that enqueued it share
a CUPTI ``correlationId`` within one process."""

from __future__ import annotations

import numpy as np

from ...model import Trace
from .._bulk import add_flows


def link_by_correlation(trace: Trace, api_rows: np.ndarray, api_pid: np.ndarray,
                        api_correlation: np.ndarray, work_rows: np.ndarray,
                        work_pid: np.ndarray, work_correlation: np.ndarray) -> int:
    """Add a flow from each API call to the device work of the same (process,
    correlation id); returns how many device rows found no call (trimmed exports cut some).

    >>> t = Trace(); p = t.add_process("p"); k = t.add_track("t", process=p)
    >>> rows = [t.add_slice(k, i, 1, n) for i, n in enumerate(["launch", "kernel", "orphan"])]
    >>> link_by_correlation(t, np.array([0]), np.array([1]), np.array([7]),
    ...                     np.array([1, 2]), np.array([1, 1]), np.array([7, 8]))
    1
    >>> [(f.source, f.target) for f in t.iter_flows()]
    [(0, 1)]
    """
    # one int64 key per (process, correlation): both numbered densely first
    _, pid = np.unique(np.concatenate([api_pid, work_pid]), return_inverse=True)
    corr_values, corr = np.unique(np.concatenate([api_correlation, work_correlation]),
                                  return_inverse=True)
    keys = pid.reshape(-1).astype(np.int64) * max(len(corr_values), 1) + corr.reshape(-1)
    api_keys, work_keys = keys[:len(api_pid)], keys[len(api_pid):]
    usable = api_correlation >= 0
    api_keys, rows = api_keys[usable], api_rows[usable]
    order = np.argsort(api_keys, kind="stable")
    api_keys, rows = api_keys[order], rows[order]
    at = np.minimum(np.searchsorted(api_keys, work_keys), max(len(api_keys) - 1, 0))
    found = (work_correlation >= 0) & (len(api_keys) > 0)
    if len(api_keys):
        found &= api_keys[at] == work_keys
    add_flows(trace, rows[at[found]], work_rows[found], "ac2g", "correlation")
    return int((~found).sum())
