"""One reading of pasted text for every text reader: what a terminal, a chat, a Markdown or
an HTML page did to a report's lines is undone here, once, before any reader sees them.

* ANSI escapes (colours, cursor codes) are removed;
* a page's HTML (once a line showed HTML markup): entities are decoded (``-&gt;``) and the
  tags glued to the first and last lines of a ``<pre>``/``<code>`` block are cut off;
* a Markdown quote (two or more lines in a row that start with ``>``) loses its ``> ``, and a
  line comment its ``// `` (output pasted into a C, C++ or CUDA source, each line
  commented out, blank lines left as they were);
* NBSP and the other Unicode spaces are spaces, and a tab is a column gap: the next tab
  stop, never less than two spaces (the readers split cells on two or more);
* line ends of every kind (``\\r``, ``\\r\\n``, ``\\n``) end a line, and so do the
  other breaks ``str.splitlines`` knows (a page break ``\\f``, ``\\v``, ``\\x1c``-``\\x1e``,
  NEL, U+2028/U+2029), save where they stand right before a line end, of which they are
  then part (a form feed before each newline is no blank line after each line):
  :func:`split_lines`, for the lines of a text read whole and as it is read alike;
* a double-spaced text (a blank line after every line, as a chat, an editor saving CR CR
  LF, or a form feed after each newline makes it), judged on its first lines, is read
  single-spaced: the blank line after each line is dropped, while the text keeps that
  spacing (counted on the input as ``input.double_spaced``).

:class:`PastedLines` also says, once its last line is read, whether the input stopped in
the middle of that line (no line end: a cut file or paste), which the stray-line rule
(:mod:`.stray_lines`) turns into rows lost.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Iterable, Iterator

from ..io import Source
from .text_lines import split_lines, text_lines

_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[()][\w])")
# NBSP and the other Unicode spaces a page puts for spaces (a regex, not str.translate: a
# dict's translate costs 30 us a line of non-ASCII text)
UNICODE_SPACES = re.compile("[\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]")
# what a Markdown quote puts before each of its lines
QUOTE_MARK = re.compile(r" {0,3}> ?")
# that, or what commenting a line out puts before it in a C-like source (no report starts a
# line so): one pattern, tried once a line (group 1: a quote's)
_LINE_MARK = re.compile(r" {0,3}(?:(>)|//) ?")
_HTML_PAGE = re.compile(r"<(?:!doctype|html|body|pre|code|div|p|br|td|span)\b[^<>]*>",
                        re.IGNORECASE)
_PAGE_HEAD = re.compile(r"^\s*<.*<(?:pre|code)\b[^<>]*>(?=\s*[^<\s])", re.IGNORECASE)
_TAG = re.compile(r"</?\w[^<>]*>")
_BLOCK_ENDS = ("</code>", "</pre>")
_TAB_STOP = 8
# the markup a page wraps around a paste: a fence, <pre>/<code> tags, a reST directive
_MARKUP = re.compile(r"^\s*(?:(?:```|~~~).*|(?:</?(?:pre|code|div|details|summary)\b[^>]*>\s*)+"
                     r"|\.\. [\w-]+::.*)$", re.IGNORECASE)


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


def is_markup(line: str) -> bool:
    """Whether ``line`` is the markup a page wraps around a paste, never report text.

    >>> [is_markup(s) for s in ("```", "```text", "</pre></code>", ".. code-block:: text",
    ...                          "run_time = 2093", "<b>3</b> rows")]
    [True, True, True, True, False, False]
    """
    return _MARKUP.match(line) is not None


def unpasted(line: str) -> str:
    """One line without what a terminal or an editor put in it: ANSI escapes, Unicode
    spaces, tabs (see the module docstring; the page-level rules need :class:`PastedLines`).

    >>> unpasted("\\x1b[1;32mconv2d\\x1b[0m\\u00a0\\u00a012\\t0.5")
    'conv2d  12      0.5'
    """
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if not line.isascii():
        line = UNICODE_SPACES.sub(" ", line)
    return _untab(line) if "\t" in line else line


class PastedLines:
    """The lines of a pasted text as its reader should read them (the module docstring says
    what is undone). Iterate once; from when the last line is given, ``last_line`` is its
    number (from 1) and ``cut_line`` the number of the line the input stopped inside, 0
    when it ended on a line end (known of lines with an ``ended_mid_line`` attribute, as
    :func:`.text_lines.text_lines` gives; a ``str`` is taken as whole). A last line of
    blanks no wider than the paste's margin (the indent all its lines share, or a quote's
    ``>``) is an indented or quoted paste's last line end; wider, the input stopped inside
    a row's indentation: cut, and ``cut_in_blanks`` says so (what that loses is the
    reader's to judge, :func:`.stray_lines.count_input_end`).

    >>> list(PastedLines("> Place: CPU\\n>\\n> conv2d\\t3"))
    ['Place: CPU', '', 'conv2d  3']
    >>> list(PastedLines("int main();\\n// Output\\n//  Name  Calls\\n\\n// Rate: 9/s"))
    ['int main();', 'Output', ' Name  Calls', '', 'Rate: 9/s']
    >>> list(PastedLines("<p>x</p><pre><code>Place: CPU\\nrelu  -&gt; 3</code></pre>"))
    ['Place: CPU', 'relu  -> 3']
    >>> list(PastedLines("Place: CPU\\n\\nrelu  3\\n\\n\\n\\ngelu  4\\n\\n" * 2))
    ['Place: CPU', 'relu  3', '', 'gelu  4', 'Place: CPU', 'relu  3', '', 'gelu  4']
    >>> list(PastedLines("Place: CPU\\n\\frelu  3\\n\\f\\n\\fgelu  4\\n\\f" * 2))
    ['Place: CPU', 'relu  3', '', 'gelu  4', 'Place: CPU', 'relu  3', '', 'gelu  4']
    """

    def __init__(self, lines: Iterable[str] | str) -> None:
        self._lines = split_lines(lines) if isinstance(lines, str) else lines
        self.double_spaced = False   # (known once the first lines are read)
        self.cut_line = 0
        self.cut_in_blanks = False
        self.last_line = 0
        self._margin: int | None = None   # the indent every line read so far shares
        self._html = False

    def __iter__(self) -> Iterator[str]:
        raw = self._single_spaced(iter(self._lines))
        current = self._page(next(raw, None))
        current_mark = current is not None and _LINE_MARK.match(current)
        quoted = False
        number = 0
        while current is not None:
            number += 1
            following = self._page(next(raw, None))
            following_mark = following is not None and _LINE_MARK.match(following)
            if self._margin != 0 and current.strip():
                indent = len(current) - len(current.lstrip(" >"))
                self._margin = indent if self._margin is None else min(self._margin, indent)
            if following is None:
                self.last_line = number
                if getattr(self._lines, "ended_mid_line", False):
                    self._ended_inside(number, current)
            # a quote is a block: one line that starts with ">" is a wrapped "->" or a prompt
            # (a line comment is one line's own)
            quote = current_mark and current_mark.group(1)
            quoted = bool(quote) and (quoted or bool(following_mark and following_mark.group(1)))
            if current_mark and (quoted or not quote):
                current = current[current_mark.end():]
                if quote and current.startswith("//"):   # (a page quoting a line comment)
                    current = current[2:].removeprefix(" ")
            yield unpasted(current)
            current, current_mark = following, following_mark

    def _single_spaced(self, raw: Iterator[str]) -> Iterator[str]:
        """``raw`` without the blank line after each line where :func:`is_double_spaced`
        judges its first lines so; from a line followed by another that is not blank, the
        text is single-spaced and read as it is."""
        head = list(itertools.islice(raw, _SPACING_HEAD))
        self.double_spaced = is_double_spaced(head)
        if not self.double_spaced:
            yield from head
            yield from raw
            return
        source = getattr(self._lines, "source", None)
        if source is not None:
            source.note("input.double_spaced", example=f"the first {len(head)} lines")
        lines = itertools.chain(head, raw)
        line = next(lines, None)
        while line is not None:
            yield line
            spacer = next(lines, None)
            if spacer is not None and not spacer.strip():
                line = next(lines, None)
            elif spacer is not None and line.strip():   # (two lines of text: single-spaced
                yield spacer                            # from here)
                yield from lines
                return
            else:   # (a blank line, then text: a form feed after each newline leaves one
                line = spacer   # blank line less for each blank line of the text)

    def _ended_inside(self, number: int, last: str) -> None:
        """Set ``cut_line`` for a ``last`` line that has no line end (see the class)."""
        blanks = not unpasted(last).strip(" >")
        if not blanks or len(last.rstrip("\r\n")) > (self._margin or 0):
            self.cut_line, self.cut_in_blanks = number, blanks

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
                line = _without_page_tail(_PAGE_HEAD.sub("", line))
            if "&" in line:
                line = html.unescape(line)
        return line


_SPACING_HEAD = 64   # the first lines that tell a double-spaced text
_SPACED_LINES = 4    # lines of text among them, each followed by a blank one, that tell it


def is_double_spaced(head: list[str]) -> bool:
    """Whether the first lines of a text (``head``, as split) are double-spaced: some lines
    of text, each followed by a blank line (its last line, maybe cut, aside).

    >>> is_double_spaced(["Place: CPU", "", "relu  3", "", "", "", "gelu  4", "", "x", ""])
    True
    >>> is_double_spaced(["Place: CPU", "", "relu  3", "gelu  4", "", "x", "", "y", ""])
    False
    """
    texts = [i for i, line in enumerate(head[:-1]) if line.strip()]
    return len(texts) >= _SPACED_LINES and all(not head[i + 1].strip() for i in texts)


def _without_page_tail(line: str) -> str:
    """``line`` without the tags after the text of a ``<pre>``/``<code>`` block: from its
    first ``</code>`` or ``</pre>`` on, where only tags and blanks follow to the line's end,
    and some text comes before. One walk from the right, each tag read once (a pattern tried
    from each ``</code>`` of a line of them read the rest of the line from each: a square).

    >>> _without_page_tail("relu  3</code></pre>  </div>"), _without_page_tail("</code>a</pre>")
    ('relu  3', '</code>a')
    """
    cut = len(line)
    end = _blanks_before(line, len(line))
    while end and line[end - 1] == ">":
        start = line.rfind("<", 0, end)
        if start < 0 or not _TAG.fullmatch(line, start, end):
            break
        before = _blanks_before(line, start)
        if before and line[start:end].lower() in _BLOCK_ENDS:
            cut = before
        end = before
    return line[:cut]


def _blanks_before(line: str, end: int) -> int:
    """Where the blanks that end ``line[:end]`` start (no copy of the line)."""
    while end and line[end - 1].isspace():
        end -= 1
    return end


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
                          and not data.lstrip(b" ").startswith((b">", b"//"))
                          and not _spaced_lines(data)):
        return data   # (a NUL: binary, or compressed, never pasted text)
    return "\n".join(PastedLines(data.decode("utf-8", "replace"))).encode()


# the bytes that start what PastedLines undoes (a sniffer scans megabytes of a log: plain
# substring tests, where one regex of alternatives took 80 ms a megabyte)
_MARKS = (b"\x1b", b"\t", b"\r", b"\x0b", b"\x0c", b"\xc2\x85", b"&", b"<", b"\xc2\xa0", b"\xe1\x9a\x80", b"\xe2\x80", b"\xe2\x81\x9f",
          b"\xe3\x80\x80", b"\n>", b"\n >", b"\n  >", b"\n   >", b"\n//")


def _spaced_lines(data: bytes) -> bool:
    """Whether the first lines of ``data`` may be double-spaced (a byte count, before
    :func:`is_double_spaced` judges the lines).

    >>> _spaced_lines(b"a\\n\\nb\\n\\nc\\n\\nd\\n\\n"), _spaced_lines(b"a\\nb\\n\\nc\\nd\\ne\\n")
    (True, False)
    """
    start = data[:4096]
    ends = start.count(b"\n")
    return ends >= 2 * _SPACED_LINES and start.count(b"\n\n") * 2 >= ends - 1
