"""Every regex of the readers takes time linear in the line it is given.

A hostile-input round found reader patterns that re-read the rest of a line for each place
a cell could end: ``reader_cost:`` then 64 KiB of letters (Paddle summary's step line), a
long line of numbers ending in a word (Paddle report's cut-off row), a value, a run of
blanks and a last word (MIGraphX's ``name = op`` line and its summary rows), a long cell of
blanks (nsys stats' unit suffix), a long word in an SVG tag (MegEngine's memory flow). Each
took minutes on one 64 KiB line. The census (``tests/regex_census.py``) finds every
compiled pattern of ``traceconv.formats`` and ``traceconv.vocabularies`` and applies it the
way the code does to such lines; a linear pattern takes milliseconds per line, a quadratic
one minutes, so each call gets an alarm after 5 s of its process's CPU time that names the
pattern still running (CPU time: the machine may be busy), in a child process whose whole
run (about 10 s of CPU) is bounded by a generous wall-clock limit against a hang.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.regex_census import Entry, census, overrunning

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_no_reader_pattern_grows_faster_than_its_line():
    result = subprocess.run([sys.executable, "-m", "tests.regex_census", "65536", "5"],
                            cwd=ROOT, capture_output=True, text=True, timeout=300, check=True)
    assert json.loads(result.stdout) == []


def test_the_census_finds_each_pattern_and_its_use():
    found = census()
    entries = {entry.label.rsplit(".", 1)[-1]: entry for entry in found}
    assert entries["STEP_INFO"].methods == ("match",)          # parser.py: STEP_INFO.match(
    assert entries["VAR"].methods == ("fullmatch", "match")    # instruction.py, reflow.py
    assert entries["ATTR"].methods == ("findall",)             # memflow_svg.py
    assert sum("row_pattern" in entry.label for entry in found) == 6   # 3 column sets, 2 ways each


@pytest.mark.slow
def test_the_check_catches_a_quadratic_pattern():
    # MIGraphX's former instruction pattern: a lazy value then blanks to the line's end
    former = Entry("former VAR", re.compile(r"\s*([^\s=]+)\s*=\s*(\S.*?)\s*$"), ("fullmatch",))
    assert overrunning([former], 65536, 1) == ["former VAR ('fullmatch',) on 'a=b' + spaces + 'y'"]
