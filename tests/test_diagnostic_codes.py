"""One table of diagnostic codes (issue 21, part 4): the source and the table agree, the
table has nothing unused, real reads record only registered codes, and the docs list it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import traceconv
from traceconv.model.diagnostic_codes import CODES, lookup
from traceconv.model.diagnostics import Diagnostics

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
    return [(path, ast.parse(path.read_text())) for path in sorted(PACKAGE.rglob("*.py"))
            if path != TABLE]


def _code_calls() -> list[tuple[str, str, str | None]]:
    """(where, code, kind or None) of every call that records a literal code."""
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
            kind = next((k.value.value for k in node.keywords if k.arg == "kind"
                         and isinstance(k.value, ast.Constant)), None)
            found.append((f"{path.relative_to(ROOT)}:{node.lineno}", code, kind))
    return found


def _source_strings() -> set[str]:
    """Every string constant and f-string (normalised) of the package but the table."""
    return {_normal(text) for _, tree in _modules() for node in ast.walk(tree)
            if (text := _text(node)) is not None and CODE.match(text)}


def test_the_scan_finds_the_call_sites() -> None:
    assert len(_code_calls()) > 100


def test_every_code_of_the_source_is_registered_with_its_kind() -> None:
    table = {_normal(c.code): c for c in CODES}
    wrong = []
    for where, code, kind in _code_calls():
        info = table.get(_normal(code))
        if info is None and "{" in code:   # a code made in a loop: the table spells them out
            pattern = re.compile(re.escape(_normal(code)).replace(r"\{\}", r"\w+") + "$")
            if any(pattern.match(c.code) for c in CODES):
                continue
        if info is None:
            wrong.append(f"{where}: {code} is not in traceconv/model/diagnostic_codes.py")
        elif kind is not None and kind != info.kind:
            wrong.append(f"{where}: {code} is {kind!r} here, {info.kind!r} in the table")
    assert not wrong


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


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_reads_record_only_registered_codes(path: Path) -> None:
    trace = traceconv.load(path)
    assert [d.code for d in trace.diagnostics if lookup(d.code) is None] == []


def test_docs_list_every_code() -> None:
    from traceconv.model.diagnostic_codes import markdown

    assert (ROOT / "docs" / "diagnostics.md").read_text() == markdown()
