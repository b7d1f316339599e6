"""Every regex the package compiles or applies, how the code applies it, and hostile lines.

A backtracking pattern that tries each split of a long run (a lazy name before ``\\s*$``,
two stars over the same characters) takes time that grows with the square of the line: at
64 KiB that is minutes, where a linear pattern takes milliseconds. The census finds the
patterns itself, two ways:

- the patterns held by the modules of ``traceconv`` (module attributes, also inside tuples,
  lists and dicts), each applied the way the package's source applies its name
  (``NAME.match(``, ``NAME.search(`` ...);
- every call of ``re.compile``/``match``/``fullmatch``/``search``/``sub``/``subn``/
  ``split``/``findall``/``finditer`` in the source of every module (module level or inside
  functions), its pattern evaluated from the module's constants: literals, names,
  ``module.NAME``, f-strings, ``+``/``%``/``|`` and ``str``/``bytes`` methods of them.

A call whose pattern is built from run-time values is either one whose patterns a factory
of :data:`BUILT` builds the way the package does, or one :data:`NOT_EVALUATED` gives a
reason for; any other fails the census (:func:`unaccounted`). A pattern applied with
``search`` or ``finditer`` is tried from every start, so a run that costs nothing under
``match`` may cost a square there; a pattern whose use the source does not name is tried
the strictest way, with ``search``.

Each pattern meets two kinds of hostile line: fixed runs (blanks, letters, digits ...) after
its literal words (:func:`overrunning`), and lines derived from its parsed structure, where
each repeat's run is read by a neighbour, a nested repeat or a new start too, then a last
character fails it (:func:`growing`; :mod:`tests.regex_hostile_lines`). Both are judged by
a CPU-time alarm: a linear pattern takes milliseconds on such a line, a quadratic one
seconds to minutes.
"""

from __future__ import annotations

import ast
import importlib
import json
import operator
import re
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from types import ModuleType
from typing import Any

import traceconv
from tests.regex_hostile_lines import structural_lines
from traceconv import json_decode, registry
from traceconv.formats import paddle_report_lines as rows
from traceconv.formats.key_depths import KeyDepths
from traceconv.model import activity, diagnostic_codes

SCANNING_METHODS = ("search", "findall", "finditer", "sub", "subn", "split")
RE_CALLS = ("compile", "match", "fullmatch", "search", "sub", "subn", "split", "findall",
            "finditer")
_FLAGS_AT = {"compile": 1, "sub": 4, "subn": 4, "split": 3}   # (else 2: re.match(p, s, flags))
# NAME.match( or NAME[key].match( (a pattern of a dict or tuple)
_APPLIED = re.compile(r"\b(\w+)(?:\[[^]\n]*\])?\."
                      r"(match|fullmatch|search|findall|finditer|subn?|split)\(")
PACKAGE_ROOT = Path(traceconv.__file__).parent


@dataclass(frozen=True)
class Entry:
    label: str                  # where it lives: module.NAME[index], or module:line
    pattern: re.Pattern[str] | re.Pattern[bytes]
    methods: tuple[str, ...]    # how the code applies it


Built = Iterator[tuple[str, re.Pattern[Any]]]


def _report_rows() -> Built:
    """A Paddle report's row pattern for the fewest columns and for each whole layout (the
    ones between differ only in how many cells repeat)."""
    for columns in {layout[:count] for layout in rows.LAYOUTS for count in (2, len(layout))}:
        for touching in (False, True):
            yield f"row_pattern{columns, touching}", rows.row_pattern(columns, touching)


def _vocabulary_names() -> Built:
    """Every vocabulary's name patterns (its ``*_names`` as one alternation each, with
    and without word edges)."""
    for module in _modules("traceconv.vocabularies"):
        for name, value in vars(module).items():
            if isinstance(value, activity.Vocabulary):
                for edges, patterns in (("", value._patterns), (" near", value._near)):
                    for kind, pattern in patterns.items():
                        if pattern is not None:
                            yield f"{module.__name__}.{name}.{kind}{edges}", pattern


def _any_claimed_key() -> Built:
    """The one alternation the key scan looks for: every JSON format's claimed keys."""
    claims = [claim for info in registry.BUILTINS for claim in info.key_claim_rows()]
    yield "every claimed key", KeyDepths(frozenset().union(*(c.keys for c in claims)))._keys


def _huge_integer() -> Built:
    """The integer pattern for Python's default limit of digits."""
    yield "4300 digits", json_decode._huge_integer(4300)


