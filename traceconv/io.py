"""Input sources (gzip-transparent, sniffable, progress-aware); outputs are written by
:mod:`traceconv.output_files`."""

from __future__ import annotations

import codecs
import contextlib
import gzip
import io
import os
import stat
import sys
from collections.abc import Callable, Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol, cast

from .errors import InputError

if TYPE_CHECKING:
    from .memory_check import MemoryLimit
    from .spool import Spool

GZIP_MAGIC = b"\x1f\x8b"
# Compressed inputs, recognised by their first bytes whatever the name: each is read through
# its decompressor, bounded by ``max_bytes`` as a plain input is.
COMPRESSIONS = ((GZIP_MAGIC, "gzip"), (b"\xfd7zXZ\x00", "xz"), (b"BZh", "bz2"),
                (b"\x28\xb5\x2f\xfd", "zstd"))
COMPRESSED_SUFFIXES = (".gz", ".xz", ".bz2", ".zst")
HEAD_BYTES = 64 * 1024
# The most (decompressed) bytes one input may hold: far above real traces (the largest
# Kineto traces seen are a few GB of JSON), low enough that a gzip bomb ends in a clear error
# instead of exhausting memory. ``--max-bytes`` / ``max_bytes=`` change it.
DEFAULT_MAX_BYTES = 16 << 30
# (bytes of the input read, its size; 0 while unknown: standard input). A callback that
# also has ``unpacked(n)`` hears how many bytes a compressed input has expanded to so far,
# and one with ``events(n)`` how many events a reader has read (see Source.read_events).
Progress = Callable[[int, int], None]


def parse_size(text: str) -> int:
    """A positive byte count (:func:`traceconv.units.parse_bytes`: ``500M``, ``4G``,
    ``2GiB``, ``2GB`` = 2,000,000,000, ``1000``).

    >>> parse_size("4G"), parse_size("512 MiB"), parse_size("2MB"), parse_size("1000")
    (4294967296, 536870912, 2000000, 1000)
    """
    from .units import UnitError, parse_bytes  # (not needed to detect or read a file)

    size = parse_bytes(text)
    if size <= 0:
        raise UnitError(f"not a size: {text!r} (must be positive)")
    return size


class _Readable(Protocol):
    def readinto(self, buffer: memoryview) -> int | None: ...

    def seekable(self) -> bool: ...

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int: ...

    def tell(self) -> int: ...

    def close(self) -> None: ...


class _CountingReader(io.RawIOBase):
    """Wraps a raw file and reports how many bytes were read so far (it seeks as the file
    does: a reader may go back to locate an error)."""

    def __init__(self, raw: _Readable, total: int, progress: Progress) -> None:
        self._raw, self._total, self._progress, self._done = raw, total, progress, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._raw.seekable()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._raw.seek(offset, whence)

    def tell(self) -> int:
        return self._raw.tell()

    def readinto(self, buffer) -> int:  # type: ignore[override]
        n = self._raw.readinto(buffer)
        if n:
            self._done += n
            self._progress(self._done, self._total)
        return n or 0

    def close(self) -> None:
        self._raw.close()
        super().close()


class _Gate(io.RawIOBase):
    """Passes content through (decompressed, or of an input whose size is not known
    before it is read) and refuses it once more than ``limit`` bytes of it went by: a small
    gzip can expand to any size, ``/dev/zero`` never ends."""

    def __init__(self, stream: _Readable, limit: int, refuse: Callable[[int], InputError],
                 source: BinaryIO | None = None,
                 unpacked: Callable[[int], None] | None = None) -> None:
        self._stream, self._limit, self._refuse, self._done = stream, limit, refuse, 0
        self._source = source   # what ``stream`` reads from: closed with it (GzipFile won't)
        self._unpacked = unpacked   # told the decompressed bytes so far (a progress display)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return self._stream.seekable()

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._done = self._stream.seek(offset, whence)
        return self._done

    def tell(self) -> int:
        """Bytes of content passed through (a place for errors)."""
        return self._done

    def readinto(self, buffer) -> int:  # type: ignore[override]
        n = self._stream.readinto(buffer) or 0
        self._done += n
        if self._done > self._limit:
            raise self._refuse(self._limit)
        if n and self._unpacked is not None:
            self._unpacked(self._done)
        return n

    def close(self) -> None:
        self._stream.close()
        if self._source is not None:
            self._source.close()
        super().close()


