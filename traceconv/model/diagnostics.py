"""Diagnostics: what a reader or writer dropped, repaired or guessed, with counts.

Nothing is lost silently: every event that does not reach the model unchanged is counted
here under a stable code, and ``traceconv info`` prints the list.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Literal

from .frozen import FrozenTraceError

Kind = Literal["dropped", "repaired", "guessed", "note"]
Severity = Literal["info", "warning", "error"]

_DEFAULT_SEVERITY: dict[str, Severity] = {
    "dropped": "warning",
    "repaired": "info",
    "guessed": "info",
    "note": "info",
}


@dataclass(slots=True)
class Diagnostic:
    """One kind of finding and how often it happened."""

    code: str
    kind: Kind
    severity: Severity
    message: str
    count: int = 0
    example: str | None = None

    def as_dict(self) -> dict:
        return asdict(self)


class Diagnostics:
    """An ordered collection of :class:`Diagnostic`, aggregated by code.

    >>> diags = Diagnostics()
    >>> diags.add("flow.dangling", "flow end without start", kind="dropped", count=2)
    >>> diags.add("flow.dangling", "flow end without start", kind="dropped")
    >>> diags["flow.dangling"].count
    3
    """

    __slots__ = ("_frozen", "_items")

    def __init__(self) -> None:
        self._items: dict[str, Diagnostic] = {}
        self._frozen = False

    def freeze(self) -> None:
        """Refuse new findings from now on (those of a frozen trace are final)."""
        self._frozen = True

    def copy(self) -> Diagnostics:
        """An unfrozen collection with the same findings.

        >>> diags = Diagnostics(); diags.add("x", "y", kind="note"); diags.freeze()
        >>> more = diags.copy(); more.add("x", "y", kind="note"); more.count("x"), diags.count("x")
        (2, 1)
        """
        new = Diagnostics()
        new.extend(self)
        return new

    def add(
        self,
        code: str,
        message: str,
        *,
        kind: Kind,
        count: int = 1,
        example: object = None,
        severity: Severity | None = None,
    ) -> None:
        """Count ``count`` occurrences of ``code``; the first message and example are kept."""
        if self._frozen:
            raise FrozenTraceError
        if count <= 0:
            return
        item = self._items.get(code)
        if item is None:
            item = self._items[code] = Diagnostic(
                code, kind, severity or _DEFAULT_SEVERITY[kind], message
            )
        item.count += count
        if item.example is None and example is not None:
            text = example if isinstance(example, str) else repr(example)
            item.example = text if len(text) <= 200 else text[:197] + "..."

    def extend(self, other: Diagnostics) -> None:
        """Merge the counts of ``other`` into this collection."""
        for item in other:
            self.add(item.code, item.message, kind=item.kind, count=item.count,
                     example=item.example, severity=item.severity)

    def __getitem__(self, code: str) -> Diagnostic:
        return self._items[code]

    def __contains__(self, code: object) -> bool:
        return code in self._items

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def count(self, code: str) -> int:
        """How often ``code`` was recorded (0 if never)."""
        item = self._items.get(code)
        return item.count if item else 0

    def as_list(self) -> list[dict]:
        return [item.as_dict() for item in self._items.values()]

    def __repr__(self) -> str:
        """The codes and counts, most frequent first (five at most), for a REPL.

        >>> diags = Diagnostics(); repr(diags)
        '<Diagnostics: none>'
        >>> diags.add("flow.dangling", "no start", kind="dropped", count=3)
        >>> diags.add("x.guess", "guessed", kind="guessed")
        >>> diags
        <Diagnostics: 2 codes, 4 items: flow.dangling ×3 (dropped), x.guess ×1 (guessed)>
        """
        if not self._items:
            return "<Diagnostics: none>"
        ranked = sorted(self._items.values(), key=lambda d: -d.count)
        shown = ", ".join(f"{d.code} ×{d.count:,} ({d.kind})" for d in ranked[:5])
        more = f", +{len(ranked) - 5} more" if len(ranked) > 5 else ""
        total = sum(d.count for d in ranked)
        return f"<Diagnostics: {len(ranked)} codes, {total:,} items: {shown}{more}>"
