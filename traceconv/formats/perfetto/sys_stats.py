"""``sys_stats`` packets (periodic reads of /proc/meminfo, /proc/vmstat and /proc/stat) as
counter values, decoded from a field table (numbers from Perfetto's ``sys_stats.proto``).

Meminfo values are kB (bytes in the model, as trace_processor keeps them), named after the
/proc/meminfo key the counter's enum stands for in CamelCase (``MEMINFO_MEM_TOTAL`` is
``MemTotal``; ``MEMINFO_ACTIVE_ANON`` is ``ActiveAnon`` where /proc says ``Active(anon)``);
vmstat values are counts named as /proc/vmstat names them (``nr_free_pages``); each CPU's
times (ns) are one counter per field and CPU, all eight written whenever a CPU's times are,
as trace_processor writes them. Other sys_stats fields are not modelled: counted by
name (:func:`other_fields`).
"""

from __future__ import annotations

from typing import NamedTuple

from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import (
    MeminfoCounters,
    SysStats,
    VmstatCounters,
)

from ..protowire import iter_fields, message_classes

SYS_STATS = 7   # TracePacket field
_CPU_TIMES = ("user_ns", "user_nice_ns", "system_mode_ns", "idle_ns", "io_wait_ns", "irq_ns",
              "softirq_ns", "steal_ns")   # CpuTimes fields 2 to 9
_MESSAGES = message_classes("perfetto_sys_stats", {
    "Value": [("key", 1, "enum"), ("value", 2, "uint64")],
    "CpuTimes": [("cpu_id", 1, "uint32"),
                 *((name, number, "uint64") for number, name in enumerate(_CPU_TIMES, 2))],
    "SysStats": [("meminfo", 1, "repeated Value"), ("vmstat", 2, "repeated Value"),
                 ("cpu_stat", 3, "repeated CpuTimes")],
})
_MEMINFO = {v.number: "".join(part.capitalize() for part in v.name.split("_")[1:])
            for v in MeminfoCounters.DESCRIPTOR.values}
_FIELD_NAMES = {f.number: f.name for f in SysStats.DESCRIPTOR.fields}
_MODELLED = {1, 2, 3, 9}   # (9: collection_end_timestamp, the packet's time is used)
_VMSTAT = {v.number: v.name.removeprefix("VMSTAT_").lower()
           for v in VmstatCounters.DESCRIPTOR.values}


class SysCounter(NamedTuple):
    """One value: ``cpu`` is the CPU of a CPU time (None for a system-wide counter)."""

    ts: int
    cpu: int | None
    name: str
    value: float
    unit: str | None


def sys_counters(payload: bytes, ts: int) -> list[SysCounter]:
    """The counter values of one SysStats packet taken at ``ts``.

    >>> sys_counters(b"\\x0a\\x04\\x08\\x01\\x10\\x02\\x1a\\x04\\x08\\x01\\x10\\x07", 5)
    ... # doctest: +NORMALIZE_WHITESPACE
    [SysCounter(ts=5, cpu=None, name='MemTotal', value=2048.0, unit='bytes'),
     SysCounter(ts=5, cpu=1, name='user_ns', value=7.0, unit='ns'),
     SysCounter(ts=5, cpu=1, name='user_nice_ns', value=0.0, unit='ns'),
     SysCounter(ts=5, cpu=1, name='system_mode_ns', value=0.0, unit='ns'),
     SysCounter(ts=5, cpu=1, name='idle_ns', value=0.0, unit='ns'),
     SysCounter(ts=5, cpu=1, name='io_wait_ns', value=0.0, unit='ns'),
     SysCounter(ts=5, cpu=1, name='irq_ns', value=0.0, unit='ns'),
     SysCounter(ts=5, cpu=1, name='softirq_ns', value=0.0, unit='ns'),
     SysCounter(ts=5, cpu=1, name='steal_ns', value=0.0, unit='ns')]
    """
    stats = _MESSAGES["SysStats"].decode(payload)
    out = [SysCounter(ts, None, _MEMINFO.get(m.key, f"meminfo {m.key}"),
                      float(m.value * 1024), "bytes") for m in stats.meminfo]
    out += [SysCounter(ts, None, _VMSTAT.get(v.key, f"vmstat {v.key}"), float(v.value), None)
            for v in stats.vmstat]
    for times in stats.cpu_stat:
        out += [SysCounter(ts, times.cpu_id, name, float(getattr(times, name)), "ns")
                for name in _CPU_TIMES]
    return out


def other_fields(payload: bytes) -> list[str]:
    """The names of the fields of a SysStats packet that are not modelled, one per value.

    >>> other_fields(b"\\x20\\x05\\x0a\\x00\\x58\\x01")
    ['num_forks', 'cpufreq_khz']
    """
    return [_FIELD_NAMES.get(number, f"field {number}")
            for number, _, _, _ in iter_fields(payload) if number not in _MODELLED]
