"""Chunked reading of a Chrome trace: the envelope keys, then the events a chunk at a time.

``orjson.loads`` of a whole 353 MB Kineto file needs 2.5 GB and keeps every event dict
alive. Instead the ``traceEvents`` array is cut into pieces of about :data:`CHUNK` bytes at
element boundaries and each piece is parsed on its own, so only one piece of dicts is alive
at a time.

A cut is first guessed from the text (``}`` ``,`` ``{``) and proved by the parse: a cut
inside a string or a nested value leaves unbalanced text that the JSON parser rejects. When the
guess fails (or there is none), :class:`_Cutter` finds the next element boundary exactly,
knowing strings and nesting, and resumes where it stopped when more text arrives; a piece
that still does not parse holds a real syntax error. Every byte is so searched, scanned and
parsed a bounded number of times: reading is linear for any input (hostile ones included).
Whitespace between elements is read past as it comes, never held, and a run of tiny elements
(bare numbers) is cut at its commas: memory follows the chunk size and the largest element,
not the length of a run. No one event or top-level value is held beyond a bound
(:data:`HELD_PIECES` pieces): a larger event is refused, a larger value of a key the reader
does not use read past as it arrives; traceconv's own record (``"traceconv"``: the memory
blocks and op graph its writer carries) has a bound of its own (:data:`RECORD_PIECES`). Errors name the line and column in the file (columns
count characters, as orjson's do), or the JSON path and byte offset of an item too large.

Where the pieces are cut never changes what is read or refused, nor where an error is
named: a separator comma read past at a cut is remembered until what follows it is seen
(``]`` there is a trailing comma), and an error in a piece, or in a value of the envelope,
is located in the text put back in its place (a comma, the object around it), so that it
is the one the whole file has there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import msgspec
import orjson

from ...json_decode import error_at, first_not_utf8, lenient, too_deep
from .exact_times import exact_times

# Small pieces are faster than big ones (1 M events: 5.0 s at 256 KiB, 6.8 s at 8 MiB): the
# dicts of one piece are still in the CPU cache when they are read and freed, and the
# allocator reuses their memory for the next piece.
CHUNK = 256 << 10
# One event, or one value of a top-level key, held at most this many pieces' worth (64 MiB
# at the default piece size): beyond it an event is refused and a key's value read past.
HELD_PIECES = 256
# traceconv's own record (the model's memory blocks and op graph, which a Chrome trace has
# no events for) grows with the trace, as the model read from it does: it may take this
# many pieces (1 GiB), past what the memory check allows for an input of its size.
RECORD_PIECES = 4096
RECORD_KEY = "traceconv"
# Top-level keys the reader and its flavours read: one of them over the limit is refused,
# any other is read past (counted) without being held.
USED_KEYS = frozenset({"traceEvents", "traceconv", "baseTimeNanoseconds", "displayTimeUnit",
                       "otherData", "deviceProperties", "distributedInfo", "schemaVersion",
                       "ExtraInfo", "span_index", "span_indx", "metadata"})
_BOUNDARY = re.compile(rb"\}\s*,\s*(?=\{)")
# A string (group 1 is missing when the buffer ends inside it), a bracket or a comma.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*(")?|[\[\]{},]', re.DOTALL)
_STRING_REST = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*(")?', re.DOTALL)
_SPACE = re.compile(rb"[ \t\r\n]*")
# The last visible byte and the whitespace after it to the end (each try scans one run of
# whitespace once: linear, where "whitespace to the end" tried at each blank is quadratic)
_LAST_VISIBLE = re.compile(rb"[^ \t\r\n][ \t\r\n]*\Z")
_WS = b" \t\r\n"
_CONTINUATION = bytes(range(0x80, 0xC0))  # UTF-8 bytes that do not start a character
_OPEN, _QUOTE, _COMMA = b"{[", ord('"'), ord(",")
_CLOSE_ARRAY, _CLOSE_OBJECT = ord("]"), ord("}")
_BLANK_RUN = -2   # _Cutter.find: the buffer ends in a long run of whitespace between elements
# A byte's place noted cheaply (bytes consumed before it; line and column where they are
# counted as the text goes by): worked out only when an error names it.
Mark = tuple[int, int, int]


class DocumentError(ValueError):
    """The document is not valid JSON; ``line``/``column`` locate the problem when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None,
                 path: str | None = None, offset: int | None = None) -> None:
        super().__init__(message)
        self.line, self.column = line, column
        self.path, self.offset = path, offset   # a JSON path, and its byte in the text


