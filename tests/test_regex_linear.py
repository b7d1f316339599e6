"""Every regex of the readers takes time linear in the line it is given.

A hostile-input round found reader patterns that re-read the rest of a line for each place
a cell could end: ``reader_cost:`` then 64 KiB of letters (Paddle summary's step line), a
long line of numbers ending in a word (Paddle report's cut-off row), a value, a run of
blanks and a last word (MIGraphX's ``name = op`` line and its summary rows), a long cell of
blanks (nsys stats' unit suffix), a long word in an SVG tag (MegEngine's memory flow). Each
took minutes on one 64 KiB line. The census (``tests/regex_census.py``) finds every
pattern the package compiles or applies (held by a module of ``traceconv``, or passed to a
``re`` call anywhere in its source, inside functions too, evaluated from the module's
constants; a pattern built from run-time values is built by the census's factory of it or
listed with a reason) and applies it the way the code does to such lines; a linear
pattern takes milliseconds per line, a quadratic one minutes, so each call gets an alarm
after 5 s of its process's CPU time that names the pattern still running (CPU time: the
machine may be busy), in a child process whose whole run (about 25 s of CPU for some 260
patterns) is bounded by a generous wall-clock limit against a hang. The census's wider
reach found two outside the readers: ``--fail-if``'s limit (blanks around an optional
``+``) and the tables' C++ qualifier pattern (a long name tried from each of its letters).

The fixed runs missed the pasted page's HTML tail (``</code>`` 60,000 times then a letter:
68 s on a 420 KB file), whose costly repeat is of a piece of its own; and lines of a
pattern's pieces written out missed ``batch_?norm\\w*(backward|grad)|bn_bw`` (1.7 s on 36 K
characters: the parser had factored the two alternatives' ``b`` out, so no piece started a
new match) and Paddle's ``IPS Unit:\\s*(.+?)\\s*$`` (3.3 s on 32 K blanks). Each pattern now
also meets lines derived from its parsed structure (``tests/regex_hostile_lines.py``): for
each repeat, what leads to it (optional pieces written and left out), a unit it reads (one
character of each kind, those a following piece reads too first) repeated, alone or with
its lead as a new start each time, then a character that stops the run. The default run
tries the first 16 lines of each pattern at 16 K characters (the likeliest line of each
repeat first), the slow run every line at 128 K.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.regex_census import Entry, call_sites, census, growing, overrunning, unaccounted
from tests.test_regex_rewrites import REWRITES

ROOT = Path(__file__).resolve().parent.parent
_RE_CALL = re.compile(r"\bre\.(compile|match|fullmatch|search|subn?|split|findall|finditer)\(")


@pytest.mark.slow
def test_no_reader_pattern_grows_faster_than_its_line():
    result = subprocess.run([sys.executable, "-m", "tests.regex_census", "65536", "5"],
                            cwd=ROOT, capture_output=True, text=True, timeout=600, check=True)
    assert json.loads(result.stdout) == []


# Patterns found by the lines of a pattern's structure (tests below) and not fixed yet. The
# check is two-way, so the list can only shrink: a pattern not listed that grows fails it,
# and so does a listed one that no longer grows (fixed, renamed or gone). Every one found so
# far is linear now (tests/test_regex_rewrites.py checks each against its former text).
SQUARE_ON_ITS_STRUCTURE: set[str] = set()


@pytest.fixture(scope="module")
def every_pattern() -> list[Entry]:
    return census()


def test_no_pattern_grows_on_the_first_lines_of_its_structure(every_pattern: list[Entry]):
    # 16 K characters, 0.1 s of CPU per line: a linear pattern takes a few milliseconds,
    # the quadratic ones found so far a third of a second to seconds
    growing_now = {found.split(" (")[0] for found in growing(every_pattern, 4096, 0.1, 16)}
    assert growing_now - SQUARE_ON_ITS_STRUCTURE == set(), "grows and is not listed"


@pytest.mark.slow
def test_no_pattern_grows_faster_than_a_line_of_its_structure():
    result = subprocess.run([sys.executable, "-m", "tests.regex_census", "32768", "1",
                             "structure"],
                            cwd=ROOT, capture_output=True, text=True, timeout=900, check=True)
    growing_now = {found.split(" (")[0] for found in json.loads(result.stdout)}
    assert growing_now - SQUARE_ON_ITS_STRUCTURE == set(), "grows and is not listed"
    assert SQUARE_ON_ITS_STRUCTURE - growing_now == set(), "listed but no longer grows: unlist it"


def test_the_census_finds_each_pattern_and_its_use(every_pattern: list[Entry]):
    found = every_pattern
    entries = {entry.label.rsplit(".", 1)[-1]: entry for entry in found}
    assert entries["STEP_INFO"].methods == ("match",)          # parser.py: STEP_INFO.match(
    assert entries["VAR"].methods == ("fullmatch", "match")    # instructions.py, reflow.py
    assert entries["ATTR"].methods == ("findall",)             # memflow_svg.py
    assert sum("row_pattern(" in entry.label for entry in found) == 6  # 3 column sets, 2 ways each
    patterns = {entry.pattern.pattern: entry for entry in found}
    # in a function, a module constant: migraphx/document.py, re.fullmatch(NUM, text)
    assert "fullmatch" in patterns[r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+"
                                   r"(?:[eE][-+]?\d+)?)"].methods
    # in a function, a literal: nsys_stats_header.py, re.finditer(r"-+", ...)
    assert patterns["-+"].methods == ("finditer",)
    # a module-level f-string of a shared piece: nsys_stats/summaries.py's _UNIT
    assert any(str(p).startswith("^((?:.*\\S)?)\\s*\\((ns|") for p in patterns)
    # built at run time, by the census's factories: a vocabulary's step names
    assert any(entry.label.startswith("traceconv.model.activity:")
               and entry.label.endswith("KINETO_VOCABULARY.step") for entry in found)


def test_every_call_of_re_is_evaluated_or_accounted_for():
    sites = call_sites()
    assert unaccounted(sites) == []
    # the AST walk misses no call a plain text search finds (less the doctests' examples)
    by_text = set()
    for path in (ROOT / "traceconv").rglob("*.py"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _RE_CALL.search(line) and not line.lstrip().startswith((">>>", "...", "#")):
                module = path.relative_to(ROOT).with_suffix("").as_posix()
                by_text.add((module.removesuffix("/__init__").replace("/", "."), number))
    assert {(site.where.split(":")[0], site.line) for site in sites} == by_text


# Former patterns that each took time growing with the square of the line, and the line
# the check stops them on
FORMER = [
    # MIGraphX's instruction pattern: a lazy value then blanks to the line's end
    (Entry("VAR", re.compile(r"\s*([^\s=]+)\s*=\s*(\S.*?)\s*$"), ("fullmatch",)),
     "'a=b' + spaces + 'y'"),
    # symbol_names' qualifier (found inside no reader): a name tried from each of its letters
    (Entry("_QUALIFIER", re.compile(r"(?:(?:[A-Za-z_]\w*|<unnamed>|\(anonymous namespace\))::)+"),
           ("sub",)), "'' + letter + ''"),
    # --fail-if's limit: blanks before and after an optional "+", each split of one run tried
    (Entry("_LIMIT", re.compile(r"^\s*\+?\s*(?P<value>\d+(?:\.\d*)?|\.\d+)\s*(?P<unit>%|ns|s)"
                                r"\s*$"), ("match",)), "'' + spaces + ''"),
]

# a pasted page's HTML tail: each "</code>" of a line of them tried as the tail's start, the
# tags after it read to the last letter that fails it (68 s on 60,000 of them); not caught
# by the fixed runs above, only by a line of the pattern's own pieces
_PAGE_TAIL = Entry("_PAGE_TAIL", re.compile(r"(?<=\S)\s*</(?:code|pre)>(?:\s*</?\w[^<>]*>)*\s*$",
                                            re.IGNORECASE), ("sub",))


# MIGraphX's cut perf time: five blank runs in a row, each split of one run tried from each
# bracket (2.6 s on 128 blanks, a power of four or five of the line)
_PERF_TAIL_START = Entry("_PERF_TAIL_START", re.compile(
    r"[}\]]\s*:\s*[-+\d.eEnaif]*\s*(?:ms?)?\s*[,，]?\s*[-+\d.eEnaif]*\s*$"), ("search",))


# op_class's batch_norm_backward: from each "batchnorm" of a long word, the rest of the
# word read (1.7 s on 36 K characters); missed by the lines of the pattern's pieces, whose
# first piece was the "b" the parser factored out of both alternatives
_BATCH_NORM = Entry("_BATCH_NORM", re.compile(r"batch_?norm\w*(backward|grad)|bn_bw",
                                              re.IGNORECASE), ("search",))
# Paddle summary's units line: a lazy unit, then each split of the trailing blanks tried
# (3.3 s on 32 K blanks); missed by the fixed runs (no head reaches "IPS Unit:")
_PERF_UNITS = Entry("_PERF_UNITS", re.compile(
    r"^\s*Time Unit:\s*(\S+?),\s*IPS Unit:\s*(.+?)\s*$"), ("match",))


def test_the_first_lines_of_a_structure_catch_what_the_pieces_missed():
    assert growing([_BATCH_NORM], 4096, 0.1, 16) == [
        "_BATCH_NORM ('search',) on ('batch_norm' + 'b') repeated + ' '"]
    assert growing([_PERF_UNITS], 4096, 0.1, 16) == [
        "_PERF_UNITS ('match',) on ' Time Unit: a, IPS Unit: a' + ' ' repeated + 'a'"]


@pytest.mark.slow
def test_the_lines_of_a_structure_catch_a_square_the_runs_miss():
    for entry in (_PAGE_TAIL, _PERF_UNITS):
        assert overrunning([entry], 65536, 5) == []
    assert growing([_PAGE_TAIL], 32768, 1) == [
        "_PAGE_TAIL ('sub',) on (' </code>' + ' </aa>') repeated + 'a'"]
    assert growing([_PERF_TAIL_START], 32768, 1) == [
        "_PERF_TAIL_START ('search',) on '] :' + ' ' repeated + '_'"]


# How the code applied each former text of tests/test_regex_rewrites.py where the census
# tries it another way than its rewrite's: Percentiles was searched (in a list, applied by
# a name the census does not know) before it was anchored.
_FORMER_METHOD = {r"Percentiles \(([^)]*)\):\s*\(([^)]*)\)": "search"}


@pytest.mark.slow
def test_the_lines_of_a_structure_catch_every_former_pattern():
    formers = [entry for entry, _ in FORMER] + [_PAGE_TAIL, _PERF_TAIL_START, _BATCH_NORM,
                                                _PERF_UNITS]
    formers += [Entry(text, re.compile(text, flags),
                      (_FORMER_METHOD.get(text, method.split()[-1]),))
                for text, flags, _, method, *_ in REWRITES]
    # lines of 256 K characters: at 128 K, reflow's former MIGRAPHX pattern (matched, not
    # searched) took 1.0-1.2 s on its worst lines, a coin toss against the 1 s alarm; at
    # 256 K it takes 3.6 s (each former is stopped at its first overrun: no longer a run)
    assert [entry.label for entry in formers if not growing([entry], 65536, 1)] == []


@pytest.mark.slow
@pytest.mark.parametrize(("former", "line"), FORMER, ids=[entry.label for entry, _ in FORMER])
def test_the_check_catches_a_quadratic_pattern(former: Entry, line: str):
    assert overrunning([former], 65536, 1) == [f"{former.label} {former.methods} on {line}"]
