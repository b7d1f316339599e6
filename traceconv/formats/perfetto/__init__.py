"""Perfetto TrackEvent protobuf (``.pftrace``): reader, writer and offline validator.

:func:`read` (:mod:`.reader`) streams a trace into the model; :func:`write` encodes the
model as TrackEvent packets by hand (see :mod:`.writer`); :func:`check` (:mod:`.validate`)
checks any ``.pftrace`` for what trace_processor would drop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...io import Source
from ...model.check_report import CheckReport
from ..sniffing import perfetto as sniff  # noqa: F401  (this format's sniff, kept light)
from .writer import write

if TYPE_CHECKING:
    from ...model import Trace

__all__ = ["check", "read", "sniff", "write"]


def read(source: Source) -> Trace:
    """Read a ``.pftrace`` (gzip or not) into the model (see :mod:`.reader`)."""
    from .reader import read as read_pftrace

    return read_pftrace(source)


def check(source: Source) -> CheckReport:
    """What trace_processor would drop or misdraw in a ``.pftrace`` (gzip or not)."""
    # imported here: the validator loads the large generated perfetto_trace_pb2 module
    from .validate import validate

    return validate(source)
