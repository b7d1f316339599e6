"""The one way out: every file traceconv writes, removes or uses as scratch goes through here.

The guarantees, for every writer and command (a test walks the source to prove that no
other module opens a file for writing):

- an output appears whole or not at all: bytes go to a temporary file created in the
  target's folder with ``O_EXCL | O_NOFOLLOW``, renamed over the name when complete, and
  removed on any error or signal (a full disk, an interrupted run);
- a name traceconv chose itself (:class:`~traceconv.outputs.ChosenPath`: the default
  output beside the input, ``batch`` outputs, ``split`` pieces and ``manifest.json``) is
  never written through a link or into a special file planted there: the rename replaces
  the entry itself, and what it pointed to is untouched. A name the user gives (``-o``)
  that is a link writes the file the link points to, the link stays; a character device or
  a FIFO given by the user is written as a stream, never replaced;
- no output is one of the inputs, standard input included (``inputs`` is a required
  argument: :func:`traceconv.outputs.refuse_replacing_inputs`);
- a failure is one :class:`~traceconv.errors.OutputError` naming the output: a full disk,
  a file where a folder is expected, a full or closed standard output (``<stdout>``).

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> with atomic_output(os.path.join(folder, "out.json"), inputs=()) as out:
...     _ = out.write(b"{}")
>>> sorted(os.listdir(folder))
['out.json']
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import os
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from . import special_files
from .errors import OutputError
from .outputs import STDOUT, STDOUT_NAME, ChosenPath, Files, refuse_replacing_inputs

_TEMP_PREFIX = ".traceconv-"
# errors of a write that says nothing about any input: the output's own
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EPIPE})


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike[str], *,
                  inputs: Iterable[str | os.PathLike[str]] | Files) -> Iterator[BinaryIO]:
    """Open ``path`` for binary writing so that it appears only when complete.

    ``inputs``: the files the output is made from (``-`` is standard input); an output that
    is one of them is refused before anything is created. A ``.gz`` name is gzip-compressed;
    ``-`` is standard output. A replaced regular file keeps its permissions; a new one gets
    the umask's. See the module for links, special files and failures.

    >>> atomic_output("samples/torch/cnn_step5.pt.trace.json",
    ...               inputs=["samples/torch/cnn_step5.pt.trace.json"]).__enter__()
    Traceback (most recent call last):
    ...
    traceconv.errors.OutputError: samples/torch/cnn_step5.pt.trace.json: the output would replace the input samples/torch/cnn_step5.pt.trace.json; choose another output name
    """
    target = os.fspath(path)
    refuse_replacing_inputs([target], inputs)
    if target == STDOUT:
        yield from _to_stdout()
        return
    chosen = isinstance(path, ChosenPath)
    if _is_folder(target, follow=not chosen):
        raise OutputError("is a directory", file=target)
    if not chosen:
        stream = special_output(target)
        if stream is not None:   # a device or a FIFO: written in place, never replaced
            yield from _streamed(stream, target)
            return
        target = resolve_output(target)
    yield from _replaced(target)


def _is_folder(path: str, follow: bool) -> bool:
    """Whether ``path`` is a folder (``follow``: or a link to one)."""
    try:
        return stat.S_ISDIR((os.stat if follow else os.lstat)(path).st_mode)
    except (OSError, ValueError):
        return False


def _replaced(target: str) -> Iterator[BinaryIO]:
    """Write a temporary file beside ``target``, then rename it over ``target`` (the entry
    itself: a link there is replaced, never followed)."""
    folder = os.path.dirname(os.path.abspath(target))
    try:   # (mkstemp: O_CREAT | O_EXCL | O_NOFOLLOW, mode 0600, in ``folder``)
        fd, temp = tempfile.mkstemp(prefix=_TEMP_PREFIX, suffix=".part", dir=folder)
    except OSError as exc:
        raise _output_error(exc, target, folder) from None
    try:
        try:
            with open(fd, "wb", buffering=1 << 20) as raw:
                if target.lower().endswith(".gz"):
                    with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
                        yield gz  # type: ignore[misc]
                else:
                    yield raw
                os.fchmod(raw.fileno(), _mode_for(target))
            os.replace(temp, target)
        except OSError as exc:
            if not _is_ours(exc, temp, target):
                raise   # an input failing while the writer streams it
            raise _output_error(exc, target, folder) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _is_ours(exc: OSError, *names: str) -> bool:
    """Whether ``exc`` is about the output: no file named, or one of ``names``; a broken
    pipe is standard output's, not a file's."""
    return not isinstance(exc, BrokenPipeError) and exc.filename in (None, *names)


def _to_stdout() -> Iterator[BinaryIO]:
    out = sys.stdout.buffer
    try:
        yield out
        out.flush()
    except OSError as exc:
        if exc.filename is not None:
            raise   # an input's
        if isinstance(exc, BrokenPipeError):
            silence_stdout()
            raise
        raise stdout_error(exc) from None


def silence_stdout() -> None:
    """Point standard output at ``/dev/null`` after a failed write, so that the
    interpreter's last flush does not fail a second time with a traceback."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def stdout_error(exc: OSError) -> OutputError:
    """The error for a failed write to a full standard output (standard output is then
    silenced). A reader that closed its pipe (``traceconv text x | head``) is not an
    error to report: :class:`BrokenPipeError` ends the command quietly, as in other
    Unix tools."""
    silence_stdout()
    return OutputError(f"cannot write: {special_files.reason(exc)}", file=STDOUT_NAME)


