"""XPlane: the ``XSpace`` protobuf that ``jax.profiler``, ``tf.profiler`` and torch_xla write
(``<host>.xplane.pb`` under ``plugins/profile/<run>/``) and that xprof/TensorBoard reads.

One XSpace holds the planes of one host: ``/host:CPU`` (a line per thread), one plane per
device (``/device:GPU:N`` streams and derived rows, ``/device:TPU:N`` XLA ops and modules),
``/host:metadata`` (HLO module names) and ``Task Environment``. See :mod:`.build` for the
mapping; the wire format is decoded by :mod:`traceconv.formats.protowire` from the field
table in :mod:`.proto` (no tensorflow, jax or protobuf runtime needed).

Detection: :func:`traceconv.formats.export_sniffing.xplane` (light: no reader imported).
"""

from __future__ import annotations

from typing import Any

from ...errors import InputError
from ...io import Source
from ...model import Metadata, Trace
from ...model.builder import TraceBuilder
from .. import export_sniffing
from .proto import ROW_PEAK  # noqa: F401  (for the memory check)


def sniff(head: bytes, source: Source | None) -> float:
    """See :func:`traceconv.formats.export_sniffing.xplane`."""
    return export_sniffing.xplane(head, source)


def __getattr__(name: str) -> Any:
    """``SCHEMAS`` on first use (pydantic is imported to describe, not to read)."""
    if name == "SCHEMAS":
        from .schema import XSpaceDocument

        return {"xplane_xspace": XSpaceDocument}
    raise AttributeError(name)


def read(source: Source) -> Trace:
    """Read an ``.xplane.pb`` into processes, tracks, flows, XLA op nodes and memory blocks."""
    from ..protowire import wire_errors
    from .build import SpaceBuilder
    from .proto import XSpace

    data = source.read_bytes()
    # (lines, events and stats are decoded as the builder reaches them: damage found
    # there is located the same way, and no half-built trace is returned)
    with wire_errors(source.name, "XSpace protobuf", XSpace, data):
        space = XSpace.decode(data)
        if not space.planes:
            raise InputError("not an XSpace: no planes", file=source.name)
        trace = TraceBuilder(Metadata(source_format="xplane", framework=_framework(space)))
        SpaceBuilder(space, trace).build()
    return trace


def _framework(space) -> str:  # type: ignore[no-untyped-def]
    """TensorFlow when its ops or threads are there, else JAX/XLA (jax, torch_xla)."""
    from .planes import as_text

    for plane in space.planes:
        for line in plane.lines:
            name = as_text(line.name)
            if name in ("TensorFlow Ops", "TensorFlow Name Scope") \
                    or name.startswith("tf_Compute"):
                return "TensorFlow"
    return "XLA"