class _Unpacking(io.RawIOBase):
    """A decompressing stream (``kind``: gzip, xz or bz2) as every reader meets it: damage
    raises ``OSError``, as a damaged bz2 stream does (``lzma.LZMAError`` and ``zlib.error``,
    gzip's "invalid distance too far back", are no ``OSError``), and a stream cut short
    raises the one :func:`cut_short` error for the input ``name``, at the bytes of content
    handed on before it stopped, whatever reader was reading (its own parser would name a
    wrong place, or read a shorter input).

    Each read hands on what one step of the decompressor yields (``readinto1``): the
    decompressors raise ``EOFError`` only once all the content before the cut was handed
    on, so the count is the exact place, where a whole-buffer ``readinto`` would drop the
    part of its last buffer that was filled.

    >>> import gzip
    >>> packed = gzip.compress(b"0123456789" * 1000)
    >>> stream = _Unpacking(gzip.GzipFile(fileobj=io.BytesIO(packed[:-8])), "gzip", "t.gz")
    >>> stream.read()
    Traceback (most recent call last):
    traceconv.errors.InputError: t.gz:decompressed byte 10000: the gzip stream is cut short after 10,000 bytes of its content (a partial copy or download?)
    """

    def __init__(self, stream: _Unpacker, kind: str, name: str) -> None:
        self._stream, self._kind, self._name, self._done = stream, kind, name, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        import lzma
        import zlib

        try:
            n = self._stream.readinto1(buffer)
        except (lzma.LZMAError, zlib.error) as exc:
            raise OSError(f"not a valid {self._kind} stream: {exc}") from None
        except EOFError:
            raise cut_short(self._name, self._kind, self._done) from None
        self._done += n
        return n

    def close(self) -> None:
        self._stream.close()
        super().close()


class _Unpacker(Protocol):
    def readinto1(self, buffer: memoryview) -> int: ...

    def close(self) -> None: ...


def _unpacker(kind: str, raw: BinaryIO) -> _Unpacker:
    """The decompressor of ``kind`` (gzip, xz, bz2) reading ``raw`` (closed apart)."""
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "xz":
        import lzma

        return lzma.LZMAFile(raw, "rb")
    import bz2

    return bz2.BZ2File(raw, "rb")


def cut_short(name: str, kind: str, at: int) -> InputError:
    """The one error for a compressed input whose stream stops before its end, ``at`` bytes
    into its content (the part before the cut is whole, the rest lost: no reader reads it
    as a smaller trace).

    >>> str(cut_short("t.json.gz", "gzip", 12345))
    't.json.gz:decompressed byte 12345: the gzip stream is cut short after 12,345 bytes of its content (a partial copy or download?)'
    """
    return InputError(f"the {kind} stream is cut short after {at:,} bytes of its content "
                      "(a partial copy or download?)", file=name,
                      location=f"decompressed byte {at}")


def stopped_at(stream: BinaryIO, compressed: bool) -> str | None:
    """Where reading ``stream`` stopped, as an error location (of the decompressed data if
    ``compressed``); None where the stream cannot tell. A damaged gzip fails a whole read
    block (up to 1 MiB): its place is where that block began.

    >>> stream = io.BytesIO(b"abcdef"); _ = stream.read(4); stopped_at(stream, False)
    'byte 4'
    """
    try:
        offset = stream.tell()
    except (OSError, ValueError):
        return None
    return f"{'decompressed ' if compressed else ''}byte {offset}"


@contextlib.contextmanager
def reading(name: str) -> Iterator[None]:
    """Turn running out of memory, a failing operating system call, a read past the end of
    the input or a number of thousands of digits (Python refuses to convert it) met while
    ``name`` is read, by any reader or library under it, into one :class:`InputError`
    naming the input and what to try, instead of an internal error.

    >>> with reading("big.json"):
    ...     raise MemoryError
    Traceback (most recent call last):
    traceconv.errors.InputError: big.json: ran out of memory reading this input (a smaller --max-bytes refuses such inputs early; or try a machine with more memory)
    >>> import errno
    >>> with reading("t.rpd"):
    ...     raise OSError(errno.ENOSPC, "No space left on device")
    Traceback (most recent call last):
    traceconv.errors.InputError: t.rpd: cannot read: No space left on device (free space where temporary files go, or point TMPDIR elsewhere)
    """
    try:
        yield
    except MemoryError:
        raise InputError("ran out of memory reading this input (a smaller --max-bytes refuses "
                         "such inputs early; or try a machine with more memory)",
                         file=name) from None
    except EOFError as exc:   # a reader's read past the end (a compressed stream cut short
        # is the input layer's own line, cut_short, before any reader sees it)
        raise InputError(f"cannot read: the input is cut short ({exc})", file=name) from None
    except ValueError as exc:
        from .numbers import is_digit_limit

        if not is_digit_limit(exc):
            raise
        raise InputError("holds a number of more than 4,300 digits (no time or count needs "
                         "more than 19)", file=name) from None
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise   # (standard output closed: the command line's own exit)
        from .special_files import read_error

        raise read_error(exc, name) from None


