"""Where quoted keys sit in JSON text read a block at a time: at the top level, or deeper.

A format is known by the keys of its top-level object (a Chrome trace's ``traceEvents``,
an execution trace's ``nodes``); the same name nested in some value (an ET's metadata
holding ``"traceEvents": 1``) says nothing about the file. :class:`KeyDepths` follows
strings and nesting across blocks (whole blocks at once, in numpy: no Python step per
byte or token) and tells, for each key found, whether it was a key of the top-level
object, or of an object directly in a top-level array (a trtexec profile's rows).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

_QUOTE, _BACKSLASH = ord('"'), ord("\\")
_NESTING = np.zeros(256, np.int32)   # what each byte does to the depth (outside strings)
_NESTING[[ord("{"), ord("[")]], _NESTING[[ord("}"), ord("]")]] = 1, -1
# A key followed by its colon further than this (in whitespace) is not seen as a key.
_COLON_REACH = 64


class KeyDepths:
    """Feed the text (:meth:`feed`, then :meth:`end`); :attr:`top` and :attr:`deeper` hold
    the quoted ``keys`` found at the top level and below it.

    >>> scan = KeyDepths([b'"traceEvents"', b'"nodes"'])
    >>> scan.feed(b'{"metadata": {"traceEvents": 1}, "no')
    >>> scan.feed(b'des": [{"traceEvents": "x"}]}'); scan.end()
    >>> sorted(scan.top), sorted(scan.deeper)
    ([b'"nodes"'], [b'"traceEvents"'])
    >>> scan = KeyDepths([b'"count"']); scan.feed(b'[{"count": 0}, {"a": {"count": 1}}]')
    >>> scan.end(); scan.top, scan.deeper
    ({b'"count"'}, {b'"count"'})
    """

    def __init__(self, keys: Iterable[bytes]) -> None:
        keys = sorted(keys)
        self._key = re.compile(b"(?:%s)[ \t\r\n]*:" % b"|".join(map(re.escape, keys)))
        self._overlap = max(map(len, keys)) + _COLON_REACH
        self.top: set[bytes] = set()
        self.deeper: set[bytes] = set()
        self._pending = b""          # text whose keys are looked for with the next block
        self._in_string = False      # state where the pending text begins
        self._escaped = False
        self._depth = 0
        self._top_depth = 0          # 1 under a top-level object, 2 under an array; 0: unknown

    def feed(self, block: bytes) -> None:
        """Look at one more block of the text."""
        self._scan(self._pending + block, final=False)

    def end(self) -> None:
        """The text ended (or reading stopped): look at what is pending."""
        self._scan(self._pending, final=True)
        self._pending = b""

    def _scan(self, text: bytes, final: bool) -> None:
        if not text:
            return
        if not self._top_depth:
            first = text.lstrip()[:1]
            if not first:
                self._pending = b""
                return
            self._top_depth = 1 if first == b"{" else 2
        data = np.frombuffer(text, np.uint8)
        escapes = self._escapes(data)
        quotes = (data == _QUOTE) & ~escapes
        in_string = (np.cumsum(quotes, dtype=np.int32) + self._in_string) & 1   # (after each)
        nesting = _NESTING[data]
        nesting[in_string == 1] = 0
        depth = np.cumsum(nesting, dtype=np.int32)   # (after each byte, from self._depth)
        cut = len(text) if final else max(len(text) - self._overlap, 0)
        for match in self._key.finditer(text, 0, len(text)):
            start = match.start()
            if start >= cut:
                break
            if not (quotes[start] and in_string[start]):   # (an opening quote only)
                continue
            before = self._depth + (depth[start - 1] if start else 0)
            key = match.group()[:match.group().index(b'"', 1) + 1]
            (self.top if before == self._top_depth else self.deeper).add(key)
        if cut and not final:   # (the state where the pending text begins)
            self._in_string = bool(in_string[cut - 1])
            self._escaped = self._in_string and bool(escapes[cut])
            self._depth += int(depth[cut - 1])
        self._pending = text[cut:]

    def _escapes(self, data: np.ndarray) -> np.ndarray:
        """Which bytes follow an odd run of backslashes (the run may begin before ``data``:
        :attr:`_escaped` says whether its first byte is escaped)."""
        slashes = data == _BACKSLASH
        if not self._escaped and not slashes.any():
            return slashes   # (no backslash: nothing escaped)
        places = np.arange(len(data), dtype=np.int32)
        last_other = np.maximum.accumulate(np.where(slashes, np.int32(-1), places))
        run = np.empty(len(data), np.int32)   # backslashes just before each byte
        run[0] = 0
        run[1:] = places[:-1] - last_other[:-1]
        escaped = (run & 1).astype(bool)
        if self._escaped:   # (a run from the block before reaches into this one)
            from_start = last_other < 0
            escaped[0] = True
            reach = np.concatenate(([False], from_start[:-1]))
            escaped[reach] = ~escaped[reach]
        return escaped
