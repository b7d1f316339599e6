"""What the nsys table readers share: the trace being built, the database, its strings and
enums, the places, and the bookkeeping of which tables were read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...model import Trace
from ...model.args import Args
from .._sqlite import Database
from .places import Places


@dataclass
class Context:
    trace: Trace
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
                   name: np.ndarray, category: str, args: Sequence[Args], table: str) -> np.ndarray:
        """Add one slice per row and return their rows; an end before its start becomes a
        zero-length slice (counted)."""
        dur = end - start
        backwards = dur < 0
        if backwards.any():
            self.trace.diagnostics.add("nsys.end_before_start", count=int(backwards.sum()),
                                       example=table)
            dur = np.where(backwards, 0, dur)
        first = len(self.trace.slices)
        category_id = self.trace.strings.intern(category)
        self.trace.slices.extend(list(args), track=track, start=start, dur=dur, name=name,
                                 category=np.full(len(start), category_id, np.int32))
        self.read_tables.add(table)
        return np.arange(first, first + len(start), dtype=np.int64)
