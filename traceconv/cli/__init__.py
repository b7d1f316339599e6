"""The ``traceconv`` command line: thin commands over the public API.

Each sub-command lives in its own module (listed in :data:`COMMAND_MODULES`) and registers
itself on :data:`app`; the bare form ``traceconv IN... --to FORMAT`` runs ``convert``. The
module of a command is imported when that command runs (:data:`COMMANDS`); ``--help`` loads
them all, ``--version`` none. Command modules import at their top only click and other
command-line modules: the work's dependencies load inside the commands.
"""

from __future__ import annotations

from .app import app, main

COMMAND_MODULES = ("advise", "batch", "check", "convert", "critical_path", "diff",
                   "formats_cmd", "info", "memflow", "memory", "overview", "report", "split",
                   "summary",
                   "perfetto_forms")
# command name -> its module, so that running one command imports that module alone (a
# command missing here still works: the group then loads every module of COMMAND_MODULES)
COMMANDS = {"advise": "advise", "batch": "batch", "check": "check", "convert": "convert",
            "critical-path": "critical_path", "diff": "diff", "formats": "formats_cmd",
            "info": "info", "memflow": "memflow", "memory": "memory", "overview": "overview",
            "report": "report", "split": "split",
            "summary": "summary", "json": "perfetto_forms", "text": "perfetto_forms",
            **dict.fromkeys(("systrace", "profile", "bundle", "firefox", "java_heap_profile",
                             "hprof", "symbolize", "deobfuscate", "decompress_packets",
                             "binary"), "perfetto_forms")}   # Perfetto's own modes: a line each

__all__ = ["app", "main"]
