"""How the text formats recognise their files from the first bytes, without their readers.

The sniffers of Paddle's old Profiling Report, the new profiler's summary text and MIGraphX
prints, named by the registry's ``sniffer`` column. They match the formats' line grammars
(:mod:`.paddle_report_lines`, :mod:`.paddle_summary_lines`, :mod:`.migraphx_text`), which
live outside the readers' packages: telling a text file imports no parser, schema, pydantic
or networkx.

>>> paddle_report(b"------------->     Profiling Report     <-------------\\n", None)
0.95
>>> paddle_summary(b"---------Operator Summary---------\\n", None)
0.95
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .migraphx_text.reflow import logical_lines
from .paddle_report_lines import SIGNATURE, headerless_columns
from .paddle_summary_lines import TITLES, UNTITLED_ROW
from .pasted_text import unpasted_bytes

if TYPE_CHECKING:
    from ..io import Source


SCAN_LIMIT = 256 << 20   # bytes of a text log searched for a report beyond the sniffed head
LOG_SUFFIXES = (".txt", ".log")


# a "\s" inside a character class, found from the class's last "[" only (tried from each "["
# of a run of them, it re-read the rest)
_BLANK_IN_CLASS = re.compile(r"\[[^\][]*\\s")


def any_line(patterns: Sequence[re.Pattern[str]]) -> re.Pattern[bytes]:
    """One multi-line bytes regex that finds a line matching any of ``patterns`` (line
    regexes, each anchored at ``^``), for :func:`text_contains`. Their ``\\s`` becomes a
    blank that is no line end: across the lines of a head, ``^\\s*`` would span every
    blank line that follows and try each way to split them (a head of blank lines took
    minutes).

    >>> found = any_line([re.compile(r"^\\s*Place:\\s*(\\S+)\\s*$")])
    >>> bool(found.search(b"x\\n  Place: CPU\\n")), bool(found.search(b"\\n" * 20_000))
    (True, False)
    """
    parts = []
    for pattern in patterns:
        if _BLANK_IN_CLASS.search(pattern.pattern):
            raise ValueError(f"a \\s inside a character class: {pattern.pattern}")
        parts.append(b"(?:" + pattern.pattern.replace(r"\s", r"[^\S\n]").encode() + b")")
    return re.compile(b"|".join(parts), re.MULTILINE)


def text_contains(head: bytes, source: Source | None, pattern: re.Pattern[bytes]) -> bool:
    """Whether the text holds ``pattern`` (a multi-line bytes regex of one line): in the
    head (as the registry gives a text format's sniffer: already read as pasted text), else,
    for a ``.txt``/``.log`` file, further in (training logs print reports at the end, after
    megabytes of other output).

    >>> text_contains(b"loss 0.5\\n", None, re.compile(rb"^loss", re.MULTILINE))
    True
    """
    if pattern.search(head):
        return True
    if (source is None or b"\0" in head or len(head) < 1 << 16
            or not source.stem_name.endswith(LOG_SUFFIXES)):
        return False            # binary, not a log, or the head was the whole file
    tail = b""
    with source.open() as stream:
        for _ in range(SCAN_LIMIT >> 20):
            chunk = stream.read(1 << 20)
            if not chunk:
                return False
            block = tail + chunk
            # (a log's own lines are plain or coloured: pasted pages are short, and fit the head)
            if pattern.search(block) or (b"\x1b" in block and
                                         pattern.search(unpasted_bytes(block))):
                return True
            tail = block[block.rfind(b"\n") + 1:][-4096:]   # a line cut by the chunk edge
    return False


_SIGNATURE_BYTES = any_line(SIGNATURE)
_ROW_SCAN_LINES = 200   # first lines of a head looked at for rows pasted without a header


def _mostly_rows(head: bytes, row: Callable[[str], object]) -> bool:
    """Whether ``row`` reads at least half the non-blank first lines of ``head`` (pasted
    text already read as such: one line a ``\\n``) as table rows (anything but None)."""
    lines = head.decode("utf-8", "replace").split("\n")[:_ROW_SCAN_LINES]
    rows = sum(row(line) is not None for line in lines)
    return bool(rows) and rows * 2 >= sum(bool(line.strip()) for line in lines)


def paddle_report(head: bytes, source: Source | None) -> float:
    """Certain when the text holds a line only the report prints (the banner, a section
    title, the Event Summary or Memory header, an overhead or memcpy line; a training log
    may print it after megabytes of other output); likely when its first lines hold Event
    Summary rows whose shape and numbers say so, with no header at all.

    >>> paddle_report(b"relu 4 2.0 0.4 0.6 0.5 0.16\\nsoftmax 4 1.0 0.2 0.3 0.25 0.08\\n", None)
    0.6
    """
    if text_contains(head, source, _SIGNATURE_BYTES):
        return 0.95
    return 0.6 if _mostly_rows(head, headerless_columns) else 0.0


def paddle_summary(head: bytes, source: Source | None) -> float:
    """Certain when a summary title (``---Operator Summary---``, ``===Perf Summary===``)
    shows, also after megabytes of training-log output; likely when the first lines are
    summary rows pasted alone (``name calls t / a / m / m / r  t / a / m / m / r``).

    >>> paddle_summary(b"conv2d dygraph 10 1.2 / 0.1 / 0.2 / 0.1 / 0.5 3.0 / 0.3 / 0.4 / "
    ...                b"0.2 / 0.6\\n", None)
    0.6
    """
    if text_contains(head, source, TITLES):
        return 0.95
    return 0.6 if _mostly_rows(head, UNTITLED_ROW.match) else 0.0


# (line-anchored parts match blanks with [ \t], never \s, and no two runs of blanks touch:
# \s crosses line ends, and a head of blank lines made the match try every split of them)
_INSTRUCTION = re.compile(
    rb"^(?:Run instruction: )?[ \t]*\S+ = (?:@param:|@literal|@return\(|[\w:]+(?:\[|\(|\s->\s)).*?"
    rb"(?:->\s*(?:\[|dynamic, )?\w+_type, \{|@return\()", re.M)
_MARKERS = re.compile(rb"Running performance report|MIGraphX Version: |^Run instruction: |"
                      rb"^[ \t]*(?:\|[ \t]*)?Instructions?[ \t].*\bTime[ \t]*\([ \t]*ms[ \t]*\)|"
                      rb"^Total instructions time: |^module: \"main\"|"
                      rb"^\S[^\n=]*: ?[-+\d.e]+ ?ms(?: ?/ ?\d+ ?= ?[-+\d.e]+ ?ms)?"
                      rb" ?[,\xef\xbc\x8c] ?[-+\d.e]+ ?%\s*$|"
                      rb": ?[-+\d.e]+ ?ms ?[,\xef\xbc\x8c] ?[-+\d.e]+ ?%\s*$", re.M)


# a word of MIGraphX's evidence above (an instruction's "->" or "@return(", a time in ms
# before its share or count, a marker's words): a head with none is none of its output (a
# paste wraps a line, not each)
_EVIDENCE_WORD = re.compile(rb"->|@return|MIGraphX|module|nstruction|performance|"
                            rb"\d ?ms ?(?:[,/]|\xef\xbc\x8c)")


def migraphx(head: bytes, source: Source | None = None) -> float:
    """How sure we are that ``head`` is MIGraphX text output (0..1).

    Instruction prints end in a MIGraphX shape (``-> float_type, {1, 2}, {2, 1}``); one such
    line plus a driver/report marker, or three of them, is unmistakable. A pasted Summary
    (``group: 1.2ms / 3 = 0.4ms, 5%``) or trailer (``Total instructions time:``) alone is too.

    >>> migraphx(b"@0 = add(x,y) -> float_type, {2}, {1}\\n" * 3)
    0.95
    >>> migraphx(b"Event  Calls  Total  Min.\\nMatMul 3 1.5 0.5\\n")
    0.0
    """
    if not _EVIDENCE_WORD.search(head):
        return 0.0   # (a head with none of the words its evidence holds: reflowing it to
        # look is most of the time a log's foreign lines cost, stray_lines.ForeignLines)
    # pastes wrap lines: read the head (pasted text already read as such) as its reflowed lines
    head = "\n".join(text for _, text, _ in logical_lines(
        head.decode("utf-8", "replace").split("\n"))).encode()
    instructions = len(_INSTRUCTION.findall(head, 0, len(head)))
    markers = bool(_MARKERS.search(head))
    if instructions >= 3 or (instructions and markers):
        return 0.95
    return 0.9 if markers else 0.0
