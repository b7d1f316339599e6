"""A rule: an id, the concepts it needs, the check, and its documented threshold."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .context import CONCEPTS, Context
from .finding import Finding

Check = Callable[[Context], list[Finding]]


@dataclass(frozen=True)
class Rule:
    """One advice rule. ``needs`` lists concepts; a tuple inside it means "any one of these".

    ``measures``, ``threshold`` and ``source`` are the rule table of ``docs/advise.md``.
    """

    id: str
    needs: tuple[str | tuple[str, ...], ...]
    check: Check
    measures: str
    threshold: str
    source: str

    def __post_init__(self) -> None:
        for need in self.needs:
            for concept in (need,) if isinstance(need, str) else need:
                if concept not in CONCEPTS:
                    raise ValueError(f"rule {self.id}: unknown concept {concept!r}")

    def missing(self, ctx: Context) -> list[str]:
        """The needed concepts the trace lacks ("a or b" for alternatives)."""
        absent = []
        for need in self.needs:
            options = (need,) if isinstance(need, str) else need
            if not any(ctx.has(concept) for concept in options):
                absent.append(" or ".join(options))
        return absent
