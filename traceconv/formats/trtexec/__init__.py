"""TensorRT ``trtexec`` exports: ``--exportLayerInfo`` (the engine graph), ``--exportProfile``
(per-layer times) and ``--exportTimes`` (per-inference enqueue / H2D / compute / D2H).

Each file reads alone; the exports of one engine given together
(``traceconv info e.graph.json e.profile.json e.timing.json``) are read as one trace: the
graph's layers carry the profile's times and the timeline sits beside them
(:func:`.engine_set.combine_engine_sets`, called by :func:`traceconv.api.combine`).

Detection: :func:`traceconv.formats.export_sniffing.trtexec` (light: no reader imported).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from ...io import Source
from ...model import Trace
from .. import export_sniffing

if TYPE_CHECKING:   # pydantic is imported to read, not to sniff
    from .parts import Part

# Each trace this reader made → the validated export it came from, so that the exports of
# one engine given together can be built into one trace (the traces themselves unchanged).
PARTS: weakref.WeakKeyDictionary[Trace, Part] = weakref.WeakKeyDictionary()


def sniff(head: bytes, source: Source | None) -> float:
    """See :func:`traceconv.formats.export_sniffing.trtexec`."""
    return export_sniffing.trtexec(head, source)


def __getattr__(name: str) -> Any:
    """``SCHEMAS`` on first use."""
    if name == "SCHEMAS":
        from .schema import LayerInformation, LayerProfile, Timings, TrexDevices, TrexMetadata

        return {"trtexec_layer_info": LayerInformation, "trtexec_profile": LayerProfile,
                "trtexec_times": Timings, "trex_metadata": TrexMetadata,
                "trex_devices": TrexDevices}
    raise AttributeError(name)


def read(source: Source) -> Trace:
    """Read one export; see :func:`.engine_set.combine_engine_sets` for several."""
    from .build import build_engine
    from .parts import load_part

    part = load_part(source)
    trace = build_engine(part.engine, [part])
    PARTS[trace] = part
    return trace
