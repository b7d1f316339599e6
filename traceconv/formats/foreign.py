"""Files traceconv does not read but can name: what they are and what to do instead.

When no reader claims a file, "cannot tell the format" sends a user to ``--format``
when no format would read it. A file that is a known foreign format (a profiler's own
report that must be exported first, a model, a TensorBoard event file, an archive) is
named instead, with the step that gets a trace traceconv reads. Only the first bytes and
the name are looked at.

>>> describe(b"PERFILE2" + bytes(8), "perf.data")
'a Linux perf recording (perf.data): open it in the Perfetto UI, or convert it with `perf script`'
>>> describe(b'{"traceEvents": []}', "t.json") is None
True

An SQLite database no reader claims is named with its tables (:func:`database_tables`).
"""

from __future__ import annotations

import fnmatch

from ..sqlite_access import table_names
from .database_sniffing import is_sqlite

# (how to recognise it: a magic at the start, or a file-name pattern; what it is; what to do)
_BY_MAGIC = (
    (b"PERFILE2", "a Linux perf recording (perf.data)",
     "open it in the Perfetto UI, or convert it with `perf script`"),
    (b"PK\x03\x04", "a zip archive",
     "unpack it and give traceconv the trace inside"),
)
_BY_NAME = (
    ("*.nsys-rep", "an Nsight Systems report",
     "export it with `nsys export --type sqlite FILE` and read the .sqlite"),
    ("*.qdrep", "an Nsight Systems report (.qdrep)",
     "export it with `nsys export --type sqlite FILE` and read the .sqlite"),
    ("*.ncu-rep", "an Nsight Compute report",
     "it holds per-kernel metrics, not a timeline: profile with Nsight Systems or "
     "torch.profiler for one"),
    ("events.out.tfevents.*", "a TensorBoard event file",
     "the profile is the *.xplane.pb beside it under plugins/profile/<run>/"),
    ("*.onnx", "an ONNX model",
     "it holds a model, not a profile: profile a run of it instead"),
)


_HTML = (b"<!doctype html", b"<html")
_HTML_PAGE = ("an HTML page (a systrace or Catapult trace-viewer report?)",
              "traceconv reads the trace, not a page: open it in the Perfetto UI, which "
              "reads systrace HTML, or record a Perfetto or Chrome JSON trace instead")


def describe(head: bytes, filename: str) -> str | None:
    """``what it is: what to do`` for a known foreign file, else None (``filename`` is the
    lower-case name without a compression suffix).

    >>> describe(b"<!DOCTYPE html><html><head>", "trace.html").split(":")[0]
    'an HTML page (a systrace or Catapult trace-viewer report?)'
    """
    for magic, what, advice in _BY_MAGIC:
        if head.startswith(magic):
            return f"{what}: {advice}"
    if head.lstrip()[:16].lower().startswith(_HTML):
        return "{}: {}".format(*_HTML_PAGE)
    for pattern, what, advice in _BY_NAME:
        if fnmatch.fnmatchcase(filename, pattern):
            return f"{what}: {advice}"
    return None


def database_tables(head: bytes, path: str | None) -> str | None:
    """``an SQLite database with tables ...`` for a database file no reader claimed."""
    if path is None or not is_sqlite(head):
        return None
    tables = sorted(table_names(path))
    shown = ", ".join(tables[:8]) + (f" and {len(tables) - 8} more" if len(tables) > 8 else "")
    return ("an SQLite database that is no export traceconv reads (tables: "
            f"{shown or 'none'}): nsys, rpd and rocprof databases are read")
