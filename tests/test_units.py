"""One units module (issue 21, part 4): a size means one thing in every option, and bytes
and times are written by one formatter each."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from traceconv.cli.app import app
from traceconv.io import parse_size
from traceconv.units import (
    UnitError,
    column_figures,
    column_unit,
    format_bytes,
    format_duration,
    parse_bytes,
)

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "torch" / "cnn_step5.pt.trace.json"


@pytest.mark.parametrize(("text", "size"), [
    ("2MB", 2_000_000), ("2mb", 2_000_000), ("2 MiB", 2 * 1024 * 1024), ("2M", 2 * 1024 * 1024),
    ("1kB", 1000), ("1KiB", 1024), ("1K", 1024), ("3GB", 3 * 10**9), ("3GiB", 3 * 2**30),
    ("1TB", 10**12), ("1.5MiB", 1_572_864), ("512", 512), ("512B", 512)])
def test_one_meaning_per_unit(text: str, size: int) -> None:
    assert parse_bytes(text) == size
    assert parse_size(text) == size   # --max-bytes read 2MB as 2 MiB before


@pytest.mark.parametrize("text", ["", "MB", "2 XB", "-1MB", "1e400GB", "two"])
def test_unreadable_sizes(text: str) -> None:
    with pytest.raises(UnitError):
        parse_bytes(text)


def test_max_bytes_reads_decimal_megabytes() -> None:
    size = SAMPLE.stat().st_size
    assert 1_100_000 < size < 1.1 * 2**20   # 1.1 MB < the sample < 1.1 MiB
    refused = CliRunner().invoke(app, ["info", str(SAMPLE), "--max-bytes", "1.1MB"])
    assert refused.exit_code == 1 and "1.049 MiB limit" in refused.output
    assert CliRunner().invoke(app, ["info", str(SAMPLE), "--max-bytes", "1.1MiB"]).exit_code == 0


def test_formatters() -> None:
    assert [format_bytes(n) for n in (0, 1023, 1536, 2_000_000, 3 * 2**30)] == [
        "0 B", "1023 B", "1.5 KiB", "1.91 MiB", "3 GiB"]
    assert [format_duration(n) for n in (999, 1_500, 2_500_000, 61e9)] == [
        "999 ns", "1.5 µs", "2.5 ms", "61 s"]


# Functions that write sizes in a framework's own format, on purpose (see traceconv/units.py)
FRAMEWORK_FORMATS = {("presentation/summary/ops.py", "format_bytes"),          # torch.profiler
                     ("presentation/summary/__init__.py", "number_with_unit")}  # profile_analyze


def test_one_byte_formatter() -> None:
    """The five byte formatters (report, memflow, io, ...) are one, but where a table copies
    a framework's print-out."""
    writer = re.compile(r"(format|human|pretty|fmt|show).*(bytes|size)|with_unit")
    found = {(str(path.relative_to(ROOT / "traceconv")), node.name)
             for path in (ROOT / "traceconv").rglob("*.py")
             for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.FunctionDef) and writer.search(node.name)}
    assert found - FRAMEWORK_FORMATS == {("units.py", "format_bytes")}


def test_column_unit_keeps_four_digits_before_the_point() -> None:
    """A column's unit: the finest of ns, µs, ms in which its largest value has at most four
    digits before the point (hand-picked edges), never coarser than ms."""
    assert [column_unit(n)[0] for n in (0, 9_999, 10_000, 9_999_999, 10_000_000, 3e12)] == [
        "ns", "ns", "µs", "µs", "ms", "ms"]
    assert column_figures([30, 100, 0]) == ("ns", ["30", "100", "0"])
    assert column_figures([12_000, 400]) == ("µs", ["12.000", "0.400"])


# a number scaled by hand, or a nanosecond value, written in an f-string just before a time
# unit: a lone duration that does not go through units.format_duration
_TIME_UNIT = re.compile(r"^\s?(?:s|ms|µs|us|ns)\b")
_NANOSECONDS = re.compile(r"\bns\b|_ns\b")
# the torch.profiler table's own time format, digit for digit (see traceconv/units.py)
FRAMEWORK_TIME_FORMATS = {"presentation/summary/ops.py"}


def _lone_durations(source: str) -> list[int]:
    """Lines of ``source`` whose f-strings put a scaled or nanosecond value before a unit."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.JoinedStr):
            continue
        for value, after in zip(node.values, node.values[1:], strict=False):
            if not (isinstance(value, ast.FormattedValue) and isinstance(after, ast.Constant)
                    and isinstance(after.value, str) and _TIME_UNIT.match(after.value)):
                continue
            scaled = isinstance(value.value, ast.BinOp) and isinstance(
                value.value.op, (ast.Div, ast.Mult))
            if scaled or _NANOSECONDS.search(ast.get_source_segment(source, value.value) or ""):
                lines.append(node.lineno)
    return lines


def test_census_finds_the_old_fixed_units() -> None:
    """The census below sees the forms it forbids (the ones the code had)."""
    assert _lone_durations('f"span {ns / 1e6:,.3f} ms"') == [1]
    assert _lone_durations('f"up to {worst / 1e3:,.1f} µs"') == [1]
    assert _lone_durations('f"({path.length_ns:,} ns)"') == [1]
    assert _lone_durations('f"Δ {ms(delta_ns)} ms"') == [1]
    assert _lone_durations('f"{format_duration(ns)} of work"') == []
    assert _lone_durations('f"waited {FIFO_WAIT_SECONDS:g} s"') == []


def test_one_duration_rule() -> None:
    """Every lone duration a person reads (headline, sentence, title, SVG label, diagnostic
    example) is written by units.format_duration: no module scales nanoseconds to a fixed
    unit itself (that printed a 300 ns trace as "0.000 ms")."""
    found = {(str(path.relative_to(ROOT / "traceconv")), line)
             for path in (ROOT / "traceconv").rglob("*.py")
             for line in _lone_durations(path.read_text())}
    assert {(path, line) for path, line in found if path not in FRAMEWORK_TIME_FORMATS} == set()
