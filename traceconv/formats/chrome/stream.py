"""Chunked reading of a Chrome trace: the envelope keys, then the events a chunk at a time.

``orjson.loads`` of a whole 353 MB Kineto file needs 2.5 GB and keeps every event dict
alive. Instead the ``traceEvents`` array is cut into pieces of about :data:`CHUNK` bytes at
element boundaries and each piece is parsed on its own, so only one piece of dicts is alive
at a time. A cut is only guessed from the text (``}`` ``,`` ``{``); it is proved by the parse:
a cut inside a string or a nested value leaves unbalanced text that orjson rejects, and the
next candidate is tried. Anything unusual falls back to parsing the whole document, which
also gives exact error positions.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import orjson

# Small pieces are faster than big ones (1 M events: 5.0 s at 256 KiB, 6.8 s at 8 MiB): the
# dicts of one piece are still in the CPU cache when they are read and freed, and the
# allocator reuses their memory for the next piece.
CHUNK = 256 << 10
ENVELOPE_LIMIT = 64 << 20  # how far to look for "traceEvents" before parsing whole
_BOUNDARY = re.compile(rb"\}\s*,\s*(?=\{)")
_EVENTS_KEY = re.compile(rb'"traceEvents"\s*:\s*\[')
_WS = b" \t\r\n"


class DocumentError(ValueError):
    """The document is not valid JSON; ``line``/``column`` locate the problem when known."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None) -> None:
        super().__init__(message)
        self.line, self.column = line, column


@dataclass
class Document:
    """A Chrome trace being read: envelope keys and an iterator of event lists."""

    envelope: dict[str, Any] = field(default_factory=dict)
    chunks: Iterator[list[Any]] = iter(())
    bare_array: bool = False
    truncated: bool = False  # an array form with no closing bracket (allowed by the spec)
    has_events_key: bool = True  # False: an object without "traceEvents" (not a trace)


def _loads(data: bytes | bytearray | memoryview) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise DocumentError(exc.msg, exc.lineno, exc.colno) from None


def _parse_whole(data: bytes) -> Document:
    """Parse the complete text: for small files and anything the chunked path cannot handle."""
    stripped = data.lstrip(_WS)
    if stripped.startswith(b"[") and not stripped.rstrip(_WS).endswith(b"]"):
        # The array form may omit its closing bracket (catapult accepts it).
        body = stripped.rstrip(_WS).rstrip(b",")
        return Document(chunks=iter([_loads(body + b"]")]), bare_array=True, truncated=True)
    value = _loads(data)
    if isinstance(value, list):
        return Document(chunks=iter([value]), bare_array=True)
    if not isinstance(value, dict):
        raise DocumentError("a Chrome trace is a JSON object or array")
    has_events_key = "traceEvents" in value
    events = value.pop("traceEvents", [])
    if not isinstance(events, list):
        raise DocumentError("traceEvents is not an array")
    return Document(envelope=value, chunks=iter([events]), has_events_key=has_events_key)


def read_document(stream: BinaryIO, chunk_size: int = CHUNK) -> Document:
    """Open a Chrome trace from a binary stream; events come in lists of about ``chunk_size``
    bytes worth.

    >>> import io
    >>> doc = read_document(io.BytesIO(b'{"a": 1, "traceEvents": [{"ph": "X"}, {"ph": "i"}]}'))
    >>> doc.envelope, [e["ph"] for chunk in doc.chunks for e in chunk]
    ({'a': 1}, ['X', 'i'])
    """
    head = stream.read(chunk_size)
    if len(head) < chunk_size:  # small document: one parse is simplest and fastest
        return _parse_whole(head)
    start = len(head) - len(head.lstrip(_WS))
    if head[start:start + 1] == b"[":
        return Document(chunks=_chunks(stream, bytearray(head), start + 1, chunk_size, {}),
                        bare_array=True)
    match = _EVENTS_KEY.search(head)
    while match is None and len(head) < ENVELOPE_LIMIT:  # a long envelope (log lines, ...)
        more = stream.read(chunk_size)
        if not more:
            break
        head += more
        match = _EVENTS_KEY.search(head, max(0, len(head) - len(more) - 64))
    if head[start:start + 1] != b"{" or match is None:
        return _parse_whole(head + stream.read())
    prefix = head[start + 1:match.start()].rstrip(_WS).rstrip(b",")
    try:
        envelope = orjson.loads(b"{" + prefix + b"}")
    except orjson.JSONDecodeError:  # "traceEvents" appeared inside an earlier value
        return _parse_whole(head + stream.read())
    doc = Document(envelope=envelope)
    doc.chunks = _chunks(stream, bytearray(head), match.end(), chunk_size, doc.envelope)
    return doc


def _chunks(stream: BinaryIO, buffer: bytearray, pos: int, chunk_size: int,
            envelope: dict[str, Any]) -> Iterator[list[Any]]:
    """Yield parsed event lists from ``buffer[pos:]`` plus the rest of ``stream``.

    When the array ends, the keys that follow it are added to ``envelope``.
    """
    eof = False
    while True:
        # Keep at least two chunks of text ahead so a boundary is always in view.
        while not eof and len(buffer) - pos < 2 * chunk_size:
            more = stream.read(chunk_size)
            eof = not more
            buffer += more
        del buffer[:pos]
        pos = 0
        if eof:
            yield from _last_chunk(bytes(buffer), envelope)
            return
        search_from = chunk_size
        while True:
            match = _BOUNDARY.search(buffer, search_from)
            if match is None:  # one enormous event: read more and look again
                break
            piece = bytearray(b"[")
            piece += memoryview(buffer)[:match.start() + 1]
            piece += b"]"
            try:
                events = orjson.loads(piece)
            except orjson.JSONDecodeError:
                search_from = match.end()  # the cut was inside a string or nested value
                continue
            pos = match.end()
            yield events
            break
        if match is None:
            more = stream.read(chunk_size)
            eof = not more
            buffer += more


def _last_chunk(tail: bytes, envelope: dict[str, Any]) -> Iterator[list[Any]]:
    """Parse the final events and the envelope keys after the array's closing bracket."""
    end = len(tail)
    while True:
        end = tail.rfind(b"]", 0, end)
        if end < 0:
            # No closing bracket: a truncated array form, or a broken document.
            body = tail.rstrip(_WS).rstrip(b",")
            yield _loads(b"[" + body + b"]")
            envelope.setdefault("__truncated__", True)
            return
        try:
            events = orjson.loads(b"[" + tail[:end] + b"]")
        except orjson.JSONDecodeError:
            continue
        rest = tail[end + 1:].strip(_WS)
        if rest.startswith(b","):
            envelope.update(_loads(b"{" + rest[1:].rstrip(_WS).removesuffix(b"}") + b"}"))
        yield events
        return
