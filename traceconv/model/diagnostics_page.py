"""``docs/diagnostics.md``, generated from the table of diagnostic codes.

Regenerate it after changing :mod:`traceconv.model.diagnostic_codes` (a test fails while
the page and the table differ)::

    python -m traceconv.model.diagnostics_page > docs/diagnostics.md

>>> page = markdown()
>>> page.splitlines()[0]
'# Diagnostic codes'
>>> "| `chrome.missing_timestamp` | dropped | warning | events without ts |" in page
True
"""

from __future__ import annotations

from .diagnostic_codes import CODES

_INTRO = """\
# Diagnostic codes

What readers, writers and transformations count when they drop, repair or guess something
(`traceconv info` lists a trace's, with a count and a first example). Generated from the one
table of codes, `traceconv/model/diagnostic_codes.py`, by
`python -m traceconv.model.diagnostics_page > docs/diagnostics.md`: a code's kind, severity
and meaning live there only, code that counts something names the code alone, and a code
that is not in the table is refused. `{placeholder}` parts vary (`align.residual.{index}` is
`align.residual.1`, ...); what varies from one finding to the next (a number, a name, a
place) is in the example.

A `.pftrace` written by traceconv carries the diagnostics of its first read. Reading it back
counts each under its code with this table's kind and meaning, whatever the file says; a
code this version does not know (from a newer traceconv, or made up) or a count that is not
a whole number is counted under `input.unknown_diagnostic`, the file's code as its example.

| code | kind | severity | meaning |
| --- | --- | --- | --- |
"""


def markdown() -> str:
    """The page: the rules, then one row per code of the table, in its order."""
    rows = []
    for c in CODES:
        meaning = c.text.replace("|", "\\|")   # (a bar would end the cell)
        rows.append(f"| `{c.code}` | {c.kind} | {c.severity} | {meaning} |")
    return _INTRO + "\n".join(rows) + "\n"

if __name__ == "__main__":
    print(markdown(), end="")
