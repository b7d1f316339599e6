"""Running the command line in-process and holding a failure to its contract: exit status 1
and exactly one located ``traceconv: error:`` line, never a traceback."""

from __future__ import annotations

from click.testing import CliRunner, Result

from traceconv.cli import app


def run(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


def one_error_line(result: Result, *needles: str) -> str:
    """The run failed with exit 1 and exactly one ``traceconv: error:`` line with ``needles``."""
    assert result.exit_code == 1, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("traceconv: error: "), result.stderr
    assert "internal error" not in lines[0] and "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]
