"""The runs of one ``summary()`` printout: a log where ``summary()`` ran twice (two
profiling sessions, or the same one printed again) holds each run's tables in turn. Both the
rows (``extra["run"]``, kept apart by :mod:`traceconv.analysis.runs`) and the comparison
with what each Overview Summary states (:mod:`.stated`) group the tables this way."""

from __future__ import annotations

from .schema import SummaryTable


def runs_of(tables: list[SummaryTable]) -> list[int]:
    """The run (1, 2, ...) of each table: a log where ``summary()`` ran twice prints its
    tables again, so a title already seen in this run starts the next one.

    >>> runs_of([SummaryTable(title=t, line=0) for t in ("Overview Summary", "Model Summary",
    ...                                                   "Overview Summary")])
    [1, 1, 2]
    """
    run, seen, found = 1, set[str](), []
    for table in tables:
        if table.title in seen:
            run, seen = run + 1, set()
        seen.add(table.title)
        found.append(run)
    return found
