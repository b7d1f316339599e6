"""A pickle's opcode stream read through a sliding window, with protocol-4 frames removed.

From protocol 4 on, the pickler cuts its output into ``FRAME``\\ s of about 64 KiB: a
``FRAME`` opcode and an 8-byte length before each run of whole opcodes. A frame is only a
read-ahead hint (``pickle.py`` refuses an opcode that crosses a frame's end), so taking the
headers out leaves a stream that means the same thing and in which a multi-opcode pattern is
never cut by a header. Bytes too big for a frame (``BINUNICODE8`` and the like) are written
between frames; anything else found between frames ends the removal and the rest passes
through unchanged (the decoder then takes any ``FRAME`` it meets as the no-op it is).

The window holds only the part of the stream not yet decoded plus one chunk, so a
gigabyte-sized snapshot is never in memory at once.
"""

from __future__ import annotations

import bisect
from typing import BinaryIO

CHUNK = 8 << 20
CHECKED_FRAME = 64 << 20
PROTO, FRAME = 0x80, 0x95
# Opcodes written outside frames when their payload is large: opcode -> bytes of length.
UNFRAMED = {ord("X"): 4, ord("B"): 4, 0x8D: 8, 0x8E: 8, 0x96: 8}


class TruncatedFrame(Exception):
    """The stream ends inside a frame: ``args`` = (message, offset in the file)."""


class Window:
    """``buf[pos:]`` is the undecoded rest of the stream; :meth:`fill` slides and grows it.

    >>> import io, pickle
    >>> data = pickle.dumps(["x" * 10, 7], protocol=4)
    >>> w = Window(io.BytesIO(data))
    >>> buf, pos, end = w.fill(0, 1)
    >>> buf[:2] == data[:2], len(data) - len(buf)   # PROTO kept, one 9-byte FRAME header gone
    (True, 9)
    """

    def __init__(self, stream: BinaryIO, chunk: int = CHUNK, plain: bool = False) -> None:
        """``plain``: the stream has no PROTO/FRAME layout to look for (a run of opcodes)."""
        self._stream = stream
        self._chunk = chunk
        self._raw = b""          # read from the stream; _raw[_at:] is not yet de-framed
        self._at = 0
        self._mode = "plain" if plain else "start"   # start -> framed -> plain (pass through)
        self._left = 0           # bytes of the current frame (or unframed opcode) still to pass
        self._headers: list[int] = []   # stream offsets where a 9-byte header was removed
        self._produced = 0       # de-framed bytes produced so far
        self._raw_eof = False
        self.read_so_far = 0     # bytes taken from the stream (a place for its own errors)
        self.buf = b""
        self.base = 0            # stream offset of buf[0]
        self.eof = False         # nothing more than what is in buf

    def fill(self, pos: int, need: int) -> tuple[bytes, int, int]:
        """Slide the window to ``pos`` and make ``need`` bytes available after it (fewer only
        at the end of the stream). Returns ``(buf, pos, len(buf))`` for the caller's locals."""
        have = len(self.buf) - pos
        if have >= need or self.eof:
            return self.buf, pos, len(self.buf)
        self.base += pos
        more = self._produce(max(need - have, self._chunk))
        self.buf = self.buf[pos:] + more
        return self.buf, 0, len(self.buf)

    def file_offset(self, offset: int) -> int:
        """Where stream offset ``offset`` lies in the file (counting removed headers)."""
        return offset + 9 * bisect.bisect_right(self._headers, offset)

    # -- de-framing ---------------------------------------------------------------------

    def _read_raw(self, need: int) -> bool:
        """Have at least ``need`` raw bytes pending (False when the stream ends first)."""
        if len(self._raw) - self._at >= need:
            return True
        self._raw = self._raw[self._at:]
        self._at = 0
        while len(self._raw) < need and not self._raw_eof:
            data = self._stream.read(max(self._chunk, need - len(self._raw)))
            self.read_so_far += len(data)
            if not data:
                self._raw_eof = True
            self._raw += data
        return len(self._raw) >= need

    def _take(self, count: int) -> bytes:
        piece = self._raw[self._at:self._at + count]
        self._at += len(piece)
        return piece

    def _produce(self, want: int) -> bytes:
        out: list[bytes] = []
        size = 0
        while size < want:
            if self._left:
                if not self._read_raw(1):
                    raise TruncatedFrame("pickle data was truncated inside a frame",
                                         self.file_offset(self._produced))
                piece = self._take(self._left)
                self._left -= len(piece)
            elif self._mode == "plain":
                self._read_raw(want - size)
                piece = self._take(len(self._raw))
                if not piece:
                    break
            elif not self._read_raw(1):
                break
            else:
                self._boundary()
                continue
            out.append(piece)
            size += len(piece)
            self._produced += len(piece)
        if size < want and not self._left:
            self.eof = not self._read_raw(1)
        return b"".join(out)

    def _boundary(self) -> None:
        """At an opcode boundary between frames: drop a FRAME header, or decide what passes."""
        raw, at = self._raw, self._at
        op = raw[at]
        if self._mode == "start":
            self._mode = "plain"
            if op == PROTO and self._read_raw(2):
                self._left = 2
                raw, at = self._raw, self._at
                if raw[at + 1] >= 4 and self._read_raw(3) and self._raw[self._at + 2] == FRAME:
                    self._mode = "framed"
        elif op == FRAME and self._read_raw(9):
            raw, at = self._raw, self._at
            self._left = int.from_bytes(raw[at + 1:at + 9], "little")
            # as the standard unpickler does, a frame must be there in full (checked up
            # to CHECKED_FRAME bytes: pickle writes 64 KiB; a longer claim is found out
            # only if the data ends before the STOP opcode)
            if self._left <= CHECKED_FRAME and not self._read_raw(9 + self._left):
                raise TruncatedFrame("pickle data was truncated inside a frame",
                                     self.file_offset(self._produced) + len(self._raw)
                                     - self._at)
            self._at += 9
            self._headers.append(self._produced)
        elif op in UNFRAMED and self._read_raw(1 + UNFRAMED[op]):
            raw, at, width = self._raw, self._at, UNFRAMED[op]
            self._left = 1 + width + int.from_bytes(raw[at + 1:at + 1 + width], "little")
        else:
            self._mode = "plain"
