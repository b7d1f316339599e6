"""Blank heads (found by a hostile-input round): a file of blank lines took minutes to be
told apart, because sniffers' line patterns let ``\\s*`` span every blank line after a line
start and tried each split of them (MIGraphX's and Paddle's report sniffers), and ten
newlines were taken for Perfetto packets. Every sniffer of the registry now says "not
mine" to such heads (a run that hangs shows as the suite's time limit, not as a number
checked here), and the command line says so in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from traceconv import registry
from traceconv.cli import app

HEADS = {"blank lines": b" \n" * 32768, "newlines": b"\n" * 65536, "spaces": b" " * 65536,
         "tabs and CR": b"\t\r\n" * 21845, "mixed": b" \t \n\n \r\n" * 9000}


@pytest.mark.parametrize("head", list(HEADS.values()), ids=list(HEADS))
def test_no_sniffer_claims_a_blank_head(head: bytes):
    registry._ensure_loaded()
    claimed = {info.name: score for info in registry._FORMATS.values()
               if info.reads and (sniff := info.sniff_function()) is not None
               and (score := sniff(head, None))}
    assert claimed == {}


@pytest.mark.parametrize("name", ["report.txt", "trace.json", "x.log"])
def test_a_blank_file_is_one_line(tmp_path: Path, name: str):
    path = tmp_path / name
    path.write_bytes(b"\n" * 16_000)
    result = CliRunner().invoke(app, ["info", str(path)])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0], result.output
