"""The generic flavour: the Trace Event Format with no producer-specific meaning."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ....model import Trace
from ....model.activity import Vocabulary
from ....model.slice_index import SliceIndex


@dataclass
class ReadContext:
    """What the reader learned that a flavour's hooks may use."""

    envelope: dict[str, Any]
    source_name: str
    # raw (pid) -> {"name": ..., "labels": [...], "sort_index": ...} from M events
    process_meta: dict[Any, dict[str, Any]] = field(default_factory=dict)
    # raw (pid, tid) -> {"name": ..., "sort_index": ...}
    thread_meta: dict[tuple[Any, Any], dict[str, Any]] = field(default_factory=dict)
    # every slice sorted per track, for binding points in time to slices (set in finish();
    # dropped after the flavour's finalize, or sooner by take_slice_index)
    slice_index: SliceIndex | None = None

    def take_slice_index(self) -> SliceIndex | None:
        """The slice index, which the context then no longer holds: its ~24 bytes per slice
        go as soon as the taker is done with it."""
        index, self.slice_index = self.slice_index, None
        return index


class Flavour:
    """Plain Chrome Trace Event JSON."""

    name = "chrome"
    framework: str | None = None
    device_categories: frozenset[str] = frozenset()
    flow_categories: dict[str, str] = {}  # flow category synonyms → one name
    # the producer's words for what each slice is (None: left unknown, see model/activity)
    vocabulary: Vocabulary | None = None

    @classmethod
    def detect(cls, envelope: dict, events: list) -> bool:
        return True

    @classmethod
    def summary(cls) -> str:
        """One line about the producer: the first sentence of the class docstring."""
        text = " ".join((cls.__doc__ or cls.name).replace("``", "").split())
        return text.split(": ")[0].split(". ")[0].split(" (")[0].rstrip(".")

    def time_unit_ns(self, events: list) -> int:
        """Nanoseconds per unit of ``ts``/``dur``: 1000 (µs, the spec) unless overridden."""
        return 1000

    def prepare(self, events: list, context: ReadContext) -> None:
        """Rewrite a chunk of events in place (nothing to do for plain Chrome JSON)."""

    def takes_records(self) -> bool:
        """Whether the pieces after the first may come as typed records (see
        ``records.py``), which :meth:`prepare` does not see: only when it rewrites nothing."""
        return type(self).prepare is Flavour.prepare

    def name_process(self, pid: Any, device: bool, meta: dict[str, Any]) -> str:
        name = meta.get("name")
        if device:
            labels = meta.get("labels") or []
            return labels[0] if labels else name or f"device {pid}"
        return str(name) if name not in (None, "") else f"pid {pid}"

    def name_thread(self, pid: Any, tid: Any, device: bool, meta: dict[str, Any]) -> str:
        name = meta.get("name")
        if name not in (None, ""):
            return str(name).strip()
        if isinstance(tid, str) and tid:  # Kineto's "PyTorch Profiler" span row, "stream 7"
            return tid
        return f"stream {tid}" if device else f"thread {tid}"

    def finalize(self, trace: Trace, context: ReadContext) -> None:
        """Add producer-specific model content after all events are read."""


def hashable(value: Any) -> bool:
    """Whether ``value`` can key a dict: a hostile file may put a list or an object where an
    id belongs (the reader counts such events as malformed; flavours skip them).

    >>> hashable(3), hashable("a"), hashable([3]), hashable({"a": 1})
    (True, True, False, False)
    """
    try:
        hash(value)
    except TypeError:
        return False
    return True


def process_name(event: Any) -> str | None:
    """The name a ``process_name`` metadata event gives (None for any other event, or one
    whose name is no string): flavours that know a producer by its process names read it.

    >>> process_name({"ph": "M", "name": "process_name", "args": {"name": "/device:GPU:0"}})
    '/device:GPU:0'
    >>> process_name({"ph": "X", "name": "process_name"}), process_name([1])
    (None, None)
    """
    if (isinstance(event, dict) and event.get("ph") == "M"
            and event.get("name") == "process_name" and isinstance(event.get("args"), dict)):
        name = event["args"].get("name")
        return name if isinstance(name, str) else None
    return None
