"""Bracket-aware scanning of MIGraphX print text.

MIGraphX prints nested values (shapes inside attributes, ops inside attributes, ``{...}``
vectors) with commas at every level, so every split must happen at bracket depth 0.
All three bracket kinds count as one depth: the printer never emits unbalanced text, and
a paste that is cut mid-line simply never returns to depth 0.
"""

from __future__ import annotations

import re

_OPENERS = "[{("
_CLOSERS = "]})"


_BRACKETS = re.compile(r"[\[\]{}()]")


def closing(text: str, start: int) -> int:
    """Index of the bracket that closes the one at ``text[start]``, or -1 if it never closes.

    >>> closing("a[b{c}d](e)", 1), closing("[unclosed(x)", 0)
    (7, -1)
    """
    depth = 0
    for m in _BRACKETS.finditer(text, start):
        if m.group() in _OPENERS:
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return -1


def _depth(text: str, end: int) -> int:
    """Bracket depth just before ``text[end]`` (C-speed counting)."""
    return sum(text.count(c, 0, end) for c in _OPENERS) - sum(
        text.count(c, 0, end) for c in _CLOSERS)


def find_top(text: str, token: str, start: int = 0, *, last: bool = False) -> int:
    """Index of ``token`` at bracket depth 0 (the first, or the ``last``), else -1.

    >>> find_top("f[a -> b] -> c", " -> "), find_top("x # a # b", " # ", last=True)
    (9, 5)
    """
    if last:
        i = text.rfind(token, start)
        while i >= 0 and _depth(text, i):
            i = text.rfind(token, start, i)
        return i
    i = text.find(token, start)
    while i >= 0 and _depth(text, i):
        i = text.find(token, i + 1)
    return i


_SPLIT_CHARS = re.compile(r"[\[\]{}(),]")


def split_top(text: str, *, tight: bool = False) -> list[str]:
    """Split ``text`` at depth-0 commas; ``tight``: only commas that no space follows.

    Attributes are joined by a bare ``,`` while values inside them (shape prints) use
    ``", "``, so attribute lists are split ``tight``.

    >>> split_top("a={1, 2},shape=float_type, {2}, {1},id=x", tight=True)
    ['a={1, 2}', 'shape=float_type, {2}, {1}', 'id=x']
    >>> split_top("[1, 4, 0], [2, 2, 0]")
    ['[1, 4, 0]', ' [2, 2, 0]']
    """
    if "," not in text:
        return [text]
    parts, depth, begin = [], 0, 0
    for m in _SPLIT_CHARS.finditer(text):
        ch, i = m.group(), m.start()
        if ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS:
            depth -= 1
        elif depth == 0 and ch == "," and not (tight and text[i + 1:i + 2] == " "):
            parts.append(text[begin:i])
            begin = i + 1
    parts.append(text[begin:])
    return parts
