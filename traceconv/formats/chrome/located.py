"""One rule for what goes wrong while a Chrome trace's text is read, shared by the reader
and the checker: the error names the file and the place (line:col, a JSON path and byte
offset, or where a damaged gzip stopped)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from ...errors import InputError
from ...io import Source, stopped_at
from .stream import DocumentError


@contextmanager
def located_errors(source: Source, stream: BinaryIO) -> Iterator[None]:
    """Turn a malformed document or an unreadable stream into an :class:`InputError`.

    >>> import io
    >>> from traceconv.formats.chrome.stream import read_document
    >>> stream = io.BytesIO(b'{"traceEvents": [{"ph": "X",]}')
    >>> with located_errors(Source("t.json"), stream):
    ...     _ = [e for chunk in read_document(stream).chunks for e in chunk]
    Traceback (most recent call last):
    traceconv.errors.InputError: t.json:1:29: not valid JSON: unexpected character, expected a string key
    """
    try:
        yield
    except DocumentError as exc:
        if exc.path is not None:   # well-formed so far, but more than is held of one item
            raise InputError(str(exc), file=source.name,
                             location=f"{exc.path}, byte {exc.offset}") from None
        where = f"{exc.line}:{exc.column}" if exc.line else None
        raise InputError(f"not valid JSON: {exc}", file=source.name, location=where) from None
    except (OSError, EOFError) as exc:   # a corrupt gzip: where it stopped
        raise InputError(f"cannot read: {exc}", file=source.name,
                         location=stopped_at(stream, source.compressed)) from None
