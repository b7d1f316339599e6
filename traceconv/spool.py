"""Inputs that yield their bytes once (standard input, a pipe, a FIFO, a device, a ``/proc``
file), read as often as a regular file.

Format sniffing reads an input's head, then its reader reads it from the start, and some
readers open it more than once. What such a stream yields is kept as it is read: in memory
up to :data:`IN_MEMORY` bytes, then in an unnamed scratch file (nothing to remove: it is gone
when closed, or when the process ends, however it ends), so a big input piped in costs disk,
not memory. The stream is read only as far as some reader asks (sniffing ``/dev/zero``
reads its first 64 KiB), and never past ``limit`` bytes.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from typing import BinaryIO

from .errors import InputError
from .output_files import unnamed_scratch_file
from .special_files import read_error

# Kept in memory up to this many bytes, in a scratch file beyond: a trace piped in is
# usually read whole right after its head is sniffed, so the copy is read back from the
# page cache (353 MB of JSON on standard input: a 380 MB peak, 722 MB held in memory).
IN_MEMORY = 64 << 20
PIECE = 1 << 20


class Spool:
    """The bytes ``stream`` has yielded so far, and more of them on demand.

    >>> spool = Spool(io.BytesIO(b"abcdef"), "pipe", 100, lambda at: InputError("big"))
    >>> first, second = spool.reader(), spool.reader()
    >>> first.read(2), second.read(), first.read(), spool.size
    (b'ab', b'abcdef', b'cdef', 6)
    >>> Spool(io.BytesIO(b"abcdef"), "pipe", 4, lambda at: InputError(f"past {at}")).reader().read()
    Traceback (most recent call last):
    traceconv.errors.InputError: past 4
    """

    def __init__(self, stream: BinaryIO, name: str, limit: int,
                 too_large: Callable[[int], InputError], *, owned: bool = True) -> None:
        self._stream, self._name, self._owned = stream, name, owned
        self._limit, self._too_large = limit, too_large   # (too_large: told the offset)
        self._held = bytearray()            # what was read, while it fits in memory
        self._scratch: BinaryIO | None = None   # then all of it, here
        self.size = 0                       # bytes read from the stream so far
        self._ended = False
        self._refused: InputError | None = None   # past the limit: said to every reader

    def reader(self) -> BinaryIO:
        """A new stream of the content from its first byte (seekable, as a file is;
        unbuffered: whoever reads it buffers, so each byte is copied once)."""
        return _SpoolReader(self)  # type: ignore[return-value]

    def read_at(self, offset: int, buffer: memoryview) -> int:
        """Fill ``buffer`` from ``offset`` (reading the stream on where it is not kept
        yet); how many bytes were put there, 0 at the end."""
        while offset >= self.size and not self._ended:
            self._pull()
        if offset >= self.size and self._refused is not None:
            raise self._refused   # (every reader past the limit hears it, not an end)
        count = min(len(buffer), self.size - offset)
        if count <= 0:
            return 0
        if self._scratch is None:
            buffer[:count] = self._held[offset:offset + count]
            return count
        try:
            return os.preadv(self._scratch.fileno(), [buffer[:count]], offset)
        except OSError as exc:
            raise read_error(exc, self._name) from None

    def read_to_end(self) -> int:
        """Read the rest of the stream; its whole size."""
        while not self._ended:
            self._pull()
        if self._refused is not None:
            raise self._refused
        return self.size

    def _pull(self) -> None:
        try:
            piece = self._stream.read(min(PIECE, self._limit + 1 - self.size))
            if not piece:
                self._end()
                return
            if self.size + len(piece) > self._limit:
                self._ended, self._refused = True, self._too_large(self._limit)
                raise self._refused
            self._keep(piece)
        except OSError as exc:
            raise read_error(exc, self._name) from None
        self.size += len(piece)

    def _keep(self, piece: bytes) -> None:
        if self._scratch is None and self.size + len(piece) <= IN_MEMORY:
            self._held += piece
            return
        if self._scratch is None:   # (past IN_MEMORY: what was held moves to the file)
            self._scratch = unnamed_scratch_file()
            self._write(self._held)
            self._held = bytearray()
        self._write(piece)

    def _write(self, data: bytes | bytearray) -> None:
        assert self._scratch is not None
        left = memoryview(data)
        while left:   # (a write may take part of it; the next one says why)
            left = left[self._scratch.write(left):]

    def _end(self) -> None:
        self._ended = True
        if self._owned:
            self._stream.close()

    def close(self) -> None:
        """Let go of the stream and of what was kept (later reads find nothing more)."""
        self._end()
        self._held = bytearray()
        if self._scratch is not None:
            self._scratch.close()
            self._scratch = None
        self.size = 0


class _SpoolReader(io.RawIOBase):
    """One reader of a :class:`Spool`, at its own place in it."""

    def __init__(self, spool: Spool) -> None:
        self._spool, self._at = spool, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._at

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._at}.get(whence)
        if base is None:   # (SEEK_END: the end is known once the stream is read to it)
            base = self._spool.read_to_end()
        self._at = max(base + offset, 0)
        return self._at

    def readinto(self, buffer) -> int:  # type: ignore[override]
        count = self._spool.read_at(self._at, memoryview(buffer).cast("B"))
        self._at += count
        return count
