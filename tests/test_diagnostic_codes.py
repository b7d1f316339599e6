"""One table of diagnostic codes (issue 21, part 4; issue 33, item 2): the source and the
table agree, the table has nothing unused, no call passes a kind, a text or a severity, real
reads record only registered codes, diagnostics a file carries are counted under registered
codes whatever the file says, and the docs page is the table's."""

from __future__ import annotations

import ast
import functools
import inspect
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import traceconv
from traceconv.model import Trace
from traceconv.model.diagnostic_codes import CODES, RENAMED, lookup
from traceconv.model.diagnostics import UNKNOWN_CARRIED, Diagnostics

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "traceconv"
TABLE = PACKAGE / "model" / "diagnostic_codes.py"
CODE = re.compile(r"^[a-z{][A-Za-z0-9_{}]*(\.[A-Za-z0-9_{}\-]+)+$")
# calls whose first argument (second for _count(diagnostics, code, ...)) is a code
CODE_ARGUMENT = {"add": 0, "drop": 0, "_count": 1}


def _text(node: ast.AST) -> str | None:
    """A string constant, or an f-string with each replacement field as ``{}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    return None


def _normal(code: str) -> str:
    return re.sub(r"\{\w*\}", "{}", code)


def _modules() -> list[tuple[Path, ast.Module]]:
    return _parsed(PACKAGE)


@functools.cache
def _parsed(package: Path) -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text())) for path in sorted(package.rglob("*.py"))
            if path != TABLE]


def _code_calls() -> list[tuple[str, str]]:
    """(where, code) of every call that records a literal code."""
    found = []
    for path, tree in _modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            position = CODE_ARGUMENT.get(name or "")
            if position is None or len(node.args) <= position:
                continue
            if name == "add" and (not isinstance(func, ast.Attribute)   # (a set's add)
                                  or "diag" not in ast.unparse(func.value)):
                continue
            code = _text(node.args[position])
            if code is None or not CODE.match(code):
                continue
            found.append((f"{path.relative_to(ROOT)}:{node.lineno}", code))
    return found


def _source_strings() -> set[str]:
    """Every string constant and f-string (normalised) of the package but the table."""
    return {_normal(text) for _, tree in _modules() for node in ast.walk(tree)
            if (text := _text(node)) is not None and CODE.match(text)}


def test_the_scan_finds_the_call_sites() -> None:
    assert len(_code_calls()) > 100


def test_every_code_of_the_source_is_registered() -> None:
    table = {_normal(c.code): c for c in CODES}
    wrong = []
    for where, code in _code_calls():
        info = table.get(_normal(code))
        if info is None and "{" in code:   # a code made in a loop: the table spells them out
            pattern = re.compile(re.escape(_normal(code)).replace(r"\{\}", r"\w+") + "$")
            if any(pattern.match(c.code) for c in CODES):
                continue
        if info is None:
            wrong.append(f"{where}: {code} is not in traceconv/model/diagnostic_codes.py")
    assert not wrong


# what a call that records a diagnostic may say besides the code
RECORDING_KEYWORDS = {"count", "example"}
KINDS_AND_SEVERITIES = {"dropped", "repaired", "guessed", "note", "info", "warning", "error"}
# the check findings of ``traceconv check`` are a vocabulary of their own (what a viewer does
# with a file), each with its text: the one other place that makes Diagnostic records
MAKES_RECORDS = {"traceconv/model/diagnostics.py", "traceconv/model/check_report.py"}


def _is_code(node: ast.AST) -> bool:
    text = _text(node)
    return text is not None and CODE.match(text) is not None


def _restatements() -> list[str]:
    """Every place in traceconv/ that states a diagnostic's kind, text or severity beside
    its code, or makes a record behind the table's back."""
    found = []
    for path, tree in _modules():
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                # a wrapper that records the code it is given, and takes a text or a kind too
                params = {a.arg for a in node.args.args + node.args.kwonlyargs}
                wraps = any(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
                            and c.func.attr == "add" and "diag" in ast.unparse(c.func.value)
                            and c.args and isinstance(c.args[0], ast.Name)
                            and c.args[0].id in params for c in ast.walk(node))
                if wraps and params & {"message", "kind", "severity"}:
                    found.append(f"{where}:{node.lineno}: {node.name} takes a diagnostic's "
                                 "kind or text beside its code")
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            line = f"{where}:{node.lineno}: {ast.unparse(node)[:120]}"
            recording = name in ("add", "add_carried") and isinstance(func, ast.Attribute) and (
                "diag" in ast.unparse(func.value) or (node.args and _is_code(node.args[0])))
            if recording and (len(node.args) > 1
                              or {k.arg for k in node.keywords} - RECORDING_KEYWORDS):
                found.append(line)
            if any(k.arg in ("kind", "severity") and isinstance(k.value, ast.Constant)
                   and k.value.value in KINDS_AND_SEVERITIES for k in node.keywords):
                found.append(line)
            if name == "Diagnostic" and where not in MAKES_RECORDS:
                found.append(line)
    return found


