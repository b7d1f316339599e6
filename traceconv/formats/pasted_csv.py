"""A CSV pasted into an issue, a chat or a doc reads as the clean file: what the page put on
its lines is undone where the paste is evident, judged once on the input's head, and never
otherwise (a CSV's cells are data: a cell may start with ``> `` or hold an NBSP).

* a Markdown quote: every line but blank ones starts with ``>``; that mark (``> ``) is cut
  off each line that has it;
* a fence or a page's markup around the rows (```` ```csv ````, ``<pre>``): the first line is
  such markup (:func:`.pasted_text.is_markup`); a markup line is then a blank line, no row
  (the lines keep their numbers);
* NBSP and the other Unicode spaces are spaces (a page turned spaces into them) where the
  paste is evident by either mark, or where every line but blank and markup ones holds one.

A CSV's sniffer is given the head as its reader reads it (:func:`unpasted_head`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..io import HEAD_BYTES
from .pasted_text import QUOTE_MARK, UNICODE_SPACES, is_markup
from .text_lines import split_csv_lines


@dataclass(frozen=True)
class CsvPaste:
    """Which marks of a paste a CSV's lines carry (see the module docstring).

    >>> paste = CsvPaste.of(b'> ```csv\\n> "Name",\\xc2\\xa0"Calls"\\n> "k\\xc2\\xa0a",3\\n> ```\\n')
    >>> paste, list(paste.undone(['> ```csv\\n', '> "Name","Calls"\\n', '> "k\\xa0a",3\\n']))
    (CsvPaste(quoted=True, fenced=True, spaced=True), ['\\n', '"Name","Calls"\\n', '"k a",3\\n'])
    >>> bool(CsvPaste.of(b'"Name","Calls"\\n> k,3\\n')), bool(CsvPaste.of(b'Name,N\\nk\\xc2\\xa0a,3\\n'))
    (False, False)
    """

    quoted: bool = False
    fenced: bool = False
    spaced: bool = False

    @classmethod
    def of(cls, head: bytes) -> CsvPaste:
        """The marks that the lines of ``head`` (an input's first bytes) all carry."""
        text = head.decode("utf-8", "replace")
        lines = split_csv_lines(text)
        if len(head) >= HEAD_BYTES:
            lines = lines[:-1]   # (the last one, cut by the head's end)
        rows = [line.rstrip("\r\n") for line in lines if line.strip()]
        quoted = bool(rows) and all(QUOTE_MARK.match(line) for line in rows)
        if quoted:
            rows = [unquoted for line in rows if (unquoted := _unquoted(line)).strip()]
        fenced = bool(rows) and is_markup(rows[0])
        cells = [line for line in rows if not (fenced and is_markup(line))]
        spaced = ((quoted or fenced or all(UNICODE_SPACES.search(line) for line in cells))
                  and any(UNICODE_SPACES.search(line) for line in cells))
        return cls(quoted, fenced, spaced)

    def __bool__(self) -> bool:
        return self.quoted or self.fenced or self.spaced

    def undone(self, lines: Iterable[str]) -> Iterator[str]:
        """``lines`` (with their ends) without these marks."""
        for line in lines:
            if self.quoted:
                line = _unquoted(line)
            if self.fenced and is_markup(text := line.rstrip("\r\n")):
                line = line[len(text):]
            if self.spaced:
                line = UNICODE_SPACES.sub(" ", line)
            yield line

    def describe(self) -> str:
        """What was undone, for a diagnostic's example.

        >>> CsvPaste(quoted=True, spaced=True).describe()
        "a Markdown quote's '> ', NBSP for spaces"
        """
        return ", ".join(what for what, present in (
            ("a Markdown quote's '> '", self.quoted), ("a fence or page markup", self.fenced),
            ("NBSP for spaces", self.spaced)) if present)


def _unquoted(line: str) -> str:
    mark = QUOTE_MARK.match(line)
    return line[mark.end():] if mark else line


def unpasted_head(head: bytes) -> bytes:
    """``head`` as a CSV reader reads it: its paste undone, if evident; else ``head`` itself.

    >>> unpasted_head(b'```\\n"Name","Calls"\\n```\\n'), unpasted_head(b"\\x00\\x01")
    (b'\\n"Name","Calls"\\n\\n', b'\\x00\\x01')
    """
    if b"\0" in head:
        return head   # (binary, never pasted text)
    paste = CsvPaste.of(head)
    if not paste:
        return head
    return "".join(paste.undone(split_csv_lines(head.decode("utf-8", "replace")))).encode()