@dataclass
class Document:
    """A Chrome trace being read: envelope keys and an iterator of event lists."""

    envelope: dict[str, Any] = field(default_factory=dict)
    chunks: Iterator[list[Any]] = iter(())
    bare_array: bool = False
    truncated: bool = False  # an array form with no closing bracket (allowed by the spec)
    has_events_key: bool = True  # False: an object without "traceEvents" (not a trace)
    # One rule for a "traceEvents" key given twice, whatever the file's size: the first
    # array is read, the events of every later one are dropped (and counted here).
    duplicate_events: int = 0
    # Top-level keys whose value was over the limit and read past, not kept (in file order).
    skipped_keys: list[str] = field(default_factory=list)
    # Set by the reader once it knows the flavour: pieces of event array text → typed
    # records, or None when a piece needs plain values (see records.py).
    records: Callable[[bytes | bytearray], list[Any] | None] | None = None

    def decode(self, piece: bytes | bytearray) -> list[Any]:
        """One piece of the event array (``[...]`` text): records when the reader takes
        them and the piece fits, else plain values (times a double cannot hold read
        exactly: :mod:`.exact_times`)."""
        if self.records is not None:
            try:
                records = self.records(piece)
            except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
                records = None   # (the plain parse reads it, or locates what is wrong)
            if records is not None:
                return records
        events: list[Any] = json_loads(piece)
        return exact_times(events, piece)


_DECODE = lenient()
# JSON nested deeper than this is refused (located): the decoder recurses per level and
# Python's stack ends near 1,000; real traces nest a few dozen levels.
MAX_DEPTH = 900


def json_loads(data: bytes | bytearray | memoryview) -> Any:
    """JSON text → Python values; integers of any size stay exact. Invalid text raises
    orjson's ``JSONDecodeError``, which locates the problem by line and column.

    >>> json_loads(b'{"id": 123456789012345678901234567890}')
    {'id': 123456789012345678901234567890}
    """
    try:
        return _DECODE(data)
    # msgspec < 0.23 raises UnicodeDecodeError for bad UTF-8, later versions DecodeError;
    # orjson puts bad UTF-8 at the text's start, so it is located here either way
    except (UnicodeDecodeError, msgspec.DecodeError) as exc:
        _raise_if_not_utf8(data)
        orjson.loads(data)   # raises the located error
        raise orjson.JSONDecodeError(str(exc), "", 0) from None
    except RecursionError:   # nested deeper than the decoder's stack (about 1,000 levels)
        raise _depth_error(data) from None


def _raise_if_not_utf8(data: bytes | bytearray | memoryview) -> None:
    """Raise orjson's error at the first byte of ``data`` that is not UTF-8."""
    at = first_not_utf8(data)
    if at is not None:
        raise error_at("not valid UTF-8", data, at)