def test_no_call_passes_a_kind_a_text_or_a_severity() -> None:
    """Kind, severity and text live in the table only (issue 33): a call names the code, a
    count and an example, and nothing else can."""
    assert _restatements() == []
    parameters = inspect.signature(Diagnostics.add).parameters
    assert list(parameters) == ["self", "code", "count", "example"]
    assert {parameters[p].kind for p in ("count", "example")} == {inspect.Parameter.KEYWORD_ONLY}


def test_the_scan_for_restatements_finds_them(tmp_path: Path, monkeypatch) -> None:
    """The scan above, on the forms it exists to catch (so that its silence means
    something)."""
    planted = tmp_path / "traceconv"
    planted.mkdir()
    (planted / "reader.py").write_text(
        "def read(trace, notes):\n"
        "    trace.diagnostics.add('chrome.missing_phase', 'events without ph', kind='dropped')\n"
        "    trace.diagnostics.add('chrome.missing_phase', severity='error')\n"
        "    notes.add('chrome.missing_phase', message='events without ph')\n"
        "    trace.diagnostics.add_carried('x.y', 3)\n"
        "    count_it(trace, 'chrome.missing_phase', kind='dropped')\n"
        "    return Diagnostic('x.y', 'note', 'info', 'made by hand')\n"
        "def count_it(trace, code, message):\n"
        "    trace.diagnostics.add(code)\n")
    monkeypatch.setitem(globals(), "PACKAGE", planted)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    assert sorted({int(found.split(":")[1]) for found in _restatements()}) == [2, 3, 4, 5, 6,
                                                                                7, 8]


def test_the_table_has_no_unused_or_duplicate_entry() -> None:
    strings = _source_strings()
    patterns = [re.compile(re.escape(s).replace(r"\{\}", r"[\w{}]+") + "$")
                for s in strings if "{}" in s]
    unused = [c.code for c in CODES if _normal(c.code) not in strings
              and not any(p.match(c.code) for p in patterns)]
    assert not unused
    assert len({_normal(c.code) for c in CODES}) == len(CODES)


def test_add_takes_kind_and_text_from_the_table() -> None:
    diags = Diagnostics()
    diags.add("align.residual.2", count=3)
    item = diags["align.residual.2"]
    assert (item.kind, item.severity, item.count) == ("note", "info", 3)
    assert item.message == lookup("align.residual.{index}").text  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="not registered"):
        diags.add("made.up_code")
    # a variable last part may be any text a hostile file holds, or none
    for phase in ("", "[/x]\x1b", "a.b"):
        assert lookup(f"chrome.unsupported_phase.{phase}") is not None


SAMPLES = sorted(p for p in (ROOT / "samples").rglob("*")
                 if p.is_file() and p.suffix not in (".md",) and "broken" not in p.name)


@pytest.mark.slow
@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_reads_record_only_registered_codes(path: Path) -> None:
    trace = traceconv.load(path, joining=True)   # (a settings sample alone too)
    assert [d.code for d in trace.diagnostics if lookup(d.code) is None] == []


def test_the_docs_page_is_the_table() -> None:
    """docs/diagnostics.md is what the generator makes of the table today (regenerate it:
    ``python -m traceconv.model.diagnostics_page > docs/diagnostics.md``)."""
    from traceconv.model.diagnostics_page import markdown

    page = (ROOT / "docs" / "diagnostics.md").read_text()
    assert page == markdown(), "docs/diagnostics.md is out of date: regenerate it"
    listed = re.findall(r"^\| `([^`]+)` \| (\w+) \| (\w+) \|", page, flags=re.M)
    assert listed == [(c.code, c.kind, c.severity) for c in CODES]


def test_add_refuses_an_unregistered_code_even_when_it_counts_nothing() -> None:
    diags = Diagnostics()
    for count in (1, 0, -3):
        with pytest.raises(ValueError, match="'chrome.made_up' is not registered"):
            diags.add("chrome.made_up", count=count)
    diags.add("chrome.missing_phase", count=0)
    assert len(diags) == 0


# -- diagnostics a file carries (a .pftrace traceconv wrote) --------------------------------

REGISTERED = [c.code for c in CODES if not c.is_pattern] + [
    "align.residual.4", "chrome.unsupported_phase.Z", "nsys.invalid_utf8"]
FOREIGN_CODES = st.one_of(
    st.sampled_from(["chrome.from_a_newer_traceconv", "", "x", "made.up", "{reader}.x"]),
    st.text(max_size=30), st.integers(), st.none(), st.lists(st.integers(), max_size=2),
    st.floats(allow_nan=True))
COUNTS = st.one_of(st.integers(min_value=-2**70, max_value=2**70), st.booleans(), st.none(),
                   st.floats(allow_nan=True), st.text(max_size=5),
                   st.sampled_from([1, 2**63 - 1, 2**63, 0, -1]))
