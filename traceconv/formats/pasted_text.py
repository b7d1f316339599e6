"""One reading of pasted text for every text reader: what a terminal, a chat, a Markdown or
an HTML page did to a report's lines is undone here, once, before any reader sees them.

* ANSI escapes (colours, cursor codes) are removed;
* a page's HTML (once a line showed HTML markup): entities are decoded (``-&gt;``) and the
  tags glued to the first and last lines of a ``<pre>``/``<code>`` block are cut off;
* a Markdown quote (two or more lines in a row that start with ``>``) loses its ``> ``;
* NBSP and the other Unicode spaces are spaces, and a tab is a column gap: the next tab
  stop, never less than two spaces (the readers split cells on two or more);
* line ends of every kind (``\\r``, ``\\r\\n``, ``\\n``) end a line (``str.splitlines``).

:class:`PastedLines` also says, once its last line is read, whether the input stopped in
the middle of that line (no line end: a cut file or paste), which the stray-line rule
(:mod:`.stray_lines`) turns into rows lost.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Iterator

from ..io import Source
from .text_lines import text_lines

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[()][\w])")
# (a regex, not str.translate: a dict's translate costs 30 us a line of non-ASCII text)
_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
_QUOTE = re.compile(r" {0,3}> ?")
_HTML_PAGE = re.compile(r"<(?:!doctype|html|body|pre|code|div|p|br|td|span)\b[^<>]*>",
                        re.IGNORECASE)
_PAGE_HEAD = re.compile(r"^\s*<.*<(?:pre|code)\b[^<>]*>(?=\s*[^<\s])", re.IGNORECASE)
_PAGE_TAIL = re.compile(r"(?<=\S)\s*</(?:code|pre)>(?:\s*</?\w[^<>]*>)*\s*$", re.IGNORECASE)
_TAB_STOP = 8


def _untab(line: str) -> str:
    """``line`` with each tab as spaces to the next tab stop, at least two.

    >>> _untab("conv2d\\t12\\t\\t0.5"), _untab("\\tchild"), _untab("1234567\\tx")
    ('conv2d  12              0.5', '        child', '1234567         x')
    """
    out: list[str] = []
    column = 0
    for index, piece in enumerate(line.split("\t")):
        if index:
            gap = _TAB_STOP - column % _TAB_STOP
            gap += _TAB_STOP if gap < 2 else 0
            out.append(" " * gap)
            column += gap
        out.append(piece)
        column += len(piece)
    return "".join(out)


def unpasted(line: str) -> str:
    """One line without what a terminal or an editor put in it: ANSI escapes, Unicode
    spaces, tabs (see the module docstring; the page-level rules need :class:`PastedLines`).

    >>> unpasted("\\x1b[1;32mconv2d\\x1b[0m\\u00a0\\u00a012\\t0.5")
    'conv2d  12      0.5'
    """
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if not line.isascii():
        line = _SPACES.sub(" ", line)
    return _untab(line) if "\t" in line else line


class PastedLines:
    """The lines of a pasted text as its reader should read them (the module docstring says
    what is undone). Iterate once; ``cut_line``, from when the last line is given, is the
    number (from 1) of the line the input stopped inside, 0 when it ended on a line end
    or on blanks
    (known of lines with an ``ended_mid_line`` attribute, as :func:`.text_lines.text_lines`
    gives; a ``str`` is taken as whole).

    >>> list(PastedLines("> Place: CPU\\n>\\n> conv2d\\t3"))
    ['Place: CPU', '', 'conv2d  3']
    >>> list(PastedLines("<p>x</p><pre><code>Place: CPU\\nrelu  -&gt; 3</code></pre>"))
    ['Place: CPU', 'relu  -> 3']
    """

    def __init__(self, lines: Iterable[str] | str) -> None:
        self._lines = lines.splitlines() if isinstance(lines, str) else lines
        self.cut_line = 0
        self._html = False

    def __iter__(self) -> Iterator[str]:
        raw = iter(self._lines)
        current = self._page(next(raw, None))
        current_quote = current is not None and _QUOTE.match(current)
        quoted = False
        number = 0
        while current is not None:
            number += 1
            following = self._page(next(raw, None))
            following_quote = following is not None and _QUOTE.match(following)
            # (a last line of blanks alone is an indented or quoted paste's last line end)
            if following is None and getattr(self._lines, "ended_mid_line", False) and \
                    unpasted(current).strip(" >"):
                self.cut_line = number
            # a quote is a block: one line that starts with ">" is a wrapped "->" or a prompt
            quoted = bool(current_quote) and (quoted or bool(following_quote))
            if quoted and current_quote:
                current = current[current_quote.end():]
            yield unpasted(current)
            current, current_quote = following, following_quote

    def _page(self, line: str | None) -> str | None:
        """``line`` without ANSI escapes and, on an HTML page, without its entities and the
        tags glued to it."""
        if line is None:
            return None
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        if "<" in line and not self._html:
            self._html = _HTML_PAGE.search(line) is not None
        if self._html:
            if "<" in line:
                line = _PAGE_TAIL.sub("", _PAGE_HEAD.sub("", line))
            if "&" in line:
                line = html.unescape(line)
        return line


def pasted_lines(source: Source) -> PastedLines:
    """The one way a text reader reads its input: the bounded lines of
    :func:`.text_lines.text_lines` (no line past ``MAX_LINE``, every Unicode line end) as
    :class:`PastedLines` gives them. A registry row with ``text=True`` promises it
    (``tests/test_text_path_census.py`` holds each such reader to it).

    >>> import os, tempfile
    >>> from traceconv.io import Source
    >>> path = os.path.join(tempfile.mkdtemp(), "paste.txt")
    >>> _ = open(path, "wb").write("> Place: CPU\u2028> conv2d\\t3\\r\\n".encode())
    >>> list(pasted_lines(Source(path)))
    ['Place: CPU', 'conv2d  3']
    """
    return PastedLines(text_lines(source))


def unpasted_bytes(data: bytes) -> bytes:
    """The lines of ``data`` (UTF-8) read as :class:`PastedLines` reads them, for a sniffer's
    byte patterns; ``data`` itself when nothing in it needs undoing.

    >>> unpasted_bytes(b"\\x1b[36m---Operator Summary---\\x1b[0m\\n")
    b'---Operator Summary---'
    >>> unpasted_bytes(b"\\xfd7zXZ\\x00\\t<")   # (binary: left as it is)
    b'\\xfd7zXZ\\x00\\t<'
    """
    if b"\0" in data or (not any(mark in data for mark in _MARKS)
                          and not data.lstrip(b" ").startswith(b">")):
        return data   # (a NUL: binary, or compressed, never pasted text)
    return "\n".join(PastedLines(data.decode("utf-8", "replace"))).encode()


# the bytes that start what PastedLines undoes (a sniffer scans megabytes of a log: plain
# substring tests, where one regex of alternatives took 80 ms a megabyte)
_MARKS = (b"\x1b", b"\t", b"\r", b"\x0b", b"\x0c", b"\xc2\x85", b"&", b"<", b"\xc2\xa0", b"\xe1\x9a\x80", b"\xe2\x80", b"\xe2\x81\x9f",
          b"\xe3\x80\x80", b"\n>", b"\n >", b"\n  >", b"\n   >")
