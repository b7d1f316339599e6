"""Chrome Trace Event JSON: the generic format and every real flavour of it.

Reads the object and array forms with every phase Perfetto knows, plus the dialects of
PyTorch/Kineto (2021-2026), MegEngine's Profiler and Paddle's profilers (see
:mod:`.flavours`); writes the object form.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, BinaryIO

from ...io import Source
from ...model import Diagnostics, Trace
from ..sniffing import chrome as sniff  # noqa: F401  (this format's sniff, kept light)
from .flavours import FLAVOURS
from .reader import read_chrome

if TYPE_CHECKING:
    from ...model.check_report import CheckReport


def __getattr__(name: str) -> Any:
    """``SCHEMAS`` on first use: pydantic is not needed to read or write a trace."""
    if name == "SCHEMAS":
        from .schema import ChromeTraceDocument

        return {"chrome-trace": ChromeTraceDocument}
    raise AttributeError(name)


def read(source: Source, *, flavour: str | None = None) -> Trace:
    """Read a Chrome trace file (``.json`` or ``.json.gz``); ``flavour`` (a name from
    :func:`flavours`) skips the detection of the producer."""
    return read_chrome(source, flavour=flavour)


def flavours() -> dict[str, str]:
    """The producers whose conventions the reader knows: name -> description.

    >>> "kineto" in flavours()
    True
    """
    return {flavour.name: flavour.summary() for flavour in FLAVOURS}


def check(source: Source) -> CheckReport:
    """What a viewer would drop or misdraw in a Chrome JSON trace (gzip or not)."""
    from .checker import check_chrome

    return check_chrome(source)


def write(trace: Trace, out: BinaryIO) -> Diagnostics:
    """Write ``trace`` as Chrome Trace Event JSON (object form); returns the writer's
    diagnostics (``trace`` is not changed)."""
    from .writer import write_chrome  # here: reading (``traceconv info``) needs no writer

    return write_chrome(trace, out)
