"""AMD rocprof outputs: rocprof v1/v2 ``results.csv``, ``results.json``, ``results.db`` and
``*.stats.csv`` (:mod:`.v1`, :mod:`.stats`), and rocprofv3's CSV files (:mod:`.v3`) and
JSON (:mod:`.v3_json`) and ``rocpd`` databases (:mod:`.rocpd`).

=========================  =============================================================
file                       becomes
=========================  =============================================================
v1 kernel trace            a slice per dispatch (``BeginNs``..``EndNs``) on a track per
(csv, json, db ``KERN``)   queue of a process per GPU (``gpu-id``); other columns as args
v1 ``results.db`` HIP...   slices on their thread (tables with ``BeginNs``/``EndNs``)
``*stats.csv``             statistic rows (calls, total, average, min, max, share)
v3 ``kernel_trace``        a slice per dispatch on a track per queue of a process per agent
v3 ``*_api_trace``         a slice per call on its thread (HIP, HSA, marker, RCCL domains)
v3 ``memory_copy_trace``   a slice per copy on a track per direction of the target agent
v3 ``memory_allocation``,  memory blocks (an ``ALLOC`` paired with the next ``FREE`` of its
``scratch_memory_trace``   address, scratch memory: of its queue), live-bytes counters
v3 ``counter_collection``  counter values as args of their dispatch
v3 ``agent_info``         labels of each agent's device process (its product and name)
v3 JSON                    its dispatch and API records, as the CSV files (:mod:`.v3_json`)
v3 ``rocpd`` database      its dispatches, regions and copies, as the CSV files (:mod:`.rocpd`)
=========================  =============================================================

Which file it is comes from its content (the CSV header's columns, the JSON's opening, the
database's tables: :mod:`traceconv.formats.rocprof_sniffing`). rocprofv3's CSV files of one
run given together are read as one trace, with a flow from each API call to the dispatches
and copies of its correlation id (:func:`.run_set.combine_runs`, called by
:func:`traceconv.api.combine`).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from ...errors import InputError
from ...io import Source
from ...model import Metadata, Trace
from .. import rocprof_sniffing
from ..key_claims import claimed_kind
from ..pasted_csv import unpasted_head

if TYPE_CHECKING:
    from .v3 import Part

# Each trace read from one rocprofv3 CSV -> that file's table, so that the files of one run
# given together are built into one trace (the traces themselves unchanged).
PARTS: weakref.WeakKeyDictionary[Trace, Part] = weakref.WeakKeyDictionary()
CLOCK = "HSA system timestamps (ns, the boot-time monotonic clock)"
_VERSIONS = {"v1-kernels": "v1 kernel trace CSV", "v1-json": "v1 results.json",
             "v1-database": "v1 results.db", "stats": "statistics CSV"}


def sniff(head: bytes, source: Source | None) -> float:
    """See :func:`traceconv.formats.rocprof_sniffing.rocprof`."""
    return rocprof_sniffing.rocprof(head, source)


def read(source: Source) -> Trace:
    """Read one rocprof output; see :func:`.run_set.combine_runs` for several.

    >>> trace = read(Source("samples/rocprof/llamacpp_results.db"))
    >>> len(trace.slices), trace.metadata.source_version
    (64, 'v1 results.db')
    """
    from ...model.activity import fill_activity
    from ...model.builder import TraceBuilder
    from ...model.clock import STATISTICS_CLOCK
    from ...vocabularies.rocprof import ROCPROF_VOCABULARY

    kind = (rocprof_sniffing.kind(unpasted_head(source.head), source)
            or claimed_kind(source, rocprof_sniffing.ROCPROF_KEYS))
    if kind is None:
        raise InputError("not a rocprof output: expected a kernel, API, copy, memory "
                         "allocation or scratch memory trace, a counter or statistics CSV, "
                         "a results.json or results.db, rocprofv3 JSON or a rocpd database",
                         file=source.name, location="line 1")
    if kind in ("v3-json", "v3-database"):
        from . import rocpd, v3_json
        from .v3 import build_run

        load, written_as, code = ((v3_json.load_parts, "JSON", "rocprof.record_not_read")
                                  if kind == "v3-json" else
                                  (rocpd.load_parts, "rocpd database", "rocprof.table_not_read"))
        parts, skipped = load(source)
        built = build_run(parts, written_as)
        for what, count in skipped.items():
            built.diagnostics.add(code, count=count, example=what)
        return built
    if kind.startswith("v3-"):
        from .v3 import build_run, load_part

        part = load_part(source, kind)
        trace = build_run([part])
        PARTS[trace] = part
        return trace
    trace = TraceBuilder(Metadata(source_format="rocprof", source_version=_VERSIONS[kind],
                                  clock=STATISTICS_CLOCK if kind == "stats" else CLOCK))
    if kind == "stats":
        from .stats import read_stats

        read_stats(trace, source)
    else:
        from . import v1

        {"v1-kernels": v1.read_csv, "v1-json": v1.read_json,
         "v1-database": v1.read_database}[kind](trace, source)
    fill_activity(trace, ROCPROF_VOCABULARY)   # (rocprofv3's: in build_run)
    return trace