def is_write_failure(exc: OSError) -> bool:
    """Whether ``exc`` is a failed write that names no file: in the command line, where
    every file goes through :func:`atomic_output`, that is standard output's.

    >>> is_write_failure(OSError(errno.ENOSPC, "No space left on device"))
    True
    >>> is_write_failure(FileNotFoundError(errno.ENOENT, "No such file", "x.json"))
    False
    """
    return exc.errno in _WRITE_ERRNOS and exc.filename is None


def _streamed(stream: BinaryIO, target: str) -> Iterator[BinaryIO]:
    """Yield ``stream`` (a device or a FIFO) to write on, compressed for a ``.gz`` name."""
    try:
        with stream:
            if target.lower().endswith(".gz"):
                with gzip.GzipFile(fileobj=stream, mode="wb", compresslevel=6, mtime=0) as gz:
                    yield gz  # type: ignore[misc]
            else:
                yield stream
    except OSError as exc:
        if not _is_ours(exc, target):
            raise
        raise OutputError(f"cannot write: {special_files.reason(exc)}", file=target) from None


def _mode_for(target: str) -> int:
    """The permissions for ``target``: those of the regular file it replaces (a link's
    target's never: a planted link to a private file must not make the output private);
    else 0666 less the umask."""
    with contextlib.suppress(OSError):
        status = os.lstat(target)
        if stat.S_ISREG(status.st_mode):
            return stat.S_IMODE(status.st_mode)
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _output_error(exc: OSError, target: str, folder: str) -> OutputError:
    """``exc`` (about the hidden temporary file or the folder) told about ``target``."""
    reason = exc.strerror or str(exc)
    if exc.errno == errno.ENOTDIR:
        reason = f"{_file_above(os.path.dirname(target) or '.')} is a file, not a folder"
    elif isinstance(exc, FileNotFoundError):
        reason = f"no such directory: {folder}"
    elif isinstance(exc, PermissionError):
        reason = f"permission denied (cannot create files in {folder})"
    return OutputError(f"cannot write: {reason}", file=target)


def _file_above(folder: str) -> str:
    """The first part of ``folder`` that exists and is not a folder (``a`` in ``a/b/c``
    when ``a`` is a file), else ``folder``."""
    here = folder
    while here and not os.path.isdir(here):
        if os.path.lexists(here):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return folder


def resolve_output(target: str) -> str:
    """The file ``-o target`` writes: the end of a chain of symbolic links (a link stays a
    link, its file is replaced), else ``target`` itself.

    >>> resolve_output("no/such/out.json")
    'no/such/out.json'
    """
    if not os.path.islink(target):
        return target
    try:
        os.stat(target)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OutputError(f"cannot write: {special_files.reason(exc)}",
                              file=target) from None
    return os.path.realpath(target)


