"""The result of ``traceconv check``: what a file holds and what a viewer would get wrong.

Shared by the Perfetto protobuf validator and the Chrome JSON checker. Findings are
:class:`~traceconv.model.diagnostics.Diagnostic` records with severity ``error`` (the viewer
drops or corrupts data) or ``warning`` (it shows something other than what was meant). They
are what a viewer would do with a file, not what a reader did, so their codes are not the
diagnostics table's: each finding carries its own text.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .diagnostics import Diagnostic


@dataclass
class CheckReport:
    """Counts plus errors and warnings, each with a count and a first example.

    >>> report = CheckReport("perfetto", {"slices": 2})
    >>> report.error("end_without_begin", "END with no open BEGIN", example="ts=5")
    >>> report.ok, report.as_dict()["errors"][0]["count"]
    (False, 1)
    """

    format: str
    counts: dict[str, int] = field(default_factory=dict)
    findings: dict[str, Diagnostic] = field(default_factory=dict)

    def error(self, code: str, message: str, *, count: int = 1, example: object = None) -> None:
        self._find(Diagnostic(code, "dropped", "error", message), count, example)

    def warning(self, code: str, message: str, *, count: int = 1,
                example: object = None) -> None:
        self._find(Diagnostic(code, "note", "warning", message), count, example)

    def _find(self, new: Diagnostic, count: int, example: object) -> None:
        """Count a finding under its code; the first message and example are kept."""
        if count > 0:
            self.findings.setdefault(new.code, new).count_more(count, example)

    def _of(self, severity: str) -> list[dict]:
        return [{"code": d.code, "message": d.message, "count": d.count, "example": d.example}
                for d in self.findings.values() if d.severity == severity]

    @property
    def errors(self) -> list[dict]:
        return self._of("error")

    @property
    def warnings(self) -> list[dict]:
        return self._of("warning")

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_dict(self) -> dict:
        """The object ``traceconv check --json`` prints."""
        return {"ok": self.ok, "format": self.format, "counts": dict(self.counts),
                "errors": self.errors, "warnings": self.warnings}
