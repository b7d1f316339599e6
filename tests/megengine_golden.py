"""Parse the text that MegEngine's ``profile_analyze`` printed (the reference outputs)."""

from __future__ import annotations

import gzip
import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class GoldenTable:
    header: list[str]
    rows: list[list[list[str]]] = field(default_factory=list)  # row → column → lines


@dataclass
class Golden:
    totals: dict[str, str] = field(default_factory=dict)
    tables: list[GoldenTable] = field(default_factory=list)
    dump_lines: list[str] = field(default_factory=list)


def read_text(path: Path) -> str:
    gz = path.with_name(path.name + ".gz")
    return gzip.decompress(gz.read_bytes()).decode() if gz.exists() else path.read_text()


def _cells(line: str, sep: str) -> list[str]:
    return [c.strip() for c in line.strip()[1:-1].split(sep)]


def parse(text: str) -> Golden:
    """Totals, fancy_grid tables (multi-line cells) or orgtbl tables, and plain dump lines."""
    golden = Golden()
    table: GoldenTable | None = None
    for line in text.splitlines():
        if m := re.match(r"\|? ?(total (?:device|host) time)\s*\|?\s*(\S+)", line):
            golden.totals[m.group(1)] = m.group(2)
        elif line.startswith("╒"):
            table = None
        elif line.startswith("│"):
            cells = _cells(line, "│")
            if table is None:
                table = GoldenTable(cells)
                golden.tables.append(table)
            elif cells[0].startswith("#"):
                table.rows.append([[c] if c else [] for c in cells])
            else:
                for col, cell in zip(table.rows[-1], cells, strict=True):
                    if cell:
                        col.append(cell)
        elif line.startswith("|") and not line.startswith("|--"):
            cells = _cells(line, "|")
            if cells[0] == "#":
                table = GoldenTable(cells)
                golden.tables.append(table)
            elif table is not None and cells[0].isdigit():
                table.rows.append([[c] for c in cells])
        elif line and not line.startswith(("-", "╘", "├", "╞", "|")):
            golden.dump_lines.append(line)
    return golden
