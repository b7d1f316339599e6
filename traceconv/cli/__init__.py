"""The ``traceconv`` command line: thin commands over the public API.

Each sub-command lives in its own module and registers itself on :data:`app`; the bare
form ``traceconv IN... --to FORMAT`` runs ``convert``.
"""

from __future__ import annotations

from . import (  # noqa: F401 - the imports register the commands
    advise,
    batch,
    check,
    convert,
    critical_path,
    diff,
    formats_cmd,
    info,
    memflow,
    report,
    summary,
)
from .app import app, main

__all__ = ["app", "main"]
