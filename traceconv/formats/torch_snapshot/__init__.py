"""PyTorch CUDA caching-allocator snapshots (``torch.cuda.memory._dump_snapshot``).

The pickle that pytorch.org/memory_viz opens (``.pickle``, ``.pickle.gz``; recognised by
content: a pickle whose top-level dict holds ``segments`` / ``device_traces``). It is read
with :class:`~.unpickle.PlainUnpickler`, which builds plain data only and never runs code
named by the file. See :mod:`.to_trace` for what becomes of it: one memory block per traced
allocation (stack and user frame in its args), the allocator's segments as reservations,
OOM instants, ``allocated`` / ``reserved`` counters per device.

>>> import io, pickle
>>> head = pickle.dumps({"segments": [], "device_traces": [[]]}, protocol=5)
>>> sniff(head, None), sniff(b'{"traceEvents": []}', None)
(0.95, 0.0)
"""

from __future__ import annotations

import os

from ...errors import InputError
from ...io import Source
from ...model import Trace
from ...model.activity import fill_activity
from ...vocabularies.kineto import KINETO_VOCABULARY
from ..sniffing import torch_snapshot as sniff  # noqa: F401  (this format's sniff, kept light)
from .expansion import Budget
from .to_trace import SnapshotBuilder
from .unpickle import load_source


def read(source: Source) -> Trace:
    """Read a snapshot pickle (safely: plain data only) into blocks, segments, counters."""
    try:
        document = load_source(source)
    except OSError as exc:
        raise InputError(f"cannot read: {exc}", file=source.name) from None
    if not isinstance(document, dict) or not any(k in document for k in
                                                  ("segments", "device_traces")):
        raise InputError("not an allocator snapshot: expected a dict with 'segments' and "
                         "'device_traces'", file=source.name)
    if not isinstance(document.get("device_traces", []), list):
        raise InputError("'device_traces' is not a list", file=source.name)
    trace = SnapshotBuilder(document, Budget(_input_bytes(source), source.name)).build()
    fill_activity(trace, KINETO_VOCABULARY)   # (record_function ranges: user annotations)
    return trace


def _input_bytes(source: Source) -> int:
    """The input's size on disk (0 when unknown): what the expansion budget is tied to."""
    try:
        return os.stat(source.path).st_size if not source.is_stdin else 0
    except OSError:
        return 0