ENTRIES = st.fixed_dictionaries(
    {"code": st.one_of(st.sampled_from(REGISTERED), FOREIGN_CODES), "count": COUNTS},
    optional={"example": st.one_of(st.text(max_size=300), st.integers(), st.none(),
                                   st.dictionaries(st.text(max_size=3), st.integers(),
                                                   max_size=2)),
              "kind": st.one_of(st.sampled_from(["dropped", "catastrophic", ""]), st.integers()),
              "message": st.text(max_size=20),
              "severity": st.sampled_from(["info", "error", "fatal"])})


def _expected(entries: list[dict]) -> dict[str, int]:
    """What the rule counts, by hand: a registered code with a whole count from 1 to 2^63-1
    under itself; anything else under input.unknown_diagnostic, once or its count."""
    out: dict[str, int] = {}
    for entry in entries:
        code, count = entry["code"], entry["count"]
        whole = type(count) is int and 1 <= count < 2**63
        key = code if whole and isinstance(code, str) and lookup(code) else UNKNOWN_CARRIED
        out[key] = out.get(key, 0) + (count if whole else 1)
    return out


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(ENTRIES, max_size=8))
def test_carried_diagnostics_are_counted_under_registered_codes(entries: list[dict]) -> None:
    """Whatever a file says about a finding (an unknown code or kind, its own text or
    severity, a count that is text or past int64), reading it never fails, every finding
    ends under a registered code with the table's kind, severity and text, and no count is
    lost; copying and merging what was read keeps it so."""
    diags = Diagnostics()
    for entry in entries:
        diags.add_carried(entry["code"], count=entry["count"], example=entry.get("example"))
    assert {d.code: d.count for d in diags} == _expected(entries)
    for item in diags:
        info = lookup(item.code)
        assert info is not None
        assert (item.kind, item.severity, item.message) == (info.kind, info.severity, info.text)
        assert item.example is None or (isinstance(item.example, str)
                                        and len(item.example) <= 200)
    twice = diags.copy()
    twice.extend(diags)
    assert {d.code: d.count for d in twice} == {d.code: 2 * d.count for d in diags}


CARRIED = {   # what a tampered or newer .pftrace says: (entry, code and count read back)
    "newer code": ({"code": "chrome.from_the_future", "count": 5},
                   (UNKNOWN_CARRIED, 5)),
    "unknown kind": ({"code": "chrome.missing_phase", "kind": "catastrophic", "count": 2},
                     ("chrome.missing_phase", 2)),
    "own text and severity": ({"code": "chrome.missing_phase", "message": "all is well",
                               "severity": "info", "count": 3}, ("chrome.missing_phase", 3)),
    "count as text": ({"code": "chrome.missing_phase", "count": "7"}, (UNKNOWN_CARRIED, 1)),
    "count past int64": ({"code": "chrome.missing_phase", "count": 2**64},
                         (UNKNOWN_CARRIED, 1)),
    "code not text": ({"code": 17, "count": 1}, (UNKNOWN_CARRIED, 1)),
}


@pytest.mark.parametrize("case", sorted(CARRIED))
def test_a_pftrace_carrying_foreign_diagnostics_reads(case: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A .pftrace whose traceconv.model attribute carries a diagnostic this version would
    not write reads, the finding counted by the rule, and the trace read copies, merges
    and converts again."""
    from traceconv.analysis.merge import merge

    entry, (code, count) = CARRIED[case]
    written = {"code": "chrome.missing_phase", "kind": "dropped", "severity": "warning",
               "message": "events without ph", "count": 1, "example": None, **entry}
    source = Trace()
    track = source.add_track("main", process=source.add_process("app", pid=1))
    source.add_slice(track, 0, 1_000, "step")
    monkeypatch.setattr(Diagnostics, "as_list", lambda self: [written])
    path = tmp_path / "carried.pftrace"
    traceconv.save(source, path)
    monkeypatch.undo()
    read = traceconv.load(path)
    assert read.diagnostics.count(code) == count
    info = lookup(code)
    assert info is not None and read.diagnostics[code].kind == info.kind
    assert merge([read, read]).diagnostics.count(code) == 2 * count
    traceconv.save(read.copy(), tmp_path / "again.json")


def test_a_renamed_code_reads_back_under_a_registered_name():
    for old, new in RENAMED.items():
        assert lookup(new) is not None, new
        assert old not in {c.code for c in CODES}, old


def test_the_never_timed_codes_of_older_versions_read_back_under_the_one_code() -> None:
    """MIGraphX's ``nan_time`` and the old Paddle report's ``non_finite_total`` are the text
    readers' one ``{reader}.never_timed`` now: a trace an older traceconv wrote reads back
    under it, its count kept (2 and 3, as written here)."""
    from traceconv.model import Diagnostics

    carried = Diagnostics()
    carried.add_carried("migraphx.nan_time", count=2)
    carried.add_carried("paddle_report.non_finite_total", count=3)
    assert [(d.code, d.count) for d in carried] == [("migraphx.never_timed", 2),
                                                    ("paddle_report.never_timed", 3)]
