"""Text that looks like digits: ``str.isdigit`` accepts characters ``int()`` refuses
(superscripts: ``"²".isdigit()`` is True, ``int("²")`` an error), so a check made with it
let ``COLUMNS=²`` end every command in an internal error. The package tests digits with
``isdecimal`` (exactly what ``int()`` reads), and the command line sets aside a terminal
size that is no size before rich reads it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "torch" / "cnn_step5.pt.trace.json"


def test_the_package_never_tests_digits_with_isdigit():
    offenders = [f"{path.relative_to(ROOT)}:{number}"
                 for path in sorted((ROOT / "traceconv").rglob("*.py"))
                 for number, line in enumerate(path.read_text().splitlines(), 1)
                 if ".isdigit()" in line]
    assert not offenders, f"use isdecimal() (what int() reads): {offenders}"


@pytest.mark.parametrize("columns", ["²", "-3", "0", "72x"])
def test_a_terminal_width_that_is_no_number_is_set_aside(columns):
    env = {**os.environ, "COLUMNS": columns, "LINES": "³"}
    result = subprocess.run([sys.executable, "-m", "traceconv", "info", str(SAMPLE)],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{SAMPLE.relative_to(ROOT)}: chrome (PyTorch)") or \
        result.stdout.splitlines()[0].endswith("chrome (PyTorch)")
    assert "internal error" not in result.stderr