def special_output(target: str) -> BinaryIO | None:
    """A stream onto ``target`` when it is a character device or a FIFO (written in place,
    never replaced: as root, renaming over ``/dev/null`` would replace the system's); None
    when it is a regular file or missing (an atomic write then); ``OutputError`` for a block
    device or a socket, and for a FIFO whose reader does not come within
    :data:`traceconv.special_files.FIFO_WAIT_SECONDS`.

    >>> special_output("no/such/out.json") is None
    True
    """
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISCHR(mode):
        try:
            return open(target, "wb")  # noqa: SIM115 - returned to the caller
        except OSError as exc:
            raise OutputError(f"cannot write: {special_files.reason(exc)}",
                              file=target) from None
    if not stat.S_ISFIFO(mode):
        raise OutputError(f"cannot write: {special_files.kind_of(mode)}; traceconv writes "
                          "regular files, character devices and FIFOs", file=target)
    wait = special_files.FIFO_WAIT_SECONDS
    deadline = time.monotonic() + wait
    while True:   # O_NONBLOCK: ENXIO while no reader has the FIFO open, instead of blocking
        try:
            fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise OutputError(f"cannot write: {special_files.reason(exc)}",
                                  file=target) from None
            if time.monotonic() > deadline:
                raise OutputError(f"cannot write: a FIFO that no reader opened within "
                                  f"{wait:g} s", file=target) from None
            time.sleep(0.05)
    os.set_blocking(fd, True)
    return open(fd, "wb")  # noqa: SIM115 - returned to the caller


def output_folder(path: str | os.PathLike[str]) -> str:
    """``path`` as a folder for outputs, created (with its parents) when missing; a file
    there, or above it, is one :class:`OutputError` naming it.

    >>> import tempfile
    >>> output_folder(tempfile.mkdtemp()) != ""
    True
    >>> output_folder("samples/torch/cnn_step5.pt.trace.json")
    Traceback (most recent call last):
    ...
    traceconv.errors.OutputError: samples/torch/cnn_step5.pt.trace.json: a file is where the output folder should be; give a folder
    """
    folder = os.fspath(path)
    try:
        os.makedirs(folder, exist_ok=True)
    except FileExistsError:
        raise OutputError("a file is where the output folder should be; give a folder",
                          file=folder) from None
    except NotADirectoryError:
        raise OutputError(f"cannot create the folder: {_file_above(folder)} is a file, not "
                          "a folder", file=folder) from None
    except OSError as exc:
        raise OutputError(f"cannot create the folder: {special_files.reason(exc)}",
                          file=folder) from None
    return folder


@contextlib.contextmanager
def made_folder(path: str | os.PathLike[str]) -> Iterator[str]:
    """``path`` as a folder for outputs (:func:`output_folder`) for the outputs of one
    block: a block that fails (a refused input, an error, a signal) leaves no folder behind
    that this call made, nor anything written in it (a folder that was there stays, as it
    was left).

    >>> import tempfile
    >>> where = os.path.join(tempfile.mkdtemp(), "pieces", "run1")
    >>> with made_folder(where):
    ...     raise OSError("refused")
    Traceback (most recent call last):
    OSError: refused
    >>> os.path.exists(os.path.dirname(where))
    False
    """
    created = _first_missing(os.fspath(path))
    folder = output_folder(path)
    try:
        yield folder
    except BaseException:
        if created is not None:   # (all in it is this run's: made by it, under it)
            shutil.rmtree(created, ignore_errors=True)
        raise


def _first_missing(folder: str) -> str | None:
    """The outermost folder of ``folder``'s path that does not exist yet (None: none)."""
    missing = None
    current = os.path.abspath(folder)
    while not os.path.lexists(current):
        missing, parent = current, os.path.dirname(current)
        if parent == current:
            break
        current = parent
    return missing


def remove_output(path: str | os.PathLike[str], *,
                  inputs: Iterable[str | os.PathLike[str]] | Files) -> None:
    """Remove a file traceconv wrote (an old ``manifest.json``, a converted piece); a link
    there is removed itself, never what it points to; a missing file is fine; one of
    ``inputs`` is refused as :func:`atomic_output` refuses it.

    >>> remove_output("no/such/manifest.json", inputs=())
    """
    target = os.fspath(path)
    refuse_replacing_inputs([target], inputs)
    try:
        os.unlink(target)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(f"cannot remove: {special_files.reason(exc)}", file=target) from None