def _diagnostic_code_patterns() -> Built:
    """The patterns of the codes with a placeholder (``chrome.unsupported_phase.{phase}``)."""
    for pattern, code in diagnostic_codes._patterns():
        yield code.code, pattern


# Calls whose pattern is built at run time -> a factory of the patterns it builds, and the
# methods the code applies them by
BUILT: dict[str, tuple[Callable[[], Built], tuple[str, ...]]] = {
    "traceconv.formats.paddle_report_lines:row_pattern": (_report_rows, ("match",)),
    "traceconv.model.activity:_either": (_vocabulary_names, ("finditer", "search")),
    "traceconv.model.activity:__post_init__": (_vocabulary_names, ("finditer", "search")),
    "traceconv.formats.key_depths:_compile": (_any_claimed_key, ("finditer",)),
    "traceconv.json_decode:_huge_integer": (_huge_integer, ("sub",)),
    "traceconv.model.diagnostic_codes:_patterns": (_diagnostic_code_patterns, ("match",)),
}
# Calls whose pattern the census leaves out, and why
NOT_EVALUATED: dict[str, str] = {
    "traceconv.analysis.summary:_keep": "the user's own --opr-name pattern",
    "traceconv.analysis.trim:_compile": "the user's own trim pattern",
    "traceconv.cli.options:_regex": "checks that the user's pattern compiles",
    "traceconv.analysis.op_class:<module>": "compiles each class's pattern into _CLASSES, a "
                                            "module attribute (found there)",
    "traceconv.vocabularies.common:<module>": "compiles each collective operation's words "
                                              "into _OPERATIONS, a module attribute (found "
                                              "there)",
    "traceconv.formats.paddle_report_lines:<module>": "compiles each column's header words "
                                                     "into _HEADER_WORDS, a module attribute "
                                                     "(found there)",
    "traceconv.formats.text_sniffing:any_line": "joins its callers' module patterns into one, a "
                                          "module attribute of each caller (found there)",
}


def _modules(package: str = "traceconv") -> Iterator[ModuleType]:
    """Every module of ``package`` (not ``__main__``, which runs the command line)."""
    folder = PACKAGE_ROOT.parent / package.replace(".", "/")
    for path in sorted(folder.rglob("*.py")):
        name = ".".join(path.relative_to(PACKAGE_ROOT.parent).with_suffix("").parts)
        if not name.endswith("__main__"):
            yield importlib.import_module(name.removesuffix(".__init__"))


class _Unknown(Exception):
    """A value the census cannot work out from the module's constants."""


_OPERATORS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Mod: operator.mod, ast.BitOr: operator.or_}


def _value(node: ast.expr | None, names: dict[str, Any]) -> Any:
    """What ``node`` evaluates to from the module's ``names`` alone (no call but ``str``/
    ``bytes`` methods and ``re.escape``), or :class:`_Unknown`."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.Attribute):
        return getattr(_value(node.value, names), node.attr)
    if isinstance(node, ast.Subscript):
        return _value(node.value, names)[_value(node.slice, names)]
    if isinstance(node, ast.Tuple):
        return tuple(_value(item, names) for item in node.elts)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_value(node.left, names), _value(node.right, names))
    if isinstance(node, ast.JoinedStr):
        return "".join(_formatted(part, names) for part in node.values)
    if isinstance(node, ast.Call) and not node.keywords:
        function = _value(node.func, names)
        if type(getattr(function, "__self__", None)) in (str, bytes) or function is re.escape:
            return function(*(_value(arg, names) for arg in node.args))
    raise _Unknown(ast.dump(node) if node else "no pattern")


def _formatted(part: ast.expr, names: dict[str, Any]) -> str:
    if not isinstance(part, ast.FormattedValue):
        return str(_value(part, names))
    value = _value(part.value, names)
    value = {115: str, 114: repr, 97: ascii}.get(part.conversion, lambda v: v)(value)
    return format(value, _value(part.format_spec, names) if part.format_spec else "")


@dataclass(frozen=True)
class CallSite:
    """One ``re.<method>(...)`` call of the package's source."""

    where: str                    # module:function (``<module>`` at module level)
    line: int
    method: str
    assigned_to: str | None       # the name a compiled pattern is stored under
    pattern: re.Pattern[Any] | None   # None: not evaluated from the module's constants


def call_sites() -> list[CallSite]:
    """Every call of :data:`RE_CALLS` on ``re`` in the package, its pattern evaluated."""
    sites = []
    for module in _modules():
        path = Path(module.__file__ or "")
        sites.extend(_sites_in(ast.parse(path.read_text(encoding="utf-8")), module, "<module>"))
    return sites


