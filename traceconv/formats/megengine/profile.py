"""MegEngine's static-graph profile JSON (``{"graph_exec": ..., "profiler": ...}``) and
``graph.json``: the registry's entry, light to import (sniffing a ``.json`` loads it); the
reader itself, with its pydantic models, is :mod:`.static_profile`.
"""

from __future__ import annotations

from typing import Any

from ...io import Source
from ...model import Trace
from ..sniffing import megengine_profile as sniff  # noqa: F401  (this format's sniff, kept light)


def __getattr__(name: str) -> Any:
    """``SCHEMAS`` on first use (pydantic is imported to read, not to sniff)."""
    if name == "SCHEMAS":
        from .schema import StaticProfile

        return {"megengine_static_profile": StaticProfile}
    raise AttributeError(name)


def read(source: Source) -> Trace:
    """Read a static profile (or a bare ``graph_exec``) into a :class:`Trace`."""
    from .static_profile import read_profile

    return read_profile(source)
