"""rocmProfileData (``.rpd``) SQLite traces: ``rocpd_api`` calls, ``rocpd_op`` GPU work,
``rocpd_monitor`` samples, with the optional ``ext_autogradapi`` extension.

Each OS process is a process with a track per thread (HIP API calls, roctx ranges, PyTorch
autograd ops); each GPU is a device process with a track per queue (kernels, copies,
fills). ``rocpd_api_ops`` links a call to the work it enqueued (flows); ``rocpd_monitor``
rows become counter tracks (clock, power...); ``hipMalloc``/``hipFree`` calls whose args
were recorded become memory blocks. See ``docs/rpd.md``.

>>> sniff(b"SQLite format 3\\x00...CREATE TABLE rocpd_op ... rocpd_api", None)
0.95
>>> sniff(b"SQLite format 3\\x00...CREATE TABLE StringIds", None)
0.0
"""

from __future__ import annotations

from typing import Any

from ...io import Source
from ...model import Metadata, Trace
from ...model.builder import TraceBuilder
from .. import database_sniffing
from .._sqlite import open_database


def __getattr__(name: str) -> Any:
    """``SCHEMAS`` on first use (pydantic is imported to read, not to sniff)."""
    if name == "SCHEMAS":
        from .schema import RpdMetadata

        return {"rpd_metadata": RpdMetadata}
    raise AttributeError(name)


def sniff(head: bytes, source: Source | None) -> float:
    """An SQLite database with rpd's tables (see :func:`.database_sniffing.rpd`)."""
    return database_sniffing.rpd(head, source)


def read(source: Source) -> Trace:
    """Read an rpd trace (plain, gzipped or from standard input)."""
    from .reader import read_database

    with open_database(source) as db:
        trace = TraceBuilder(Metadata(source_format="rpd", framework="ROCm",
                               clock="rocprofiler time (ns)"))
        read_database(db, trace)
        return trace
