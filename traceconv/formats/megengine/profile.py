"""MegEngine's static-graph profile JSON (``{"graph_exec": ..., "profiler": ...}``) and
``graph.json``: the registry's entry, light to import (sniffing a ``.json`` loads it); the
reader itself, with its pydantic models, is :mod:`.static_profile`.
"""

from __future__ import annotations

from typing import Any

from ...io import Source
from ...model import Trace


def __getattr__(name: str) -> Any:
    """``SCHEMAS`` on first use (pydantic is imported to read, not to sniff)."""
    if name == "SCHEMAS":
        from .schema import StaticProfile

        return {"megengine_static_profile": StaticProfile}
    raise AttributeError(name)


def sniff(head: bytes, source: Source) -> float:
    """A static profile names ``graph_exec`` and ``profiler`` near the top (hash-ordered keys).

    >>> sniff(b'{ "profiler": { "opr_internal_pf": {}, "host": {', None)
    0.95
    >>> sniff(b'{"traceEvents": [', None)
    0.0
    """
    text = head[:4096]
    if not text.lstrip().startswith(b"{"):
        return 0.0
    keys = (b'"graph_exec"', b'"profiler"', b'"opr_footprint"', b'"comp_seq"',
            b'"opr_internal_pf"', b'"mem_chunk"')
    hits = sum(key in head for key in keys)
    if b'"traceEvents"' in text:
        return 0.0
    return 0.95 if hits >= 2 else 0.0


def read(source: Source) -> Trace:
    """Read a static profile (or a bare ``graph_exec``) into a :class:`Trace`."""
    from .static_profile import read_profile

    return read_profile(source)
