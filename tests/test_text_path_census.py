"""Census of the one text path: every reader of text lines (a registry row with
``text=True``) reads its real samples the same after each paste the project knows of
(:mod:`tests.paste_variants`, and the line ends, spaces and markup a terminal, a chat or a
page adds). A text reader that reads its lines its own way (not through
``pasted_text.pasted_lines``, or detects from the raw head) loses rows under one of them.

Expected rows: the original file's read, and for the drawn ``nsys stats`` tables an
independent count of the lines between a rule and the next blank line (plain ``re``).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import traceconv
from tests import paste_variants as pv
from traceconv import registry
from traceconv.io import Source

ROOT = Path(__file__).resolve().parent.parent
NSYS_CONSOLE = sorted(p for p in (ROOT / "tests/data/nsys_stats").iterdir()
                      if p.suffix in (".txt", ".md", ".cu") and p.name != "PROVENANCE.md")
TEXT_FORMATS = sorted(info.name for info in registry.all_formats() if info.text)


def samples() -> list[tuple[str, Path]]:
    """Each text format's real text samples: its text seeds, and nsys's console outputs."""
    found = [(name, ROOT / seed.path) for name in TEXT_FORMATS
             for seed in registry.seed_samples(name) if seed.syntax == "text"]
    return found + [("nsys-stats", path) for path in NSYS_CONSOLE]


_ANSI_WORD = re.compile(r"\S+")
VARIANTS = {
    "crlf": pv.crlf,
    "cr": lambda text: text.replace("\n", "\r"),
    "u2028": lambda text: text.replace("\n", "\u2028"),
    "nel": lambda text: text.replace("\n", "\x85"),
    "leading tabs": pv.tabs,
    "gaps as tabs": lambda text: re.sub(r"(?<=\S)  +(?=\S)", "\t", text),
    "quote": lambda text: "\n".join("> " + line for line in pv.lines_of(text)),
    "ansi": lambda text: _ANSI_WORD.sub(lambda m: f"\x1b[1;32m{m[0]}\x1b[0m", text),
    "nbsp": lambda text: text.replace("  ", "\u00a0 "),
    "fence": lambda text: f"```text\n{text.rstrip()}\n```\n",
    # a blank line after every line: a chat's double spacing, an editor's CR CR LF, a form
    # feed printed after each newline
    "double spaced": lambda text: text.replace("\n", "\n\n"),
    "cr cr lf": lambda text: text.replace("\n", "\r\r\n"),
    "ff after lf": lambda text: text.replace("\n", "\n\f"),
    "html pre": lambda text: f"<html><body><pre>{text.rstrip().replace('&', '&amp;')}"
                             "</pre></body></html>\n",
}


def rows_of(path: Path) -> list[tuple]:
    """What a read holds, row by row: its statistics and its slices."""
    trace = traceconv.load(path)
    return ([("stat", s.section, s.name, s.calls, s.total_ns) for s in trace.stats]
            + [("slice", s.name, s.dur) for s in trace.iter_slices()])


def test_every_reader_of_text_seeds_is_on_the_text_path():
    """A reader whose seeds are text says so in the registry (so the census reads it)."""
    text_seeded = {name for name, seeds in registry.SEED_SAMPLES.items()
                   if any(seed.syntax == "text" for seed in seeds)}
    assert text_seeded <= set(TEXT_FORMATS)
    assert {"nsys-stats", "paddle-report", "paddle-summary", "migraphx"} <= set(TEXT_FORMATS)


def _ruled_rows(text: str) -> int:
    """Lines under a rule that is under a header (a dash rule, or a box's middle rule), up
    to a blank line or the box's bottom rule, but a Markdown fence (one that cut a paste
    short); a line commented out (``// ``, a paste in a source file) counted as the line."""
    count, inside, previous = 0, False, ""
    for line in (re.sub(r"^ {0,3}// ?", "", line) for line in text.splitlines()):
        is_rule = re.fullmatch(r"\s*(?:-+\s+)*-+\s*|\s*\+[-+]+\s*", line) is not None
        if is_rule:
            inside = not inside and bool(previous.strip()) and not previous.lstrip().startswith("+")
        elif not line.strip():
            inside = False
        elif inside and not line.startswith("```"):
            count += 1
        previous = line
    return count


@pytest.mark.parametrize("path", NSYS_CONSOLE, ids=lambda p: p.name)
def test_nsys_console_rows_match_an_independent_count(path):
    trace = traceconv.load(path)
    drawn_rows = _ruled_rows(path.read_text(encoding="utf-8"))
    not_read = trace.diagnostics.count("nsys_stats.table_not_read")
    assert len(trace.stats) + not_read == drawn_rows


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("name", "path"), samples(), ids=lambda v: getattr(v, "name", v))
def test_every_paste_reads_the_same_rows(name, path, variant, tmp_path):
    original = path.read_text(encoding="utf-8")
    pasted = tmp_path / path.name
    pasted.write_bytes(VARIANTS[variant](original).encode())
    assert registry.detect(Source(str(pasted))).name == name
    assert rows_of(pasted) == rows_of(path)
