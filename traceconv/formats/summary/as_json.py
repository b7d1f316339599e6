"""The ``summary-json`` output format: the summary as one JSON object."""

from __future__ import annotations

from typing import Any, BinaryIO

from ...model import Trace
from . import write as write_summary


def write(trace: Trace, out: BinaryIO, **options: Any) -> None:
    """Write ``summary --json`` of ``trace`` (see :mod:`traceconv.formats.summary`)."""
    write_summary(trace, out, json=True, **options)
