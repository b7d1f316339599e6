"""Undo hard wraps: join the physical lines a terminal, an editor or a chat split, by grammar.

A line is joined to the one before it when it cannot start a line of its own (no
``name = ``, no ``Run instruction:``, no known report, driver or trace-eval line) and the
line before it is not complete: an instruction with open brackets, no shape yet, or a
trailing ``->``/``,``/``=``; an ``Output:`` list that goes on with more numbers; a Summary row
or trailer line that only the next piece completes. Any number of lines may be joined.
Pieces are glued without a space when the wrap cut a token (terminal wraps) and with one
when the cut was at a space (editor wraps keep it at the end of the line).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ..line_patterns import SPACED_NAME
from .instructions import VAR, instruction_fields

NUM = r"[-+]?(?:nan|inf|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?)"
_SEP = r"\s*[,，]\s*"  # the DCU fork pastes carry full-width commas and collapsed spacing
# Greedy head: the timing is the last ': <ms>ms, <pct>%' of the line.
PERF_TAIL = re.compile(rf"^(.*):\s*({NUM})\s*ms{_SEP}({NUM})\s*%\s*$")
SUMMARY_ROW = re.compile(
    rf"^({SPACED_NAME})\s*:\s*({NUM})\s*ms(?:\s*/\s*(\d+)\s*=\s*({NUM})\s*ms)?{_SEP}({NUM})\s*%\s*$")
_LOGGER = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \[\w+\] \[[^\]]*\] ?(.*)$")
_LINE_START = re.compile(
    r"\s*(?:[^\s=]+ = |Run instruction:|Summary:|Running |Reading: |Pass: |Compiling|"
    r"Allocating|Batch size:|Rate:|Total time:|Total instructions time:|Overhead|"
    r"Percentiles|Time:|Output|Ouput|Min value:|module: |Module \S+:\s*$|MIGraphX Version|"
    r"\[ MIGraphX Version|\[\d{4}-\d\d-\d\d |#|\.\.\.|…|\$ )")
# an environment variable's name (MIGRAPHX_...), read once: "[A-Z0-9_]*MIGRAPHX" tried
# each place in a long name as the word's start, re-reading the rest of the name
ENV_NAME = r"(?=[A-Z0-9_]*?MIGRAPHX)[A-Z0-9_]*+"
# environment dumps, not instructions
_ENV = re.compile(rf"\s*+{ENV_NAME}=")
_CONTINUATION = re.compile(r"\s*(?:->|-|>|:|,|，|\{|\[|\}|\]|\)|\w+_type\b|target_id|\d|%|ms\b)")
# what may follow an instruction's last ":" when a wrap cut its perf time ("0.0007m",
# "0.5ms, 3"), its blanks single: a number, then (a blank, "m", "ms" or a comma first) the next
_PERF_TAIL_REST = re.compile(r"[-+\d.eEnaif]*(?:(?=[ ms,，]) ?(?:ms?)? ?[,，]? ?[-+\d.eEnaif]*)?")
_NUMBERS = re.compile(r"^[-+\d.eE,\s{}\[\]()naif]+$")
# A summary row's start, and all of it that a wrap may have left on the first line.
_SUMMARY_START = re.compile(rf"^[^=]+?:\s*{NUM}")
# (each run of blanks read once: blanks in a row, several ways to split them were tried)
_SUMMARY_PREFIX = re.compile(
    rf"^[^=]+?:\s*+{NUM}\s*+(?:ms)?(?:\s*+/\s*+\d*+\s*+(?:=\s*+(?:{NUM}\s*+(?:ms)?)?)?)?"
    rf"(?:\s*+[,，]\s*+(?:{NUM})?)?\s*+$")
_OUTPUT = re.compile(r"\s*(?:Output has |Output: |Ouput: |Min value: )")
_TRAILER_HEAD = re.compile(r"\s*(?:Total time:|Percentiles|Overhead)")


def clean(raw: str) -> str:
    """The text of a physical line (as :mod:`..pasted_text` gives it): no logger prefix.

    >>> clean("2026-01-02 03:04:05.678 [info] [driver] @1 = add(x,y)")
    '@1 = add(x,y)'
    """
    line = raw
    if m := _LOGGER.match(line):
        line = m[1]
    return line


def _open(text: str) -> int:
    return sum(text.count(c) for c in "[{(") - sum(text.count(c) for c in "]})")


def summary_group(group: str) -> bool:
    """Whether the head of a Summary-shaped line is a group name (``gpu::code_object``),
    not an instruction or the piece of one (those hold ``=`` or ``->``).

    >>> summary_group("gpu::code_object::mlir_dot"), summary_group("t,@3) -> half_type, {2}")
    (True, False)
    >>> summary_group(" 56, 56}, {200704, 3136, 56, 1}")   # the end of a wrapped shape
    False
    """
    return re.search(r"=|->|[{}(),]|^\s*\d", group) is None


def _summary_row(text: str) -> bool:
    m = SUMMARY_ROW.match(text.strip())
    return m is not None and summary_group(m[1])


def _cut_perf_time(body: str) -> bool:
    """Whether ``body`` ends in ``}`` or ``]``, ``:`` and a perf time cut short. Only its
    last ``:`` can start one (nothing after it holds a ``:``), and its blanks are made
    single first: one try, in time linear in the line (a pattern of five blank runs tried
    from each bracket took minutes on a few hundred blanks).

    >>> _cut_perf_time("@3 = relu(@2) -> float_type, {1}, {1}: 0.0007m"), _cut_perf_time("a: 1")
    (True, False)
    """
    colon = body.rfind(":")
    if colon < 0 or not body[:colon].rstrip().endswith(("}", "]")):
        return False
    return _PERF_TAIL_REST.fullmatch(" ".join(body[colon + 1:].split())) is not None


def _incomplete_instruction(text: str) -> bool:
    """An instruction print that stops early: open brackets, a dangling ``->``/``,``, or
    no (whole) shape yet; a line with its perf time is complete."""
    body = text.strip().removeprefix("Run instruction:").strip()
    if PERF_TAIL.match(body):
        return False
    if _cut_perf_time(body):   # ": 0.0007m" — a perf time the wrap cut
        return True
    if _open(body) > 0 or body.endswith(("-", ">", ",", "，", "=", ":", "/", "#")):
        return True
    try:
        fields = instruction_fields(body)
    except ValueError:
        return True
    return fields.get("truncated", False) and fields["op"] != "@return"


def _glue(head: str, piece: str) -> str:
    """``head`` and ``piece`` as one line: a space only where the wrap cut at a space."""
    cut_at_space = head != head.rstrip() or piece[:1].isspace()
    return head.rstrip() + (" " if cut_at_space else "") + piece.lstrip()


def join(head: str, piece: str) -> str | None:
    """``head`` continued by ``piece``, or None when ``piece`` is a line of its own.

    >>> join("@3 = add(@1,@2) -", "> float_type, {2}, {1}")
    '@3 = add(@1,@2) -> float_type, {2}, {1}'
    >>> join("gpu::code_object::mlir_dot: 3.2ms / 8 = ", "0.4ms, 70%")
    'gpu::code_object::mlir_dot: 3.2ms / 8 = 0.4ms, 70%'
    >>> join("@3 = add(@1,@2) -> float_type, {2}, {1}", "@4 = relu(@3) -> float_type, {2}, {1}")
    """
    if not piece.strip() or not head.strip() or _LINE_START.match(piece) or _summary_row(piece):
        return None
    stripped = head.strip()
    joined = _glue(head, piece)
    if (VAR.match(stripped) and not _ENV.match(stripped)) or \
            stripped.startswith("Run instruction:"):
        if _incomplete_instruction(head) or _CONTINUATION.match(piece):
            return joined
        return None
    if _OUTPUT.match(head):
        return joined if _NUMBERS.match(piece) else None
    if _TRAILER_HEAD.match(head) and _open(head) > 0:
        return joined
    if not _summary_row(head) and (_summary_row(joined) or (
            _SUMMARY_START.match(stripped) and _summary_prefix(joined))):
        return joined
    return None


def _summary_prefix(text: str) -> bool:
    """Text that a Summary row starts with but that stops before its ``pct%``."""
    return _SUMMARY_PREFIX.match(text.strip()) is not None


# A wrapped print is at most this many lines and characters: each join tests the patterns
# on the whole text so far, and a line of 20,000 open brackets that every later line
# joined made a 1 MB input take 10 s (what is not joined is read as lines of its own).
_MAX_JOINED = 256
_MAX_LOGICAL = 1 << 16


def logical_lines(lines: Iterable[str]) -> Iterator[tuple[int, str, list[int]]]:
    """(first line number, the joined text, numbers of the lines joined to it) per line.

    >>> [(n, t, w) for n, t, w in logical_lines(["@1 = add(x,", "y) -> float_type, {2},", "{1}"])]
    [(1, '@1 = add(x,y) -> float_type, {2},{1}', [2, 3])]
    """
    held: tuple[int, str, list[int]] | None = None
    for number, raw in enumerate(lines, 1):
        line = clean(raw)
        if held is not None and len(held[2]) < _MAX_JOINED and len(held[1]) < _MAX_LOGICAL:
            joined = join(held[1], line)
            if joined is not None:
                held[2].append(number)
                held = (held[0], joined, held[2])
                continue
        if held is not None:
            yield held
        held = (number, line, [])
    if held is not None:
        yield held
