"""The Python blocks of the README (its API tour) and of the pages that hold the README's
former reference sections run as written, on the bundled samples.

A page's ```` ```python ```` blocks run in order in one namespace of their own, from a
scratch copy of ``samples/`` and ``docs/``. An expression statement whose next line is a
comment (``# (2725, 'PyTorch', 'unix epoch')``) must have that ``repr`` (several comment
lines: a multi-line ``repr``, such as a pandas frame's); the comparison drops trailing
blanks, as for the console blocks (``tests/test_docs_console.py`` runs those, with the rules in
``tests/docs_console.py``).
"""

from __future__ import annotations

import ast
import contextlib
import io
from pathlib import Path

import pytest

from tests.docs_console import FENCE, ROOT, normalised, scratch

README = ROOT / "README.md"
# The pages whose python blocks run: the README and the pages its reference sections moved
# to (other pages' blocks are module fragments or show printed output, not reprs).
PYTHON_PAGES = [README, *(ROOT / "docs" / name for name in ("model.md", "perfetto.md",
                                                             "big-traces.md"))]


def blocks(kind: str, page: Path = README) -> list[tuple[int, str]]:
    """(line number, body) of every fenced block of ``kind`` in ``page``."""
    text = page.read_text()
    return [(text.count("\n", 0, m.start()) + 2, m.group(2)) for m in FENCE.finditer(text)
            if m.group(1) == kind]


def python_steps(source: str) -> list[tuple[str, list[str]]]:
    """(code, expected output lines) per top-level statement of a page's python block: the
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


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=lambda page: page.name)
def test_python_blocks(page: Path, tmp_path: Path):
    namespace: dict = {}
    name = page.relative_to(ROOT)
    assert blocks("python", page), f"{name} has no python block to run"
    with contextlib.chdir(scratch(tmp_path)):
        for first, body in blocks("python", page):
            for code, shown in python_steps(body):
                if not shown:
                    with contextlib.redirect_stdout(io.StringIO()):
                        exec(compile(code, f"{name}:{first}", "exec"), namespace)
                    continue
                value = eval(compile(code, f"{name}:{first}", "eval"), namespace)
                assert normalised(repr(value).splitlines()) == normalised(shown), code
