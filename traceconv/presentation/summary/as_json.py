"""The ``summary-json`` output format: the summary as one JSON object."""

from __future__ import annotations

from typing import Any, BinaryIO

from ...analysis.summary import SummaryOptions
from ...model import Trace
from . import write as write_summary

WRITE_OPTIONS = SummaryOptions   # the names write()'s **options may use


def write(trace: Trace, out: BinaryIO, **options: Any) -> None:
    """Write ``summary --json`` of ``trace`` (see :mod:`traceconv.presentation.summary`)."""
    write_summary(trace, out, json=True, **options)
