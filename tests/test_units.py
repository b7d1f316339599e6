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
from traceconv.units import UnitError, format_bytes, format_duration, parse_bytes

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
