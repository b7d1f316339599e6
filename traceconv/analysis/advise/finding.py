"""What a rule reports: a finding, or why it could not judge."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SEVERITIES = ("high", "medium", "info")


def _labelled(item: Finding | Skipped) -> dict[str, Any]:
    """The item's fields; ``trace`` only when several inputs were advised, ``cause`` only
    when the rule tells causes apart."""
    data = asdict(item)
    for optional in ("trace", "cause"):
        if data.get(optional, "") is None:
            del data[optional]
    return data


@dataclass
class Finding:
    """One piece of advice: which rule, how bad, the numbers that fired it, where, what to try.

    >>> Finding("gpu-idle", "high", "GPU idle 70% of the steps", {"idle_share": 0.7},
    ...         {"devices": ["GPU 0"]}, "Overlap data loading.").as_dict()["severity"]
    'high'
    """

    rule: str
    severity: str
    title: str
    evidence: dict[str, Any]
    where: dict[str, Any]
    advice: str
    trace: str | None = None   # which input (several may be advised at once)
    cause: str | None = None   # which of the rule's causes: picks the advice's words

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, not {self.severity!r}")

    def as_dict(self) -> dict[str, Any]:
        return _labelled(self)


@dataclass
class Skipped:
    """A rule that did not run on a trace, and why (``not applicable: missing X``)."""

    rule: str
    reason: str
    trace: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return _labelled(self)


@dataclass
class Advice:
    """Everything ``advise`` found: findings (most severe first) and the rules it skipped."""

    findings: list[Finding] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)   # rules that ran and found nothing

    def as_dict(self) -> dict[str, Any]:
        return {"findings": [f.as_dict() for f in self.findings],
                "skipped": [s.as_dict() for s in self.skipped],
                "passed": list(self.passed)}

    def rules_fired(self) -> list[str]:
        return [f.rule for f in self.findings]

    def __repr__(self) -> str:
        """Which rules fired (with severity), and how many passed or were skipped.

        >>> Advice(passed=["gpu-idle"])
        <Advice: no findings; 1 passed, 0 not applicable>
        """
        fired = ", ".join(f"{f.rule} ({f.severity})" for f in self.findings) or "no findings"
        return (f"<Advice: {fired}; {len(self.passed)} passed, "
                f"{len({s.rule for s in self.skipped})} not applicable>")
