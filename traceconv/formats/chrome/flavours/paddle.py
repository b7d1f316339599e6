"""Paddle's Chrome JSON: the new profiler's export and the old tools/timeline.py output."""

from __future__ import annotations

import re
from typing import Any

from ....model import Trace
from .base import Flavour, ReadContext

_DURATION_SUFFIX = re.compile(r"\[\d+(?:\.\d+)? ?(?:ns|us|ms|s)\]$")
_THREAD_KIND = re.compile(r"(\d+)\((\w[\w+]*)\)$")  # "14656(Python)", "14656(C++)"


class PaddleProfiler(Flavour):
    """``paddle.profiler`` export: names end in "[1.234 ms]", tids are "<tid>(Python|C++)",
    thread names are in the top-level ``ExtraInfo``; device work runs on pid = device id."""

    name = "paddle-profiler"
    framework = "PaddlePaddle"
    device_categories = frozenset({"Kernel", "Memcpy", "Memset"})

    def __init__(self) -> None:
        self.stripped = 0
        self.context: ReadContext | None = None

    @classmethod
    def detect(cls, envelope: dict, events: list) -> bool:
        return "span_indx" in envelope or any(
            isinstance(e, dict) and isinstance(e.get("tid"), str)
            and _THREAD_KIND.match(e["tid"]) for e in events[:200])

    def prepare(self, events: list, context: ReadContext) -> None:
        self.context = context
        for e in events:
            name = e.get("name") if isinstance(e, dict) else None
            if isinstance(name, str) and name.endswith("]"):
                short = _DURATION_SUFFIX.sub("", name)
                if short != name:
                    e["name"] = short
                    self.stripped += 1

    def name_thread(self, pid: Any, tid: Any, device: bool, meta: dict[str, Any]) -> str:
        # ExtraInfo (written after the events) maps OS thread ids to thread names.
        names = self.context.envelope.get("ExtraInfo", {}) if self.context else {}
        if isinstance(tid, str) and (match := _THREAD_KIND.match(tid)):
            thread, kind = match.groups()
            return f"{names.get(thread, 'thread ' + thread)} ({kind})"
        if not device and str(tid) in names:
            return str(names[str(tid)])
        return super().name_thread(pid, tid, device, meta)

    def finalize(self, trace: Trace, context: ReadContext) -> None:
        trace.diagnostics.add("paddle.duration_suffix", "'[x ms]' duration suffixes removed "
                              "from event names (the duration is the slice's)", kind="repaired",
                              count=self.stripped)


class PaddleTimeline(Flavour):
    """``tools/timeline.py`` output: ``ts`` and ``dur`` are nanoseconds where Chrome expects µs."""

    name = "paddle-timeline"
    framework = "PaddlePaddle"

    @classmethod
    def detect(cls, envelope: dict, events: list) -> bool:
        stamps = [e["ts"] for e in events[:500] if isinstance(e, dict)
                  and isinstance(e.get("ts"), int | float)]
        # Epoch µs is ~1.8e15 today; ~1.8e18 can only be nanoseconds.
        return bool(stamps) and min(stamps) > 1e17

    def time_unit_ns(self, events: list) -> int:
        return 1
