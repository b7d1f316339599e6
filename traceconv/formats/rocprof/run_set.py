"""rocprofv3's CSV files of one run, given together, read as one trace.

``rocprofv3 --kernel-trace --hip-trace --output-format csv`` writes one file per kind
(``<prefix>kernel_trace.csv``, ``<prefix>hip_api_trace.csv``, ...). Given together they
are grouped by prefix (the file name before the kind's own name); when that leaves several
prefixes but at most one file of each kind, the files are taken as one run. Each group is
built into one new trace (:func:`.v3.build_run`: flows by correlation id); the traces read
from each file are not changed. Files of different runs put together read correctly, with
the dispatches no call of the API trace launched counted (``rocprof.work_without_call``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from ...model import Trace
from ...model.builder import build
from ..file_sets import by_name_unless_one_of_each, combine_sets
from . import PARTS
from .v3 import Part, build_run

_KIND_NAME = re.compile(r"(?:(?:(?:hip|hsa|marker|rccl|rocdecode|rocjpeg)_api|kernel|rccl|"
                        r"memory_copy|memory_allocation|scratch_memory)_trace|"
                        r"counter_collection|agent_info)\.csv$")


def run_prefix(file: str) -> str:
    """The part of a file name that names its run.

    >>> run_prefix("out/1234_kernel_trace.csv"), run_prefix("1234_hip_api_trace.csv")
    ('1234_', '1234_')
    >>> run_prefix("decode_kernel_trace.csv"), run_prefix("notes.csv")
    ('decode_', 'notes.csv')
    """
    name = os.path.basename(file)
    match = _KIND_NAME.search(name.lower())
    return name[:match.start()] if match else name


def combine_runs(traces: Sequence[Trace]) -> list[Trace]:
    """``traces`` with the rocprofv3 CSV files of each run replaced by one trace (in the
    place of the first of them); other traces pass through.

    >>> combine_runs([])
    []
    """
    return combine_sets(traces, PARTS.get, _groups, _combine)


def _groups(parts: list[Part]) -> list[list[Part]]:
    return by_name_unless_one_of_each(parts, lambda p: run_prefix(p.file), lambda p: p.kind)


def _combine(members: list[Part]) -> Trace:
    return build(build_run(members), source_format="rocprof",
                 source_file=" + ".join(os.path.basename(p.file) for p in members))
