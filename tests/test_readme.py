"""The README runs as written: its commands and its Python tour, on the bundled samples.

How the README is read (keep to this when adding a section):

- ```` ```console ```` blocks: every line that starts with ``$ traceconv`` is a command; it is
  run by ``bash`` from a scratch copy of the repository's ``samples/`` and ``docs/`` (so the
  files it writes land there), one block after another in README order, so a later block
  may use what an earlier one wrote. Other ``$`` lines (``pip``, ``pytest``, ``ls``,
  benchmarks) are not run. The lines after a command, up to the next ``$`` line, are what it
  prints (standard output and error together); a command shown with no lines only has to
  succeed. A command that is meant to fail shows ``traceconv: error: ...``.
- Output is compared line by line after these normalisations only: trailing blanks are
  dropped; rich tables are drawn at the width of the widest line shown for that command
  (``COLUMNS``), so a table that fills the terminal reads the same; in ``wrote ...`` lines,
  wall-clock times (``0.18 s``) become ``<time>`` and output sizes (``102,853 bytes``)
  ``<size>`` (they change with every drawing detail).
- ```` ```python ```` blocks run in order in one namespace, from the same scratch folder. An
  expression statement whose next line is a comment (``# (2725, 'PyTorch', 'unix epoch')``)
  must have that ``repr`` (several comment lines: a multi-line ``repr``, such as a pandas
  frame's).
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)
TIME_IN_WROTE = re.compile(r"(?<=, )\d+(\.\d+)? s\)")
SIZE_IN_WROTE = re.compile(r"\b\d[\d,]* bytes\b")


@dataclass
class Command:
    line: int
    command: str
    expected: list[str] = field(default_factory=list)


def blocks(kind: str) -> list[tuple[int, str]]:
    """(line number, body) of every fenced block of ``kind`` in the README."""
    text = README.read_text()
    return [(text.count("\n", 0, m.start()) + 2, m.group(2)) for m in FENCE.finditer(text)
            if m.group(1) == kind]


def console_commands() -> list[Command]:
    commands: list[Command] = []
    for first, body in blocks("console"):
        current: Command | None = None
        for offset, line in enumerate(body.splitlines()):
            if line.startswith("$ "):
                current = None
                if line.startswith("$ traceconv"):
                    current = Command(first + offset, line[2:])
                    commands.append(current)
            elif current is not None:
                current.expected.append(line)
    return commands


def normalised(lines: list[str]) -> list[str]:
    return [SIZE_IN_WROTE.sub("<size>", TIME_IN_WROTE.sub("<time>)", line.rstrip()))
            if line.startswith("wrote ") else line.rstrip() for line in lines]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with copies of samples/ and docs/ (commands write next to their inputs)."""
    folder = tmp_path_factory.mktemp("readme")
    for name in ("samples", "docs"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, folder / name)
    return folder


COMMANDS = console_commands()


def test_the_readme_shows_commands():
    assert len(COMMANDS) >= 8


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: f"README.md:{c.line}")
def test_console_command(cmd: Command, scratch: Path):
    width = max([80, *(len(line.rstrip()) for line in cmd.expected)])
    bindir = os.path.dirname(sys.executable)
    env = {**os.environ, "COLUMNS": str(width), "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
           "NO_COLOR": "1", "TERM": "dumb"}
    env.pop("FORCE_COLOR", None)
    run = subprocess.run(["bash", "-c", cmd.command], cwd=scratch, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600,
                         check=False)
    got = normalised(run.stdout.rstrip("\n").splitlines())
    if not cmd.expected:
        assert run.returncode == 0, run.stdout
        return
    expected = normalised(cmd.expected)
    failing = bool(expected) and expected[0].startswith("traceconv: error:")
    assert (run.returncode != 0) == failing, run.stdout
    assert got == expected


def python_steps(source: str) -> list[tuple[str, list[str]]]:
    """(code, expected output lines) per top-level statement of a README python block: the
    comment lines right under an expression statement (no blank line between) are its
    ``repr``; anything else runs with no check but that it does not raise."""
    lines = source.splitlines()
    steps = []
    for node in ast.parse(source).body:
        end = node.end_lineno or node.lineno
        shown: list[str] = []
        while isinstance(node, ast.Expr) and end + len(shown) < len(lines) and \
                lines[end + len(shown)].startswith("# "):
            shown.append(lines[end + len(shown)][2:])
        steps.append(("\n".join(lines[node.lineno - 1:end]), shown))
    return steps


def test_python_blocks(scratch: Path):
    namespace: dict = {}
    with contextlib.chdir(scratch):
        for first, body in blocks("python"):
            for code, shown in python_steps(body):
                if not shown:
                    with contextlib.redirect_stdout(io.StringIO()):
                        exec(compile(code, f"README.md:{first}", "exec"), namespace)
                    continue
                value = eval(compile(code, f"README.md:{first}", "eval"), namespace)
                assert normalised(repr(value).splitlines()) == normalised(shown), code