def _sites_in(node: ast.AST, module: ModuleType, function: str,
              assigned_to: str | None = None) -> Iterator[CallSite]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        function = node.name
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [t.id if isinstance(t, ast.Name) else t.attr for t in targets
                 if isinstance(t, (ast.Name, ast.Attribute))]
        assigned_to = names[0] if names else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" \
            and node.func.attr in RE_CALLS:
        yield CallSite(f"{module.__name__}:{function}", node.lineno, node.func.attr,
                       assigned_to, _evaluated(node, vars(module)))
    for child in ast.iter_child_nodes(node):
        yield from _sites_in(child, module, function, assigned_to)


def _evaluated(call: ast.Call, names: dict[str, Any]) -> re.Pattern[Any] | None:
    keywords = {keyword.arg: keyword.value for keyword in call.keywords}
    flags_at = _FLAGS_AT.get(call.func.attr, 2)   # type: ignore[attr-defined]
    try:
        source = _value(call.args[0] if call.args else keywords.get("pattern"), names)
        flags_node = call.args[flags_at] if len(call.args) > flags_at else keywords.get("flags")
        flags = _value(flags_node, names) if flags_node is not None else 0
    except (_Unknown, AttributeError, KeyError, IndexError, TypeError):
        return None
    if isinstance(source, re.Pattern):
        return source
    return re.compile(source, flags) if isinstance(source, (str, bytes)) else None


def unaccounted(sites: list[CallSite]) -> list[str]:
    """The calls whose pattern is neither evaluated, built by :data:`BUILT` nor given a
    reason by :data:`NOT_EVALUATED`; and the entries of those two that no longer match a
    call whose pattern is not evaluated."""
    open_sites = {site.where for site in sites if site.pattern is None}
    listed = set(BUILT) | set(NOT_EVALUATED)
    return sorted([f"{where}: not evaluated, not listed" for where in open_sites - listed]
                  + [f"{where}: listed, no such call left" for where in listed - open_sites])


def _applied_methods() -> dict[str, set[str]]:
    """NAME -> the methods the package's source calls on it (name clashes only add some)."""
    applied: dict[str, set[str]] = {}
    for source in PACKAGE_ROOT.rglob("*.py"):
        for name, method in _APPLIED.findall(source.read_text(encoding="utf-8")):
            applied.setdefault(name, set()).add(method)
    return applied


def _held(value: object, label: str, depth: int = 0) -> Iterator[tuple[str, re.Pattern]]:
    if isinstance(value, re.Pattern):
        yield label, value
    elif depth < 3 and isinstance(value, dict):
        for key, item in value.items():
            yield from _held(item, f"{label}[{key!r}]", depth + 1)
    elif depth < 3 and isinstance(value, (tuple, list, set, frozenset)):
        for index, item in enumerate(value):
            yield from _held(item, f"{label}[{index}]", depth + 1)


def census() -> list[Entry]:
    """Every pattern once (named where it is first found), with the methods the code
    applies it by: those of every name it is held or stored under, and of every call that
    applies it directly (``search``, the strictest, where the source does not say)."""
    applied = _applied_methods()
    found: dict[tuple[object, int], Entry] = {}

    def add(label: str, pattern: re.Pattern, methods: set[str]) -> None:
        key = (pattern.pattern, pattern.flags)
        known = found.get(key)
        merged = (methods or {"search"}) | set(known.methods if known else ())
        found[key] = Entry(known.label if known else label, pattern, tuple(sorted(merged)))

    for module in _modules():
        for name, value in vars(module).items():
            for label, pattern in _held(value, f"{module.__name__}.{name}"):
                add(label, pattern, applied.get(name, set()))
    for site in call_sites():
        if site.pattern is not None:
            methods = ({site.method} if site.method != "compile"
                       else applied.get(site.assigned_to or "", set()))
            add(f"{site.where}:{site.line}", site.pattern, methods)
    for where, (factory, methods) in BUILT.items():
        for label, pattern in factory():
            add(f"{where} {label}", pattern, set(methods))
    return sorted(found.values(), key=lambda entry: entry.label)


# What the lines are made of (each repeated to the line's length): runs of blanks, of one
# letter, of numbers between spaces, of brackets and dashes.
RUNS = {"spaces": " ", "tabs and spaces": "\t \t  ", "letter": "a", "spaced digits": "1 ",
        "parens": "(", "dashes": "-", "equals and spaces": "= ", "words": "ab "}