class Scratch:
    """A private temporary folder (mode 0700, created exclusively) of files that are
    appended to, then read back; see :func:`scratch_folder`."""

    def __init__(self, folder: str, near: str) -> None:
        self.folder, self.near = folder, near

    def path(self, name: str) -> str:
        """Where the scratch file ``name`` is (it may not exist yet)."""
        return os.path.join(self.folder, name)

    def copy(self, source: str, name: str, chunk: int = 1 << 20) -> str:
        """Copy the file ``source`` into the scratch file ``name``; return its path."""
        with open(source, "rb") as src:
            while data := src.read(chunk):
                self.append(name, data)
        return self.path(name)

    def publish(self, name: str, target: ChosenPath, *,
                inputs: Iterable[str | os.PathLike[str]] | Files) -> None:
        """Move the finished scratch file ``name`` to ``target``, a name traceconv chose in
        the folder that holds this scratch folder: one rename, so it appears complete or not
        at all, with the permissions :func:`atomic_output` gives (a link there is replaced,
        never followed; an input is never replaced).

        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> with scratch_folder(folder) as scratch:
        ...     scratch.append("piece", b"[]")
        ...     scratch.publish("piece", ChosenPath(os.path.join(folder, "p.json")), inputs=[])
        >>> open(os.path.join(folder, "p.json"), "rb").read()
        b'[]'
        """
        target_path = os.fspath(target)
        refuse_replacing_inputs([target_path], inputs)
        if _is_folder(target_path, follow=False):
            raise OutputError("is a directory", file=target_path)
        folder = os.path.dirname(os.path.abspath(target_path))
        try:
            os.chmod(self.path(name), _mode_for(target_path))
            os.replace(self.path(name), target_path)
        except OSError as exc:
            raise _output_error(exc, target_path, folder) from None

    def append(self, name: str, data: bytes | bytearray) -> None:
        """Add ``data`` at the end of the scratch file ``name`` (created if missing)."""
        path = self.path(name)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
            with open(fd, "ab", buffering=0) as out:
                out.write(data)
        except OSError as exc:
            raise OutputError(f"cannot write a temporary file: {special_files.reason(exc)}",
                              file=self.near) from None


@contextlib.contextmanager
def scratch_folder(near: str | os.PathLike[str] | None = None) -> Iterator[Scratch]:
    """A :class:`Scratch` folder inside ``near`` (hidden: ``.traceconv-*``; default: the
    system's temporary folder), removed with everything in it when the block ends,
    however it ends.

    >>> import tempfile
    >>> with scratch_folder(tempfile.mkdtemp()) as scratch:
    ...     scratch.append("0.part", b"ab"); scratch.append("0.part", b"c")
    ...     open(scratch.path("0.part"), "rb").read()
    b'abc'
    """
    where = tempfile.gettempdir() if near is None else os.fspath(near)
    try:
        folder = tempfile.mkdtemp(prefix=_TEMP_PREFIX, dir=where)
    except OSError as exc:
        raise _output_error(exc, where, where) from None
    try:
        yield Scratch(folder, where)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def scratch_file(suffix: str = "") -> Iterator[tuple[str, BinaryIO]]:
    """A private temporary file in the system's temporary folder, as ``(path, stream)``
    open for writing; removed when the block ends.

    >>> with scratch_file(".txt") as (path, out):
    ...     _ = out.write(b"x"); out.flush(); open(path, "rb").read()
    b'x'
    """
    fd, path = tempfile.mkstemp(prefix=_TEMP_PREFIX, suffix=suffix)
    try:
        with open(fd, "wb") as out:
            yield path, out
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)


def unnamed_scratch_file() -> BinaryIO:
    """A private temporary file without a name (unbuffered, open for reading and writing):
    nothing to remove, it is gone when closed or when the process ends, however it ends.

    >>> with unnamed_scratch_file() as scratch:
    ...     _ = scratch.write(b"ab"); os.pread(scratch.fileno(), 2, 0)
    b'ab'
    """
    return tempfile.TemporaryFile(prefix=_TEMP_PREFIX, buffering=0)  # type: ignore[return-value]  # noqa: SIM115 - returned to the caller
