"""Find the collective operations (all_reduce, all_gather, ...) that one rank's trace recorded.

Only records whose *end* is a synchronisation point across ranks count, because clock
alignment and the straggler table compare ends and starts between ranks:

* host slices named ``gloo:<op>`` (or ``mpi:``/``ucc:``): gloo runs the collective on the
  thread that records it, so the slice lasts until the slowest rank has contributed;
* device slices of collective kernels, as the activity vocabulary tells them whichever
  library ran them (NCCL's and RCCL's ``ncclKernel_AllReduce_...`` and ``ncclDevKernel_...``,
  MSCCL's, oneCCL's, HCCL's ``hcom_...``, XLA's ``all-reduce``): the kernel spins until every
  peer arrives. Their operation is the one Kineto's ``Collective name`` states, else the
  one their name states (:func:`~traceconv.vocabularies.common.collective_operation`), else
  the kernel's own name (the same on every rank: ``ncclDevKernel_Generic``).

Host ``nccl:<op>`` annotations and ``record_param_comms`` are only the enqueue of an
asynchronous kernel, so they are ignored here. Process group and sequence number come from
the ``Process Group Name`` and ``Seq`` arguments where Kineto wrote them; otherwise calls are
numbered in start order per (side, group, operation).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from ..model import ProcessKind, Trace
from ..vocabularies.common import collective_operation
from .activity import Activity, slice_activity
from .names import kernel_base

HOST_PREFIXES = ("gloo:", "mpi:", "ucc:")
# Collectives after which every rank leaves at the same moment. Rooted ones (broadcast,
# reduce, gather, scatter) and point-to-point send/recv let some ranks leave early.
SYMMETRIC = ("allreduce", "allgather", "reducescatter", "alltoall", "barrier")
GROUP_ARGS = ("Process Group Name", "Process Group Description", "pg_name")
SEQ_ARGS = ("Seq", "seq", "Collective seq")


def normalize_op(name: str) -> str:
    """``gloo:all_reduce`` / ``AllReduce`` / ``_all_gather_base`` -> ``allreduce`` ...

    >>> [normalize_op(n) for n in ("all_reduce", "AllReduce", "_all_gather_base")]
    ['allreduce', 'allreduce', 'allgatherbase']
    """
    return name.lower().replace("_", "")


def is_symmetric(op: str) -> bool:
    """True for collectives that every rank leaves together (their ends can be matched)."""
    return op.startswith(SYMMETRIC)


@dataclass(frozen=True, slots=True)
class Call:
    """One collective call on one rank: which one (``key``) and when (ns)."""

    key: tuple[str, str, str]   # (side "host"/"device", process group, operation)
    seq: int | None             # the source's sequence number, None when it wrote none
    start: int
    end: int
    name: str                   # the slice name as recorded
    row: int = -1               # the slice row in the trace searched


def _operation(name: str, args: dict | None, device: bool) -> str | None:
    if args and isinstance(args.get("Collective name"), str) and device:
        return normalize_op(args["Collective name"])
    if device:
        return collective_operation(name) or kernel_base(name).lower()
    prefix, _, op = name.partition(":")
    return normalize_op(op) if op and f"{prefix.lower()}:" in HOST_PREFIXES else None


def _first(args: dict | None, keys: tuple[str, ...]) -> object:
    if not args:
        return None
    return next((args[k] for k in keys if args.get(k) not in (None, "")), None)


def find_calls(trace: Trace, processes: Collection[int] | None = None,
               activity: np.ndarray | None = None) -> dict[tuple[str, str, str], list[Call]]:
    """The collective calls of one rank, per (side, group, operation), in start order.

    ``processes`` restricts the search to those process ids (one input of a merged trace);
    ``activity``: the trace's :func:`~.activity.slice_activity`, where the caller has it.

    >>> from traceconv.model import Trace
    >>> t = Trace(); p = t.add_process("python", pid=1); th = t.add_track("t", process=p)
    >>> _ = t.add_slice(th, 100, 50, "gloo:all_reduce"); _ = t.add_slice(th, 10, 5, "aten::mm")
    >>> [(c.key, c.end) for c in find_calls(t)[("host", "", "allreduce")]]
    [(('host', '', 'allreduce'), 150)]
    """
    on_device = np.array([trace.processes[t.process].kind is ProcessKind.DEVICE
                          for t in trace.tracks] + [False], bool)
    names = trace.strings.strings
    s = trace.slices
    # which string ids can name a host collective: one regex per distinct name, not per row
    host_ids = {i for i, n in enumerate(names) if _operation(n, None, False)}
    calls: dict[tuple[str, str, str], list[Call]] = {}
    track, name = s.numpy("track"), s.numpy("name")
    device_row = on_device[np.minimum(track, len(trace.tracks))]
    if activity is None:
        activity = slice_activity(trace)
    # device rows that communicate (the vocabulary's rule, whatever library ran them), host
    # rows by name; only the rows of the processes asked for have their args read
    # (decoding every row's args once per rank was most of a merged trace's straggler table)
    collective = device_row & ((activity & Activity.COMMUNICATION) != 0)
    candidate = collective | ~device_row & np.isin(name, np.fromiter(host_ids, np.int64,
                                                                     len(host_ids)))
    if processes is not None:
        wanted = [t.id for t in trace.tracks if t.process in processes]
        candidate &= np.isin(track, np.array(wanted, np.int64))
    rows = np.flatnonzero(candidate)
    for row, start, dur, name_id, device in zip(
            rows.tolist(), s.numpy("start")[rows].tolist(), s.numpy("dur")[rows].tolist(),
            name[rows].tolist(), device_row[rows].tolist(), strict=True):
        args = s.args[row]
        op = _operation(names[name_id], args, device)
        if op is None:
            continue
        group = _first(args, GROUP_ARGS)
        seq = _first(args, SEQ_ARGS)
        key = ("device" if device else "host", "" if group is None else str(group), op)
        calls.setdefault(key, []).append(Call(key, seq if isinstance(seq, int) else None,
                                              start, start + dur, names[name_id], row))
    for series in calls.values():
        series.sort(key=lambda c: (c.start, c.end))
    return calls
