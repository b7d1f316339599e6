"""Diagnostics: what a reader or writer dropped, repaired or guessed, with counts.

Nothing is lost silently: every event that does not reach the model unchanged is counted
here under a stable code, and ``traceconv info`` prints the list.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass

from .diagnostic_codes import DEFAULT_SEVERITY, RENAMED, Kind, Severity, lookup
from .frozen import FrozenTraceError, FrozenWhenUnpickled, freeze_records

__all__ = ["DEFAULT_SEVERITY", "UNKNOWN_CARRIED", "Diagnostic", "Diagnostics", "Kind", "Severity"]


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

    def count_more(self, count: int, example: object = None) -> None:
        """Add ``count`` occurrences; the first example is kept, cut to 200 characters.

        >>> item = Diagnostic("x.y", "note", "info", "a finding")
        >>> item.count_more(2, example=7); item.count_more(1, example="later"); item
        Diagnostic(code='x.y', kind='note', severity='info', message='a finding', count=3, example='7')
        """
        self.count += count
        if self.example is None and example is not None:
            text = example if isinstance(example, str) else repr(example)
            self.example = text if len(text) <= 200 else text[:197] + "..."


# what a file's own diagnostics are counted under when this table does not register their
# code (a newer traceconv's, or made up) or their count is not a whole number of findings
UNKNOWN_CARRIED = "input.unknown_diagnostic"
_COUNT_LIMIT = 2**63 - 1


class Diagnostics(FrozenWhenUnpickled):
    """An ordered collection of :class:`Diagnostic`, aggregated by code.

    A call names the code only: its kind, severity and text are the code table's
    (:mod:`traceconv.model.diagnostic_codes`), and a code that is not there raises.

    >>> diags = Diagnostics()
    >>> diags.add("chrome.flow_unbound", count=2)
    >>> diags.add("chrome.flow_unbound", example="id 7")
    >>> item = diags["chrome.flow_unbound"]
    >>> item.count, item.kind, item.severity, item.example
    (3, 'dropped', 'warning', 'id 7')
    >>> diags.add("chrome.made_up")
    Traceback (most recent call last):
    ValueError: diagnostic code 'chrome.made_up' is not registered in traceconv.model.diagnostic_codes
    """

    __slots__ = ("_frozen", "_items")

    def __init__(self) -> None:
        self._items: dict[str, Diagnostic] = {}
        self._frozen = False

    def freeze(self) -> None:
        """Refuse new findings and changed ones from now on (those of a frozen trace are
        final)."""
        if self._frozen:
            return
        freeze_records(list(self._items.values()))
        self._frozen = True

    def copy(self) -> Diagnostics:
        """An unfrozen collection with the same findings.

        >>> diags = Diagnostics(); diags.add("merge.clocks"); diags.freeze()
        >>> more = diags.copy(); more.add("merge.clocks"); more.count("merge.clocks"), diags.count("merge.clocks")
        (2, 1)
        """
        new = Diagnostics()
        new.extend(self)
        return new

    def add(self, code: str, *, count: int = 1, example: object = None) -> None:
        """Count ``count`` occurrences of ``code`` (none when ``count`` is 0 or less); the
        first example is kept. The code must be in the table, even when nothing is counted,
        so that a rarely taken path cannot hold a misspelt one."""
        if self._frozen:
            raise FrozenTraceError
        item = self._items.get(code)
        if item is None:
            info = lookup(code)
            if info is None:
                raise ValueError(f"diagnostic code {code!r} is not registered in "
                                 "traceconv.model.diagnostic_codes")
            if count <= 0:
                return
            item = self._items[code] = Diagnostic(code, info.kind, info.severity, info.text)
        elif count <= 0:
            return
        item.count_more(count, example)

    def add_carried(self, code: object, *, count: object = 1, example: object = None) -> None:
        """Count a finding that a file says an earlier read made (the diagnostics that a
        ``.pftrace`` written by traceconv carries). They are input, trusted no further than
        their code: a code the table registers is counted under it, with the table's kind,
        severity and text whatever the file says (a code since renamed, under its new name:
        :data:`.diagnostic_codes.RENAMED`); a code it does not register (a newer
        traceconv's, or made up), one that is not text, or a count that is not a whole
        number from 1 to 2^63-1 is counted under ``input.unknown_diagnostic``, the file's
        code as its example.

        >>> diags = Diagnostics()
        >>> diags.add_carried("chrome.flow_unbound", count=4, example="id 9")
        >>> diags.add_carried("chrome.from_the_future", count=2)
        >>> diags.add_carried("merge.clocks", count="many")
        >>> [(d.code, d.kind, d.count, d.example) for d in diags]
        [('chrome.flow_unbound', 'dropped', 4, 'id 9'), ('input.unknown_diagnostic', 'note', 3, 'chrome.from_the_future')]
        >>> diags.add_carried("nsys.free_without_allocation", count=2)
        >>> diags.count("nsys.free_without_alloc")
        2
        """
        if isinstance(code, str):
            code = RENAMED.get(code, code)
        whole = count if isinstance(count, int) and not isinstance(count, bool) \
            and 0 < count <= _COUNT_LIMIT else None
        if whole is not None and isinstance(code, str) and lookup(code) is not None:
            self.add(code, count=whole, example=example if isinstance(example, str) else None)
            return
        self.add(UNKNOWN_CARRIED, count=whole or 1,
                 example=code if isinstance(code, str) else f"a code of type {type(code).__name__}")

    def extend(self, other: Diagnostics) -> None:
        """Merge the counts of ``other`` into this collection (its codes are registered:
        :meth:`add` and :meth:`add_carried` let no other in)."""
        for item in other:
            self.add(item.code, count=item.count, example=item.example)

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
        >>> diags.add("chrome.flow_unbound", count=3)
        >>> diags.add("kineto.flows_from_correlation")
        >>> diags
        <Diagnostics: 2 codes, 4 items: chrome.flow_unbound ×3 (dropped), kineto.flows_from_correlation ×1 (guessed)>
        """
        if not self._items:
            return "<Diagnostics: none>"
        ranked = sorted(self._items.values(), key=lambda d: -d.count)
        shown = ", ".join(f"{d.code} ×{d.count:,} ({d.kind})" for d in ranked[:5])
        more = f", +{len(ranked) - 5} more" if len(ranked) > 5 else ""
        total = sum(d.count for d in ranked)
        return f"<Diagnostics: {len(ranked)} codes, {total:,} items: {shown}{more}>"
