"""An empty output name, and an input that can be read once given twice: one line each,
before anything is read or written."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from traceconv.cli import app

SAMPLE = Path(__file__).parent.parent / "samples" / "torch" / "cnn_step5.pt.trace.json"
# every command that takes -o: (its words before the input, after it)
WRITING = [(["convert"], ["--to", "perfetto"]), (["critical-path"], ["--highlight"]),
           (["diff"], [str(SAMPLE)]), (["memflow"], []), (["overview"], []),
           (["report"], []), (["split"], ["--by", "count=2"]), (["batch"], [])]


@pytest.mark.parametrize(("before", "after"), WRITING, ids=[w[0][0] for w in WRITING])
def test_an_empty_output_name_is_a_usage_error(tmp_path: Path, before: list[str],
                                               after: list[str]) -> None:
    """(was: taken as no -o, the output written beside the input)"""
    trace = tmp_path / SAMPLE.name
    shutil.copy(SAMPLE, trace)
    result = CliRunner().invoke(app, [*before, str(trace), *after, "-o", ""])
    assert result.exit_code == 2, result.output
    assert "an empty name" in result.output
    assert os.listdir(tmp_path) == [SAMPLE.name]


@pytest.mark.parametrize("command", [["info", "-", "-"], ["diff", "-", "-"],
                                     ["advise", "-", "-"]])
def test_standard_input_given_twice_is_refused(command: list[str]) -> None:
    result = CliRunner().invoke(app, command, input=SAMPLE.read_bytes())
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "traceconv: error: <stdin>: given twice: standard input or a FIFO yields its bytes "
        "once, so it can be read once"]


def test_a_fifo_given_twice_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    """(no writer ever opens it: refused at once, not after 30 s waiting for one)"""
    fifo = tmp_path / "in.json"
    os.mkfifo(fifo)
    result = CliRunner().invoke(app, ["diff", str(fifo), str(fifo)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"traceconv: error: {fifo}: given twice: standard input or a FIFO yields its bytes "
        "once, so it can be read once"]
