"""Real-world variants of a report: what users paste instead of the pristine file.

Each transformation is a plain text operation that knows nothing of the readers: drop the
banner / titles / header, keep a few rows, collapse whitespace, hard-wrap at a width (as a
terminal does: cut at the column, the rest on the next line), cut at a line, CRLF line ends,
tabs for runs of spaces, two reports in one file. The tests compare what the readers get
from a variant with what they get from the pristine text, and count rows with the simple
regexes below (independent of the readers' grammar).
"""

from __future__ import annotations

import re
from collections.abc import Callable

Transform = Callable[[str], str]

PADDLE_ROW = re.compile(r"^\s*\S.*\s\d+\s+[-+\d.e]+(?:\s*\(?[-+\d.e]+\)?)*\*?\s*$")
PADDLE_HEADER = re.compile(r"^\s*Event\s+Calls\s+Total")
PADDLE_CONTEXT = re.compile(r"^\s*(?:-{5,}.*(?:Report|Summary)\s*<?-{5,}|Place:|Time unit:|"
                            r"Sorted by|Note! This Report)")
MIGRAPHX_INSTRUCTION = re.compile(r"^\s*[^\s=]+ = ")


def lines_of(text: str) -> list[str]:
    return text.split("\n")


def drop(pattern: re.Pattern[str]) -> Transform:
    """Remove every line that ``pattern`` matches (a banner, titles, the header)."""
    return lambda text: "\n".join(line for line in lines_of(text) if not pattern.search(line))


def collapse(text: str) -> str:
    """Runs of spaces to one, as a web page shows pasted text (indentation too)."""
    return re.sub(r"[ \t]+", " ", text)


def hard_wrap(width: int) -> Transform:
    """Cut every line at ``width`` columns, the rest on the next lines (a terminal's wrap)."""
    def wrap(text: str) -> str:
        out = []
        for line in lines_of(text):
            line = line.rstrip()
            out.extend([line[i:i + width] for i in range(0, len(line), width)] or [""])
        return "\n".join(out)
    return wrap


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def tabs(text: str) -> str:
    """Eight leading spaces to a tab, as editors that keep tabs save indentation."""
    return "\n".join(re.sub(r"^((?: {8})+)", lambda m: "\t" * (len(m[1]) // 8), line)
                     for line in lines_of(text))


def twice(text: str) -> str:
    """Two reports in one file (two runs pasted one after the other)."""
    return text.rstrip("\n") + "\n\n" + text


def keep_rows(pattern: re.Pattern[str], count: int) -> Transform:
    """Only the first ``count`` lines that ``pattern`` matches (one or two rows alone)."""
    def keep(text: str) -> str:
        return "\n".join([line for line in lines_of(text) if pattern.match(line)][:count])
    return keep


def cut_at(line: int, column: int | None = None) -> Transform:
    """The text up to ``line`` (0-based), that line cut at ``column`` (a paste cut short)."""
    def cut(text: str) -> str:
        lines = lines_of(text)[:line + 1]
        if column is not None and lines:
            lines[-1] = lines[-1][:column]
        return "\n".join(lines)
    return cut


WRAP_WIDTHS = (60, 80, 100, 120)
