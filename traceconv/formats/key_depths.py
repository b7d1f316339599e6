"""Which quoted keys a JSON text holds at the depth a format's claim counts them: the one
walk detection makes, over a sniffed head and past it alike.

A format is known by the keys of its top-level object (a Chrome trace's ``traceEvents``,
an execution trace's ``nodes``), or of the objects directly in a top-level array (a trtexec
profile's rows); the same name nested in some value (an ET's metadata holding
``"traceEvents": 1``) or inside a string (``"name": "\\"traceEvents\\":"``) says nothing
about the file. Only the keys a claim names ``inner`` (an execution trace's node fields)
count at any depth.

:class:`KeyDepths` is fed the text a block at a time, in plain Python without a step per
byte or per token: a regular expression finds the looked-for keys, others skip the strings
before each whole, and the depth before a key is a count of the brackets outside strings
(no numpy: detection stays light). What it carries from one block to the next is small whatever the text: the depth,
whether a string is open (a string of any length is skipped, not kept), and at most a
key's length of text.

>>> scan = KeyDepths(top=[b'"traceEvents"', b'"nodes"'])
>>> scan.feed(b'{"metadata": {"traceEvents": 1}, "name": "\\\\"traceEvents\\\\":", "no')
>>> scan.feed(b'des"\\n  : [{"traceEvents": "x"}]}'); scan.end()
>>> sorted(scan.found)
[b'"nodes"']
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable

# A string's body up to (not with) its closing quote: any byte but a quote or a backslash,
# or an escape (a backslash and the byte after it)
_BODY = rb'[^"\\]*+(?:\\.[^"\\]*+)*+'
_STRING_BODY = re.compile(_BODY, re.DOTALL)
# From outside a string: text and whole strings, up to a string that does not end in it
_WHOLE_TOKENS = re.compile(rb'(?:[^"]++|"%s")*+' % _BODY, re.DOTALL)
# Whole strings (one that the text does not end taken whole too: never tried again from
# each quote in it)
_STRINGS = re.compile(rb'"%s(?:"|\\?\Z)' % _BODY, re.DOTALL)
_WHITESPACE = b" \t\r\n"


def _reach(pattern: re.Pattern[bytes], text: bytes, start: int, stop: int | None = None
           ) -> int:
    """Where ``pattern``, which matches the empty text too, stops from ``start``."""
    found = pattern.match(text, start, len(text) if stop is None else stop)
    assert found is not None
    return found.end()


def _nesting(text: bytes, start: int, stop: int) -> int:
    """How much deeper the whole tokens between ``start`` and ``stop`` end."""
    if text.find(b'"', start, stop) >= 0:
        stripped = _STRINGS.sub(b"", text[start:stop])
        return _nesting_of_text(stripped, 0, len(stripped))
    return _nesting_of_text(text, start, stop)


def _nesting_of_text(text: bytes, start: int, stop: int) -> int:
    """How much deeper ``text`` (with no string) ends between ``start`` and ``stop``."""
    return (text.count(b"{", start, stop) + text.count(b"[", start, stop)
            - text.count(b"}", start, stop) - text.count(b"]", start, stop))


class KeyDepths:
    """Feed the text (:meth:`feed`, then :meth:`end`); :attr:`found` holds the ``top`` keys
    seen as keys of the top level and the ``anywhere`` keys seen as keys at any depth
    (keys quoted as the text writes them: ``b'"nodes"'``). A key counts when its colon
    follows (after any whitespace, in this block or a later one).

    >>> scan = KeyDepths(top=[b'"count"'], anywhere=[b'"timeMs"'])
    >>> scan.feed(b'\\xef\\xbb\\xbf [{"count": 1}, {"a": {"timeMs": 2}}]'); scan.end()
    >>> sorted(scan.found), scan.done
    ([b'"count"', b'"timeMs"'], True)
    """

    def __init__(self, top: Iterable[bytes] = (), anywhere: Iterable[bytes] = ()) -> None:
        self._top_keys = frozenset(top)
        self._anywhere_keys = frozenset(anywhere)
        self._longest = max(map(len, self._top_keys | self._anywhere_keys), default=0)
        self.found: set[bytes] = set()
        self._depth = 0
        self._top_depth: int | None = None   # 1 under a top-level object, 2 under an array
        self._in_string = False    # where the next block begins
        self._escaped = False      # (in a string: its first byte is escaped)
        self._kept = b""           # the start of a string that may be a key, cut by the block
        self._awaiting: tuple[bytes, int] | None = None   # a key at the end, and its depth
        self._compile()

    @property
    def wanted(self) -> frozenset[bytes]:
        """The keys not found yet."""
        return self._wanted - self.found

    @property
    def done(self) -> bool:
        """Whether every key is found (nothing more to look for)."""
        return self._wanted <= self.found

    def feed(self, block: bytes) -> None:
        """Look at one more block of the text."""
        if self.done or not block:
            return
        if self._wanted & self.found:
            self._compile()   # (once a block: no more time on keys found)
        text, self._kept = self._kept + block, b""
        if self._top_depth is None:
            if len(text) < len(codecs.BOM_UTF8) and codecs.BOM_UTF8.startswith(text):
                self._kept = text   # (a mark cut by the block)
                return
            text = text.removeprefix(codecs.BOM_UTF8).lstrip(_WHITESPACE)
            if not text:
                return
            self._top_depth = {b"{": 1, b"[": 2}.get(text[:1], -1)   # (-1: no keys at top)
        at = self._awaited(text)
        if self._in_string:
            at = self._string_end(text, at)
            if self._in_string:
                return
        self._scan(text, at)

    def end(self) -> None:
        """The text ended (or reading stopped): a key still awaiting its colon is none."""
        self._kept, self._awaiting = b"", None

    def _awaited(self, text: bytes) -> int:
        """Settle a key left at the end of the last block: a colon now, or not a key."""
        if self._awaiting is None:
            return 0
        spaces = len(text) - len(text.lstrip(_WHITESPACE))
        if spaces < len(text):
            key, depth = self._awaiting
            if text[spaces:spaces + 1] == b":":
                self._count(key, depth)
            self._awaiting = None
        return spaces

    def _string_end(self, text: bytes, at: int) -> int:
        """Where the string open at ``at`` ends (just past its quote); the end of ``text``
        while it goes on."""
        if self._escaped:
            at, self._escaped = at + 1, False
        body_end = _reach(_STRING_BODY, text, min(at, len(text)))
        if body_end < len(text) and text[body_end:body_end + 1] == b'"':
            self._in_string = False
            return body_end + 1
        self._escaped = body_end == len(text) - 1   # (a lone backslash ends the block)
        return len(text)

    def _scan(self, text: bytes, at: int) -> None:
        """Find the keys from ``at`` (outside a string) on; keep what the next block ends."""
        for key in self._keys.finditer(text, at):   # (few: maybe in a string, maybe not)
            if key.start() < at:
                continue   # (in a string passed over)
            clean = _reach(_WHOLE_TOKENS, text, at, key.start())
            self._depth += _nesting(text, at, clean)
            if clean < key.start():   # (a string opens before it: it holds it, or ends at it)
                self._in_string = True
                at = self._string_end(text, clean + 1)
                if self._in_string:   # (and goes on past the text)
                    self._in_string = self._escaped = False
                    self._opened(text, clean)
                    return
                continue
            at = key.end()
            if text[at - 1:at] == b":":
                self._count(key.group(1), self._depth)
            else:   # (whitespace to the end of the text: the colon may come next)
                self._awaiting = (key.group(1), self._depth)
        whole = _reach(_WHOLE_TOKENS, text, at)
        self._depth += _nesting(text, at, whole)
        if whole < len(text):
            self._opened(text, whole)

    def _opened(self, text: bytes, at: int) -> None:
        """A string opens at ``at`` and goes on past the end of ``text``."""
        if len(text) - at <= self._longest:
            self._kept = text[at:]   # (maybe a key, cut by the block)
        else:
            self._in_string = True
            self._string_end(text, at + 1)

    def _count(self, key: bytes, depth: int) -> None:
        if key in self._anywhere_keys or depth == self._top_depth:
            self.found.add(key)

    def _compile(self) -> None:
        """The pattern for the keys still wanted: such a key's string before whitespace and
        a colon (or the end of the text), the group the key with its quotes."""
        self._wanted = (self._top_keys | self._anywhere_keys) - self.found
        names = b"|".join(re.escape(key) for key in sorted(self._wanted)) or b"(?!)"
        self._keys = re.compile(rb"(%s)[ \t\r\n]*+(?::|\Z)" % names)
