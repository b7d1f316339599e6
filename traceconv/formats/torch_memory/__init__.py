"""PyTorch ``export_memory_timeline`` outputs: memory blocks with the profiler's categories.

Two shapes (kineto.md §8), told apart by content:

* ``memory_timeline.json[.gz]``: ``[times_us[], sizes[][]]``, cumulative bytes per category;
  blocks are rebuilt from the per-step changes of each category.
* ``memory_timeline.raw.json[.gz]``: ``[[t_ns | -1, action, bytes, category], ...]``, one row
  per tensor event; blocks are rebuilt by pairing creates with destroys of the same size.

Neither carries tensor ids or addresses, so blocks sit at logical offsets (pool
``timeline``) chosen by a best-fit allocator; live bytes per category match the export
exactly. One ``live bytes`` counter track, plus one per category, is added.

>>> from traceconv.io import Source
>>> sniff(b'[[1795339764044750, 1795339764044750], [[0, 1, 2, 3, 4, 5, 6, 7, 8]]]', None)
0.9
>>> sniff(b'[{"ph": "X", "ts": 1}]', None)
0.0
"""

from __future__ import annotations

from typing import Any

from ...io import Source
from ...model import Trace
from ..sniffing import torch_memory as sniff  # noqa: F401  (this format's sniff, kept light)


def __getattr__(name: str) -> Any:
    """``SCHEMAS`` on first use (pydantic is imported to read, not to sniff)."""
    if name == "SCHEMAS":
        from .schema import MemoryTimeline, RawMemoryTimeline

        return {"torch_memory_timeline": MemoryTimeline,
                "torch_memory_timeline_raw": RawMemoryTimeline}
    raise AttributeError(name)


def read(source: Source, *, device: str = "") -> Trace:
    """Read either export shape into memory blocks and live-bytes counters.

    ``device`` names the device the export was made for (the file does not say).
    """
    from .reader import read_timeline

    return read_timeline(source, device=device)