def _depth_error(data: bytes | bytearray | memoryview) -> orjson.JSONDecodeError:
    """Where a document the decoder could not recurse into passes MAX_DEPTH levels."""
    where = too_deep(data, MAX_DEPTH) or too_deep(data, MAX_DEPTH // 2)
    line, column = where or (1, 0)
    text = "\n" * (line - 1) + " " * column   # (the error counts lines and columns of it)
    return orjson.JSONDecodeError(f"nested deeper than {MAX_DEPTH} levels", text, len(text))


def read_document(stream: BinaryIO, chunk_size: int | None = None) -> Document:
    """Open a Chrome trace from a binary stream; events come in lists of about ``chunk_size``
    bytes worth (default :data:`CHUNK`, read when called: the benchmark's plain path sets it
    beyond the file size to compare the cut pieces with one piece of the whole array).
    Every document, of any size, takes this one path.

    >>> import io
    >>> doc = read_document(io.BytesIO(b'{"a": 1, "traceEvents": [{"ph": "X"}, {"ph": "i"}]}'))
    >>> doc.envelope, [e["ph"] for chunk in doc.chunks for e in chunk]
    ({'a': 1}, ['X', 'i'])
    """
    chunk_size = chunk_size or CHUNK
    # (one path for every size: a small document is one piece of it, so each event text
    # is decoded by Document.decode, the one place times are read exactly)
    text = _Text(stream, stream.read(chunk_size), 0, chunk_size)
    text.skip_space()
    first = text.buffer[:1]
    if first not in (b"[", b"{"):
        raise _not_a_document(text)   # (at its first visible byte: nothing more is read)
    text.consume(1)
    doc = Document(bare_array=first == b"[")
    if doc.bare_array or _read_members(text, doc, header=True):
        doc.chunks = _chunks(text, doc)
    else:   # an object without "traceEvents" (not a trace: the reader says so)
        doc.has_events_key = False
    return doc


def _not_a_document(text: _Text) -> DocumentError:
    """The error for a text whose first visible byte, ``text.buffer[0]``, opens no object
    or array (or that has none), located there: a stream of any length (``/dev/zero``) is
    refused at its first piece.

    >>> import io
    >>> def refused(data):
    ...     try:
    ...         read_document(io.BytesIO(data))
    ...     except DocumentError as exc:
    ...         return str(exc), exc.line, exc.column
    >>> refused(b"\\n  \\x00\\x00")
    ('unexpected character, expected a JSON value', 2, 3)
    >>> refused(b' "text"')
    ('a Chrome trace is a JSON object or array', 1, 2)
    >>> refused(b" ")
    ('unexpected end of data: the text holds no JSON value', 1, 2)
    """
    if not text.buffer:
        return text.end_error("unexpected end of data: the text holds no JSON value")
    if text.buffer[0] not in b'"-0123456789tfn':   # (no JSON value starts so: orjson says why)
        try:
            json_loads(text.buffer[:1])
        except orjson.JSONDecodeError as exc:
            return text.error(exc, 0, 0)
    line, column = text.place()
    return DocumentError("a Chrome trace is a JSON object or array", line, column + 1)


def _chars(data: bytes | bytearray) -> int:
    """Characters in UTF-8 ``data`` (orjson's columns count characters)."""
    return len(data) if data.isascii() else len(data.translate(None, _CONTINUATION))


def _advance(line: int, column: int, text: bytes | bytearray, n: int) -> tuple[int, int]:
    """The line and column after ``text[:n]``, from ``line`` and ``column`` before it."""
    newlines = text.count(b"\n", 0, n)
    if newlines:
        return line + newlines, _chars(text[text.rfind(b"\n", 0, n) + 1:n])
    return line, column + _chars(text[:n])


def _seekable_offset(stream: BinaryIO, read: int) -> int | None:
    """Where the stream was ``read`` bytes ago, when it can go back there; else None."""
    try:
        return stream.tell() - read if stream.seekable() else None
    except (OSError, ValueError, AttributeError):
        return None


def _error_within(before: bytes, buffer: bytearray, start: int, end: int,
                  after: bytes) -> orjson.JSONDecodeError | None:
    """The first error in ``before`` + ``buffer[start:end]`` + ``after``, None if none: the
    text of a piece put back in its place in the file (what the whole file has there).

    >>> _error_within(b"[", bytearray(b"1,,"), 0, 3, b"0]").colno   # (the second comma)
    4
    """
    piece = bytearray(before)
    piece += memoryview(buffer)[start:end]
    piece += after
    try:
        json_loads(piece)
    except orjson.JSONDecodeError as exc:
        return exc
    return None


def _array(buffer: bytearray, start: int, end: int) -> bytearray:
    """``buffer[start:end]`` in brackets: the text of a JSON array."""
    piece = bytearray(b"[")
    piece += memoryview(buffer)[start:end]
    piece += b"]"
    return piece


class _Text:
    """The unread text: a buffer filled from the stream, and where its first byte is in the
    file (line, and characters before it on that line) so that errors point into the file.

    On a stream that can seek back, that place is found only when an error asks for it, by
    reading the consumed text again: counting lines as pieces go by costs a tenth as much
    as parsing them."""

    def __init__(self, stream: BinaryIO, head: bytes, start: int, chunk_size: int) -> None:
        self.stream, self.chunk_size = stream, chunk_size
        self.limit = chunk_size * HELD_PIECES   # the most of one event or value held
        self.record_limit = chunk_size * RECORD_PIECES   # ... and of traceconv's record
        self.buffer = bytearray(head)
        self.eof = False
        self.origin = _seekable_offset(stream, len(head))   # where head is in the stream
        self.consumed = 0
        self.line, self.column = 1, 0   # kept as the text goes by when origin is None
        self.consume(start)

    def more(self) -> bool:
        """Read one more block; False at the end of the stream."""
        block = self.stream.read(self.chunk_size)
        self.eof = not block
        self.buffer += block
        return not self.eof

    def fill(self, size: int) -> None:
        """Read until ``size`` bytes are buffered or the stream ends."""
        while len(self.buffer) < size and self.more():
            pass

    def skip_space(self) -> None:
        """Read past the whitespace at the buffer's start, however long the run: it is
        consumed as it arrives, never held."""
        while True:
            self.consume(_SPACE.match(self.buffer).end())  # type: ignore[union-attr]
            if self.buffer or not self.more():
                return

    def consume(self, n: int) -> None:
        """Drop the first ``n`` bytes, keeping count of lines and columns."""
        buffer = self.buffer
        if self.origin is None:
            self.line, self.column = _advance(self.line, self.column, buffer, n)
        self.consumed += n
        del buffer[:n]

    def mark(self) -> Mark:
        """Where ``buffer[0]`` is, noted cheaply: :meth:`place` works it out if an error
        names it."""
        return self.consumed, self.line, self.column

    def place(self, mark: Mark | None = None) -> tuple[int, int]:
        """The line and column (characters before it on its line) of ``buffer[0]``, or of
        the byte a :meth:`mark` noted."""
        consumed, line, column = mark or self.mark()
        if self.origin is None:
            return line, column
        stream = self.stream
        resume = stream.tell()
        try:
            stream.seek(self.origin)
            left = consumed
            while left and (block := stream.read(min(left, 1 << 20))):
                line, column = _advance(line, column, block, len(block))
                left -= len(block)
        finally:
            stream.seek(resume)
        return line, column

    def error(self, exc: orjson.JSONDecodeError, start: int, added: int) -> DocumentError:
        """``exc`` from parsing ``added`` characters of our own + ``buffer[start:]``, located
        in the file."""
        buffer = self.buffer
        first_line, first_column = self.place()
        newlines = buffer.count(b"\n", 0, start)
        line = first_line + newlines + exc.lineno - 1
        if exc.lineno > 1:
            column = exc.colno
        else:
            line_start = buffer.rfind(b"\n", 0, start) + 1
            before = first_column if not newlines else 0
            column = before + _chars(buffer[line_start:start]) + exc.colno - added
        return DocumentError(exc.msg, line, column)

    def end_error(self, message: str) -> DocumentError:
        """An error at the end of the file."""
        self.consume(len(self.buffer))
        line, column = self.place()
        return DocumentError(message, line, column + 1)

    def parse(self, start: int, end: int, doc: Document, comma_follows: bool = False) -> list[Any]:
        """The elements in ``buffer[start:end]`` (the inside of an array); ``comma_follows``:
        the piece was cut at the comma ``buffer[end]``, so an error is the one the text
        with that comma has (``1,,`` is a missing value at the second comma, where the
        piece ``[1,]`` alone would be a trailing comma at the first)."""
        try:
            return doc.decode(_array(self.buffer, start, end))
        except orjson.JSONDecodeError as exc:
            if comma_follows:
                exc = _error_within(b"[", self.buffer, start, end + 1, b"0]") or exc
            raise self.error(exc, start, 1) from None


class _Cutter:
    """Finds, exactly, where an element of the event array ends and the next begins (or
    where the array closes), scanning ``buffer`` from an element boundary at 0. It knows
    strings and nesting, and resumes where it stopped when the buffer has grown (inside a
    string too), so no text is scanned twice. Between elements it notes where the
    whitespace that ends the buffer begins, so that a long run of it is read past, not held."""

    def __init__(self, closer: int = _CLOSE_ARRAY) -> None:
        self.closer = closer   # the bracket that closes the container (an array's ])
        self.pos = 0
        self.depth = 0
        self.in_string = False
        self.blank_from: int | None = None  # between elements: the buffer ends in blanks from here
        self.element, self.before = 0, 0   # where the last element starts; elements before it

    def drop(self, n: int) -> None:
        """The first ``n`` scanned bytes of the buffer were consumed: move the marks."""
        self.pos -= n
        self.element -= n
        self.blank_from = None

    def find(self, buffer: bytearray, minimum: int) -> tuple[int, int] | None:
        """``(end, next)``: the elements in ``buffer[:end]`` are followed by a comma at ``end
        >= minimum`` and the next one starts at ``next``; ``(end, -1)``: the array closes at
        ``buffer[end]``; ``(end, -2)``: whitespace follows them, ``minimum`` bytes or more,
        to the buffer's end; None: read more.

        >>> _Cutter().find(bytearray(b'{"a": "},{"}, {"b": [1]}, {}]'), 1)
        (12, 13)
        >>> _Cutter().find(bytearray(b'{"a": "},{"}, {"b": [1]}, {}]'), 13)
        (24, 25)
        >>> _Cutter().find(bytearray(b'{"a": 1} ]'), 100), _Cutter().find(bytearray(b'{"a'), 1)
        ((9, -1), None)
        >>> _Cutter().find(bytearray(b'1, 2, [3]' + b' ' * 8), 5), _Cutter().find(bytearray(b'1, '), 5)
        ((9, -2), None)
        """
        if self.in_string:
            rest = _STRING_REST.match(buffer, self.pos)
            assert rest is not None  # it matches the empty text
            self.pos = rest.end()
            if rest.group(1) is None:
                return None
            self.in_string = False
        return self._scan(buffer, minimum)

    def _scan(self, buffer: bytearray, minimum: int) -> tuple[int, int] | None:
        """Walk tokens from ``pos`` until a comma between elements at ``minimum`` or after,
        the array's end, or the buffer's end (inside a string: ``in_string``)."""
        depth, start = self.depth, self.pos
        tail = start
        for token in _TOKEN.finditer(buffer, self.pos):
            first, tail = buffer[token.start()], token.end()
            if first == _QUOTE:
                if token.group(1) is None:  # the buffer ends inside this string
                    self.pos, self.depth, self.in_string = token.end(), depth, True
                    self.blank_from = None
                    return None
            elif first == _COMMA:
                if depth == 0:
                    if token.start() >= minimum:
                        return token.start(), token.end()
                    self.element, self.before = token.end(), self.before + 1
            elif first in _OPEN:
                depth += 1
            elif depth == 0:   # a bracket that closes the container, or nothing (an error)
                if first == self.closer:
                    return token.start(), -1
                return token.end(), token.end()   # the parse reports the stray brace
            else:
                depth -= 1
        self.pos, self.depth = len(buffer), depth
        if depth:
            self.blank_from = None
        elif (last := _LAST_VISIBLE.search(buffer, tail)) is not None:
            self.blank_from = last.start() + 1
        elif self.blank_from is None or tail > start:   # only blanks after the last token
            self.blank_from = tail
        if self.blank_from is not None and len(buffer) - self.blank_from >= max(minimum, 1):
            return self.blank_from, _BLANK_RUN
        return None


def _chunks(text: _Text, doc: Document) -> Iterator[list[Any]]:
    """Yield parsed event lists from the text after the array's ``[``; when the array
    ends, the keys that follow it are added to ``doc.envelope``."""
    size, index = text.chunk_size, 0
    comma: Mark | None = None   # the separator just read past, if any
    while True:
        text.skip_space()   # after the [ or a comma
        if text.buffer[:1] == b"]":   # the array ends where a value or nothing was due
            if comma is not None:
                raise _trailing_comma(text, comma)
            _read_trailer(text, 1, doc)
            return
        text.fill(2 * size)   # keep two pieces of text ahead so a boundary is in view
        guess = _BOUNDARY.search(text.buffer, size)
        if guess is not None:
            try:
                events = doc.decode(_array(text.buffer, 0, guess.start() + 1))
            except orjson.JSONDecodeError:
                pass  # the cut was inside a string or a nested value (or the text is bad)
            else:
                text.consume(guess.end())   # (to the next element's {)
                comma = None
                index += len(events)
                yield events
                continue
        if text.eof and (closed := _closing_bracket(text.buffer, doc)) is not None:
            events, after = closed
            yield events
            _read_trailer(text, after, doc)
            return
        cutter = _Cutter()
        while (found := cutter.find(text.buffer, size)) is None:
            if len(text.buffer) - cutter.element > text.limit:
                raise _too_large(text, cutter.element, "an event", _event_path(
                    doc, index + cutter.before))
            if not text.more():
                yield _unclosed_array(text, doc)
                return
        end, following = found
        if following == _BLANK_RUN:
            events, comma = _before_blank_run(text, end, doc)
            index += len(events)
            yield events
            continue
        events = text.parse(0, end, doc, comma_follows=following >= 0)
        index += len(events)
        yield events
        if following < 0:
            _read_trailer(text, end + 1, doc)
            return
        comma = _read_past_comma(text, end)


def _read_past_comma(text: _Text, at: int) -> Mark:
    """Consume the buffer to past the separator comma at ``buffer[at]``; where it was."""
    text.consume(at)
    comma = text.mark()
    text.consume(1)
    return comma


def _trailing_comma(text: _Text, comma: Mark) -> DocumentError:
    """The array closes after the separator at ``comma``: the error orjson names there."""
    line, column = text.place(comma)
    return DocumentError(_TRAILING_COMMA, line, column + 1)


def _before_blank_run(text: _Text, blank: int,
                      doc: Document) -> tuple[list[Any], Mark | None]:
    """The elements before the run of whitespace at ``buffer[blank:]``, the run read past,
    and where the separator comma after them was (None: the array ends there, ``]`` or
    the end of the text at the buffer's start)."""
    after_comma = text.buffer[blank - 1] == _COMMA and blank > 1   # (a lone , is an error)
    if after_comma:
        events = text.parse(0, blank - 1, doc, comma_follows=True)
        return events, _read_past_comma(text, blank - 1)
    events = text.parse(0, blank, doc)
    text.consume(blank)
    text.skip_space()
    if text.buffer[:1] == b",":
        return events, _read_past_comma(text, 0)
    if text.buffer[:1] not in (b"]", b""):
        raise text.error(_located("unexpected character, expected ',' or ']'"), 0, 0)
    return events, None


def _closing_bracket(buffer: bytearray, doc: Document,
                     tries: int = 4) -> tuple[list[Any], int] | None:
    """The whole rest of the file is in ``buffer``: the events up to the array's ``]`` and
    where that bracket is, found without walking tokens. Only the real closing bracket
    leaves a text before it that parses as array elements (a ``]`` to its right would be
    unbalanced, one to its left nested or inside a string), so the first of the last few
    ``]`` whose prefix parses is it; None when none of them does (the cutter decides).

    >>> _closing_bracket(bytearray(b'{"a": "]"}, {"b": [1]}], "c": [2]}'), Document())
    ([{'a': ']'}, {'b': [1]}], 23)
    """
    at = len(buffer)
    for _ in range(tries):
        at = buffer.rfind(b"]", 0, at)
        if at < 0:
            return None
        try:
            return doc.decode(_array(buffer, 0, at)), at + 1
        except orjson.JSONDecodeError:
            continue
    return None


def _unclosed_array(text: _Text, doc: Document) -> list[Any]:
    """The file ends inside the event array: the array form may omit its ``]`` (catapult
    accepts it); the object form is cut short, which is an error."""
    body = text.buffer.rstrip(_WS)
    # (a last comma is allowed, not one after nothing: the buffer starts where an element does)
    last_comma = body.endswith(b",") and bool(body[:-1].rstrip(_WS))
    events = text.parse(0, len(body) - last_comma, doc, comma_follows=last_comma)
    if not doc.bare_array:
        raise text.end_error("unexpected end of data: the traceEvents array and the "
                             "object that holds it are not closed")
    doc.truncated = True
    return events


def _read_trailer(text: _Text, start: int, doc: Document) -> None:
    """After the array's ``]`` (at ``start``): nothing for the array form; for the object
    form, more keys (``"traceName": ...``) and the object's closing ``}``, which must be
    there. Whitespace on either side of them is read past, never held."""
    text.consume(start)
    text.skip_space()
    buffer = text.buffer
    if doc.bare_array:
        if buffer:
            raise text.error(_located("unexpected content after the event array"), 0, 0)
        return
    if not buffer:
        raise text.end_error("unexpected end of data: the object's closing } is missing")
    if buffer[0] == _COMMA:   # more keys, read as the header's are, then the closing }
        text.consume(1)
        _read_members(text, doc, header=False)
    elif buffer[0] == _CLOSE_OBJECT:
        _close_object(text)
    else:
        raise text.error(_located("unexpected content after the event array"), 0, 0)


def _close_object(text: _Text) -> None:
    """Read past the top-level object's ``}`` at the buffer's start: nothing may follow."""
    text.consume(1)
    text.skip_space()
    if text.buffer:
        raise text.error(_located("unexpected content after the top-level object"), 0, 0)


def _read_members(text: _Text, doc: Document, header: bool) -> bool:
    """Read the top-level object's ``"key": value`` members from the buffer's start (after
    its ``{``, or after the comma that follows the event array) into ``doc.envelope``.
    In the ``header``, stop after the ``[`` of ``"traceEvents"`` (True); else read to the
    object's ``}`` (False). No key or value is held beyond ``text.limit``: a larger value
    of a key the reader does not use is read past (in ``doc.skipped_keys``), of one it
    uses refused. A later ``"traceEvents"``'s events are counted, not read (one rule).

    >>> import io
    >>> doc = Document()
    >>> text = _Text(io.BytesIO(), b'"a": [1], "b": "xxx", "traceEvents": [{}]}', 0, 4)
    >>> text.limit = 4
    >>> _read_members(text, doc, header=True), doc.envelope, doc.skipped_keys, bytes(text.buffer)
    (True, {'a': [1]}, ['b'], b'{}]}')
    """
    text.skip_space()
    if text.buffer[:1] == b"}" and header:   # {}: no keys
        _close_object(text)
        return False
    while True:
        key = _read_key(text)
        if key == "traceEvents" and header:
            if text.buffer[:1] != b"[":
                raise text.error(_located("traceEvents is not an array"), 0, 0)
            text.consume(1)
            return True
        value = _member_value(text, key, doc)
        if key == "traceEvents":
            doc.duplicate_events += len(value) if isinstance(value, list) else 1
        elif value is not _SKIPPED:
            doc.envelope[key] = value
        text.skip_space()
        if text.buffer[:1] == b",":
            text.consume(1)
            continue
        if text.buffer[:1] == b"}":
            _close_object(text)
            return False
        if not text.buffer:
            raise text.end_error("unexpected end of data: the object's closing } is missing")
        raise text.error(_located("unexpected character, expected ',' or '}'"), 0, 0)


_SKIPPED = object()   # a value read past, not kept


def _read_key(text: _Text) -> str:
    """The key at the buffer's start (whitespace before it read past) and its ``:``; the
    buffer then starts at the value."""
    text.skip_space()
    if text.buffer[:1] != b'"':
        if not text.buffer:
            raise text.end_error("unexpected end of data: a key was expected")
        raise text.error(_located("a key (a string) was expected"), 0, 0)
    pos = 1
    while (rest := _STRING_REST.match(text.buffer, pos)) is not None and rest.group(1) is None:
        pos = rest.end()   # (before a backslash that ends the buffer: its pair comes next)
        if pos > text.limit:
            raise _too_large(text, 0, "a key", "$")
        if not text.more():
            raise text.end_error("unexpected end of data inside a key")
    end = rest.end() if rest is not None else 0
    try:
        key: str = json_loads(memoryview(text.buffer)[:end])
    except orjson.JSONDecodeError as exc:
        raise text.error(exc, 0, 0) from None
    text.consume(end)
    text.skip_space()
    if text.buffer[:1] != b":":
        raise text.error(_located(f"':' was expected after the key {key!r}"), 0, 0)
    text.consume(1)
    text.skip_space()
    return key


def _member_value(text: _Text, key: str, doc: Document) -> Any:
    """The value of ``key`` at the buffer's start, parsed and consumed; a value over
    ``text.limit`` is read past as it arrives (:data:`_SKIPPED`) when the reader does not
    use ``key``, else refused. A value read past is checked for strings and brackets only."""
    cutter = _Cutter(closer=_CLOSE_OBJECT)
    skipped = 0
    limit = text.record_limit if key == RECORD_KEY else text.limit

    def refuse_used() -> None:
        if key in USED_KEYS:
            raise _too_large(text, -skipped, "the value of a key traceconv reads",
                             f"$[{json.dumps(key)}]", limit)

    while (found := cutter.find(text.buffer, 0)) is None:
        if cutter.pos > limit:
            refuse_used()
            skipped += cutter.pos
            text.consume(cutter.pos)
            cutter.drop(cutter.pos)
        if not text.more():
            _raise_if_wrong_before_the_end(text, skipped)
            raise text.end_error("unexpected end of data: the object's closing } is missing")
    end = found[0]
    if skipped or end > limit:
        refuse_used()
        text.consume(end)
        doc.skipped_keys.append(key)
        return _SKIPPED
    try:
        value = json_loads(memoryview(text.buffer)[:end])
    except orjson.JSONDecodeError as exc:
        # located as a member's value: the text to the next comma may hold more than the
        # value (a comma missing), where a cut at a blank after the value holds only it
        if (in_object := _error_within(_MEMBER, text.buffer, 0, end, b"}")) is not None:
            raise text.error(in_object, 0, len(_MEMBER)) from None
        raise text.error(exc, 0, 0) from None
    text.consume(end)
    return value


_MEMBER = b'{"":'   # (a value's text after it is a member of an object)


def _raise_if_wrong_before_the_end(text: _Text, skipped: int) -> None:
    """The file ends in a member's value (the whole value in the buffer, none of it
    ``skipped``): a mistake in it before the end is named first (``"a": 1 {``), as when a
    blank after the value ends it and the next member is read."""
    if skipped:
        return
    mistake = _error_within(_MEMBER, text.buffer, 0, len(text.buffer), b"")
    if mistake is not None and mistake.pos < len(_MEMBER) + _chars(text.buffer):   # (pos: chars)
        raise text.error(mistake, 0, len(_MEMBER))


def _event_path(doc: Document, index: int) -> str:
    """The JSON path of event ``index``."""
    return f"$[{index}]" if doc.bare_array else f"$.traceEvents[{index}]"


def _too_large(text: _Text, start: int, what: str, path: str,
               limit: int | None = None) -> DocumentError:
    """``what`` (at ``path``), starting at ``buffer[start]`` (before it when negative), is
    over the limit (``text.limit`` unless given)."""
    offset = text.consumed + start
    limit = text.limit if limit is None else limit
    return DocumentError(f"{what} is over {limit:,} bytes (read in bounded memory, "
                         f"traceconv holds no more of one)", path=path, offset=offset)


def _message_of(invalid: bytes) -> str:
    """The message orjson gives for the ``invalid`` JSON text."""
    try:
        orjson.loads(invalid)
    except orjson.JSONDecodeError as exc:
        return exc.msg
    raise ValueError(f"{invalid!r} is valid JSON")


_TRAILING_COMMA = _message_of(b"[0,]")


def _located(message: str) -> orjson.JSONDecodeError:
    """A decode error at the first character of the text it is located against."""
    return orjson.JSONDecodeError(message, "", 0)
