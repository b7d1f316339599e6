"""Input sources (gzip-transparent, sniffable, progress-aware) and atomic outputs."""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from functools import cached_property
from pathlib import Path
from typing import BinaryIO

from .errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
HEAD_BYTES = 64 * 1024
Progress = Callable[[int, int], None]  # (bytes done, bytes total)


class _CountingReader(io.RawIOBase):
    """Wraps a raw file and reports how many bytes were read so far."""

    def __init__(self, raw: BinaryIO, total: int, progress: Progress) -> None:
        self._raw, self._total, self._progress, self._done = raw, total, progress, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        n = self._raw.readinto(buffer)
        if n:
            self._done += n
            self._progress(self._done, self._total)
        return n or 0

    def close(self) -> None:
        self._raw.close()
        super().close()


class Source:
    """One input file: a display name, its decompressed bytes as a stream, and its head.

    ``-`` reads standard input. Gzip is recognised by its magic bytes, whatever the name.

    >>> src = Source("samples/torch/cnn_step5.pt.trace.json")   # doctest: +SKIP
    >>> src.suffix, src.head[:1]                                 # doctest: +SKIP
    ('.json', b'{')
    """

    def __init__(self, path: str | os.PathLike[str], *, progress: Progress | None = None) -> None:
        self.path = os.fspath(path)
        self.name = "<stdin>" if self.path == "-" else self.path
        self.progress = progress
        self._stdin: bytes | None = None

    @property
    def is_stdin(self) -> bool:
        return self.path == "-"

    @property
    def suffix(self) -> str:
        """Lower-case file name with any ``.gz`` removed, from the last dot (``.json``)."""
        name = Path(self.path).name.lower()
        name = name.removesuffix(".gz")
        return Path(name).suffix

    @property
    def stem_name(self) -> str:
        """Lower-case file name with any ``.gz`` removed (``a.pt.trace.json``)."""
        return Path(self.path).name.lower().removesuffix(".gz")

    def _raw(self) -> BinaryIO:
        if self.is_stdin:
            if self._stdin is None:
                self._stdin = sys.stdin.buffer.read()
            return io.BytesIO(self._stdin)
        try:
            raw: BinaryIO = open(self.path, "rb")  # noqa: SIM115 - returned to the caller
        except OSError as exc:
            raise InputError(exc.strerror or str(exc), file=self.name) from None
        if self.progress is not None:
            total = os.fstat(raw.fileno()).st_size
            raw = io.BufferedReader(_CountingReader(raw, total, self.progress), 1 << 20)
        return raw

    @cached_property
    def compressed(self) -> bool:
        with self._raw() as raw:
            return raw.read(2) == GZIP_MAGIC

    def open(self) -> BinaryIO:
        """A binary stream of the (decompressed) content; the caller closes it."""
        raw = self._raw()
        if self.compressed:
            return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
        return raw

    @cached_property
    def head(self) -> bytes:
        """The first 64 KiB of the decompressed content, for format sniffing."""
        try:
            with self.open() as stream:
                return stream.read(HEAD_BYTES)
        except (OSError, EOFError) as exc:
            raise InputError(f"cannot read: {exc}", file=self.name) from None

    def read_bytes(self) -> bytes:
        """The whole decompressed content."""
        try:
            with self.open() as stream:
                return stream.read()
        except (OSError, EOFError) as exc:
            raise InputError(f"cannot read: {exc}", file=self.name) from None

    def read_text(self) -> str:
        """The whole content decoded as UTF-8 (undecodable bytes replaced)."""
        return self.read_bytes().decode("utf-8", errors="replace")

    def __repr__(self) -> str:
        return f"Source({self.name!r})"


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Open ``path`` for binary writing so that it appears only when complete.

    Data goes to a temporary file in the same folder, renamed over ``path`` on success and
    removed on any error. A ``.gz`` name is gzip-compressed; ``-`` is standard output.

    >>> with atomic_output("out.json.gz") as out:   # doctest: +SKIP
    ...     out.write(b"{}")
    """
    target = os.fspath(path)
    if target == "-":
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    folder = os.path.dirname(os.path.abspath(target))
    fd, temp = tempfile.mkstemp(prefix=".traceconv-", suffix=".part", dir=folder)
    try:
        with open(fd, "wb", buffering=1 << 20) as raw:
            if target.lower().endswith(".gz"):
                with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
                    yield gz  # type: ignore[misc]
            else:
                yield raw
        os.chmod(temp, 0o644)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
