"""What a written .pftrace shows, read back from trace_processor's own tables.

The writer draws host threads and a device's streams as threads (a device or synthetic
process gets a made-up pid, so the Perfetto UI can summarise it), and lanes, counters and
counter-only groups ("Memory") as named tracks. So the name a track shows is its thread's
name for a thread track and its own name otherwise, and a device is a process row whose
labels are the ``chrome.process_label*`` args.

>>> tp.load(open("out.pftrace", "rb").read())                      # doctest: +SKIP
>>> slices_per_track(tp, "s.category = 'kernel'")                  # doctest: +SKIP
{'stream 7': 1}
"""

from __future__ import annotations

from typing import Any

# Linux caps pids at 2^22 (PID_MAX_LIMIT): a pid above it was made up, never a real one.
LINUX_PID_MAX = 1 << 22

SHOWN_TRACK_SQL = """
select t.id, coalesce(th.name, t.name) as name from track t
left join thread_track tt using (id) left join thread th using (utid)
"""

# labels in the order written (args by id)
PROCESSES_SQL = """
select p.pid, p.name, group_concat(a.display_value, '|') as labels from process p
left join (select * from args where key glob 'chrome.process_label*' order by id) a
  on a.arg_set_id = p.arg_set_id
where p.pid > 0 group by p.upid order by p.upid
"""


def shown_track_names(tp: Any) -> set[str]:
    """Every track name the UI shows: thread names (threads, streams) and named tracks."""
    return {r.name for r in tp.query(SHOWN_TRACK_SQL) if r.name is not None}


def slices_per_track(tp: Any, where: str = "true") -> dict[str | None, int]:
    """Slices matching ``where`` (on ``slice s``), counted by the name of the track they
    are drawn on."""
    rows = tp.query(f"select t.name, count(*) as n from slice s join ({SHOWN_TRACK_SQL}) t "
                    f"on s.track_id = t.id where {where} group by 1")
    return {r.name: r.n for r in rows}


def processes(tp: Any) -> list[tuple[int, str, list[str]]]:
    """``(pid, name, labels)`` of every process row, in load order (pid 0, trace_processor's
    own swapper process, left out)."""
    return [(r.pid, r.name, r.labels.split("|") if r.labels else [])
            for r in tp.query(PROCESSES_SQL)]
