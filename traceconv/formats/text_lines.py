"""The lines of a text input as they are read, never the whole text at once.

A reader that goes line by line needs neither the file's text (its size again, as ``str``)
nor a list of its lines (about twice its size): :func:`text_lines` decodes as it reads and
splits exactly as :func:`split_lines` splits the whole text: every line end
``str.splitlines`` knows ends a line, but a break other than ``\r``/``\n`` right before a
line end is part of it (a form feed before each newline is no blank line after each line).

A CSV's lines (:func:`csv_lines`) end where the ``csv`` module ends them: at ``\n``,
``\r\n`` or a lone ``\r`` only, as RFC 4180, pandas and the producers' own readers do
(rocprof and nsys write cells as they are: a kernel name may hold any character); the other
breaks ``str.splitlines`` knows are characters of a cell there.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

from ..errors import InputError
from ..io import Source, stopped_at

# the longest line a reader is given (1 M characters): report lines are short (under 10 K)
# and their regular expressions slow on long ones; a line of gigabytes (a hostile or broken
# file, one line inside a gzip) is cut here, never held whole
MAX_LINE = 1 << 20
# the breaks str.splitlines knows besides \r and \n
OTHER_LINE_ENDS = "\f\v\x1c\x1d\x1e\x85\u2028\u2029"
_OTHER_END = re.compile(f"[{OTHER_LINE_ENDS}]")

# the text read at a time: lines are split a block at a time by str.splitlines, in C (a
# readline and a splitlines a line cost a large CSV a tenth more time)
_BLOCK = 1 << 16
# what str.splitlines ends a line at (a "\r" may be the first half of a "\r\n")
_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_BREAK = re.compile(f"[{_BREAKS}]")
# what the csv module ends a line at
_CSV_BREAKS = "\n\r"
_CSV_BREAK = re.compile(f"[{_CSV_BREAKS}]")
# one CSV line with its end, or the text after the last end
_CSV_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+")


def _with_ends(text: str) -> list[str]:
    return text.splitlines(True)


def split_csv_lines(text: str) -> list[str]:
    """The lines of ``text`` with their ends, split where the ``csv`` module splits.

    >>> split_csv_lines("a,b\\x1dc\\r\\n1,\\u2028\\r2\\n3"), split_csv_lines("a\\x0cb\\n\\nc\\n")
    (['a,b\\x1dc\\r\\n', '1,\\u2028\\r', '2\\n', '3'], ['a\\x0cb\\n', '\\n', 'c\\n'])
    """
    # (str.splitlines, in C, where no other break is there to tell apart: nearly always; a
    # substring test a break is 40 times faster than one search of them all)
    if not any(other in text for other in OTHER_LINE_ENDS):
        return text.splitlines(True)
    if "\r" in text:
        return _CSV_LINE.findall(text)
    *whole, last = text.split("\n")   # (a third of the pattern's time)
    return [line + "\n" for line in whole] + ([last] if last else [])


def _cut(line: str, source: Source, breaks: str = _BREAKS) -> str:
    """``line`` (with its end, if any) cut at :data:`MAX_LINE` characters, the cut counted."""
    text = line.rstrip(breaks)
    if len(text) <= MAX_LINE:
        return line
    source.note("input.line_cut",
                example=f"{len(text) - MAX_LINE:,} characters after the first {MAX_LINE:,}")
    return text[:MAX_LINE] + line[len(text):]


def split_lines(text: str) -> list[str]:
    """The lines of ``text``: ``str.splitlines``, but the :data:`OTHER_LINE_ENDS` breaks
    right before ``\\n`` or ``\\r`` belong to that line end (as a form feed before a newline),
    and so does one at the text's very end.

    >>> split_lines("conv2d  3\\x0c\\nrelu  1\\x0b\\x85\\r\\n\\x0c\\nend\\u2028x\\x0c")
    ['conv2d  3', 'relu  1', '', 'end', 'x']
    >>> split_lines("a\\u2029\\u2029"), "a\\n\\n".splitlines()   # (two line ends: two lines)
    (['a', ''], ['a', ''])
    """
    if _OTHER_END.search(text) is None:
        return text.splitlines()
    pieces = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    last = pieces.pop()   # (not followed by a line end: "" when the text ends on one)
    lines = [line for piece in pieces for line in _OTHER_END.split(piece.rstrip(OTHER_LINE_ENDS))]
    if last:
        lines += _OTHER_END.split(last[:-1] if last[-1] in OTHER_LINE_ENDS else last)
    return lines


class SourceLines:
    """The lines of ``source`` (see :func:`text_lines`), once; ``ended_mid_line``, once they
    are read, says whether the input stopped inside its last line (no line end after it).
    ``csv``: the lines :func:`csv_lines` gives."""

    def __init__(self, source: Source, csv: bool = False) -> None:
        self.source = source
        self.csv = csv
        self.ended_mid_line = False
        self._breaks, self._break = (_CSV_BREAKS, _CSV_BREAK) if csv else (_BREAKS, _BREAK)
        self._split_ends = split_csv_lines if csv else _with_ends

    def __iter__(self) -> Iterator[str]:
        source = self.source
        try:
            with source.open() as stream:
                # newline="": lines end where the bytes say (\n, \r\n, \r), untranslated; the
                # other breaks str.splitlines knows (\x0c, \x85, \u2028 ...) are split below
                text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace",
                                       newline="")   # (a BOM is no text of a line)
                try:
                    yield from self._lines(text)
                except (OSError, EOFError) as exc:   # e.g. a damaged gzip
                    raise InputError(f"cannot read: {exc}", file=source.name,
                                     location=stopped_at(stream, source.compressed)) from None
        except (OSError, EOFError) as exc:
            raise InputError(f"cannot read: {exc}", file=source.name) from None

    def _lines(self, text: io.TextIOWrapper) -> Iterator[str]:
        source, breaks = self.source, self._breaks
        carry = ""            # the start of a line the block's end cut
        head = None           # an over-long line's first MAX_LINE characters, its rest skipped
        skipped = 0
        while block := text.read(_BLOCK):
            if head is not None:
                found = self._break.search(block)
                if found is None:
                    skipped += len(block)
                    continue
                skipped += found.start()
                source.note("input.line_cut",
                            example=f"{skipped:,} characters after the first {MAX_LINE:,}")
                block, head = head + block[found.start():], None
            block = carry + block
            lines = self._split_ends(block)
            last = lines[-1]
            # (a "\r" or another break may be the first half of a line end the next block ends)
            carry = last if last[-1] != "\n" else ""
            complete = block[:len(block) - len(carry)]
            if len(carry.rstrip(breaks)) > MAX_LINE:
                if carry[-1] in breaks:   # (a whole line: its "\n" may come next)
                    carry = _cut(carry, source, breaks)
                else:
                    head, skipped, carry = carry[:MAX_LINE], len(carry) - MAX_LINE, ""
            if len(complete) > MAX_LINE and max(map(len, lines)) > MAX_LINE:
                complete = "".join(_cut(line, source, breaks)
                                   for line in lines[:len(lines) - bool(carry)
                                                     - (head is not None)])
            yield from self._split(complete)
        if head is not None:
            source.note("input.line_cut",
                        example=f"{skipped:,} characters after the first {MAX_LINE:,}")
            carry = head
        yield from self._split(carry)
        self.ended_mid_line = head is None and bool(carry) and carry[-1] not in breaks

    def _split(self, text: str) -> list[str]:
        return split_csv_lines(text) if self.csv else split_lines(text)


def text_lines(source: Source) -> SourceLines:
    """The lines of ``source`` decoded as UTF-8 (a BOM dropped, undecodable bytes replaced), the
    same as ``split_lines(source.read_text())`` gives (a line past :data:`MAX_LINE` characters
    is cut there, counted as ``input.line_cut``); a read that fails (a damaged gzip) raises
    :class:`InputError` naming the file, as :meth:`Source.read_text` does.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "log.txt")
    >>> _ = open(path, "wb").write(b"a\\r\\nb\\x0cc\\rd\\x0c\\n\\n\\xffe")
    >>> lines = text_lines(Source(path))
    >>> list(lines) == split_lines(Source(path).read_text()), lines.ended_mid_line
    (True, True)
    """
    return SourceLines(source)


def csv_lines(source: Source) -> SourceLines:
    """The lines of the CSV ``source`` with their ends (:class:`.csv_rows.CsvRows` tells a cut
    last row by them): as :func:`text_lines` reads them (bounded, decoded), but split where
    the ``csv`` module splits a file opened with ``newline=""`` (at ``\\n``, ``\\r\\n`` and a
    lone ``\\r``), so that a cell holding ``\\x1d`` or U+2028 stays one cell of one row.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "k.csv")
    >>> _ = open(path, "wb").write("Name,Calls\\r\\nk\\x1dv\\u2028w,2\\rx,3".encode())
    >>> lines = csv_lines(Source(path))
    >>> list(lines), lines.ended_mid_line
    (['Name,Calls\\r\\n', 'k\\x1dv\\u2028w,2\\r', 'x,3'], True)
    """
    return SourceLines(source, csv=True)