# What ends them: nothing, or one visible character after the run (a lazy name then
# ``\s*$`` tries each blank of the run as the name's end only when the line does not end
# in a blank).
ENDS = ("", "y")
_LITERAL = re.compile(r"[A-Za-z_][\w ]*[:=]?")


def heads(pattern: re.Pattern) -> list[str]:
    """The line starts that get ``pattern`` past its literal words (``reader_cost:``)."""
    source = pattern.pattern.decode("latin-1") if isinstance(pattern.pattern, bytes) \
        else pattern.pattern
    source = re.sub(r"\\.|\(\?P?<\w+>|\[[^]]*\]|\{[^}]*\}", " ", source)  # escapes, names, classes
    words = [word.strip() for word in _LITERAL.findall(source) if len(word.strip()) >= 3]
    return ["", "x", "a=", "a=b", *dict.fromkeys(words[:4])]


def hostile_lines(starts: list[str], size: int) -> Iterator[tuple[str, str]]:
    """(description, line) pairs of about ``size`` characters: each start, then each run."""
    for head in starts:
        for run_name, unit in RUNS.items():
            for end in ENDS:
                line = head + unit * ((size - len(head)) // len(unit)) + end
                yield f"{head!r} + {run_name} + {end!r}", line


def apply(entry: Entry, subject: str | bytes) -> None:
    """Apply ``entry``'s pattern to ``subject`` each way the code does."""
    for method in entry.methods:
        if method in SCANNING_METHODS:
            for _ in entry.pattern.finditer(subject):  # type: ignore[arg-type]
                pass
        else:
            getattr(entry.pattern, method)(subject)


class _TooLong(Exception):
    pass


def _interrupt(*_: object) -> None:
    raise _TooLong


def overrunning(entries: list[Entry], size: int, limit_s: float) -> list[str]:
    """``label on line`` for each pattern still running on a line after ``limit_s`` seconds
    of CPU time.

    The limit is generous (a linear pattern takes milliseconds on 64 KiB, a quadratic one
    minutes) and counts the process's own CPU time, not the time a busy machine lets pass;
    ``re`` checks for signals while it backtracks, so the alarm stops a runaway.
    """
    return _first_overruns(entries, limit_s, lambda entry: hostile_lines(
        heads(entry.pattern), size))


def growing(entries: list[Entry], size: int, limit_s: float,
            per_pattern: int | None = None) -> list[str]:
    """``label on line`` for each pattern still running after ``limit_s`` seconds of CPU
    time on one of the hostile lines derived from its parsed structure
    (:func:`tests.regex_hostile_lines.structural_lines`, the first ``per_pattern`` of them
    where given) of four times ``size`` characters: a linear pattern takes milliseconds
    there, one that grows with the square of the line seconds (the process's own CPU time,
    as :func:`overrunning`: no clock is read, the alarm judges)."""
    return _first_overruns(entries, limit_s, lambda entry: (
        (description, line_of(4 * size))
        for description, line_of in islice(structural_lines(entry.pattern), per_pattern)))


def _first_overruns(entries: list[Entry], limit_s: float,
                    lines: Callable[[Entry], Iterable[tuple[str, str]]]) -> list[str]:
    """``label on line`` for each entry and the first of its ``lines`` on which it is still
    running after ``limit_s`` seconds of CPU time (the virtual-time alarm stops it)."""
    former_handler = signal.signal(signal.SIGVTALRM, _interrupt)
    found = []
    try:
        for entry in entries:
            for description, line in lines(entry):
                subject = line.encode("latin-1") if isinstance(entry.pattern.pattern, bytes) \
                    else line
                signal.setitimer(signal.ITIMER_VIRTUAL, limit_s)
                try:
                    apply(entry, subject)
                except _TooLong:
                    found.append(f"{entry.label} {entry.methods} on {description}")
                    break
                finally:
                    signal.setitimer(signal.ITIMER_VIRTUAL, 0)
    finally:
        signal.signal(signal.SIGVTALRM, former_handler)
    return found


if __name__ == "__main__":
    # python -m tests.regex_census SIZE CPU_LIMIT_S [structure]: one JSON list, of the patterns
    # overrunning on the fixed runs, or (structure) on the lines of their structure, 4 SIZE long
    _check = growing if sys.argv[3:] == ["structure"] else overrunning
    print(json.dumps(_check(census(), int(sys.argv[1]), float(sys.argv[2]))))
