"""Diagnostics: what a reader or writer dropped, repaired or guessed, with counts.

Nothing is lost silently: every event that does not reach the model unchanged is counted
here under a stable code, and ``traceconv info`` prints the list.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass

from .diagnostic_codes import DEFAULT_SEVERITY, Kind, Severity, lookup
from .frozen import FrozenTraceError, freeze_records

__all__ = ["DEFAULT_SEVERITY", "Diagnostic", "Diagnostics", "Kind", "Severity"]


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
    >>> diags.add("chrome.flow_dangling", count=2)     # kind and text from the code table
    >>> diags.add("chrome.flow_dangling", "a message of its own", kind="dropped")
    >>> diags["chrome.flow_dangling"].count, diags["chrome.flow_dangling"].kind
    (3, 'dropped')
    """

    __slots__ = ("_frozen", "_items")

    def __init__(self) -> None:
        self._items: dict[str, Diagnostic] = {}
        self._frozen = False

    def freeze(self) -> None:
        """Refuse new findings and changed ones from now on (those of a frozen trace are
        final)."""
        freeze_records(list(self._items.values()))
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
        message: str | None = None,
        *,
        kind: Kind | None = None,
        count: int = 1,
        example: object = None,
        severity: Severity | None = None,
    ) -> None:
        """Count ``count`` occurrences of ``code``; the first message and example are kept.
        The kind, severity and message not given come from the code table
        (:mod:`traceconv.model.diagnostic_codes`); a code that is not there needs its own
        kind and message."""
        if self._frozen:
            raise FrozenTraceError
        if count <= 0:
            return
        item = self._items.get(code)
        if item is None:
            if kind is None or message is None or severity is None:
                info = lookup(code)
                if info is None and (kind is None or message is None):
                    raise ValueError(f"diagnostic code {code!r} is not registered in "
                                     "traceconv.model.diagnostic_codes: give its kind and "
                                     "message, or add it to the table")
                kind = kind or info.kind   # type: ignore[union-attr]
                message = message or info.text   # type: ignore[union-attr]
                if severity is None and info is not None and info.kind == kind:
                    severity = info.severity
            item = self._items[code] = Diagnostic(
                code, kind, severity or DEFAULT_SEVERITY[kind], message
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
