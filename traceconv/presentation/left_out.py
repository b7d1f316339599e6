"""What a read left out, by code, in one wording: the line on stderr after a read
(:mod:`traceconv.cli.digest`) and the note under ``summary``'s totals both say it so."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import Diagnostics


def dropped(diagnostics: Diagnostics, besides: Collection[str] = ()) -> list[tuple[int, str]]:
    """(count, code) of every ``dropped`` diagnostic, the largest first; codes whose last
    part is in ``besides`` (what the caller says in its own words) are not listed.

    >>> from traceconv.model import Diagnostics
    >>> found = Diagnostics(); found.add("chrome.malformed_event", count=2)
    >>> found.add("csv.row_cut", count=5); found.add("model.name_cut", count=1)   # (repaired)
    >>> dropped(found), dropped(found, besides=("row_cut",))
    ([(5, 'csv.row_cut'), (2, 'chrome.malformed_event')], [(2, 'chrome.malformed_event')])
    """
    return sorted(((item.count, item.code) for item in diagnostics
                   if item.kind == "dropped" and item.code.rsplit(".", 1)[-1] not in besides),
                  key=lambda pair: (-pair[0], pair[1]))


def counts_text(lost: list[tuple[int, str]], shown: int, changed: dict[str, int]) -> str:
    """How much was left out, the first ``shown`` codes of ``lost`` by name, then the
    counts of ``changed`` (repaired, guessed) that are not 0.

    >>> counts_text([(9, "a.x"), (2, "a.y"), (1, "a.z")], 1, {})
    '12 left out (a.x 9, +2 codes)'
    >>> counts_text([(9, "a.x"), (2, "a.y")], 0, {"repaired": 1, "guessed": 0})
    '11 left out (2 codes); 1 repaired'
    >>> counts_text([], 0, {"repaired": 3, "guessed": 1})
    'nothing left out; 3 repaired, 1 guessed'
    """
    kept = ", ".join(f"{count:,} {kind}" for kind, count in changed.items() if count)
    if not lost:
        return f"nothing left out; {kept}"
    codes = [code if len(lost) == 1 else f"{code} {count:,}" for count, code in lost[:shown]]
    if shown < len(lost):
        more = len(lost) - shown
        codes.append(f"{'+' if shown else ''}{more} code{'s' if more > 1 else ''}")
    text = f"{sum(count for count, _ in lost):,} left out ({', '.join(codes)})"
    return f"{text}; {kept}" if kept else text
