"""The metadata and diagnostics a trace traceconv writes carries for reading back: one record, kept by every
writer that promises a round trip (the Perfetto model attribute, the Chrome writer's
``traceconv`` envelope key) and read back by one rule, so what one keeps the other keeps.

The record holds the typed fields of :class:`~traceconv.model.trace.Metadata` (where the
trace came from, its rank, clock, devices and the run's stated figures) as JSON values; the
source's own envelope (``attributes``) is each writer's to place. Reading it back trusts a
field no further than its type: a value of another type is not known.

>>> from traceconv.model.trace import DeviceInfo, Metadata, StatedRun
>>> kept = Metadata(source_format="trtexec", rank=1, run=StatedRun(walltime_ns=3),
...                 devices=[DeviceInfo(0, "RTX 3090")])
>>> again = Metadata(source_format="chrome")
>>> restore_metadata(again, metadata_record(kept))
>>> again.rank, again.run.walltime_ns, again.devices[0].name, again.attributes
(1, 3, 'RTX 3090', {'converted_from': 'trtexec'})
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from ..numbers import int64
from .diagnostics import Diagnostics
from .trace import DeviceInfo, Metadata, StatedRun

# the texts and the integers of the record (``devices`` and ``run`` apart)
TEXTS = ("source_format", "source_version", "framework", "clock")
INTEGERS = ("rank", "world_size", "clock_base_ns")


def metadata_record(meta: Metadata) -> dict[str, Any]:
    """The typed fields of ``meta`` as JSON values (an integer beyond 64 bits, which a fuzzed
    input can give a rank, is each writer's to spell).

    >>> metadata_record(Metadata(source_format="nsys", clock="relative"))["devices"]
    []
    """
    return {**{name: getattr(meta, name) for name in (*TEXTS, *INTEGERS)},
            "devices": [dataclasses.asdict(d) for d in meta.devices],
            "run": dataclasses.asdict(meta.run)}


def restore_metadata(meta: Metadata, record: Any) -> None:
    """Set the typed fields of ``meta`` (a trace being read) from ``record``, as a writer
    kept it; the source format it names becomes ``attributes["converted_from"]`` (the trace
    read is of the writer's format) unless the trace already names the first source, as a
    file converted twice does. A field the record does not hold stays as the reader made
    it; a record that is no dict changes nothing.

    >>> meta = Metadata(source_format="chrome", clock="relative")
    >>> restore_metadata(meta, {"rank": "2", "clock": "nsys session time", "world_size": 2**70})
    >>> meta.rank, meta.clock, meta.world_size
    (None, 'nsys session time', None)
    """
    if not isinstance(record, dict):
        return
    if isinstance(record.get("source_format"), str) and record["source_format"]:
        meta.attributes.setdefault("converted_from", record["source_format"])
    kept = record.keys()   # (a file of an older traceconv: a field it did not keep stays)
    if "source_version" in kept:
        meta.source_version = _text(record["source_version"])
    if "framework" in kept:
        meta.framework = _text(record["framework"])
    if "clock" in kept:
        meta.clock = _text(record["clock"]) or "unknown"
    for name in INTEGERS:
        if name in kept:
            setattr(meta, name, int64(record[name]))
    if "devices" in kept:
        meta.devices = device_infos(record["devices"])
    if "run" in kept:
        meta.run = stated_run(record["run"])


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def stated_run(saved: Any) -> StatedRun:
    """The run's stated figures a writer kept (a field of another type is not known).

    >>> stated_run({"walltime_ns": 3, "throughput_per_s": 2.5, "latency_min_ns": "x",
    ...             "device_ns": 2**64})
    StatedRun(walltime_ns=3, device_ns=None, throughput_per_s=2.5, latency_min_ns=None, latency_max_ns=None, latency_mean_ns=None, latency_median_ns=None)
    """
    if not isinstance(saved, dict):
        return StatedRun()
    kept: dict[str, Any] = {}
    for name in (f.name for f in dataclasses.fields(StatedRun)):
        value = saved.get(name)
        if name == "throughput_per_s":
            if isinstance(value, int | float) and not isinstance(value, bool) \
                    and math.isfinite(value):
                kept[name] = float(value)
        elif int64(value) is not None:
            kept[name] = value
    return StatedRun(**kept)


def device_infos(saved: Any) -> list[DeviceInfo]:
    """The devices a writer kept (``DeviceInfo`` fields; anything else in them ignored).

    >>> device_infos([{"id": 0, "name": "H100", "memory_bytes": 80, "junk": 1}, "x"])
    [DeviceInfo(id=0, name='H100', memory_bytes=80, compute_major=None, compute_minor=None)]
    """
    def number(value: Any) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return [DeviceInfo(entry.get("id") if isinstance(entry.get("id"), int | str) else None,
                       entry.get("name") if isinstance(entry.get("name"), str) else None,
                       number(entry.get("memory_bytes")), number(entry.get("compute_major")),
                       number(entry.get("compute_minor")))
            for entry in (saved if isinstance(saved, list) else []) if isinstance(entry, dict)]


def carry_diagnostics(diagnostics: Diagnostics, listed: Any) -> None:
    """Count the diagnostics a writer kept (``Diagnostics.as_list()``: what the first reader
    repaired or dropped), each trusted no further than
    :meth:`~traceconv.model.diagnostics.Diagnostics.add_carried` trusts it; an entry that is
    no dict is a code of no known kind.

    >>> found = Diagnostics()
    >>> carry_diagnostics(found, [{"code": "chrome.flow_unbound", "count": 4}, 7])
    >>> [(d.code, d.count) for d in found]
    [('chrome.flow_unbound', 4), ('input.unknown_diagnostic', 1)]
    """
    for entry in listed if isinstance(listed, list) else ():
        if isinstance(entry, dict):
            diagnostics.add_carried(entry.get("code"), count=entry.get("count"),
                                    example=entry.get("example"))
        else:
            diagnostics.add_carried(entry)
