"""A CSV pasted into an issue, a chat or a doc reads as the clean file: what the page put on
its lines is undone where the paste is evident, judged once on the input's head, and never
otherwise (a CSV's cells are data: a cell may start with ``> `` or hold an NBSP).

* a Markdown quote: every line but blank ones starts with ``>``; that mark (``> ``) is cut
  off each line that has it;
* a fence or a page's markup around the rows (```` ```csv ````, ``<pre>``): the first line is
  such markup (:func:`.pasted_text.is_markup`); a markup line is then a blank line, no row
  (the lines keep their numbers);
* NBSP and the other Unicode spaces are spaces (a page turned spaces into them) where the
  paste is evident by either mark, or where every line but blank and markup ones holds one;
* a double-spaced CSV (a blank line after every line, as a chat, an export or CR CR LF line
  ends make it; judged on the head by the rule of every text input,
  :func:`.pasted_text.is_double_spaced`) is read single-spaced: the blank line after each
  line is no row, but its line end stays with the line before, so that the line numbers a
  reader reports (the ``csv`` module counts line ends) are those of the file as written
  (:class:`.csv_rows.CsvRows`); from a line followed by another that is not blank, the file
  is single-spaced and read as it is.

A CSV's sniffer is given the head as its reader reads it (:func:`unpasted_head`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..io import HEAD_BYTES
from .pasted_text import QUOTE_MARK, UNICODE_SPACES, is_double_spaced, is_markup
from .text_lines import split_csv_lines


@dataclass(frozen=True)
class CsvPaste:
    """Which marks of a paste a CSV's lines carry (see the module docstring).

    >>> paste = CsvPaste.of(b'> ```csv\\n> "Name",\\xc2\\xa0"Calls"\\n> "k\\xc2\\xa0a",3\\n> ```\\n')
    >>> paste, list(paste.undone(['> ```csv\\n', '> "Name","Calls"\\n', '> "k\\xa0a",3\\n']))
    (CsvPaste(quoted=True, fenced=True, spaced=True, double_spaced=False), ['\\n', '"Name","Calls"\\n', '"k a",3\\n'])
    >>> bool(CsvPaste.of(b'"Name","Calls"\\n> k,3\\n')), bool(CsvPaste.of(b'Name,N\\nk\\xc2\\xa0a,3\\n'))
    (False, False)
    >>> paste = CsvPaste.of(b'Name,N\\n\\na,1\\n\\nb,2\\n\\nc,3\\n\\n')
    >>> paste.double_spaced, list(paste.undone(['Name,N\\n', '\\n', 'a,1\\r\\n', '  \\r\\n', 'b,2\\n']))
    (True, ['Name,N\\n\\n', 'a,1\\r\\n\\r\\n', 'b,2\\n'])
    """

    quoted: bool = False
    fenced: bool = False
    spaced: bool = False
    double_spaced: bool = False

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
            lines = [_unquoted(line) for line in lines]
        fenced = bool(rows) and is_markup(rows[0])
        cells = [line for line in rows if not (fenced and is_markup(line))]
        spaced = ((quoted or fenced or all(UNICODE_SPACES.search(line) for line in cells))
                  and any(UNICODE_SPACES.search(line) for line in cells))
        return cls(quoted, fenced, spaced, is_double_spaced(lines))

    def __bool__(self) -> bool:
        return self.marked or self.double_spaced

    @property
    def marked(self) -> bool:
        """Whether the lines carry a page's marks (``csv.pasted``; the spacing is the input
        layer's, ``input.double_spaced``)."""
        return self.quoted or self.fenced or self.spaced

    def undone(self, lines: Iterable[str]) -> Iterator[str]:
        """``lines`` (with their ends) without these marks."""
        if self.quoted:
            lines = map(_unquoted, lines)
        if self.double_spaced:
            lines = _single_spaced(lines)
        for line in lines:
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


def _single_spaced(lines: Iterable[str]) -> Iterator[str]:
    """The lines of a double-spaced CSV, the blank line after each one no line of its own
    (see the module docstring), as :class:`.pasted_text.PastedLines` reads a text's."""
    rest = iter(lines)
    line = next(rest, None)
    while line is not None:
        spacer = next(rest, None)
        if spacer is not None and not spacer.strip():
            text = spacer.rstrip("\r\n")   # (blanks on the blank line: nothing of a row)
            yield line + spacer[len(text):]
            line = next(rest, None)
        elif spacer is not None and line.strip():   # (two lines of text: single-spaced
            yield line                              # from here)
            yield spacer
            yield from rest
            return
        else:   # (the input's end, or a blank line, then text)
            yield line
            line = spacer


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
