"""The lines of a text input as they are read, never the whole text at once.

A reader that goes line by line needs neither the file's text (its size again, as ``str``)
nor a list of its lines (about twice its size): :func:`text_lines` decodes as it reads and
splits exactly as :func:`.pasted_text.split_lines` splits the whole text.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

from ..errors import InputError
from ..io import Source, stopped_at
from .pasted_text import OTHER_LINE_ENDS, split_lines

# the longest line a reader is given (1 M characters): report lines are short (under 10 K)
# and their regular expressions slow on long ones; a line of gigabytes (a hostile or broken
# file, one line inside a gzip) is cut here, never held whole
MAX_LINE = 1 << 20
_LINE_ENDS = ("\n", "\r", *OTHER_LINE_ENDS)   # (a text may end on any of them)


def _skip_rest(text: io.TextIOWrapper, source: Source) -> bool:
    """Read past the rest of an over-long line, a piece at a time; count the cut (not a
    line of exactly :data:`MAX_LINE` characters, whose line end alone is left). Returns
    whether the bound fell between the two characters of its ``\\r\\n``."""
    skipped = 0
    piece = ""
    while piece := text.readline(MAX_LINE):
        ended = piece.endswith(("\n", "\r"))
        skipped += len(piece.rstrip("\r\n")) if ended else len(piece)
        if ended:
            break
    if skipped:
        source.note("input.line_cut",
                    example=f"{skipped:,} characters after the first {MAX_LINE:,}")
    return len(piece) == MAX_LINE and piece.endswith("\r")


class SourceLines:
    """The lines of ``source`` (see :func:`text_lines`), once; ``ended_mid_line``, once they
    are read, says whether the input stopped inside its last line (no line end after it)."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.ended_mid_line = False

    def __iter__(self) -> Iterator[str]:
        source = self.source
        try:
            with source.open() as stream:
                # newline="": lines end where the bytes say (\\n, \\r\\n, \\r), untranslated; the
                # other breaks (\\x0c, \\x85, \\u2028 ...) are split below (split_lines)
                text = io.TextIOWrapper(stream, encoding="utf-8", errors="replace", newline="")
                try:
                    split_crlf = False   # a "\r\n" the bound cut between its two characters
                    while line := text.readline(MAX_LINE):
                        if split_crlf and line == "\n":
                            split_crlf = False
                            continue
                        split_crlf = len(line) == MAX_LINE and line.endswith("\r")
                        if len(line) == MAX_LINE and not line.endswith(("\n", "\r")):
                            split_crlf = _skip_rest(text, source)
                        # (a line cut at the bound was read to its end by _skip_rest)
                        self.ended_mid_line = len(line) < MAX_LINE and not line.endswith(
                            _LINE_ENDS)
                        pieces = line.splitlines()   # (one, but for another break in it)
                        yield from pieces if len(pieces) < 2 else split_lines(line)
                except (OSError, EOFError) as exc:   # e.g. a gzip cut short
                    raise InputError(f"cannot read: {exc}", file=source.name,
                                     location=stopped_at(stream, source.compressed)) from None
        except (OSError, EOFError) as exc:
            raise InputError(f"cannot read: {exc}", file=source.name) from None


def text_lines(source: Source) -> SourceLines:
    """The lines of ``source`` decoded as UTF-8 (undecodable bytes replaced), the same as
    ``split_lines(source.read_text())`` gives (a line past :data:`MAX_LINE` characters is
    cut there, counted as ``input.line_cut``); a read that fails (a cut gzip) raises
    :class:`InputError` naming the file, as :meth:`Source.read_text` does.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "log.txt")
    >>> _ = open(path, "wb").write(b"a\\r\\nb\\x0cc\\rd\\x0c\\n\\n\\xffe")
    >>> lines = text_lines(Source(path))
    >>> list(lines) == split_lines(Source(path).read_text()), lines.ended_mid_line
    (True, True)
    """
    return SourceLines(source)
