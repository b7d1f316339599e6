"""What the nsys table readers share: the trace being built, the database, its strings and
enums, the places, and the bookkeeping of which tables were read."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ...model.args import Args
from ...model.builder import TraceBuilder
from .._bulk import add_intervals_by_batch
from .._sqlite import Database
from .places import Places


@dataclass
class Context:
    trace: TraceBuilder
    db: Database
    strings: dict[int, str]                 # StringIds
    places: Places
    read_tables: set[str] = field(default_factory=set)
    missing_strings: int = 0

    def text(self, string_id: int) -> str:
        """The StringIds text of ``string_id`` (a placeholder, counted, when missing)."""
        found = self.strings.get(string_id)
        if found is None:
            self.missing_strings += 1
            return f"<string {string_id}>"
        return found

    def enum(self, table: str, fallback: dict[int, str]) -> dict[int, str]:
        """The labels of an ``ENUM_*`` table (exports before 3.x have none: ``fallback``)."""
        if not self.db.has(table, "id", "label"):
            return fallback
        return {**fallback, **self.db.texts(f"select id, label from {table}", table)}

    def add_slices(self, track: np.ndarray, start: np.ndarray, end: np.ndarray,
                   name: np.ndarray, category: str,
                   args: Sequence[Args] | Callable[[slice], Sequence[Args]],
                   table: str) -> np.ndarray:
        """Add one slice per row and return their rows (an end before its start, a time
        beyond the range: the builder's rules). ``args`` may be made a batch of rows at a
        time (a function of the batch's slice), so that a large table's arg dicts are
        never all held at once."""
        category_id = self.trace.strings.intern(category)
        rows = add_intervals_by_batch(
            self.trace, track, start, end, name, np.full(len(start), category_id, np.int32),
            args if callable(args) else lambda part: args[part])
        self.read_tables.add(table)
        return rows
