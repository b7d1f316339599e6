"""The ``traceconv`` command line: thin commands over the public API.

Each sub-command lives in its own module and registers itself on :data:`app`; the bare
form ``traceconv IN... --to FORMAT`` runs ``convert``.
"""

from __future__ import annotations

from . import advise, check, convert, critical_path, diff, formats_cmd, info, memflow, summary  # noqa: F401 - registers the commands
from .app import app, main

__all__ = ["app", "main"]