def too_large(name: str, limit: int, location: str | None = None) -> InputError:
    """The error for an input over the size limit (it says how to raise the limit;
    ``location``: where reading passed it, when its size was not known before).

    >>> str(too_large("-", 1 << 20, "byte 1048576"))
    '-:byte 1048576: content is larger than the 1 MiB limit on one input (--max-bytes SIZE or max_bytes= raises it)'
    """
    from .units import format_bytes

    return InputError(f"content is larger than the {format_bytes(limit, 4)} limit on one input "
                      "(--max-bytes SIZE or max_bytes= raises it)", file=name, location=location)


class Source:
    """One input file: a display name, its decompressed bytes as a stream, and its head.

    ``-`` reads standard input. Gzip, xz and bz2 are recognised by their magic bytes,
    whatever the name (zstd too, and refused in one line). Content of more than
    ``max_bytes``, or of more than :attr:`memory_limit` allows, raises :class:`InputError`:
    a file whose size says so before it is read; any other input (compressed, standard
    input, a pipe, a device) once the bytes read, decompressed, pass the limit, naming the
    byte where they did. An input that yields its bytes once is kept as it is read, in
    memory up to 64 MiB and in an unnamed scratch file beyond (:mod:`traceconv.spool`).

    >>> src = Source("samples/torch/cnn_step5.pt.trace.json")   # doctest: +SKIP
    >>> src.suffix, src.head[:1]                                 # doctest: +SKIP
    ('.json', b'{')
    """

    def __init__(self, path: str | os.PathLike[str], *, progress: Progress | None = None,
                 max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.path = os.fspath(path)
        self.name = "<stdin>" if self.path == "-" else self.path
        self.progress = progress
        self.max_bytes = max_bytes
        # how much content fits the memory available, once the format is known (set by
        # traceconv.load); None: not checked
        self.memory_limit: MemoryLimit | None = None
        # the same for content read into memory whole (read_bytes), any format, and for
        # content of unknown size however it is read: its bytes at least must fit (an
        # endless pipe ends in one line, not in the OOM killer)
        self.held_limit: MemoryLimit | None = None
        self._spool: Spool | None = None   # what an input that yields its bytes once yielded
        self._undressed: bytes | None = None  # text decoded from UTF-16/32
        # what the input layer itself repaired, dropped or noted while opening this input
        # (code, count, example): added to the trace it makes (traceconv.api.load)
        self.notes: list[tuple[str, int, object]] = []

    @property
    def is_stdin(self) -> bool:
        return self.path == "-"

    @property
    def suffix(self) -> str:
        """Lower-case file name with any ``.gz`` (``.xz``, ``.bz2``, ``.zst``) removed, from
        the last dot (``.json``)."""
        return Path(self.stem_name).suffix

    @property
    def stem_name(self) -> str:
        """Lower-case file name with any ``.gz`` (``.xz``, ``.bz2``, ``.zst``) removed
        (``a.pt.trace.json``).

        >>> Source("r.csv.XZ").stem_name, Source("t.json.gz").suffix
        ('r.csv', '.json')
        """
        name = Path(self.path).name.lower()
        for suffix in COMPRESSED_SUFFIXES:
            if name.endswith(suffix):
                return name.removesuffix(suffix)
        return name

    def _raw(self) -> BinaryIO:
        if self._spool is None:
            if self.is_stdin:
                self._spool = self._spooled(sys.stdin.buffer, owned=False)
            else:
                from .special_files import open_input  # (lazy: detection imports little)

                raw = open_input(self.path, self.name)
                status = os.fstat(raw.fileno())
                if stat.S_ISREG(status.st_mode) and status.st_size:
                    # compressed or not, the content is at least this big: judged unread
                    if status.st_size > self._content_limit():
                        raw.close()
                        raise self._refusal(status.st_size)
                    return self._counted(raw, status.st_size)
                # a pipe, a device, a /proc file: its bytes come once and st_size says nothing
                self._spool = self._spooled(raw, owned=True)
        return self._counted(self._spool.reader(), 0)

    def _spooled(self, stream: BinaryIO, owned: bool) -> Spool:
        from .spool import Spool

        return Spool(stream, self.name, self.max_bytes,
                     lambda at: too_large(self.name, self.max_bytes, f"byte {at}"), owned=owned)

    def _counted(self, raw: BinaryIO, total: int) -> BinaryIO:
        """``raw``, telling :attr:`progress` the bytes read of ``total`` (0: not known)."""
        if self.progress is None:
            return raw
        return io.BufferedReader(_CountingReader(raw, total, self.progress),  # type: ignore[arg-type,return-value]
                                 1 << 20)

    def _limit(self, whole: bool) -> MemoryLimit | None:
        """The memory limit of reading the content (``whole``: into memory at once)."""
        return self.held_limit if whole and self.held_limit is not None else self.memory_limit

    def _content_limit(self, whole: bool = False) -> int:
        """The most bytes of content this input may hold (``whole``: read into memory)."""
        memory = self._limit(whole)
        return self.max_bytes if memory is None else min(self.max_bytes, memory.content_bytes)

    def _refusal(self, size: int, location: str | None = None,
                 whole: bool = False) -> InputError:
        """The error for content of ``size`` bytes, over :meth:`_content_limit`
        (``location``: where reading passed it; else ``size`` is the file's)."""
        memory = self._limit(whole)
        if memory is None or memory.content_bytes >= self.max_bytes:
            return too_large(self.name, self.max_bytes, location)
        refused = memory.refusal(self.name, size, passed=location is not None,
                                 path=self.path)
        refused.location = location
        return refused

    def close(self) -> None:
        """Let go of what was kept of an input that yields its bytes once (a later open
        finds it empty); nothing for a file, which each open reads again."""
        if self._spool is not None:
            self._spool.close()

    def note(self, code: str, *, count: int = 1, example: object = None) -> None:
        """Count ``count`` of the diagnostic ``code`` for this input (see :attr:`notes`).

        >>> src = Source("a.rpd"); src.note("sqlite.log_read", example="a.rpd-wal")
        >>> src.notes
        [('sqlite.log_read', 1, 'a.rpd-wal')]
        """
        self.notes.append((code, count, example))

    def read_events(self, count: int) -> None:
        """A reader says it has read ``count`` events so far (shown with the progress)."""
        tell = getattr(self.progress, "events", None)
        if tell is not None:
            tell(count)

    @cached_property
    def compression(self) -> str | None:
        """``gzip``, ``xz``, ``bz2`` or ``zstd`` from the first bytes; None: not compressed."""
        with self._raw() as raw:
            head = raw.read(6)
        return next((name for magic, name in COMPRESSIONS if head.startswith(magic)
                     and (name != "bz2" or head[3:4] in b"123456789")), None)

    @property
    def compressed(self) -> bool:
        return self.compression is not None

    def open(self, whole: bool = False) -> BinaryIO:
        """A binary stream of the (decompressed) content, as UTF-8 where the input is text in
        another encoding (:mod:`traceconv.text_encoding`), its line ends as they are (the
        line readers end a line at ``\\n``, ``\\r\\n`` and a lone ``\\r`` alike); the caller
        closes it. ``whole``: the caller holds all of it (:attr:`held_limit`)."""
        if self._undressed is not None:
            return io.BytesIO(self._undressed)
        dressed = self._dressing
        stream = self._decompressed(whole or dressed not in (None, "utf-8"))
        if dressed == "utf-8":   # a UTF-8 BOM: skipped, the rest streams as it is
            stream.read(len(codecs.BOM_UTF8))
        elif dressed is not None:
            with stream:   # (within the limits: see _decompressed)
                data = stream.read()
            from .text_encoding import undress

            self._undressed = undress(data, dressed, self.name)
            return io.BytesIO(self._undressed)
        return stream

    @cached_property
    def _dressing(self) -> str | None:
        try:
            from .text_encoding import dressing

            with self._decompressed() as stream:
                return dressing(stream.read(HEAD_BYTES))
        except OSError:
            return None   # (a damaged stream: the read itself will say where)

    def _decompressed(self, whole: bool = False) -> BinaryIO:
        kind = self.compression
        if kind == "zstd":
            raise InputError("zstd-compressed: traceconv reads gzip, xz and bz2 inputs; "
                             "decompress it first (zstd -d FILE)", file=self.name)
        raw = self._raw()
        if kind is None and self._spool is None:
            return raw   # (a file, its size judged before reading)
        if kind is None:   # (a spool's reader, which has readinto)
            return self._gated(cast(_Readable, raw), "byte", whole=whole)
        unpacked = _Unpacking(_unpacker(kind, raw), kind, self.name)
        return self._gated(unpacked, "decompressed byte", raw,
                           getattr(self.progress, "unpacked", None), whole)

    def _gated(self, content: _Readable, place: str, raw: BinaryIO | None = None,
               unpacked: Callable[[int], None] | None = None,
               whole: bool = False) -> BinaryIO:
        """``content`` (decompressed from ``raw``, closed with it), refused once it passes
        the limits (``whole``: of content held whole), at the ``place``
        (``decompressed byte``) where it did. Content of unknown size (standard input, a
        pipe, a device) is judged as content held whole, streamed or not: a reader that
        streams keeps what it read (lines, events) at a cost per byte that only the format's
        measured peak, if any, knew, and an endless input must end in this one line."""
        whole = whole or self._spool is not None
        limit = self._content_limit(whole)
        gate = _Gate(content, limit, lambda at: self._refusal(at, f"{place} {at}", whole),
                     source=raw, unpacked=unpacked)
        return io.BufferedReader(gate, 1 << 20)  # type: ignore[return-value]

    @cached_property
    def head(self) -> bytes:
        """The first 64 KiB of the decompressed content, for format sniffing (lone CR line
        ends as ``\\n``: :func:`traceconv.text_encoding.sniffed_head`)."""
        from .text_encoding import sniffed_head

        return sniffed_head(self._read(HEAD_BYTES))

    def read_bytes(self) -> bytes:
        """The whole decompressed content; for a message format, its rows judged on these
        bytes by :attr:`memory_limit` (:meth:`~traceconv.memory_check.MemoryLimit.refuse_rows`:
        no second read, nor a second decompression)."""
        data = self._read(-1)   # (an input of unknown size: bounded by held_limit)
        if self.memory_limit is not None:
            self.memory_limit.refuse_rows(self.name, data, self.path)
        return data

    def _read(self, size: int) -> bytes:
        try:
            with self.open(whole=size < 0) as stream:
                try:
                    return stream.read(size)
                except (OSError, EOFError) as exc:   # e.g. a damaged gzip
                    raise InputError(f"cannot read: {exc}", file=self.name,
                                     location=stopped_at(stream, self.compressed)) from None
        except (OSError, EOFError) as exc:
            raise InputError(f"cannot read: {exc}", file=self.name) from None

    def read_json(self) -> Any:
        """The whole content as one JSON document (a format read whole); text that is not
        JSON is an :class:`InputError` at its ``line:column``, and a byte that is not UTF-8
        is named by its offset as well (orjson places it at the start of the text).

        >>> import os, tempfile
        >>> with tempfile.NamedTemporaryFile("wb", suffix=".json", delete=False) as f:
        ...     _ = f.write(b'{"nodes": [\\n  "a\\xa2"]}')
        >>> try:
        ...     Source(f.name).read_json()
        ... except InputError as exc:
        ...     exc.location, exc.message
        ('2:5', 'not valid JSON: byte 0xa2 at offset 16 is not UTF-8')
        >>> os.unlink(f.name)
        """
        import orjson  # (here: loaded only where a document is read whole)

        from .json_decode import error_at, first_not_utf8

        data = self.read_bytes()
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            error = exc
        at = first_not_utf8(data)
        if at is not None:
            error = error_at(f"byte 0x{data[at]:02x} at offset {at} is not UTF-8", data, at)
        raise InputError(f"not valid JSON: {error.msg}", file=self.name,
                         location=f"{error.lineno}:{error.colno}")

    def read_text(self) -> str:
        """The whole content decoded as UTF-8 (undecodable bytes replaced)."""
        return self.read_bytes().decode("utf-8", errors="replace")

    def __repr__(self) -> str:
        return f"Source({self.name!r})"
