"""A time, count or size a text report printed ``nan``: counted alike by every text reader.

The text readers convert printed times by one rule (:func:`traceconv.numbers.printed_ns`),
and counts and sizes by the same (:func:`traceconv.numbers.printed_whole`): a number past
int64, infinity included, is the builder's to move and count; ``nan`` is no number at all
(``-nan ms``: a MIGraphX module that did not run; a cell the tool could not time). Its row
is kept, that figure unknown, and counted here under ``{reader}.never_timed`` (a time) or
``{reader}.never_sized`` (a count or size).
"""

from __future__ import annotations

from ..model import Diagnostics


def count_never_timed(diagnostics: Diagnostics, reader: str, where: str | None, *,
                      count: int = 1) -> None:
    """Count ``count`` rows of ``reader`` with a time printed ``nan``, ``where`` (the first
    one's line and name) the example.

    >>> found = Diagnostics()
    >>> count_never_timed(found, "nsys_stats", "line 13: cudaMemcpyAsync")
    >>> found["nsys_stats.never_timed"].count, found["nsys_stats.never_timed"].example
    (1, 'line 13: cudaMemcpyAsync')
    """
    diagnostics.add(f"{reader}.never_timed", count=count, example=where)


def count_never_sized(diagnostics: Diagnostics, reader: str, where: str | None, *,
                      count: int = 1) -> None:
    """Count ``count`` rows of ``reader`` with a count or size printed ``nan``, ``where``
    (the first one's line and name) the example.

    >>> found = Diagnostics()
    >>> count_never_sized(found, "paddle_summary", "line 190: MatmulGradNode")
    >>> found["paddle_summary.never_sized"].count
    1
    """
    diagnostics.add(f"{reader}.never_sized", count=count, example=where)
