"""Every compiled regex of the readers, how the code applies it, and hostile lines to try.

A backtracking pattern that tries each split of a long run (a lazy name before ``\\s*$``,
two stars over the same characters) takes time that grows with the square of the line: at
64 KiB that is minutes, where a linear pattern takes milliseconds. The census finds the
patterns itself (module attributes of ``traceconv.formats`` and ``traceconv.vocabularies``,
also inside tuples, lists and dicts; literals of calls like ``re.match(r"...", x)``; the
ones built by the factories listed here) and reads how each is applied from the package's
source (``NAME.match(``, ``NAME.search(``, ...): a pattern applied with ``search`` or
``finditer`` is tried from every start, so a run that costs nothing under ``match`` may
cost a square there. A pattern whose use the source does not name is tried the strictest
way, with ``search``.
"""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import re
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import traceconv
import traceconv.formats
import traceconv.vocabularies
from traceconv.formats.paddle_report import rows

PACKAGES = (traceconv.formats, traceconv.vocabularies)
SCANNING_METHODS = ("search", "findall", "finditer", "sub", "subn", "split")
_APPLIED = re.compile(r"\b(\w+)\.(match|fullmatch|search|findall|finditer|subn?|split)\(")


def _built_patterns() -> Iterator[tuple[str, re.Pattern[str]]]:
    """Patterns a factory builds at run time: a report's row pattern for the fewest columns
    and for each whole layout (the ones between differ only in how many cells repeat)."""
    for columns in {layout[:count] for layout in rows.LAYOUTS for count in (2, len(layout))}:
        for touching in (False, True):
            yield f"paddle_report.rows.row_pattern{columns, touching}", \
                rows.row_pattern(columns, touching)


FACTORIES: tuple[Callable[[], Iterator[tuple[str, re.Pattern[str]]]], ...] = (_built_patterns,)


@dataclass(frozen=True)
class Entry:
    label: str                  # where it lives: module.NAME[index]
    pattern: re.Pattern[str] | re.Pattern[bytes]
    methods: tuple[str, ...]    # how the code applies it


def _applied_methods() -> dict[str, set[str]]:
    """NAME -> the methods the package's source calls on it (name clashes only add some)."""
    applied: dict[str, set[str]] = {}
    for source in Path(traceconv.__file__).parent.rglob("*.py"):
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


def _inline(module_name: str, path: Path) -> Iterator[Entry]:
    """The patterns written in place: ``re.METHOD("literal", ...)`` inside functions."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re" \
                and node.func.attr != "compile" and node.args \
                and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, (str, bytes)):
            yield Entry(f"{module_name}:{node.lineno}", re.compile(node.args[0].value),
                        (node.func.attr,))


def census() -> list[Entry]:
    """Every pattern once (named by the first module holding it) and each one written in
    place, with the methods the code applies it by."""
    applied = _applied_methods()
    found: dict[int, Entry] = {}
    inline: list[Entry] = []

    def add(label: str, pattern: re.Pattern, name: str | None) -> None:
        methods = sorted(applied.get(name, ())) if name else []
        found.setdefault(id(pattern), Entry(label, pattern, tuple(methods) or ("search",)))

    for package in PACKAGES:
        for module_info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(module_info.name)
            for name, value in vars(module).items():
                for label, pattern in _held(value, f"{module_info.name}.{name}"):
                    add(label, pattern, name if isinstance(value, re.Pattern) else None)
            inline.extend(_inline(module_info.name, Path(module.__file__ or "")))
    for factory in FACTORIES:
        for label, pattern in factory():
            add(label, pattern, None)
    return sorted([*found.values(), *inline], key=lambda entry: entry.label)


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
    signal.signal(signal.SIGVTALRM, _interrupt)
    found = []
    for entry in entries:
        for description, line in hostile_lines(heads(entry.pattern), size):
            subject = line.encode() if isinstance(entry.pattern.pattern, bytes) else line
            signal.setitimer(signal.ITIMER_VIRTUAL, limit_s)
            try:
                apply(entry, subject)
            except _TooLong:
                found.append(f"{entry.label} {entry.methods} on {description}")
                break
            finally:
                signal.setitimer(signal.ITIMER_VIRTUAL, 0)
    return found


if __name__ == "__main__":   # python -m tests.regex_census SIZE CPU_LIMIT_S: one JSON list
    print(json.dumps(overrunning(census(), int(sys.argv[1]), float(sys.argv[2]))))
