"""The one list of rules ``advise`` runs, in report order."""

from __future__ import annotations

from .rule import Rule
from .rules import communication, copies, host, idle, memory, precision

RULES: tuple[Rule, ...] = (*idle.RULES, *copies.RULES, *precision.RULES, *host.RULES,
                           *communication.RULES, *memory.RULES)


def rule(rule_id: str) -> Rule:
    """The rule called ``rule_id``.

    >>> rule("gpu-idle").id
    'gpu-idle'
    """
    for candidate in RULES:
        if candidate.id == rule_id:
            return candidate
    raise KeyError(f"no advise rule {rule_id!r} (known: {', '.join(r.id for r in RULES)})")
