"""Kernel launches as statistics state them: per run, the kernels' count and device time
and the launch calls' count and host time (``nsys stats``: ``cuda_gpu_kern_sum`` and
``cuda_api_sum``; rocprof's ``--stats`` tables), for rules that judge launches where no
timeline links each kernel to its launch.

A kernel row is a row with device time that the shared vocabulary does not name a copy or
memset; a launch row is a row with host time named a kernel launch call
(:data:`~traceconv.vocabularies.common.KERNEL_LAUNCH_CALL`). Rows are grouped by run: a
table printed again in one file is the next run's (its section ``kernels #2``), as is a row
that names another run (``extra["run"]``: several runs pasted in one file), and the
rows of merged inputs stay with their input (``extra["input"]`` ``rank 1: ...``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..model import OpStat
from ..vocabularies.common import KERNEL_LAUNCH_CALL
from .copy_time import copy_kind, host_ns
from .runs import run_label


@dataclass(frozen=True)
class StatedLaunches:
    """One run's kernels and kernel-launch calls, as its statistics state them."""

    run: str               # "" for a file's only run, else what tells it apart ("#2", "v4")
    kernels: int
    kernel_ns: int         # device time of the kernels
    launches: int
    launch_ns: int         # host time of the launch calls
    names: tuple[str, ...]  # the kernels, longest total first

    @property
    def kernel_avg_ns(self) -> float:
        return self.kernel_ns / self.kernels

    @property
    def launch_avg_ns(self) -> float:
        return self.launch_ns / self.launches

    @property
    def idle_share(self) -> float:
        """The least share of the launching time in which the device runs no kernel: while
        the host spends ``launch_ns`` issuing them, the kernels run ``kernel_ns`` at most."""
        return max(0.0, 1 - self.kernel_ns / self.launch_ns) if self.launch_ns else 0.0


def _run_of(stat: OpStat) -> str:
    """What tells the run of ``stat`` apart: its input's label before ``: `` (a merged
    input), the run its row names (:func:`.runs.run_label`: one input pasting several) and
    the ``#N`` of a table printed again.

    >>> _run_of(OpStat("k", section="kernels #2")), _run_of(OpStat("k", section="kernels"))
    ('#2', '')
    >>> _run_of(OpStat("k", section="api", extra={"input": "rank 1: cuda_api_sum"}))
    'rank 1'
    >>> _run_of(OpStat("k", section="kernels", extra={"run": "vector_add_v4"}))
    'vector_add_v4'
    """
    label = stat.extra.get("input")
    owner = label.split(": ", 1)[0] if isinstance(label, str) and ": " in label else ""
    repeat = stat.section.rpartition(" #")[2] if " #" in stat.section else ""
    return " ".join(x for x in (owner, run_label(stat.extra) or "",
                                f"#{repeat}" if repeat else "") if x)


def stated_launches(stats: Sequence[OpStat]) -> list[StatedLaunches]:
    """Each run's kernels and launch calls, for the runs that state both (in row order).

    >>> rows = [OpStat("cudaLaunchKernel", calls=1010, total_ns=3_201_638, cpu_ns=3_201_638,
    ...                section="api"),
    ...         OpStat("vectorAdd(float*)", calls=1010, total_ns=1_831_281,
    ...                device_ns=1_831_281, section="kernels"),
    ...         OpStat("[CUDA memcpy Host-to-Device]", calls=2, total_ns=900, device_ns=900,
    ...                section="memtime")]
    >>> (run,) = stated_launches(rows)
    >>> run.kernels, run.launches, round(run.kernel_avg_ns), round(run.launch_avg_ns)
    (1010, 1010, 1813, 3170)
    """
    kernels: dict[str, dict[str, list[int]]] = {}
    launches: dict[str, list[int]] = {}
    for stat in stats:
        if stat.parent is not None or not stat.calls:
            continue   # (a nested row is part of its parent's time)
        run = _run_of(stat)
        if stat.device_ns is not None and stat.cpu_ns is None and copy_kind(stat.name) is None:
            totals = kernels.setdefault(run, {}).setdefault(stat.name, [0, 0])
            totals[0] += stat.calls
            totals[1] += stat.device_ns
        elif KERNEL_LAUNCH_CALL.search(stat.name) and (ns := host_ns(stat)) is not None:
            totals = launches.setdefault(run, [0, 0])
            totals[0] += stat.calls
            totals[1] += ns
    out = []
    for run, by_name in kernels.items():
        if run not in launches:
            continue
        names = sorted(by_name, key=lambda n: (-by_name[n][1], n))
        calls, launch_ns = launches[run]
        out.append(StatedLaunches(run, sum(c for c, _ in by_name.values()),
                                  sum(ns for _, ns in by_name.values()), calls, launch_ns,
                                  tuple(names)))
    return out
