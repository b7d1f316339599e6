"""The ``traceconv`` command line: thin commands over the public API.

Each sub-command lives in its own module (listed in :data:`COMMAND_MODULES`) and registers
itself on :data:`app`; the bare form ``traceconv IN... --to FORMAT`` runs ``convert``. The
modules are imported when a command is looked up, not for ``traceconv --version``.
"""

from __future__ import annotations

from .app import app, main

COMMAND_MODULES = ("advise", "batch", "check", "convert", "critical_path", "diff",
                   "formats_cmd", "info", "memflow", "report", "summary", "perfetto_forms")

__all__ = ["app", "main"]
